//! Commit latency while a checkpoint runs: one thread commits single-row
//! changes (durable, one `fdatasync` each) in a loop while the main thread
//! runs a full and then an incremental checkpoint of a generated graph;
//! prints the latency of the commits that overlapped each checkpoint beside
//! that of the commits that did not.
//!
//! `cargo bench -p rhizome-storage --bench checkpoint_latency` (`NODES`,
//! `RELS` change the size; defaults 200000 and 3000000).
//!
//! Beside each checkpoint's figures it prints its steps (written, staged,
//! manifest installed, done; from `DatabaseOptions::checkpoint_hook`) and
//! the slowest overlapping commits placed against them, to tell where a
//! slow commit waited.

use rhizome_common::Value;
use rhizome_storage::builder::{GraphBuilder, NodeGroupInput, RelGroupInput};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{CheckpointStep, Database, DatabaseOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn build(dir: &std::path::Path, nodes: u64, rels: u64) {
    let mut b = GraphBuilder::new();
    let mut ids = ColumnBuilder::new();
    (0..nodes).for_each(|i| ids.push_i64(i as i64));
    let n = b
        .add_nodes(NodeGroupInput {
            rows: nodes,
            labels: vec!["Person".into()],
            row_labels: None,
            properties: vec![("id".into(), ids.finish())],
        })
        .unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut sources, mut targets) = (Vec::new(), Vec::new());
    let mut weights = ColumnBuilder::new();
    for i in 0..rels {
        sources.push(n[(i % nodes) as usize]);
        targets.push(n[(next() % nodes) as usize]);
        weights.push_i64((next() % 1000) as i64);
    }
    b.add_relationships(
        "KNOWS",
        RelGroupInput {
            sources,
            targets,
            properties: vec![("w".into(), weights.finish())],
        },
    )
    .unwrap();
    b.write(dir).unwrap();
}

/// (start, latency) of every commit.
type Log = Arc<Mutex<Vec<(Instant, Duration)>>>;

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

/// When each checkpoint step was reached.
type Steps = Arc<Mutex<Vec<(CheckpointStep, Instant)>>>;

fn report(
    what: &str,
    log: &[(Instant, Duration)],
    from: Instant,
    to: Instant,
    took: Duration,
    steps: &[(CheckpointStep, Instant)],
) {
    let (mut during, mut outside): (Vec<Duration>, Vec<Duration>) = (Vec::new(), Vec::new());
    for &(start, latency) in log {
        // A commit overlaps the checkpoint if it ran at any time within it.
        if start < to && start + latency > from {
            during.push(latency);
        } else {
            outside.push(latency);
        }
    }
    during.sort();
    outside.sort();
    println!(
        "{what}: checkpoint {:.0} ms; {} commits overlapped it: p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms; \
         {} others: p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms",
        took.as_secs_f64() * 1e3,
        during.len(),
        percentile(&during, 0.5),
        percentile(&during, 0.99),
        percentile(&during, 1.0),
        outside.len(),
        percentile(&outside, 0.5),
        percentile(&outside, 0.99),
        percentile(&outside, 1.0),
    );
    let ms = |t: Instant| {
        if t >= from {
            (t - from).as_secs_f64() * 1e3
        } else {
            -((from - t).as_secs_f64() * 1e3)
        }
    };
    let steps: Vec<String> = steps
        .iter()
        .filter(|(_, t)| *t >= from && *t <= to)
        .map(|(s, t)| format!("{s:?} at {:.1}", ms(*t)))
        .chain(std::iter::once(format!("done at {:.1}", ms(to))))
        .collect();
    println!("  steps (ms from its start): {}", steps.join(", "));
    let mut slow: Vec<(Instant, Duration)> = log
        .iter()
        .copied()
        .filter(|&(start, latency)| start < to && start + latency > from)
        .collect();
    slow.sort_by_key(|&(_, latency)| std::cmp::Reverse(latency));
    for (start, latency) in slow.into_iter().take(3) {
        println!(
            "  slow commit: {:.1} ms, from {:.1} to {:.1}",
            latency.as_secs_f64() * 1e3,
            ms(start),
            ms(start + latency)
        );
    }
}

fn main() {
    let nodes = env("NODES", 200_000);
    let rels = env("RELS", 3_000_000);
    let tmp = std::env::temp_dir().join(format!("rhizome-ckpt-latency-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let t = Instant::now();
    build(&tmp, nodes, rels);
    println!(
        "{nodes} nodes, {rels} relationships, built in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let steps: Steps = Arc::default();
    let hook = {
        let steps = steps.clone();
        move |step: CheckpointStep| {
            steps.lock().unwrap().push((step, Instant::now()));
            Ok(())
        }
    };
    let options = DatabaseOptions {
        checkpoint_hook: Some(Arc::new(hook)),
        background_checkpoints: false,
        checkpoint_wal_bytes: u64::MAX,
        checkpoint_delta_bytes: u64::MAX,
        delta_checkpoint_ratio: 1e6,
        lock_timeout: Duration::from_secs(60),
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&tmp, options).unwrap();
    // Changes for the checkpoints to write: a property on 1% of the nodes.
    let mut txn = db.begin_write().unwrap();
    for i in (0..nodes).step_by(100) {
        txn.set_node_property(i, "x", Value::Int(i as i64)).unwrap();
    }
    txn.commit().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let log: Log = Arc::default();
    let writer = {
        let (db, stop, log) = (db.clone(), stop.clone(), log.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let start = Instant::now();
                let mut txn = db.begin_write().unwrap();
                txn.set_node_property((i * 7919) % nodes, "y", Value::Int(i as i64))
                    .unwrap();
                txn.commit().unwrap();
                log.lock().unwrap().push((start, start.elapsed()));
                i += 1;
            }
        })
    };
    let pause = Duration::from_millis(500);
    let mut spans = Vec::new();
    for (what, full) in [("full", true), ("incremental", false)] {
        std::thread::sleep(pause);
        let from = Instant::now();
        let done = if full {
            db.checkpoint_full()
        } else {
            db.checkpoint()
        };
        assert!(done.unwrap());
        let to = Instant::now();
        spans.push((what, from, to));
    }
    std::thread::sleep(pause);
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let log = log.lock().unwrap();
    for (what, from, to) in spans {
        // Only the commits around this checkpoint count as "others".
        let near: Vec<_> = log
            .iter()
            .copied()
            .filter(|(s, _)| *s + pause >= from && *s <= to + pause)
            .collect();
        report(what, &near, from, to, to - from, &steps.lock().unwrap());
    }
    drop(db);
    let _ = std::fs::remove_dir_all(&tmp);
}
