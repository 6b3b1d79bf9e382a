//! Named `:ID` columns are stored as properties and indexed on every label
//! of their group (including labels from a `:LABEL` column).

use rhizome_common::Value;
use rhizome_import::{import, ImportOptions, InputGroup, NoProgress};
use rhizome_storage::{Database, GraphRead};

#[test]
fn id_columns_are_indexed_on_every_label() {
    let dir = tempfile::tempdir().unwrap();
    let places = dir.path().join("places.csv");
    std::fs::write(
        &places,
        "id:ID(Place)|name|:LABEL\n10|Berlin|City\n20|Germany|Country\n30|Paris|City\n",
    )
    .unwrap();
    let options = ImportOptions {
        nodes: vec![InputGroup::parse(&format!("Place={}", places.display())).unwrap()],
        delimiter: b'|',
        id_type: rhizome_import::IdType::Integer,
        ..ImportOptions::default()
    };
    let db = dir.path().join("db");
    import(&db, &options, &NoProgress).unwrap();
    let snapshot = Database::open(&db).unwrap().snapshot();
    let catalog = snapshot.catalog();
    let id = catalog.property_key_id("id").unwrap();
    for (label, value, expect) in [
        ("Place", 20, true),
        ("City", 30, true),
        ("City", 20, false),
        ("Country", 20, true),
    ] {
        let label_id = catalog.label_id(label).unwrap();
        assert!(
            snapshot.index(label_id, id).is_some(),
            "no index on :{label}(id)"
        );
        let found = snapshot
            .index_seek(label_id, id, &Value::Int(value))
            .unwrap();
        assert_eq!(!found.is_empty(), expect, ":{label} {{id: {value}}}");
    }
}
