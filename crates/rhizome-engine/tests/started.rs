//! Statements started on the pool without a waiting thread
//! (`Engine::start_streaming_on` from a job of `WorkerPool::submit`): the
//! rows and outcome are those of `execute`, for plans of one and of many
//! pipelines (aggregation, ORDER BY, DISTINCT, a large UNWIND), errors and
//! timeouts reach the callback, a write is not started, and a query of one
//! morsel ends inside its job, on the job's worker.

use rhizome_common::{ErrorKind, Result, Value};
use rhizome_engine::{Engine, QueryOptions, QueryResult, RowBlock, RowReceiver, StatementInfo};
use rhizome_exec::scheduler::WorkerPool;
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

mod common;

/// Keeps every block with its position and the thread that handed it over.
#[derive(Default)]
struct Keep {
    blocks: Mutex<Vec<(usize, usize, Vec<Value>)>>,
    threads: Mutex<Vec<ThreadId>>,
}

impl RowReceiver for Keep {
    fn receive(&self, block: &mut RowBlock) -> Result<()> {
        self.threads
            .lock()
            .unwrap()
            .push(std::thread::current().id());
        let mut blocks = self.blocks.lock().unwrap();
        let arrival = blocks.len();
        blocks.push((block.position(), arrival, block.take_values()));
        Ok(())
    }
}

impl Keep {
    fn rows(&self, width: usize) -> Vec<Vec<Value>> {
        let mut blocks = std::mem::take(&mut *self.blocks.lock().unwrap());
        blocks.sort_by_key(|(position, arrival, _)| (*position, *arrival));
        blocks
            .iter()
            .flat_map(|(_, _, values)| values.chunks_exact(width.max(1)).map(<[Value]>::to_vec))
            .collect()
    }
}

/// What a started statement gave back.
struct Started {
    info: Result<(StatementInfo, bool)>,
    /// The outcome, if it was started.
    outcome: Option<Result<QueryResult>>,
    rows: Vec<Vec<Value>>,
    job_thread: ThreadId,
    end_thread: Option<ThreadId>,
    row_threads: Vec<ThreadId>,
}

/// Starts `query` from a job on `pool` and waits (in the test) for its end.
fn start(engine: &Engine, pool: &WorkerPool, query: &str, options: QueryOptions) -> Started {
    let keep = Arc::new(Keep::default());
    let (ended, end) = mpsc::channel();
    let (answered, answer) = mpsc::channel();
    let (engine, q, receiver) = (engine.clone(), query.to_string(), keep.clone());
    pool.submit(Box::new(move |_| {
        let snapshot = engine.database().snapshot();
        let info = engine.start_streaming_on(
            snapshot,
            false,
            &q,
            BTreeMap::new(),
            &options,
            receiver,
            |_| true,
            Box::new(move |outcome| {
                let _ = ended.send((outcome, std::thread::current().id()));
            }),
        );
        let _ = answered.send((info, std::thread::current().id()));
    }));
    let (info, job_thread) = answer.recv_timeout(Duration::from_secs(30)).unwrap();
    let started = matches!(info, Ok((_, true)));
    let (outcome, end_thread) = match started {
        true => {
            let (outcome, thread) = end.recv_timeout(Duration::from_secs(30)).unwrap();
            (Some(outcome), Some(thread))
        }
        false => {
            // `done` was dropped unused.
            assert!(end.recv_timeout(Duration::from_millis(50)).is_err());
            (None, None)
        }
    };
    let width = match &info {
        Ok((info, _)) => info.columns.len(),
        Err(_) => 1,
    };
    let row_threads = keep.threads.lock().unwrap().clone();
    Started {
        info,
        outcome,
        rows: keep.rows(width),
        job_thread,
        end_thread,
        row_threads,
    }
}

fn options(pool: &WorkerPool) -> QueryOptions {
    QueryOptions {
        pool: Some(pool.clone()),
        caller_waits: true,
        ..QueryOptions::default()
    }
}

