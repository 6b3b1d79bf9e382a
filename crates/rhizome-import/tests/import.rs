//! End-to-end: small CSV files written here, imported, read back.

mod common;

use common::{node_by, nodes, open, relationships, s, write};
use rhizome_common::{Date, Value};
use rhizome_import::{import, IdType, ImportOptions, InputGroup, NoProgress};
use std::collections::BTreeMap;

#[test]
fn imports_groups_labels_types_arrays_and_id_spaces() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Three files in one group: header, repeated header, no header.
    let p1 = write(
        d,
        "p1.csv",
        "pid:ID(P),name,age:int,tags:string[],score:float,active:boolean,born:date,junk:IGNORE,:LABEL\n\
         1,\"Smith, Ann\",41,a;b,1.5,true,1980-01-02,zzz,Admin\n\
         2,\"Bob \"\"the\"\" Builder\",,,,,,zzz,\n",
    );
    let p2 = write(
        d,
        "p2.csv",
        "pid:ID(P),name,age:int,tags:string[],score:float,active:boolean,born:date,junk:IGNORE,:LABEL\n\
         3,\"multi\nline\",7,x,2,FALSE,2000-02-29,,Admin;Staff\n",
    );
    let p3 = write(d, "p3.csv", "4,Dee,9,,,,,,Staff\n");
    // Another space with the same numbers.
    let c = write(d, "c.csv", "cid:ID(C),name\n1,Acme\n2,Globex\n");
    // A group without labels: labels from :LABEL only.
    let x = write(d, "x.csv", ":ID(X),kind,:LABEL\nq,solo,Foo;Bar\nr,other,\n");
    let works = write(
        d,
        "works.csv",
        ":START_ID(P),:END_ID(C),since:long\n1,1,2001\n2,1,\n3,2,2003\n",
    );
    let typed = write(
        d,
        "typed.csv",
        ":START_ID(P),:END_ID(P),:TYPE,weight:double\n1,2,KNOWS,0.5\n2,3,LIKES,1\n3,4,KNOWS,\n",
    );
    let options = ImportOptions {
        nodes: vec![
            InputGroup::new(["Person"], [p1, p2, p3]),
            InputGroup::new(["Company"], [c]),
            InputGroup::new(Vec::<String>::new(), [x]),
        ],
        relationships: vec![
            InputGroup::new(["WORKS_AT"], [works]),
            InputGroup::new(Vec::<String>::new(), [typed]),
        ],
        ..ImportOptions::default()
    };
    let db = d.join("db");
    let report = import(&db, &options, &NoProgress).unwrap();
    assert_eq!(report.nodes, 8);
    assert_eq!(report.relationships, 6);
    assert_eq!(report.rows, 14);
    let labels: BTreeMap<String, u64> = report.label_counts.iter().cloned().collect();
    assert_eq!(labels["Person"], 4);
    assert_eq!(labels["Admin"], 2);
    assert_eq!(labels["Staff"], 2);
    assert_eq!(labels["Company"], 2);
    assert_eq!(labels["Foo"], 1);
    assert_eq!(labels["Bar"], 1);
    let types: BTreeMap<String, u64> = report.type_counts.iter().cloned().collect();
    assert_eq!(
        types,
        [
            ("WORKS_AT".to_string(), 3),
            ("KNOWS".to_string(), 2),
            ("LIKES".to_string(), 1)
        ]
        .into_iter()
        .collect()
    );
    assert!(report
        .render()
        .contains("Imported 8 nodes and 6 relationships"));

    let snap = open(&db);
    let ann = node_by(&snap, "pid", s("1"));
    assert_eq!(ann.labels, vec!["Admin", "Person"]);
    assert_eq!(ann.props["name"], s("Smith, Ann"));
    assert_eq!(ann.props["age"], Value::Int(41));
    assert_eq!(ann.props["tags"], Value::List(vec![s("a"), s("b")]));
    assert_eq!(ann.props["score"], Value::Float(1.5));
    assert_eq!(ann.props["active"], Value::Bool(true));
    assert_eq!(
        ann.props["born"],
        Value::Date(Date::from_ymd(1980, 1, 2).unwrap())
    );
    assert!(!ann.props.contains_key("junk"));
    let bob = node_by(&snap, "pid", s("2"));
    assert_eq!(bob.labels, vec!["Person"]);
    assert_eq!(bob.props["name"], s("Bob \"the\" Builder"));
    // Empty fields: no property except in string columns.
    assert_eq!(bob.props.keys().collect::<Vec<_>>(), vec!["name", "pid"]);
    let third = node_by(&snap, "pid", s("3"));
    assert_eq!(third.labels, vec!["Admin", "Person", "Staff"]);
    assert_eq!(third.props["name"], s("multi\nline"));
    assert_eq!(third.props["active"], Value::Bool(false));
    let dee = node_by(&snap, "pid", s("4"));
    assert_eq!(dee.labels, vec!["Person", "Staff"]);
    let acme = node_by(&snap, "cid", s("1"));
    assert_eq!(acme.labels, vec!["Company"]);
    assert_eq!(acme.props["name"], s("Acme"));
    let all = nodes(&snap);
    let foo: Vec<_> = all
        .iter()
        .filter(|(_, r)| r.props.get("kind") == Some(&s("solo")))
        .collect();
    assert_eq!(foo[0].1.labels, vec!["Bar", "Foo"]);
    assert!(
        !foo[0].1.props.contains_key("id"),
        ":ID without a name stores no property"
    );
    let other: Vec<_> = all
        .iter()
        .filter(|(_, r)| r.props.get("kind") == Some(&s("other")))
        .collect();
    assert!(other[0].1.labels.is_empty());

    let rels = relationships(&snap, "name");
    let find = |ty: &str, from: &str, to: &str| {
        rels.iter()
            .find(|(t, a, b, _)| t == ty && *a == s(from) && *b == s(to))
            .unwrap_or_else(|| panic!("{ty} {from} {to} in {rels:?}"))
            .3
            .clone()
    };
    assert_eq!(
        find("WORKS_AT", "Smith, Ann", "Acme")["since"],
        Value::Int(2001)
    );
    assert!(find("WORKS_AT", "Bob \"the\" Builder", "Acme").is_empty());
    assert_eq!(
        find("WORKS_AT", "multi\nline", "Globex")["since"],
        Value::Int(2003)
    );
    assert_eq!(
        find("KNOWS", "Smith, Ann", "Bob \"the\" Builder")["weight"],
        Value::Float(0.5)
    );
    assert_eq!(
        find("LIKES", "Bob \"the\" Builder", "multi\nline")["weight"],
        Value::Float(1.0)
    );
    assert!(find("KNOWS", "multi\nline", "Dee").is_empty());
}

