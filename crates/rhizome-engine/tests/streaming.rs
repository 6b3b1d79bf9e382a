//! Streamed results: the rows handed to a receiver block by block are the
//! rows `execute` collects, in the same order once the blocks are put in
//! position order; a receiver's error stops the query; a streamed result
//! holds no rows, so the memory limit does not bound its size.

use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_engine::{Engine, QueryOptions, RowBlock, RowReceiver};
use rhizome_exec::scheduler::WorkerPool;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

mod common;

/// Keeps every block with its position and arrival number.
#[derive(Default)]
struct Keep {
    blocks: Mutex<Vec<(usize, usize, Vec<Value>)>>,
    width: AtomicUsize,
}

impl RowReceiver for Keep {
    fn receive(&self, block: &mut RowBlock) -> Result<()> {
        self.width.store(block.width(), Ordering::Relaxed);
        let mut blocks = self.blocks.lock().unwrap();
        let arrival = blocks.len();
        blocks.push((block.position(), arrival, block.take_values()));
        Ok(())
    }
}

impl Keep {
    /// The rows in the result's order: blocks by position, blocks of one
    /// position in arrival order.
    fn rows(&self) -> Vec<Vec<Value>> {
        let mut blocks = std::mem::take(&mut *self.blocks.lock().unwrap());
        blocks.sort_by_key(|(position, arrival, _)| (*position, *arrival));
        let width = self.width.load(Ordering::Relaxed);
        blocks
            .iter()
            .flat_map(|(_, _, values)| values.chunks_exact(width).map(<[Value]>::to_vec))
            .collect()
    }
}

fn options(pool: &WorkerPool, threads: usize) -> QueryOptions {
    QueryOptions {
        threads: Some(threads),
        pool: Some(pool.clone()),
        ..QueryOptions::default()
    }
}

fn streamed(engine: &Engine, query: &str, options: &QueryOptions) -> Vec<Vec<Value>> {
    let keep = Arc::new(Keep::default());
    let result = engine
        .execute_streaming(query, BTreeMap::new(), options, keep.clone())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    assert!(
        result.rows.is_empty(),
        "{query}: a streamed result keeps no rows"
    );
    keep.rows()
}

fn collected(engine: &Engine, query: &str, options: &QueryOptions) -> Vec<Vec<Value>> {
    engine
        .execute(query, BTreeMap::new(), options)
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .rows
        .to_vecs()
}

#[test]
fn streamed_rows_put_in_position_order_are_the_collected_rows() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    engine
        .execute(
            "UNWIND range(1, 30000) AS i CREATE (:N {id: i, k: i % 13, s: toString(i % 101)})",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    let pool = WorkerPool::new(2);
    let ordered = [
        "MATCH (n:N) RETURN n.k AS k, n.id AS id ORDER BY k DESC, id",
        "MATCH (n:N) RETURN n.s AS s, n ORDER BY s, n.id DESC",
        "MATCH (n:N) WITH n ORDER BY n.k, n.id RETURN n.id * 2 AS y",
        "MATCH (n:N) RETURN count(*) AS c",
    ];
    for query in ordered {
        let expected = collected(&engine, query, &options(&pool, 1));
        assert!(!expected.is_empty(), "{query}");
        for threads in [1, 2, 2] {
            let rows = streamed(&engine, query, &options(&pool, threads));
            let first_difference = (0..rows.len().max(expected.len()))
                .find(|&i| rows.get(i) != expected.get(i))
                .map(|i| (i, rows.get(i), expected.get(i)));
            assert_eq!(
                (rows.len(), first_difference),
                (expected.len(), None),
                "{query} with {threads} workers: (rows, first difference)"
            );
            let again = collected(&engine, query, &options(&pool, threads));
            assert!(
                again == expected,
                "{query}: collected with {threads} workers"
            );
        }
    }
    // Without ORDER BY only the multiset is fixed.
    let sorted = |mut rows: Vec<Vec<Value>>| {
        rows.sort_by_key(|row| format!("{row:?}"));
        rows
    };
    for query in [
        "MATCH (n:N) WHERE n.id % 3 = 0 RETURN n, n.s",
        "UNWIND range(1, 20000) AS x RETURN x, [x, toString(x)] AS l",
    ] {
        let rows = sorted(streamed(&engine, query, &options(&pool, 2)));
        assert!(
            rows == sorted(collected(&engine, query, &options(&pool, 1))),
            "{query}"
        );
    }
}

