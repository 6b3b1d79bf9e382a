//! Bad input: every error names the file, line and field, the import exits
//! with an error, and no database directory is left behind (an existing one
//! is untouched).

mod common;

use common::{open, write};
use rhizome_common::{Error, ErrorKind};
use rhizome_import::{import, IdType, ImportOptions, InputGroup, NoProgress};
use std::path::Path;

/// Entries of `dir` other than the input files (`*.csv`).
fn leftovers(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".csv"))
        .collect();
    names.sort();
    names
}

/// Imports `nodes` (label, file name, text) and `rels` (type, file name, text)
/// into `dir/db`, expecting failure; checks nothing is left behind.
fn fails_with(options: ImportOptions, dir: &Path) -> Error {
    let err = import(&dir.join("db"), &options, &NoProgress).expect_err("import should fail");
    assert_eq!(
        leftovers(dir),
        Vec::<String>::new(),
        "left behind after {err}"
    );
    err
}

fn setup(
    nodes: &[(&str, &str, &str)],
    rels: &[(&str, &str, &str)],
) -> (tempfile::TempDir, ImportOptions) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = ImportOptions::default();
    for (label, name, text) in nodes {
        let path = write(dir.path(), name, text);
        options.nodes.push(InputGroup::new([*label], [path]));
    }
    for (ty, name, text) in rels {
        let path = write(dir.path(), name, text);
        options.relationships.push(InputGroup::new([*ty], [path]));
    }
    (dir, options)
}

fn assert_at(err: &Error, kind: ErrorKind, file: &str, line: u32, column: u32, needle: &str) {
    assert_eq!(err.kind, kind, "{err}");
    assert!(
        err.source_name
            .as_deref()
            .is_some_and(|s| s.ends_with(file)),
        "{err}"
    );
    let pos = err.position.unwrap_or_else(|| panic!("no position: {err}"));
    assert_eq!((pos.line, pos.column), (line, column), "{err}");
    assert!(err.message.contains(needle), "`{needle}` not in: {err}");
    let shown = err.to_string();
    assert!(shown.starts_with("InputError: "), "{shown}");
    assert!(
        shown.ends_with(&format!("{file}:{line}:{column}")),
        "{shown}"
    );
}

#[test]
fn unterminated_quote() {
    let (dir, options) = setup(
        &[("N", "n.csv", "id:ID,name\n1,ok\n2,\"never closed\n3,x\n")],
        &[],
    );
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "n.csv",
        3,
        2,
        "unterminated quoted field",
    );
}

#[test]
fn wrong_field_count() {
    let (dir, options) = setup(&[("N", "n.csv", "id:ID,name,age:int\n1,a,3\n2,b\n")], &[]);
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "n.csv",
        3,
        3,
        "wrong number of fields: the header has 3, this row has 2",
    );
    let (dir, options) = setup(&[("N", "n.csv", "id:ID,name\n1,a,3\n")], &[]);
    let err = fails_with(options, dir.path());
    assert_at(&err, ErrorKind::InputError, "n.csv", 2, 3, "this row has 3");
}

#[test]
fn unparsable_values() {
    let cases = [
        (
            "id:ID,age:int\n1,4\n2,four\n",
            3,
            2,
            "field 2 (age): `four` is not an int",
        ),
        (
            "id:ID,ok:boolean\n1,true\n2,yes\n",
            3,
            2,
            "field 2 (ok): `yes` is not a boolean",
        ),
        ("id:ID,born:date\n1,2020-13-01\n", 2, 2, "field 2 (born)"),
        (
            "id:ID,x:float\n1,1.5\n2,1,5\n",
            3,
            3,
            "wrong number of fields",
        ),
        ("id:ID,w:double\n1,abc\n", 2, 2, "`abc` is not a number"),
        ("id:ID,xs:long[]\n1,1;2;x\n", 2, 2, "`x` is not a long"),
        ("id:ID,t:datetime\n1,yesterday\n", 2, 2, "field 2 (t)"),
    ];
    for (text, line, column, needle) in cases {
        let (dir, options) = setup(&[("N", "n.csv", text)], &[]);
        let err = fails_with(options, dir.path());
        assert_at(&err, ErrorKind::InputError, "n.csv", line, column, needle);
    }
    // Integer ids must be integers.
    let (dir, mut options) = setup(&[("N", "n.csv", "id:ID,x\n1,a\nb2,b\n")], &[]);
    options.id_type = IdType::Integer;
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "n.csv",
        3,
        1,
        "`b2` is not an integer id",
    );
}

#[test]
fn duplicate_node_id() {
    let (dir, options) = setup(&[("N", "n.csv", "name,id:ID(S)\na,1\nb,2\nc,1\n")], &[]);
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "n.csv",
        4,
        2,
        "duplicate node id `1` in id space `S`",
    );
    // Across groups of one space too.
    let (dir, options) = setup(
        &[
            ("A", "a.csv", "id:ID(S)\n1\n"),
            ("B", "b.csv", "id:ID(S)\n2\n1\n"),
        ],
        &[],
    );
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "b.csv",
        3,
        1,
        "duplicate node id `1`",
    );
}

#[test]
fn unknown_id_space() {
    let (dir, options) = setup(
        &[("N", "n.csv", "id:ID(Person)\n1\n")],
        &[("R", "r.csv", ":START_ID(Person),:END_ID(Persn)\n1,1\n")],
    );
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "r.csv",
        1,
        2,
        "unknown id space `Persn`",
    );
}