#[test]
fn integer_ids_tabs_custom_quotes_and_empty_strings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let people = write(
        d,
        "people.tsv",
        "id:ID\tname\tnick\n10\t'a\tb'\t\n20\tc\t''\n",
    );
    let knows = write(d, "knows.tsv", ":START_ID\t:END_ID\n10\t20\n");
    let base = ImportOptions {
        nodes: vec![InputGroup::new(["P"], [people])],
        relationships: vec![InputGroup::new(["KNOWS"], [knows])],
        delimiter: b'\t',
        quote: b'\'',
        id_type: IdType::Integer,
        threads: 1,
        ..ImportOptions::default()
    };
    let db = d.join("db1");
    import(&db, &base, &NoProgress).unwrap();
    let snap = open(&db);
    let a = node_by(&snap, "id", Value::Int(10));
    assert_eq!(a.props["name"], s("a\tb"));
    assert_eq!(a.props["nick"], s(""));
    let c = node_by(&snap, "id", Value::Int(20));
    assert_eq!(c.props["nick"], s(""));
    assert_eq!(relationships(&snap, "id")[0].1, Value::Int(10));

    let db = d.join("db2");
    import(
        &db,
        &ImportOptions {
            ignore_empty_strings: true,
            ..base.clone()
        },
        &NoProgress,
    )
    .unwrap();
    let snap = open(&db);
    assert!(!node_by(&snap, "id", Value::Int(10))
        .props
        .contains_key("nick"));
    assert!(!node_by(&snap, "id", Value::Int(20))
        .props
        .contains_key("nick"));
}

#[test]
fn skips_duplicates_and_bad_relationships_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = write(d, "n.csv", "id:ID,v:int\n1,1\n2,2\n1,3\n");
    let r = write(d, "r.csv", ":START_ID,:END_ID\n1,2\n1,9\n7,2\n2,1\n");
    let options = ImportOptions {
        nodes: vec![InputGroup::new(["N"], [n])],
        relationships: vec![InputGroup::new(["R"], [r])],
        skip_duplicate_nodes: true,
        skip_bad_relationships: true,
        ..ImportOptions::default()
    };
    let db = d.join("db");
    let report = import(&db, &options, &NoProgress).unwrap();
    assert_eq!((report.nodes, report.skipped_nodes), (2, 1));
    assert_eq!((report.relationships, report.skipped_relationships), (2, 2));
    assert!(report
        .render()
        .contains("Skipped: 1 duplicate nodes, 2 relationships"));
    let snap = open(&db);
    assert_eq!(
        node_by(&snap, "id", s("1")).props["v"],
        Value::Int(1),
        "the first row with an id wins"
    );
}

