//! Imports the LDBC data sets from `shared/datasets` and checks exact counts.
//! The expected numbers were counted independently of the importer (data
//! lines per file, header lines excluded; see the datasets' SOURCE.md).

use rhizome_import::bench::find_datasets_dir;
use rhizome_import::{import, ldbc_options, LdbcLayout, NoProgress};
use rhizome_storage::{Database, GraphRead};
use std::collections::BTreeMap;

fn dataset(kind: LdbcLayout) -> std::path::PathBuf {
    let dir = find_datasets_dir()
        .expect("shared/datasets not found: set RHIZOME_DATASETS")
        .join(kind.dir_name());
    assert!(dir.is_dir(), "{} missing", dir.display());
    dir
}

fn counts(pairs: &[(String, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().cloned().collect()
}

fn expected(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn imports_ldbc_sf01_with_exact_counts() {
    let out = tempfile::tempdir().unwrap();
    let db_dir = out.path().join("sf01");
    let options = ldbc_options(&dataset(LdbcLayout::Sf01), LdbcLayout::Sf01);
    let report = import(&db_dir, &options, &NoProgress).unwrap();
    assert_eq!(report.nodes, 327_588);
    assert_eq!(report.relationships, 1_354_697);
    assert_eq!(report.rows, 327_588 + 1_354_697);
    assert_eq!((report.skipped_nodes, report.skipped_relationships), (0, 0));
    assert_eq!(
        counts(&report.label_counts),
        expected(&[
            ("Person", 1_528),
            ("Message", 151_043 + 135_701),
            ("Comment", 151_043),
            ("Post", 135_701),
            ("Forum", 13_750),
            ("Tag", 16_080),
            ("TagClass", 71),
            ("Place", 1_460),
            ("City", 1_343),
            ("Country", 111),
            ("Continent", 6),
            ("Organisation", 7_955),
            ("Company", 1_575),
            ("University", 6_380),
        ])
    );
    assert_eq!(
        counts(&report.type_counts),
        expected(&[
            ("HAS_CREATOR", 43_243 + 107_800 + 135_701),
            ("HAS_TAG", 19_592 + 171_711 + 47_697 + 51_118),
            ("IS_LOCATED_IN", 66_407 + 84_636 + 7_955 + 1_528 + 135_701),
            ("REPLY_OF", 76_787 + 74_256),
            ("CONTAINER_OF", 135_701),
            ("HAS_MODERATOR", 13_750),
            ("HAS_INTEREST", 35_475),
            ("KNOWS", 7_039 + 7_034),
            ("LIKES", 31_314 + 30_911 + 19_830 + 27_385),
            ("STUDY_AT", 1_209),
            ("WORK_AT", 3_313),
            ("IS_PART_OF", 1_454),
            ("IS_SUBCLASS_OF", 70),
            ("HAS_TYPE", 16_080),
        ])
    );

    // Read back: statistics and a person's properties.
    let db = Database::open(&db_dir).unwrap();
    let snapshot = db.snapshot();
    assert_eq!(snapshot.statistics().node_count, 327_588);
    assert_eq!(snapshot.statistics().relationship_count, 1_354_697);
    let catalog = snapshot.catalog();
    let person = catalog.label_id("Person").unwrap();
    let id_key = catalog.property_key_id("id").unwrap();
    let first_name = catalog.property_key_id("firstName").unwrap();
    let birthday = catalog.property_key_id("birthday").unwrap();
    let range = snapshot.label_ranges(person);
    let node = range
        .iter()
        .flat_map(|r| r.clone())
        .find(|&n| snapshot.node_property(n, id_key) == rhizome_common::Value::Int(933))
        .expect("person 933");
    assert_eq!(
        snapshot.node_property(node, first_name),
        rhizome_common::Value::String("Mahinda".into())
    );
    assert_eq!(
        snapshot.node_property(node, birthday),
        rhizome_common::Value::Int(19_891_203)
    );
}

#[test]
fn imports_ldbc_tiny_with_exact_counts() {
    let out = tempfile::tempdir().unwrap();
    let db_dir = out.path().join("tiny");
    let options = ldbc_options(&dataset(LdbcLayout::Tiny), LdbcLayout::Tiny);
    let report = import(&db_dir, &options, &NoProgress).unwrap();
    assert_eq!(report.nodes, 34_735);
    assert_eq!(report.relationships, 70_842);
    assert_eq!(
        counts(&report.label_counts),
        expected(&[
            ("Person", 222),
            ("Message", 5_924 + 2_218),
            ("Comment", 2_218),
            ("Post", 5_924),
            ("Forum", 805),
            ("Tag", 16_080),
            ("TagClass", 71),
            ("Place", 1_460),
            ("City", 1_343),
            ("Country", 111),
            ("Continent", 6),
            ("Organisation", 7_955),
            ("Company", 1_575),
            ("University", 6_380),
        ])
    );
    assert_eq!(
        counts(&report.type_counts),
        expected(&[
            ("HAS_CREATOR", 2_218 + 5_924),
            ("HAS_TAG", 2_553 + 5_360 + 683),
            ("IS_LOCATED_IN", 2_218 + 7_955 + 222 + 5_924),
            ("REPLY_OF", 1_109 + 1_109),
            ("CONTAINER_OF", 5_924),
            ("HAS_MEMBER", 3_584),
            ("HAS_MODERATOR", 805),
            ("HAS_INTEREST", 4_777),
            ("KNOWS", 825),
            ("LIKES", 624 + 759),
            ("STUDY_AT", 180),
            ("WORK_AT", 485),
            ("IS_PART_OF", 1_454),
            ("IS_SUBCLASS_OF", 70),
            ("HAS_TYPE", 16_080),
        ])
    );
    // Arrays and ignored empty strings.
    let db = Database::open(&db_dir).unwrap();
    let snapshot = db.snapshot();
    let catalog = snapshot.catalog();
    let id_key = catalog.property_key_id("id").unwrap();
    let speaks = catalog.property_key_id("speaks").unwrap();
    let person = catalog.label_id("Person").unwrap();
    let node = snapshot
        .label_ranges(person)
        .iter()
        .flat_map(|r| r.clone())
        .find(|&n| {
            snapshot.node_property(n, id_key) == rhizome_common::Value::Int(8_796_093_022_220)
        })
        .expect("person 8796093022220");
    assert_eq!(
        snapshot.node_property(node, speaks),
        rhizome_common::Value::List(vec![
            rhizome_common::Value::String("es".into()),
            rhizome_common::Value::String("en".into())
        ])
    );
    let post = catalog.label_id("Post").unwrap();
    let language = catalog.property_key_id("language").unwrap();
    let post_node = snapshot
        .label_ranges(post)
        .iter()
        .flat_map(|r| r.clone())
        .find(|&n| snapshot.node_property(n, id_key) == rhizome_common::Value::Int(343_597_383_680))
        .expect("post 343597383680");
    assert_eq!(
        snapshot.node_property(post_node, language),
        rhizome_common::Value::Null
    );
}