fn engine_with_nodes(dir: &std::path::Path) -> Engine {
    let engine = common::empty_engine(dir);
    engine
        .execute(
            "UNWIND range(1, 30000) AS i CREATE (:N {id: i, k: i % 13})",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    engine
}

#[test]
fn started_reads_give_the_rows_execute_collects() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with_nodes(dir.path());
    let pool = WorkerPool::new(2);
    let unordered_too = |rows: &mut Vec<Vec<Value>>| rows.sort_by_key(|r| format!("{r:?}"));
    for (query, ordered) in [
        (
            "MATCH (n:N) RETURN n.k AS k, count(*) AS c ORDER BY k",
            true,
        ),
        (
            "MATCH (n:N) RETURN n.k AS k, n.id AS id ORDER BY k DESC, id",
            true,
        ),
        (
            "MATCH (n:N) WITH DISTINCT n.k AS k RETURN sum(k) AS s",
            true,
        ),
        ("MATCH (n:N) WHERE n.id % 7 = 0 RETURN n.id", false),
        ("UNWIND range(1, 50000) AS i RETURN i", false),
        ("MATCH (n:N) RETURN n.id AS id ORDER BY id LIMIT 5", true),
        ("RETURN 1 AS one", true),
        ("SHOW INDEXES", true),
        ("EXPLAIN MATCH (n) RETURN n", true),
    ] {
        let mut expected = engine
            .execute(query, BTreeMap::new(), &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .rows
            .to_vecs();
        for _ in 0..3 {
            let started = start(&engine, &pool, query, options(&pool));
            let (info, true) = started.info.unwrap() else {
                panic!("{query} was not started")
            };
            assert!(!info.updating, "{query}");
            let result = started.outcome.unwrap().unwrap();
            assert!(result.rows.is_empty(), "{query}: rows were streamed");
            let mut rows = started.rows;
            if !ordered {
                unordered_too(&mut rows);
                unordered_too(&mut expected);
            }
            assert!(
                rows == expected,
                "{query}: {} rows, expected {}",
                rows.len(),
                expected.len()
            );
        }
    }
    assert_eq!(
        pool.open_queries(),
        0,
        "every started query left the scheduler"
    );
}

#[test]
fn a_one_morsel_query_ends_inside_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with_nodes(dir.path());
    engine
        .execute(
            "CREATE INDEX n_id FOR (n:N) ON (n.id)",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    let pool = WorkerPool::new(2);
    // A constant row, and an index seek of one node.
    for query in ["RETURN 1 AS one", "MATCH (n:N {id: 5}) RETURN n.k"] {
        let started = start(&engine, &pool, query, options(&pool));
        assert!(started.outcome.unwrap().is_ok());
        // Planned, run and ended on the job's worker: no hand-over.
        assert_eq!(started.end_thread, Some(started.job_thread), "{query}");
        assert_eq!(started.row_threads, vec![started.job_thread], "{query}");
        assert_ne!(started.job_thread, std::thread::current().id());
    }
}

#[test]
fn failures_reach_the_callback_and_writes_are_not_started() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with_nodes(dir.path());
    let pool = WorkerPool::new(2);
    // A statement that does not compile fails at the start.
    let started = start(&engine, &pool, "MATCH (n RETURN n", options(&pool));
    assert_eq!(started.info.unwrap_err().kind, ErrorKind::SyntaxError);
    // A run-time error ends the query through the callback.
    let started = start(
        &engine,
        &pool,
        "MATCH (n:N) RETURN n.id / (n.id - 20000) AS x",
        options(&pool),
    );
    let error = started.outcome.unwrap().unwrap_err();
    assert!(error.message.contains("by zero"), "{error}");
    // So does a timeout.
    let started = start(
        &engine,
        &pool,
        "MATCH (a:N), (b:N) RETURN count(*)",
        QueryOptions {
            timeout: Some(Duration::from_millis(50)),
            ..options(&pool)
        },
    );
    let error = started.outcome.unwrap().unwrap_err();
    assert_eq!(error.kind, ErrorKind::QueryAborted, "{error}");
    // A write is described, not started, and wrote nothing.
    let started = start(&engine, &pool, "CREATE (:W) RETURN 1", options(&pool));
    let (info, false) = started.info.unwrap() else {
        panic!("a write was started on the pool")
    };
    assert!(info.updating);
    let count = engine
        .execute(
            "MATCH (w:W) RETURN count(*)",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap()
        .rows
        .to_vecs();
    assert_eq!(count, [[Value::Int(0)]]);
    assert_eq!(pool.open_queries(), 0);
}
