//! Checkpoints that run by themselves: a long create/delete churn through
//! the engine (what the server's soak does) keeps the in-memory delta
//! bounded, and no commit is lost on the way.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions, Rows};
use rhizome_storage::{Database, DatabaseOptions, GraphBuilder};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Operations of the churn in the tests below (each commits durably).
const OPS: i64 = 1500;

fn engine(dir: &Path, options: DatabaseOptions) -> Engine {
    let db = dir.join("db");
    if !db.exists() {
        GraphBuilder::new().write(&db).unwrap();
    }
    Engine::new(Database::open_with(&db, options).unwrap())
}

fn run(engine: &Engine, query: &str, params: &[(&str, Value)]) -> Rows {
    let params: BTreeMap<String, Value> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    engine
        .execute(query, params, &QueryOptions::default())
        .unwrap()
        .rows
}

/// Op `i` of the soak's write mix: create a node; every 20th op deletes
/// all but the last five of them.
fn churn_step(engine: &Engine, i: i64) {
    run(
        engine,
        "CREATE (:Soak {client: 1, i: $i, at: timestamp()})",
        &[("i", Value::Int(i))],
    );
    if i % 20 == 19 {
        run(
            engine,
            "MATCH (s:Soak) WHERE s.i < $k DETACH DELETE s",
            &[("k", Value::Int(i - 4))],
        );
    }
}

fn soak_count(engine: &Engine) -> Value {
    run(engine, "MATCH (s:Soak) RETURN count(s)", &[])[0][0].clone()
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Waits until the background thread has caught up (the delta is below
/// `limit`), at most 10 s.
fn settled(engine: &Engine, limit: u64) -> u64 {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let bytes = engine.database().checkpoint_status().delta_bytes;
        if bytes < limit || Instant::now() > until {
            return bytes;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn churn_checkpoints_in_the_background_and_keeps_the_delta_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let limit = 32 << 10;
    let options = DatabaseOptions {
        checkpoint_delta_bytes: limit,
        // Every checkpoint full, so each one empties the delta (an
        // incremental one keeps it, and the next waits until it doubles).
        delta_checkpoint_ratio: 0.0,
        ..DatabaseOptions::default()
    };
    let e = engine(dir.path(), options.clone());
    let mut peak_after_first = 0;
    for i in 0..OPS {
        churn_step(&e, i);
        let status = e.database().checkpoint_status();
        if status.automatic_checkpoints > 0 {
            peak_after_first = peak_after_first.max(status.delta_bytes);
        }
    }
    let status = e.database().checkpoint_status();
    assert!(
        status.automatic_checkpoints >= 2,
        "checkpoints ran by themselves: {status:?}"
    );
    // The thread may lag behind a burst of commits, but not unboundedly.
    assert!(
        peak_after_first < 16 * limit,
        "the delta stayed bounded: peak {peak_after_first} bytes"
    );
    let bytes = settled(&e, 2 * limit);
    assert!(
        bytes < 2 * limit,
        "the delta settles below twice the limit: {bytes}"
    );
    assert_eq!(soak_count(&e), Value::Int(5));
    let last = run(&e, "MATCH (s:Soak) RETURN max(s.i)", &[])[0][0].clone();
    assert_eq!(last, Value::Int(OPS - 1));
    // Reopened, the same state (checkpointed files plus the log).
    drop(e);
    let e = engine(dir.path(), options);
    assert_eq!(soak_count(&e), Value::Int(5));
    let db = e.database().clone();
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn without_automatic_checkpoints_the_delta_grows() {
    // The reference for the test above: the same churn keeps every
    // tombstone in memory when no checkpoint runs.
    let dir = tempfile::tempdir().unwrap();
    let options = DatabaseOptions {
        checkpoint_delta_bytes: u64::MAX,
        ..DatabaseOptions::default()
    };
    let e = engine(dir.path(), options);
    for i in 0..OPS {
        churn_step(&e, i);
    }
    let status = e.database().checkpoint_status();
    assert_eq!(status.automatic_checkpoints, 0);
    assert!(status.delta_bytes > 128 << 10, "{status:?}");
}

/// Where a long churn's memory goes, with and without automatic
/// checkpoints (prints; run with `--ignored --nocapture`, ideally in release).
#[test]
#[ignore]
fn measure_churn_memory() {
    let ops: i64 = std::env::var("CHURN_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60_000);
    let variants = [
        ("no automatic checkpoint", u64::MAX),
        ("default policy", 8 << 20),
    ];
    let only = std::env::var("CHURN_VARIANT").ok();
    for (name, delta_limit) in variants
        .into_iter()
        .filter(|(n, _)| only.as_deref().is_none_or(|o| n.starts_with(o)))
    {
        let dir = tempfile::tempdir().unwrap();
        let e = engine(
            dir.path(),
            DatabaseOptions {
                checkpoint_delta_bytes: delta_limit,
                ..DatabaseOptions::default()
            },
        );
        let started = Instant::now();
        println!("== {name}");
        for i in 0..ops {
            churn_step(&e, i);
            if i % (ops / 10) == ops / 10 - 1 {
                let s = e.database().checkpoint_status();
                println!(
                    "ops {:>7}  delta {:>8.2} MiB  wal {:>8.2} MiB  auto checkpoints {:>3}  rss {:>7.1} MiB  plan cache {:?}",
                    i + 1,
                    s.delta_bytes as f64 / 1048576.0,
                    s.wal_bytes as f64 / 1048576.0,
                    s.automatic_checkpoints,
                    rss_kib() as f64 / 1024.0,
                    e.plan_cache_stats(),
                );
            }
        }
        println!("{} ops in {:.1} s", ops, started.elapsed().as_secs_f64());
    }
}
