//! `range()` outside `UNWIND` builds its list whole: the list must fit the
//! query's memory limit (and the pool of all queries) before it is built,
//! and the query fails cleanly with the memory-limit error if it does not.

use rhizome_common::{ErrorKind, Value};
use rhizome_engine::QueryOptions;
use rhizome_exec::scheduler::WorkerPool;
use rhizome_exec::MemoryPool;
use std::collections::BTreeMap;

mod common;

fn limited(pool: &WorkerPool, limit: usize) -> QueryOptions {
    QueryOptions {
        threads: Some(2),
        pool: Some(pool.clone()),
        memory_limit: Some(limit),
        ..QueryOptions::default()
    }
}

#[test]
fn a_range_over_the_limit_fails_before_it_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    let pool = WorkerPool::new(2);
    let options = limited(&pool, 64 << 20);
    for query in [
        "RETURN size(range(1, 100000000)) AS n",
        "WITH range(1, 100000000) AS l RETURN l[0] AS first",
    ] {
        let started = std::time::Instant::now();
        let error = engine
            .execute(query, BTreeMap::new(), &options)
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::QueryAborted, "{query}: {error}");
        assert_eq!(error.code, Some("MemoryPoolOutOfMemoryError"));
        assert!(error.message.contains("memory limit"), "{error}");
        // Refused before 100M values were made (that takes seconds).
        assert!(started.elapsed().as_secs() < 2, "{query}");
    }
}

#[test]
fn ranges_within_the_limit_run_and_do_not_add_up_over_rows() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    let pool = WorkerPool::new(2);
    // 1000 rows of a 10,000-element list: 480 KB each, 480 MB if the
    // lists were charged for the whole query.
    let options = limited(&pool, 8 << 20);
    let result = engine
        .execute(
            "UNWIND range(1, 1000) AS i RETURN sum(size(range(1, 10000))) AS n",
            BTreeMap::new(),
            &options,
        )
        .unwrap();
    assert_eq!(result.rows.get(0), Some(&[Value::Int(10_000_000)][..]));
}

#[test]
fn a_range_counts_against_the_pool_of_all_queries() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::empty_engine(dir.path());
    let pool = WorkerPool::new(2);
    let options = QueryOptions {
        memory_pool: Some(MemoryPool::new(16 << 20)),
        ..limited(&pool, usize::MAX)
    };
    let error = engine
        .execute(
            "RETURN size(range(1, 10000000)) AS n",
            BTreeMap::new(),
            &options,
        )
        .unwrap_err();
    assert_eq!(error.code, Some("MemoryPoolOutOfMemoryError"));
    assert_eq!(options.memory_pool.as_ref().unwrap().used(), 0);
}