#[test]
fn a_writing_statement_streams_its_rows_after_it_committed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    let pool = WorkerPool::new(2);
    let rows = streamed(
        &engine,
        "UNWIND [3, 1, 2] AS v CREATE (n:W {v: v}) RETURN n.v AS v",
        &options(&pool, 2),
    );
    assert_eq!(rows, [[Value::Int(3)], [Value::Int(1)], [Value::Int(2)]]);
    let count = collected(&engine, "MATCH (n:W) RETURN count(*)", &options(&pool, 2));
    assert_eq!(count, [[Value::Int(3)]]);
    // Schema commands and EXPLAIN stream what they return too.
    assert_eq!(
        streamed(&engine, "SHOW INDEXES", &options(&pool, 2)),
        collected(&engine, "SHOW INDEXES", &options(&pool, 2))
    );
}

/// Fails on its `fail_at`-th block.
struct Refuse {
    calls: AtomicUsize,
    fail_at: usize,
}

impl RowReceiver for Refuse {
    fn receive(&self, _: &mut RowBlock) -> Result<()> {
        if self.calls.fetch_add(1, Ordering::Relaxed) + 1 == self.fail_at {
            return Err(Error::new(ErrorKind::QueryAborted, "the client went away"));
        }
        Ok(())
    }
}

#[test]
fn an_error_from_the_receiver_stops_the_query_with_that_error() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    let pool = WorkerPool::new(2);
    let refuse = Arc::new(Refuse {
        calls: AtomicUsize::new(0),
        fail_at: 3,
    });
    // About 2,500 blocks if it ran to the end.
    let error = engine
        .execute_streaming(
            "UNWIND range(1, 5000000) AS x RETURN x",
            BTreeMap::new(),
            &options(&pool, 2),
            refuse.clone(),
        )
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::QueryAborted);
    assert!(
        error.to_string().contains("the client went away"),
        "{error}"
    );
    let calls = refuse.calls.load(Ordering::Relaxed);
    assert!(
        calls < 100,
        "the query went on after the error: {calls} blocks"
    );
}

/// Counts rows.
#[derive(Default)]
struct Count(AtomicUsize);

impl RowReceiver for Count {
    fn receive(&self, block: &mut RowBlock) -> Result<()> {
        self.0.fetch_add(block.len(), Ordering::Relaxed);
        Ok(())
    }
}

#[test]
fn a_streamed_result_is_not_bounded_by_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    let pool = WorkerPool::new(2);
    let limited = QueryOptions {
        memory_limit: Some(1 << 20),
        ..options(&pool, 2)
    };
    let query = "UNWIND range(1, 1000000) AS x RETURN x, x + 1";
    let error = engine
        .execute(query, BTreeMap::new(), &limited)
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::QueryAborted, "{error}");
    let count = Arc::new(Count::default());
    engine
        .execute_streaming(query, BTreeMap::new(), &limited, count.clone())
        .unwrap();
    assert_eq!(count.0.load(Ordering::Relaxed), 1_000_000);
}

/// Counts rows and says it keeps them, as a client building the whole
/// result does.
#[derive(Default)]
struct Keeping(AtomicUsize);

impl RowReceiver for Keeping {
    fn receive(&self, block: &mut RowBlock) -> Result<()> {
        self.0.fetch_add(block.len(), Ordering::Relaxed);
        Ok(())
    }

    fn keeps_rows(&self) -> bool {
        true
    }
}

#[test]
fn a_receiver_that_keeps_rows_is_bounded_by_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    let pool = WorkerPool::new(2);
    let limited = QueryOptions {
        memory_limit: Some(1 << 20),
        ..options(&pool, 2)
    };
    let query = "UNWIND range(1, 1000000) AS x RETURN x, x + 1";
    let error = engine
        .execute_streaming(
            query,
            BTreeMap::new(),
            &limited,
            Arc::new(Keeping::default()),
        )
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::QueryAborted, "{error}");
    assert_eq!(error.code, Some(rhizome_exec::context::OUT_OF_MEMORY));
    let small = Arc::new(Keeping::default());
    engine
        .execute_streaming(
            "UNWIND range(1, 1000) AS x RETURN x",
            BTreeMap::new(),
            &limited,
            small.clone(),
        )
        .unwrap();
    assert_eq!(small.0.load(Ordering::Relaxed), 1000);
}
