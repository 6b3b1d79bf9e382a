//! Write-path benchmark: bulk creation in one transaction, durable
//! single-row transactions per second, and a traversal over base + delta
//! compared with the same traversal after a checkpoint.
//!
//! `cargo bench -p rhizome-storage --bench writes` (set `ROWS` to change the size).

use rhizome_common::Value;
use rhizome_storage::builder::GraphBuilder;
use rhizome_storage::{Database, DatabaseOptions, Direction, GraphRead, Snapshot};
use std::time::Instant;

/// Sum of neighbour ids over two hops of `KNOWS` from every node.
fn traverse(s: &Snapshot) -> (u64, u64) {
    let t = s.catalog().rel_type_id("KNOWS").unwrap();
    let (mut sum, mut edges) = (0u64, 0u64);
    for n in 0..s.node_bound() {
        let adj = s.adjacency(n, t, Direction::Outgoing);
        for m in adj.neighbours() {
            let adj2 = s.adjacency(m, t, Direction::Outgoing);
            edges += 1 + adj2.len() as u64;
            for k in adj2.neighbours() {
                sum = sum.wrapping_add(k);
            }
        }
    }
    (sum, edges)
}

fn best_of(runs: usize, mut f: impl FnMut() -> (u64, u64)) -> (f64, u64) {
    let mut best = f64::MAX;
    let mut edges = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let (sum, e) = f();
        std::hint::black_box(sum);
        best = best.min(t.elapsed().as_secs_f64());
        edges = e;
    }
    (best, edges)
}

fn main() {
    let rows: u64 = std::env::var("ROWS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1_000_000);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    GraphBuilder::new().write(&dir).unwrap();
    let options = DatabaseOptions {
        checkpoint_wal_bytes: u64::MAX,
        checkpoint_delta_bytes: u64::MAX,
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, options).unwrap();

    // 1. Bulk: one transaction, `rows` nodes and 2 relationships per node.
    let t = Instant::now();
    let mut txn = db.begin_write().unwrap();
    for i in 0..rows {
        txn.create_node(&["Person"], &[("id", Value::Int(i as i64))])
            .unwrap();
    }
    for i in 0..rows {
        let a = (i * 7 + 1) % rows;
        let b = (i * 13 + 5) % rows;
        txn.create_relationship(i, a, "KNOWS", &[]).unwrap();
        txn.create_relationship(i, b, "KNOWS", &[]).unwrap();
    }
    let build = t.elapsed().as_secs_f64();
    let t = Instant::now();
    txn.commit().unwrap();
    let commit = t.elapsed().as_secs_f64();
    let total = build + commit;
    println!(
        "bulk: {rows} nodes + {} relationships in one transaction: {total:.2} s ({:.0} rows/s; commit incl. fsync {commit:.2} s)",
        rows * 2,
        (rows * 3) as f64 / total
    );

    // 2. Single-row durable transactions.
    let n: i64 = std::env::var("SINGLE")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(300);
    let t = Instant::now();
    for i in 0..n {
        let mut txn = db.begin_write().unwrap();
        txn.create_node(&["Single"], &[("i", Value::Int(i))])
            .unwrap();
        txn.commit().unwrap();
    }
    let e = t.elapsed().as_secs_f64();
    println!(
        "single-row transactions (durable commit): {:.0} tx/s ({:.2} ms each)",
        n as f64 / e,
        e * 1000.0 / n as f64
    );

    // Baseline: the same number of raw appends + fdatasync on a plain file.
    {
        use std::io::Write;
        let path = tmp.path().join("raw");
        let mut f = std::fs::File::create(&path).unwrap();
        let t = Instant::now();
        for _ in 0..n {
            f.write_all(&[7u8; 64]).unwrap();
            f.sync_data().unwrap();
        }
        let e = t.elapsed().as_secs_f64();
        println!(
            "baseline: raw 64-byte append + fdatasync: {:.0} /s ({:.2} ms each)",
            n as f64 / e,
            e * 1000.0 / n as f64
        );
    }

    // 3. Traversal over base + delta vs after checkpoint.
    let delta = db.snapshot();
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let (t_delta, edges) = best_of(runs, || traverse(&delta));
    let t = Instant::now();
    db.checkpoint().unwrap();
    let ckpt = t.elapsed().as_secs_f64();
    let base = db.snapshot();
    let (t_base, edges_base) = best_of(runs, || traverse(&base));
    assert_eq!(edges, edges_base);
    println!("checkpoint of {rows} nodes: {ckpt:.2} s");
    println!(
        "two-hop traversal, {edges} edges: delta {:.1} M edges/s, after checkpoint {:.1} M edges/s, ratio {:.2}x",
        edges as f64 / t_delta / 1e6,
        edges as f64 / t_base / 1e6,
        t_delta / t_base
    );
}