#[test]
fn many_blocks_and_threads_give_the_same_database() {
    // Enough rows to span many 1 MiB blocks, with quoted newlines.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut nodes_text = String::from("id:ID,text\n");
    for i in 0..60_000 {
        nodes_text.push_str(&format!(
            "{i},\"row {i}\nsecond line, with comma {}\"\n",
            "x".repeat(i % 50)
        ));
    }
    let mut rels_text = String::from(":START_ID,:END_ID,w:int\n");
    for i in 0..60_000u64 {
        rels_text.push_str(&format!("{i},{},{}\n", (i * 7919) % 60_000, i % 13));
    }
    let n = write(d, "n.csv", &nodes_text);
    let r = write(d, "r.csv", &rels_text);
    let mut reports = Vec::new();
    for threads in [1, 3] {
        let options = ImportOptions {
            nodes: vec![InputGroup::new(["N"], [n.clone()])],
            relationships: vec![InputGroup::new(["R"], [r.clone()])],
            threads,
            ..ImportOptions::default()
        };
        let db = d.join(format!("db{threads}"));
        let report = import(&db, &options, &NoProgress).unwrap();
        assert_eq!((report.nodes, report.relationships), (60_000, 60_000));
        let snap = open(&db);
        let row = node_by(&snap, "id", s("59999"));
        assert_eq!(
            row.props["text"],
            s(&format!(
                "row 59999\nsecond line, with comma {}",
                "x".repeat(59_999 % 50)
            ))
        );
        reports.push(rhizome_storage::GraphRead::statistics(&snap).relationship_count);
    }
    assert_eq!(reports, vec![60_000, 60_000]);
}

#[test]
fn header_only_first_file_and_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let header = write(d, "h.csv", "id:ID(N)|v:long\r\n");
    let part1 = write(d, "p1.csv", "1|10\r\n2|20\r\n");
    let part2 = write(d, "p2.csv", "id:ID(N)|v:long\r\n3|30");
    let rels = write(d, "r.csv", ":START_ID(N)|:END_ID(N)\r\n1|3\r\n");
    let options = ImportOptions {
        nodes: vec![InputGroup::new(["N"], [header, part1, part2])],
        relationships: vec![InputGroup::new(["R"], [rels])],
        delimiter: b'|',
        ..ImportOptions::default()
    };
    let db = d.join("db");
    let report = import(&db, &options, &NoProgress).unwrap();
    assert_eq!((report.nodes, report.relationships), (3, 1));
    let snap = open(&db);
    assert_eq!(node_by(&snap, "id", s("3")).props["v"], Value::Int(30));
    assert_eq!(node_by(&snap, "id", s("1")).props["v"], Value::Int(10));
    assert_eq!(relationships(&snap, "v")[0].1, Value::Int(10));
    assert_eq!(relationships(&snap, "v")[0].2, Value::Int(30));
}

