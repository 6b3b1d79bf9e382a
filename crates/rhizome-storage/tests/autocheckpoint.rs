//! The automatic checkpoint policy end to end: inline (deterministic) and on
//! the background thread.

use rhizome_common::Value;
use rhizome_storage::{Database, DatabaseOptions, GraphBuilder, GraphRead};
use std::time::{Duration, Instant};

fn churn(db: &Database, commits: i64) {
    for i in 0..commits {
        let mut txn = db.begin_write().unwrap();
        let n = txn
            .create_node(&["T"], &[("i", Value::Int(i)), ("s", Value::from("x"))])
            .unwrap();
        if i % 2 == 1 {
            txn.delete_node(n, true).unwrap();
        }
        txn.commit().unwrap();
    }
}

fn count(db: &Database) -> u64 {
    let s = db.snapshot();
    let t = s.catalog().label_id("T").unwrap();
    s.label_range_slice(t).iter().map(|r| r.end - r.start).sum()
}

#[test]
fn incremental_checkpoints_wait_until_the_delta_doubles() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    GraphBuilder::new().write(&dir).unwrap();
    let options = DatabaseOptions {
        checkpoint_delta_bytes: 8 << 10,
        background_checkpoints: false,
        // Always incremental: the delta stays in memory and keeps growing.
        delta_checkpoint_ratio: 1e9,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, options.clone()).unwrap();
    churn(&db, 800);
    let status = db.checkpoint_status();
    // Without the doubling rule every commit past 8 KiB would checkpoint.
    assert!(
        (2..=10).contains(&status.automatic_checkpoints),
        "{status:?}"
    );
    assert_eq!(count(&db), 400);
    drop(db);
    let db = Database::open_with(&dir, options).unwrap();
    assert_eq!(count(&db), 400);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn full_checkpoints_in_the_background_empty_the_delta() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    GraphBuilder::new().write(&dir).unwrap();
    let options = DatabaseOptions {
        checkpoint_delta_bytes: 16 << 10,
        // Every checkpoint full (an incremental one keeps the delta in
        // memory, and the next then waits until it has doubled).
        delta_checkpoint_ratio: 0.0,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, options.clone()).unwrap();
    churn(&db, 500);
    // The thread catches up once the commits stop.
    let until = Instant::now() + Duration::from_secs(10);
    while db.checkpoint_status().delta_bytes >= 16 << 10 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = db.checkpoint_status();
    assert!(status.automatic_checkpoints >= 1, "{status:?}");
    assert!(status.delta_bytes < 16 << 10, "{status:?}");
    assert_eq!(count(&db), 250);
    // Another handle (as another process would) sees the same state.
    let other = Database::open_with(
        &dir,
        DatabaseOptions {
            read_only: true,
            ..options
        },
    )
    .unwrap();
    assert_eq!(count(&other), 250);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn a_read_only_handle_never_checkpoints() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    GraphBuilder::new().write(&dir).unwrap();
    let writer = Database::open_with(
        &dir,
        DatabaseOptions {
            checkpoint_delta_bytes: u64::MAX,
            ..DatabaseOptions::default()
        },
    )
    .unwrap();
    churn(&writer, 100);
    let reader = Database::open_with(
        &dir,
        DatabaseOptions {
            read_only: true,
            checkpoint_delta_bytes: 1,
            checkpoint_wal_bytes: 1,
            ..DatabaseOptions::default()
        },
    )
    .unwrap();
    assert_eq!(count(&reader), 50);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(reader.checkpoint_status().automatic_checkpoints, 0);
    assert_eq!(writer.checkpoint_status().automatic_checkpoints, 0);
}
