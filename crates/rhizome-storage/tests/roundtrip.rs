//! Builds small databases with the builder, reopens them and reads every structure back.
#![allow(clippy::single_range_in_vec_init)]

use rhizome_common::{ErrorKind, Value};
use rhizome_storage::builder::{GraphBuilder, NodeGroupInput, RelGroupInput, RowLabels};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{Database, Direction, GraphRead, NeighbourBatch};
use std::ops::Bound;

fn column(values: Vec<Value>) -> rhizome_storage::column::ColumnData {
    let mut b = ColumnBuilder::new();
    values.iter().for_each(|v| b.push(v));
    b.finish()
}

fn ints(values: impl IntoIterator<Item = i64>) -> rhizome_storage::column::ColumnData {
    column(values.into_iter().map(Value::Int).collect())
}

/// People 0..4 (two of them also :Admin via row labels), cities 0..2, KNOWS in two files, LIVES_IN.
fn build(dir: &std::path::Path) -> (Vec<u64>, Vec<u64>) {
    let mut b = GraphBuilder::new();
    let people = b
        .add_nodes(NodeGroupInput {
            rows: 4,
            labels: vec!["Person".into()],
            row_labels: Some(RowLabels {
                sets: vec![vec![], vec!["Admin".into()]],
                row_set: vec![1, 0, 1, 0],
            }),
            properties: vec![
                ("id".into(), ints([10, 11, 12, 13])),
                (
                    "name".into(),
                    column(vec!["ann".into(), "bob".into(), Value::Null, "dan".into()]),
                ),
                (
                    "tags".into(),
                    column(vec![
                        Value::List(vec![Value::String("x".into())]),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                    ]),
                ),
            ],
        })
        .unwrap();
    let cities = b
        .add_nodes(NodeGroupInput {
            rows: 2,
            labels: vec!["City".into(), "Place".into()],
            row_labels: None,
            properties: vec![("id".into(), ints([10, 20]))],
        })
        .unwrap();
    b.add_relationships(
        "KNOWS",
        RelGroupInput {
            sources: vec![people[0], people[1]],
            targets: vec![people[1], people[2]],
            properties: vec![("since".into(), ints([2001, 2002]))],
        },
    )
    .unwrap();
    b.add_relationships(
        "KNOWS",
        RelGroupInput {
            sources: vec![people[0]],
            targets: vec![people[3]],
            properties: vec![("weight".into(), column(vec![Value::Float(0.5)]))],
        },
    )
    .unwrap();
    b.add_relationships(
        "LIVES_IN",
        RelGroupInput {
            sources: people.clone(),
            targets: vec![cities[0], cities[0], cities[1], cities[0]],
            properties: vec![],
        },
    )
    .unwrap();
    b.add_index("Person", "id");
    b.add_index("Place", "id");
    let summary = b.write(dir).unwrap();
    assert_eq!(summary.node_count, 6);
    assert_eq!(summary.relationship_count, 7);
    (people, cities)
}