#[test]
fn progress_reports_stages_bytes_and_rows() {
    use rhizome_import::ImportProgress;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Recorder {
        events: Mutex<Vec<String>>,
        totals: Mutex<BTreeMap<String, (u64, u64, u64)>>,
        stage: Mutex<String>,
    }
    impl ImportProgress for Recorder {
        fn begin(&self, stage: &str, total_bytes: u64) {
            self.events.lock().unwrap().push(format!("begin {stage}"));
            *self.stage.lock().unwrap() = stage.to_string();
            self.totals
                .lock()
                .unwrap()
                .insert(stage.to_string(), (total_bytes, 0, 0));
        }
        fn advance(&self, bytes: u64, rows: u64) {
            let stage = self.stage.lock().unwrap().clone();
            let mut totals = self.totals.lock().unwrap();
            let entry = totals.get_mut(&stage).unwrap();
            entry.1 += bytes;
            entry.2 += rows;
        }
        fn end(&self) {
            self.events.lock().unwrap().push("end".to_string());
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n_text = "id:ID,v:int\n1,1\n2,2\n3,3\n";
    let r_text = ":START_ID,:END_ID\n1,2\n2,3\n";
    let n = write(d, "n.csv", n_text);
    let r = write(d, "r.csv", r_text);
    let options = ImportOptions {
        nodes: vec![InputGroup::new(["N"], [n])],
        relationships: vec![InputGroup::new(["R"], [r])],
        ..ImportOptions::default()
    };
    let recorder = Recorder::default();
    let report = import(&d.join("db"), &options, &recorder).unwrap();
    assert_eq!(
        *recorder.events.lock().unwrap(),
        vec![
            "begin nodes",
            "end",
            "begin relationships",
            "end",
            "begin writing",
            "end"
        ]
    );
    let totals = recorder.totals.lock().unwrap();
    assert_eq!(
        totals["nodes"],
        (n_text.len() as u64, n_text.len() as u64, 3)
    );
    assert_eq!(
        totals["relationships"],
        (r_text.len() as u64, r_text.len() as u64, 2)
    );
    assert_eq!(report.rows, 5);
    assert!(report.peak_memory_bytes > 0);
    assert!(report.bytes_on_disk > 0);
}

#[test]
fn generated_datasets_import() {
    use rhizome_import::{generate_chain, generate_likes, ChainOptions, LikesOptions};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let likes = LikesOptions {
        persons: 300,
        items: 20,
        likes_per_person: 7,
        seed: 5,
    };
    let options = generate_likes(&d.join("likes"), &likes).unwrap();
    let report = import(&d.join("likes-db"), &options, &NoProgress).unwrap();
    assert_eq!((report.nodes, report.relationships), (320, 2_100));
    let labels: BTreeMap<String, u64> = report.label_counts.iter().cloned().collect();
    assert_eq!((labels["Person"], labels["Item"]), (300, 20));
    let snap = open(&d.join("likes-db"));
    let person = node_by(&snap, "id", Value::Int(299));
    assert_eq!(person.labels, vec!["Person"]);
    for (ty, _, target, props) in relationships(&snap, "id") {
        assert_eq!(ty, "LIKES");
        assert!(matches!(target, Value::Int(i) if (0..20).contains(&i)));
        assert!(matches!(props["weight"], Value::Float(w) if (0.0..10.0).contains(&w)));
    }

    let options = generate_chain(
        &d.join("chain"),
        &ChainOptions {
            nodes: 50,
            degree: 4,
        },
    )
    .unwrap();
    let report = import(&d.join("chain-db"), &options, &NoProgress).unwrap();
    assert_eq!((report.nodes, report.relationships), (50, 200));
    let labels: BTreeMap<String, u64> = report.label_counts.iter().cloned().collect();
    assert_eq!((labels["LBL_ALL"], labels["LBL_10M"]), (50, 5));
    let snap = open(&d.join("chain-db"));
    let n4 = node_by(&snap, "id", Value::Int(4));
    assert_eq!(n4.labels, vec!["LBL_10M", "LBL_ALL"]);
    assert_eq!(n4.props["idMod7"], Value::Int(4));
    assert_eq!(node_by(&snap, "id", Value::Int(5)).labels, vec!["LBL_ALL"]);
    let mut edges: Vec<(i64, i64)> = relationships(&snap, "id")
        .into_iter()
        .map(|(_, a, b, _)| match (a, b) {
            (Value::Int(a), Value::Int(b)) => (a, b),
            other => panic!("{other:?}"),
        })
        .collect();
    edges.sort();
    let expected: Vec<(i64, i64)> = (0..50)
        .flat_map(|n| (1..=4).map(move |k| (n, (n + k) % 50)))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(edges, expected);
}

#[test]
fn groups_without_rows_are_fine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = write(d, "a.csv", "id:ID(A),name\n");
    let b = write(d, "b.csv", "id:ID(B),name\n1,x\n");
    let r = write(d, "r.csv", ":START_ID(B),:END_ID(B),w:int\n");
    let options = ImportOptions {
        nodes: vec![InputGroup::new(["A"], [a]), InputGroup::new(["B"], [b])],
        relationships: vec![InputGroup::new(["R"], [r])],
        ..ImportOptions::default()
    };
    let report = import(&d.join("db"), &options, &NoProgress).unwrap();
    assert_eq!((report.nodes, report.relationships, report.rows), (1, 0, 1));
    let snap = open(&d.join("db"));
    assert_eq!(node_by(&snap, "id", s("1")).labels, vec!["B"]);
}
