//! A short query is not stuck behind long `EXISTS` instances: each outer
//! row's subquery runs inline inside its operator's task, which cannot
//! hand its work back, so a worker running one long instance runs a
//! waiting query's work at the instance's yield points
//! (`QueryScope::yield_now`). Every worker of a two-worker pool runs a
//! long instance (a trail search over a complete graph that finds
//! nothing, seconds in a debug build, or stopped by its timeout); a short
//! query submitted meanwhile must answer long before they end.

use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use rhizome_exec::scheduler::WorkerPool;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

/// A complete graph of 9 `:N {id}` nodes over `R`: trails of up to 9
/// hops number in the millions from every node.
fn complete_graph(dir: &std::path::Path) -> Engine {
    let engine = common::empty_engine(dir);
    engine
        .execute(
            "UNWIND range(0, 8) AS i CREATE (:N {id: i}) WITH count(*) AS c \
             MATCH (a:N), (b:N) WHERE a.id < b.id CREATE (a)-[:R]->(b)",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    engine
}

/// Options that run every task of the query on `pool`'s workers (a
/// server's statement), stopped after `timeout`.
fn on_pool(pool: &WorkerPool, timeout: Duration) -> QueryOptions {
    QueryOptions {
        pool: Some(pool.clone()),
        caller_waits: true,
        timeout: Some(timeout),
        ..QueryOptions::default()
    }
}

#[test]
fn a_short_query_answers_while_long_exists_instances_hold_every_worker() {
    let dir = tempfile::tempdir().unwrap();
    let engine = complete_graph(dir.path());
    let pool = WorkerPool::with_spin(2, Duration::ZERO);
    let long_for = Duration::from_secs(8);
    let ended = Arc::new(AtomicUsize::new(0));
    let long: Vec<_> = (0..pool.threads())
        .map(|i| {
            let (engine, pool, ended) = (engine.clone(), pool.clone(), ended.clone());
            std::thread::spawn(move || {
                let q = format!(
                    "MATCH (a:N) WHERE a.id = {i} AND EXISTS {{ MATCH (a)-[:R*1..9]-(b) \
                     WHERE b.id = -1 }} RETURN a.id"
                );
                let r = engine.execute(&q, BTreeMap::new(), &on_pool(&pool, long_for));
                ended.fetch_add(1, Ordering::SeqCst);
                r
            })
        })
        .collect();
    // Both long instances run (their tasks hold both workers).
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        ended.load(Ordering::SeqCst),
        0,
        "the long queries still run"
    );
    let start = Instant::now();
    let short = engine
        .execute(
            "MATCH (n:N) WHERE n.id = 3 RETURN n.id",
            BTreeMap::new(),
            &on_pool(&pool, Duration::from_secs(30)),
        )
        .unwrap();
    let waited = start.elapsed();
    assert_eq!(short.rows, vec![vec![Value::Int(3)]]);
    assert_eq!(
        ended.load(Ordering::SeqCst),
        0,
        "answered before they ended"
    );
    // A quantum or two and a debug build's run on a loaded machine; the
    // long instances run for seconds.
    // Either mechanism may serve it: a yield point runs its start nested
    // in a long task, or the long EXISTS scope hands its open instance to a
    // new task at its quantum and the worker picks the short query first.
    // Which one wins depends on timing (CI saw no nested run once), so only
    // the wait is asserted; the nesting itself is tested in the
    // scheduler's unit tests.
    assert!(waited < Duration::from_secs(2), "waited {waited:?}");
    // Each long query finds nothing, or is stopped by its timeout.
    for handle in long {
        match handle.join().unwrap() {
            Ok(result) => assert!(result.rows.is_empty()),
            Err(error) => assert!(error.to_string().contains("timeout"), "{error}"),
        }
    }
}

/// Work of other queries run nested at a profiled query's yield points is
/// neither the profiled query's worker time nor its operators' time:
/// PROFILE's operator times still add up to its busy time.
#[test]
fn profile_leaves_out_work_nested_at_yield_points() {
    let dir = tempfile::tempdir().unwrap();
    let engine = complete_graph(dir.path());
    let pool = WorkerPool::with_spin(2, Duration::ZERO);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Two clients keep queries of a few ms queued, so both workers are
    // busy and the profiled query's yield points find work to nest.
    let others: Vec<_> = (0..2)
        .map(|_| {
            let (engine, pool, stop) = (engine.clone(), pool.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    engine
                        .execute(
                            "MATCH (a:N {id: 0})-[:R*1..4]-(b) RETURN count(*)",
                            BTreeMap::new(),
                            &on_pool(&pool, Duration::from_secs(60)),
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    let before = pool.nested_runs();
    let report = engine
        .execute(
            "PROFILE MATCH (a:N) WHERE a.id < 2 AND EXISTS { MATCH (a)-[:R*1..6]-(b) \
             WHERE b.id = -1 } RETURN a.id",
            BTreeMap::new(),
            &on_pool(&pool, Duration::from_secs(60)),
        )
        .unwrap()
        .profile
        .expect("a profile");
    let nested = pool.nested_runs() - before;
    stop.store(true, Ordering::SeqCst);
    for other in others {
        other.join().unwrap();
    }
    assert!(nested > 0, "no work was nested");
    let attributed = report.attributed();
    assert!(
        attributed <= 1.1,
        "operators {attributed:.2} of busy {:?}, wall {:?}, {nested} nested\n{}",
        report.busy,
        report.wall,
        report.text
    );
}