#[test]
fn dangling_endpoint() {
    let (dir, options) = setup(
        &[("N", "n.csv", "id:ID\n1\n2\n")],
        &[("R", "r.csv", ":START_ID,:END_ID,w:int\n1,2,1\n2,3,1\n")],
    );
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "r.csv",
        3,
        2,
        "no node has id `3`",
    );
    let (dir, options) = setup(
        &[("N", "n.csv", "id:ID\n1\n2\n")],
        &[("R", "r.csv", ":START_ID,:END_ID\n1,2\n\n5,1\n")],
    );
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "r.csv",
        4,
        1,
        "no node has id `5`",
    );
}

#[test]
fn missing_file() {
    let (dir, mut options) = setup(&[("N", "n.csv", "id:ID\n1\n")], &[]);
    options
        .relationships
        .push(InputGroup::new(["R"], [dir.path().join("nope.csv")]));
    let err = fails_with(options, dir.path());
    assert_eq!(err.kind, ErrorKind::IoError);
    assert!(
        err.source_name.as_deref().unwrap().ends_with("nope.csv"),
        "{err}"
    );
    assert!(err.message.contains("does not exist"), "{err}");
}

#[test]
fn unknown_header_type() {
    let (dir, options) = setup(&[("N", "n.csv", "id:ID,age:integr\n1,2\n")], &[]);
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "n.csv",
        1,
        2,
        "unknown header type `integr`",
    );
}

#[test]
fn missing_start_or_end_id() {
    let (dir, options) = setup(
        &[("N", "n.csv", "id:ID\n1\n")],
        &[("R", "r.csv", ":END_ID,w:int\n1,2\n")],
    );
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "r.csv",
        1,
        1,
        "no :START_ID field",
    );
    let (dir, options) = setup(
        &[("N", "n.csv", "id:ID\n1\n")],
        &[("R", "r.csv", ":START_ID\n1\n")],
    );
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "r.csv",
        1,
        1,
        "no :END_ID field",
    );
}

#[test]
fn relationships_without_a_type() {
    let (dir, mut options) = setup(&[("N", "n.csv", "id:ID\n1\n")], &[]);
    let r = write(dir.path(), "r.csv", ":START_ID,:END_ID\n1,1\n");
    options
        .relationships
        .push(InputGroup::new(Vec::<String>::new(), [r]));
    let err = fails_with(options, dir.path());
    assert_at(&err, ErrorKind::InputError, "r.csv", 1, 1, "no type");
}

#[test]
fn existing_database_is_kept_on_failure_and_replaced_only_with_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = write(d, "good.csv", "id:ID,v:int\n1,1\n");
    let better = write(d, "better.csv", "id:ID,v:int\n1,2\n2,3\n");
    let bad = write(d, "bad.csv", "id:ID,v:int\n1,x\n");
    let db = d.join("db");
    let with = |file: &Path, overwrite: bool| ImportOptions {
        nodes: vec![InputGroup::new(["N"], [file.to_path_buf()])],
        overwrite,
        ..ImportOptions::default()
    };
    import(&db, &with(&good, false), &NoProgress).unwrap();
    let before: Vec<_> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let snapshot_bytes = |db: &Path| {
        let mut files: Vec<_> = std::fs::read_dir(db)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| std::fs::read(f).unwrap())
            .collect::<Vec<_>>()
    };
    let original = snapshot_bytes(&db);

    // Without --overwrite-destination: refused before reading anything.
    let err = import(&db, &with(&better, false), &NoProgress).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ArgumentError);
    assert!(err.message.contains("--overwrite-destination"), "{err}");
    // With overwrite but bad input: the old database survives untouched.
    let err = import(&db, &with(&bad, true), &NoProgress).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InputError);
    assert_eq!(snapshot_bytes(&db), original);
    assert_eq!(std::fs::read_dir(&db).unwrap().count(), before.len());
    assert_eq!(leftovers(d), vec!["db"]);
    assert_eq!(
        rhizome_storage::GraphRead::statistics(&open(&db)).node_count,
        1
    );
    // With overwrite and good input: replaced.
    import(&db, &with(&better, true), &NoProgress).unwrap();
    assert_eq!(
        rhizome_storage::GraphRead::statistics(&open(&db)).node_count,
        2
    );
    assert_eq!(leftovers(d), vec!["db"]);
    // An empty existing directory is fine without overwrite.
    let empty = d.join("empty");
    std::fs::create_dir(&empty).unwrap();
    import(&empty, &with(&good, false), &NoProgress).unwrap();
    assert_eq!(
        rhizome_storage::GraphRead::statistics(&open(&empty)).node_count,
        1
    );
}

#[test]
fn failed_import_creates_no_parent_directories() {
    let (dir, options) = setup(&[("N", "n.csv", "id:ID,v:int\n1,x\n")], &[]);
    let nested = dir.path().join("a").join("b").join("db");
    let err = import(&nested, &options, &NoProgress).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InputError);
    assert!(!dir.path().join("a").exists());
    let (dir, options) = setup(&[("N", "n.csv", "id:ID,v:int\n1,2\n")], &[]);
    let nested = dir.path().join("a").join("b").join("db");
    import(&nested, &options, &NoProgress).unwrap();
    assert_eq!(
        rhizome_storage::GraphRead::statistics(&open(&nested)).node_count,
        1
    );
}

#[test]
fn later_file_with_a_different_header() {
    let (dir, mut options) = setup(&[], &[]);
    let a = write(dir.path(), "a.csv", "id:ID,name,age:int\n1,a,3\n");
    let b = write(dir.path(), "b.csv", "id:ID,age:int,name\n2,4,b\n");
    options.nodes.push(InputGroup::new(["N"], [a, b]));
    let err = fails_with(options, dir.path());
    assert_at(
        &err,
        ErrorKind::InputError,
        "b.csv",
        1,
        1,
        "differs from the group's header",
    );
}
