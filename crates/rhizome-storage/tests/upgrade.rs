//! `rhizome upgrade`: databases of on-disk formats 1 and 2 (8-byte
//! adjacency) converted to the current format, crash-safely.
//!
//! The fixtures in `tests/fixtures/old-formats` were written by the last
//! Rhizome that wrote formats 1 and 2 (see the README there): `v1` is a
//! segment plus a log holding one commit, `v2` a segment, a delta file and
//! a log; `v1.dump` / `v2.dump` are the graphs as that Rhizome read them.

use rhizome_common::{Error, ErrorKind, Value};
use rhizome_storage::{
    upgrade, Database, DatabaseOptions, Direction, GraphRead, Snapshot, UpgradeOptions, UpgradeStep,
};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/old-formats")
        .join(name)
}

/// A copy of fixture database `v` in a new temporary directory.
fn copy_of(v: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(v);
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(fixture(v)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    (tmp, dir)
}

fn expected(v: &str) -> String {
    std::fs::read_to_string(fixture(&format!("{v}.dump"))).unwrap()
}

/// Every file of `dir` with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn manifest_json(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

/// The graph as text, in the same form as the fixtures' dumps (written by
/// the old Rhizome's copy of this function): nodes with labels and
/// properties, each list of each type and direction with (neighbour,
/// relationship id) and the relationships' properties.
fn dump(s: &Snapshot) -> String {
    let mut out = String::new();
    let cat = s.catalog().clone();
    let key_name = |k: u32| cat.property_key_name(k).to_string();
    let props = |list: Vec<(u32, Value)>| {
        let mut v: Vec<String> = list
            .into_iter()
            .map(|(k, v)| format!("{}={v:?}", key_name(k)))
            .collect();
        v.sort();
        v.join(",")
    };
    for n in 0..s.node_bound() {
        if !s.node_exists(n) {
            continue;
        }
        let mut labels: Vec<String> = s
            .node_labels(n)
            .iter()
            .map(|&l| cat.label_name(l).to_string())
            .collect();
        labels.sort();
        let mut list = Vec::new();
        s.node_properties(n, &mut list);
        writeln!(out, "node {n} {} {}", labels.join(","), props(list)).unwrap();
        for t in 0..cat.rel_types.len() as u32 {
            for (dir, name) in [(Direction::Outgoing, "out"), (Direction::Incoming, "in")] {
                let adj = s.adjacency(n, t, dir);
                if adj.is_empty() {
                    continue;
                }
                let mut line = format!(" {name} {}", cat.rel_type_name(t));
                for i in 0..adj.len() {
                    let (m, r) = (adj.neighbour(i), adj.rel_id(i));
                    write!(line, " {m}:{r}").unwrap();
                    let info = s.relationship(r).unwrap();
                    let ends = if dir == Direction::Outgoing {
                        (n, m)
                    } else {
                        (m, n)
                    };
                    assert_eq!((info.start, info.end, info.rel_type), (ends.0, ends.1, t));
                    let mut list = Vec::new();
                    s.rel_properties(r, &mut list);
                    if !list.is_empty() && dir == Direction::Outgoing {
                        write!(line, "{{{}}}", props(list)).unwrap();
                    }
                }
                writeln!(out, "{line}").unwrap();
            }
        }
    }
    out
}

fn refusal(dir: &Path, options: DatabaseOptions) -> Error {
    Database::open_with(dir, options).err().expect("refused")
}

/// Checkpoints stay incremental whatever the delta's size.
fn incremental() -> DatabaseOptions {
    DatabaseOptions {
        delta_checkpoint_ratio: 1e6,
        ..DatabaseOptions::default()
    }
}

fn read_only() -> DatabaseOptions {
    DatabaseOptions {
        read_only: true,
        ..DatabaseOptions::default()
    }
}

/// Opens the upgraded `dir`, checks it reads as `v`'s dump and passes the
/// check, and that it takes writes and both kinds of checkpoint.
fn assert_upgraded(dir: &Path, v: &str) {
    let db = Database::open_with(dir, incremental()).unwrap();
    assert_eq!(dump(&db.snapshot()), expected(v));
    assert!(db.check().is_empty(), "{:?}", db.check());
    let person = |db: &Database, id: i64| {
        let s = db.snapshot();
        let (l, k) = (
            s.catalog().label_id("Person").unwrap(),
            s.catalog().property_key_id("id").unwrap(),
        );
        s.index_seek(l, k, &Value::Int(id)).unwrap()
    };
    assert_eq!(person(&db, 1007), vec![7]);
    let mut txn = db.begin_write().unwrap();
    let a = txn
        .create_node(&["Person"], &[("id", Value::Int(7777))])
        .unwrap();
    txn.create_relationship(a, 0, "TAGGED", &[]).unwrap();
    txn.commit().unwrap();
    // An incremental checkpoint: a delta file over the converted segment.
    assert!(db.checkpoint().unwrap());
    assert_eq!(manifest_json(dir)["version"], 4);
    assert!(db.check().is_empty(), "{:?}", db.check());
    assert_eq!(person(&db, 7777), vec![a]);
    drop(db);
    let db = Database::open_with(dir, incremental()).unwrap();
    assert_eq!(person(&db, 7777), vec![a]);
    assert!(db.checkpoint_full().unwrap());
    assert!(db.check().is_empty(), "{:?}", db.check());
    assert_eq!(manifest_json(dir)["version"], 3);
    drop(db);
    let db = Database::open(dir).unwrap();
    assert_eq!(person(&db, 7777).len(), 1);
    assert_eq!(person(&db, 1007).len(), 1);
}

#[test]
fn old_formats_are_refused_by_readers_and_change_nothing() {
    for v in ["v1", "v2"] {
        let (_tmp, dir) = copy_of(v);
        let before = files(&dir);
        let version = if v == "v1" { 1 } else { 2 };
        for options in [DatabaseOptions::default(), read_only()] {
            let err = refusal(&dir, options);
            assert_eq!(err.kind, ErrorKind::CorruptDatabase);
            assert!(
                err.message.contains(&format!("format version {version}"))
                    && err.message.contains("older Rhizome")
                    && err
                        .message
                        .contains(&format!("rhizome upgrade {}", dir.display())),
                "{}",
                err.message
            );
        }
        assert_eq!(files(&dir), before, "a refused open changed a file");
    }
}

#[test]
fn old_formats_upgrade_and_read_the_same_graph() {
    for (v, from, to) in [("v1", 1, 3), ("v2", 2, 4)] {
        let (_tmp, dir) = copy_of(v);
        let report = upgrade(&dir, &UpgradeOptions::default()).unwrap();
        assert_eq!((report.from_version, report.to_version), (from, to));
        assert_eq!(
            report.segments,
            (
                "segment-000001.rhz".to_string(),
                format!("segment-{:06}-v3.rhz", if v == "v1" { 1 } else { 2 })
            )
        );
        assert!(report.old_segment_removed);
        // 8-byte neighbours and positions became 4-byte neighbours and 1-2
        // byte ranks.
        assert!(
            report.segment_bytes.1 < report.segment_bytes.0,
            "{report:?}"
        );
        let m = manifest_json(&dir);
        assert_eq!(m["version"], to);
        assert_eq!(m["segment"], report.segments.1.as_str());
        assert!(!dir.join("segment-000001.rhz").exists());
        assert!(!dir.join("manifest.json.tmp").exists());
        // The hub's incoming ranks need two bytes.
        let widths: Vec<u64> = m["rel_types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["incoming"]["ranks"]["width"].as_u64().unwrap())
            .collect();
        assert_eq!(widths, vec![1, 1, 2]);
        // The log and (v2) the delta file were kept and still apply.
        assert_eq!(
            std::fs::read(dir.join("wal.log")).unwrap(),
            std::fs::read(fixture(v).join("wal.log")).unwrap()
        );
        assert_eq!(dir.join("delta-000002.rhd").exists(), v == "v2");
        // Upgrading again does nothing.
        let again = upgrade(&dir, &UpgradeOptions::default()).unwrap();
        assert_eq!((again.from_version, again.to_version), (to, to));
        assert_eq!(again.segments.0, again.segments.1);
        assert_upgraded(&dir, v);
    }
}

#[test]
fn a_crash_at_every_step_of_the_upgrade_leaves_a_database_that_opens() {
    let steps = [
        UpgradeStep::Locked,
        UpgradeStep::SegmentWritten,
        UpgradeStep::ManifestStaged,
        UpgradeStep::ManifestInstalled,
    ];
    for v in ["v1", "v2"] {
        for stop in steps {
            let (_tmp, dir) = copy_of(v);
            let original = files(&dir);
            let options = UpgradeOptions {
                hook: Some(Arc::new(move |step| {
                    if step == stop {
                        Err(Error::new(ErrorKind::IoError, "crash injected"))
                    } else {
                        Ok(())
                    }
                })),
                ..UpgradeOptions::default()
            };
            let err = upgrade(&dir, &options).unwrap_err();
            assert_eq!(err.message, "crash injected");
            if stop == UpgradeStep::ManifestInstalled {
                // The switch happened: the new database opens; the old
                // segment is debris that the first writer collects.
                assert!(dir.join("segment-000001.rhz").exists());
                let db = Database::open(&dir).unwrap();
                assert_eq!(dump(&db.snapshot()), expected(v), "{v} {stop:?}");
                db.begin_write().unwrap().commit().unwrap();
                assert!(!dir.join("segment-000001.rhz").exists());
                drop(db);
            } else {
                // The old database is untouched (only debris beside it):
                // still refused by readers, and the upgrade runs again.
                for (name, bytes) in &original {
                    assert_eq!(&std::fs::read(dir.join(name)).unwrap(), bytes, "{name}");
                }
                let err = refusal(&dir, read_only());
                assert!(err.message.contains("rhizome upgrade"), "{}", err.message);
                let report = upgrade(&dir, &UpgradeOptions::default()).unwrap();
                assert!(report.from_version < report.to_version);
            }
            assert_upgraded(&dir, v);
        }
    }
}

#[test]
fn a_damaged_old_database_is_refused_and_left_as_it_was() {
    let (_tmp, dir) = copy_of("v1");
    let m = manifest_json(&dir);
    // An incoming entry's outgoing position past its source's list.
    let perm = m["rel_types"][0]["incoming"]["perm"]["offset"]
        .as_u64()
        .unwrap() as usize;
    let segment = dir.join("segment-000001.rhz");
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes[perm..perm + 8].copy_from_slice(&1_000u64.to_le_bytes());
    std::fs::write(&segment, &bytes).unwrap();
    let before = files(&dir);
    let err = upgrade(&dir, &UpgradeOptions::default()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::CorruptDatabase);
    assert!(
        err.message.contains("cannot upgrade") && err.message.contains("outgoing position 1000"),
        "{}",
        err.message
    );
    assert_eq!(
        files(&dir).get("manifest.json"),
        before.get("manifest.json")
    );
    assert_eq!(manifest_json(&dir)["version"], 1);
    // A neighbour id outside the graph.
    let (_tmp2, dir) = copy_of("v1");
    let at = m["rel_types"][0]["outgoing"]["neighbours"]["offset"]
        .as_u64()
        .unwrap() as usize;
    let segment = dir.join("segment-000001.rhz");
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes[at..at + 8].copy_from_slice(&5_000u64.to_le_bytes());
    std::fs::write(&segment, &bytes).unwrap();
    let err = upgrade(&dir, &UpgradeOptions::default()).unwrap_err();
    assert!(
        err.message.contains("5000 is not a node"),
        "{}",
        err.message
    );
    // A manifest of a newer format, or of no format.
    let (_tmp3, dir) = copy_of("v1");
    let mut m = manifest_json(&dir);
    m["version"] = 9.into();
    std::fs::write(dir.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    let err = upgrade(&dir, &UpgradeOptions::default()).unwrap_err();
    assert!(err.message.contains("newer Rhizome"), "{}", err.message);
    let err = upgrade(&dir.join("nothing"), &UpgradeOptions::default()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::IoError);
}

#[test]
fn the_upgrade_waits_for_the_writer_lock() {
    // A writer (here: a bare flock on the lock file, as an older Rhizome's
    // write transaction holds it) keeps the upgrade waiting, then failing.
    let (_tmp, dir) = copy_of("v1");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("lock"))
        .unwrap();
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let options = UpgradeOptions {
        lock_timeout: Duration::from_millis(100),
        ..UpgradeOptions::default()
    };
    let err = upgrade(&dir, &options).unwrap_err();
    assert_eq!(err.kind, ErrorKind::TransientError);
    assert_eq!(err.code, Some("LockAcquisitionTimeout"));
    assert_eq!(manifest_json(&dir)["version"], 1);
    drop(file);
    assert_eq!(upgrade(&dir, &options).unwrap().to_version, 3);
    assert_upgraded(&dir, "v1");
}

#[test]
fn an_old_segment_still_mapped_elsewhere_stays_until_a_writer_collects_it() {
    // A process of the old Rhizome reading the database holds a shared lock
    // on its segment while it maps it.
    let (_tmp, dir) = copy_of("v1");
    let old = dir.join("segment-000001.rhz");
    let reader = std::fs::File::open(&old).unwrap();
    rustix::fs::flock(&reader, rustix::fs::FlockOperation::LockShared).unwrap();
    let report = upgrade(&dir, &UpgradeOptions::default()).unwrap();
    assert!(!report.old_segment_removed);
    assert!(old.exists());
    let db = Database::open(&dir).unwrap();
    assert_eq!(dump(&db.snapshot()), expected("v1"));
    drop(reader);
    db.begin_write().unwrap().commit().unwrap();
    assert!(!old.exists(), "the first writer collects the old segment");
}
