//! `rhizome import-dimacs` end to end: a small network imported and queried
//! through the command, and a malformed file reported with file and line.

use std::path::Path;
use std::process::{Command, Output};

fn rhizome(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rhizome"))
        .args(args)
        .env("RHIZOME_HISTORY", "")
        .output()
        .expect("run rhizome")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

#[test]
fn a_network_is_imported_and_queried() {
    let tmp = tempfile::tempdir().unwrap();
    let gr = tmp.path().join("t.gr");
    let co = tmp.path().join("t.co");
    std::fs::write(&gr, "p sp 3 3\na 1 2 10\na 2 3 5\na 1 3 40\n").unwrap();
    std::fs::write(
        &co,
        "p aux sp co 3\nv 1 6000000 49000000\nv 2 6001000 49000000\nv 3 6002000 49000000\n",
    )
    .unwrap();
    let db = tmp.path().join("db");
    let out = rhizome(&[
        "import-dimacs",
        path(&db),
        "--gr",
        path(&gr),
        "--co",
        path(&co),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Imported 3 nodes and 3 relationships"),
        "{}",
        text(&out.stdout)
    );
    let out = rhizome(&[
        "query",
        path(&db),
        "--format=csv",
        "MATCH (a:Junction {id: 1})-[r:ROAD]->(b) RETURN b.id, r.distance, b.lon ORDER BY b.id",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "b.id,r.distance,b.lon\n2,10,6.001\n3,40,6.002\n"
    );
}

#[test]
fn a_malformed_file_names_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let gr = tmp.path().join("bad.gr");
    std::fs::write(&gr, "c x\np sp 2 1\na 1 2 ten\n").unwrap();
    let db = tmp.path().join("db");
    let out = rhizome(&["import-dimacs", path(&db), "--gr", path(&gr)]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("bad.gr")
            && err.contains('3')
            && err.contains("the arc's length must be an integer, found `ten`"),
        "{err}"
    );
    assert!(!db.exists());
}