#[test]
fn everything_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (people, cities) = build(&dir);
    let db = Database::open(&dir).unwrap();
    assert!(db.check().is_empty(), "{:?}", db.check());
    let snap = db.snapshot();
    let cat = snap.catalog();
    let person = cat.label_id("Person").unwrap();
    let admin = cat.label_id("Admin").unwrap();
    let place = cat.label_id("Place").unwrap();
    let id = cat.property_key_id("id").unwrap();
    let name = cat.property_key_id("name").unwrap();
    let tags = cat.property_key_id("tags").unwrap();
    let knows = cat.rel_type_id("KNOWS").unwrap();
    let since = cat.property_key_id("since").unwrap();
    let weight = cat.property_key_id("weight").unwrap();

    // Labels are ranges; admins were grouped together.
    assert_eq!(snap.label_ranges(person), vec![0..4]);
    assert_eq!(
        snap.label_ranges(admin)
            .iter()
            .map(|r| r.end - r.start)
            .sum::<u64>(),
        2
    );
    assert!(snap.has_label(people[0], admin) && snap.has_label(people[2], admin));
    assert!(!snap.has_label(people[1], admin));
    assert_eq!(snap.label_ranges(place), vec![4..6]);
    assert_eq!(snap.statistics().label_counts[person as usize], 4);

    // Properties follow their rows through the reordering.
    assert_eq!(snap.node_property(people[0], id), Value::Int(10));
    assert_eq!(
        snap.node_property(people[3], name),
        Value::String("dan".into())
    );
    assert_eq!(snap.node_property(people[2], name), Value::Null);
    assert_eq!(
        snap.node_property(people[0], tags),
        Value::List(vec![Value::String("x".into())])
    );
    assert_eq!(snap.node_property(cities[1], id), Value::Int(20));
    assert_eq!(snap.node_property(999, id), Value::Null);
    let mut props = Vec::new();
    snap.node_properties(people[1], &mut props);
    assert_eq!(
        props,
        vec![(id, Value::Int(11)), (name, Value::String("bob".into()))]
    );

    // Adjacency in both directions, relationship ids and merged columns.
    let out = snap.adjacency(people[0], knows, Direction::Outgoing);
    let mut targets: Vec<u64> = out.neighbours().to_vec();
    targets.sort();
    let mut expected = vec![people[1], people[3]];
    expected.sort();
    assert_eq!(targets, expected);
    for i in 0..out.len() {
        let rel = out.rel_id(i);
        let info = snap.relationship(rel).unwrap();
        assert_eq!((info.start, info.end), (people[0], out.neighbour(i)));
        if out.neighbour(i) == people[1] {
            assert_eq!(snap.rel_property(rel, since), Value::Int(2001));
            assert_eq!(snap.rel_property(rel, weight), Value::Null);
        } else {
            assert_eq!(snap.rel_property(rel, weight), Value::Float(0.5));
        }
    }
    let inc = snap.adjacency(people[2], knows, Direction::Incoming);
    assert_eq!(inc.neighbours().to_vec(), vec![people[1]]);
    assert_eq!(snap.rel_property(inc.rel_id(0), since), Value::Int(2002));
    let column = snap.rel_column(knows, since).unwrap();
    assert_eq!(column.get(inc.property_row(0)), Value::Int(2002));

    let mut batch = NeighbourBatch::default();
    snap.neighbours_batch(
        &[people[0], people[1], 999],
        knows,
        Direction::Outgoing,
        &mut batch,
    );
    assert_eq!(batch.offsets, vec![0, 2, 3, 3]);

    // Indexes: equality and ranges; numbers compare by value.
    assert_eq!(
        snap.index_seek(person, id, &Value::Int(12)),
        Some(vec![people[2]])
    );
    assert_eq!(
        snap.index_seek(person, id, &Value::Float(13.0)),
        Some(vec![people[3]])
    );
    assert_eq!(
        snap.index_seek(place, id, &Value::Int(10)),
        Some(vec![cities[0]])
    );
    assert_eq!(snap.index_seek(person, name, &Value::Int(1)), None);
    let range = snap
        .index_range(
            person,
            id,
            Bound::Excluded(&Value::Int(10)),
            Bound::Unbounded,
        )
        .unwrap();
    assert_eq!(range.len(), 3);

    // Statistics.
    let stats = snap.statistics();
    assert_eq!(stats.relationship_count, 7);
    assert_eq!(stats.rel_types[knows as usize].count, 3);
    assert_eq!(stats.rel_types[knows as usize].outgoing.max, 2);
    let lives_in = cat.rel_type_id("LIVES_IN").unwrap();
    assert_eq!(stats.triple_count(admin, lives_in, place), 2);
    assert_eq!(stats.triple_count(person, knows, admin), 1);
    let idx = stats.indexes.iter().find(|i| i.label == person).unwrap();
    assert_eq!((idx.entries, idx.distinct), (4, 4));
}

#[test]
fn opening_damaged_or_missing_databases_fails_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = Database::open(&tmp.path().join("nope")).err().unwrap();
    assert_eq!(missing.kind, ErrorKind::IoError);
    assert!(
        missing.message.contains("not a Rhizome database"),
        "{missing}"
    );

    let dir = tmp.path().join("db");
    build(&dir);
    let segment = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "rhz"))
        .unwrap();
    let len = std::fs::metadata(&segment).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&segment)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    assert_eq!(
        Database::open(&dir).err().unwrap().kind,
        ErrorKind::CorruptDatabase
    );

    std::fs::write(dir.join("manifest.json"), b"{ not json").unwrap();
    assert_eq!(
        Database::open(&dir).err().unwrap().kind,
        ErrorKind::CorruptDatabase
    );
}

#[test]
fn writing_into_an_existing_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let err = GraphBuilder::new().write(tmp.path()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::IoError);
}

#[test]
fn empty_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    GraphBuilder::new().write(&dir).unwrap();
    let db = Database::open(&dir).unwrap();
    assert_eq!(db.snapshot().node_bound(), 0);
    assert!(db.check().is_empty());
}
