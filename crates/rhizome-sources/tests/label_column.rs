//! Labels read from a column (`label_column`) against real PostgreSQL and
//! Redis servers with the places of `scripts/sources.sh load-places`
//! (run by `scripts/suites/50-sources.sh`): label scans, key lookups and
//! label filters after an expansion see each node's labels from its row,
//! `labels(n)` returns them, EXPLAIN names the column, and a value the
//! mapping does not declare, or a column of the wrong SQL type, fails
//! with the mapping key named.

mod common;

use common::{engine, example, rows};
use rhizome_common::{ErrorKind, Value};
use std::collections::BTreeMap;

fn ints(rows: &[Vec<Value>]) -> Vec<i64> {
    rows.iter()
        .map(|r| match r[0] {
            Value::Int(i) => i,
            ref other => panic!("not an integer: {other:?}"),
        })
        .collect()
}

fn strings(value: &Value) -> Vec<String> {
    let Value::List(items) = value else {
        panic!("not a list: {value:?}")
    };
    let mut names: Vec<String> = items
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => panic!("not a string: {other:?}"),
        })
        .collect();
    names.sort();
    names
}

#[test]
fn labels_come_from_the_column_over_postgres_and_redis() {
    for file in ["places-postgres.json", "places-redis.json"] {
        let e = engine(&example(file)).unwrap();
        let q =
            |query: &str| rows(&e, query).unwrap_or_else(|err| panic!("{file}: {query}: {err}"));
        // Label scans read every row and keep the nodes the column names.
        assert_eq!(
            ints(&q("MATCH (n:City) RETURN n.id ORDER BY n.id")),
            [1, 2],
            "{file}"
        );
        assert_eq!(ints(&q("MATCH (n:Capital) RETURN n.id")), [1], "{file}");
        assert_eq!(ints(&q("MATCH (n:Village) RETURN n.id")), [3], "{file}");
        assert_eq!(
            ints(&q("MATCH (n:Place) RETURN n.id ORDER BY n.id")),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(
            ints(&q("MATCH (n:City:Capital) RETURN n.id")),
            [1],
            "{file}"
        );
        // labels(n): the space's own label and the column's.
        let got = q("MATCH (n:Place) RETURN labels(n) ORDER BY n.id");
        let labels: Vec<Vec<String>> = got.iter().map(|r| strings(&r[0])).collect();
        assert_eq!(
            labels,
            [
                vec!["Capital", "City", "Place"],
                vec!["City", "Place"],
                vec!["Place", "Village"],
                vec!["Place"],
                vec!["Place"],
            ],
            "{file}"
        );
        // Key lookups by a column label check the column.
        assert_eq!(
            ints(&q("MATCH (n:Capital {id: 1}) RETURN n.id")),
            [1],
            "{file}"
        );
        assert!(
            q("MATCH (n:Capital {id: 2}) RETURN n.id").is_empty(),
            "{file}"
        );
        assert_eq!(
            ints(&q("MATCH (n:City) WHERE n.id IN [2, 3] RETURN n.id")),
            [2]
        );
        // Label filters after an expansion.
        assert_eq!(
            ints(&q("MATCH (:Capital)-[:ROAD_TO]->(b:City) RETURN b.id")),
            [2],
            "{file}"
        );
        assert_eq!(
            ints(&q(
                "MATCH (a:Place)-[:ROAD_TO]->(:Village) RETURN a.id ORDER BY a.id"
            )),
            [1, 2],
            "{file}"
        );
        assert_eq!(
            ints(&q(
                "MATCH (n) WHERE n:Village OR n:Capital RETURN n.id ORDER BY n.id"
            )),
            [1, 3]
        );
        // EXPLAIN names the column.
        let plan = e
            .execute(
                "EXPLAIN MATCH (n:City) RETURN n",
                BTreeMap::new(),
                &Default::default(),
            )
            .unwrap()
            .0;
        let text = plan.plan_text().unwrap();
        assert!(
            text.contains("labels City, Capital, Village of :Place read from its column `kind`"),
            "{text}"
        );
    }
}

#[test]
fn an_undeclared_label_or_a_column_of_the_wrong_type_is_an_error() {
    // A row naming a label the mapping does not declare fails the
    // statement that reads its labels, naming the node and the key.
    let text = example("places-postgres.json").replace(
        "SELECT id, name, kind FROM",
        "SELECT id, name, CASE WHEN id = 3 THEN ARRAY['Twon'] ELSE kind END AS kind FROM",
    );
    let e = engine(&text).unwrap();
    let err = rows(&e, "MATCH (n:City) RETURN n.id").unwrap_err();
    assert_eq!(err.code, Some("SourceDataError"), "{err}");
    assert!(
        err.message
            .contains("node :Place {id: 3}: its label column `kind` holds `Twon`")
            && err.message.contains("nodes.Place.label_column.labels"),
        "{err}"
    );
    // Nodes that do not read it are unaffected.
    assert_eq!(
        ints(&rows(&e, "MATCH (n:Place {id: 1}) RETURN n.id").unwrap()),
        [1]
    );
    // A column whose SQL type is not the declared one fails at connect,
    // naming the mapping key.
    let text = example("places-postgres.json")
        .replace("\"kind\": \"string_list\"", "\"kind\": \"string\"");
    let err = engine(&text)
        .err()
        .expect("a text[] column declared string");
    assert_eq!(err.kind, ErrorKind::InputError, "{err}");
    assert!(
        err.message.contains("mapping key `nodes.Place.fetch`") && err.message.contains("`kind`"),
        "{err}"
    );
    // A column the query does not return.
    let text = example("places-postgres.json")
        .replace("SELECT id, name, kind FROM", "SELECT id, name FROM");
    let err = engine(&text).err().expect("no kind column");
    assert!(
        err.message
            .contains("mapping key `nodes.Place.fetch`: the query returns no column `kind`"),
        "{err}"
    );
}
