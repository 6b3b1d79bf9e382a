//! Memory limits over TCP: a query over its own limit or over the limit of
//! all queries fails with a classified error while other clients carry on;
//! `UNWIND range(...)` streams without holding its list; a sort is charged.

use rhizome_server::packstream::PackValue as P;
use rhizome_server::ServerConfig;
use std::time::{Duration, Instant};

mod support;
use support::*;

const OUT_OF_MEMORY: &str = "Neo.TransientError.General.MemoryPoolOutOfMemoryError";

/// Runs the huge collect on one connection and `RETURN 1` on another at
/// the same time; the collect must fail over its memory, the other succeed.
async fn huge_collect_fails_while_a_small_query_succeeds(config: ServerConfig) {
    let server = start(config).await;
    let mut big = Client::ready(server.address).await;
    let mut small = Client::ready(server.address).await;
    let collect = tokio::spawn(async move {
        let outcome = big
            .rows("UNWIND range(1, 50000000) AS i RETURN collect(i) AS all")
            .await;
        (outcome, big)
    });
    let started = Instant::now();
    let mut answered = 0;
    while !collect.is_finished() || answered == 0 {
        assert_eq!(
            small.rows("RETURN 1 AS one").await,
            Ok(vec![vec![P::Int(1)]])
        );
        answered += 1;
        assert!(started.elapsed() < Duration::from_secs(120), "no end");
    }
    let (outcome, mut big) = collect.await.unwrap();
    let failure = outcome.expect_err("the collect fails over its memory");
    assert_eq!(code(&failure), format!("{:?}", P::from(OUT_OF_MEMORY)));
    assert!(failure_text(Some(failure)).contains("memory limit"));
    // The connection carries on, and the memory came back.
    assert_eq!(big.rows("RETURN 2 AS two").await, Ok(vec![vec![P::Int(2)]]));
    // All of the pool comes back once the query's last task has ended.
    let pool = server.pool.as_ref().unwrap();
    let waited = Instant::now();
    while pool.used() != 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "{} bytes kept",
            pool.used()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_over_its_own_limit_fails_and_others_carry_on() {
    huge_collect_fails_while_a_small_query_succeeds(ServerConfig {
        memory_limit: Some(64 << 20),
        memory_limit_total: Some(1 << 40),
        ..no_auth()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_over_the_limit_of_all_queries_fails_and_others_carry_on() {
    huge_collect_fails_while_a_small_query_succeeds(ServerConfig {
        memory_limit: Some(1 << 40),
        memory_limit_total: Some(64 << 20),
        ..no_auth()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sort_is_charged_to_the_query() {
    let server = start(ServerConfig {
        memory_limit: Some(32 << 20),
        ..no_auth()
    })
    .await;
    let mut client = Client::ready(server.address).await;
    let failure = client
        .rows("UNWIND range(1, 3000000) AS i RETURN i ORDER BY i DESC")
        .await
        .expect_err("the sort holds more than 32 MiB");
    assert_eq!(code(&failure), format!("{:?}", P::from(OUT_OF_MEMORY)));
    // With a LIMIT the sort keeps only the top rows.
    let top = client
        .rows("UNWIND range(1, 3000000) AS i RETURN i ORDER BY i DESC LIMIT 2")
        .await
        .unwrap();
    assert_eq!(top, vec![vec![P::Int(3000000)], vec![P::Int(2999999)]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unwinding_a_long_range_streams_without_holding_the_list() {
    // 10 million elements held would be charged about 480 MB: far over
    // this limit, so the stream shows the list is never made.
    let server = start(ServerConfig {
        memory_limit: Some(4 << 20),
        ..no_auth()
    })
    .await;
    let pool = server.pool.clone().unwrap();
    let mut client = Client::ready(server.address).await;
    let started = Instant::now();
    let run = client
        .run(
            "UNWIND range(1, 10000000) AS i RETURN i",
            rhizome_server::packstream::map([]),
        )
        .await;
    assert!(matches!(run, P::Struct(0x70, _)), "{run:?}");
    let (first, more) = client.pull(1000).await;
    assert_eq!(first.len(), 1000);
    assert!(matches!(&more, P::Struct(0x70, m) if m[0].get("has_more").is_some()));
    // Elements are the range's, whichever part of it came first.
    for record in &first {
        assert!(matches!(record[..], [P::Int(i)] if (1..=10_000_000).contains(&i)));
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the first records took {:?}",
        started.elapsed()
    );
    // More of the stream; nothing was charged (a made list would have been
    // charged before the first record), then the rest is discarded.
    for _ in 0..3 {
        let (records, _) = client.pull(100_000).await;
        assert_eq!(records.len(), 100_000);
    }
    assert_eq!(pool.peak(), 0, "the unwound range was charged: it was made");
    client
        .send(
            0x2F,
            vec![rhizome_server::packstream::map([("n", (-1).into())])],
        )
        .await;
    assert!(matches!(client.receive().await, Some(P::Struct(0x70, _))));
    assert_eq!(
        client.rows("RETURN 3 AS three").await,
        Ok(vec![vec![P::Int(3)]])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_built_whole_is_charged_to_the_query() {
    let server = start(ServerConfig {
        memory_limit: Some(64 << 20),
        ..no_auth()
    })
    .await;
    let mut client = Client::ready(server.address).await;
    for query in [
        "RETURN size(range(1, 100000000)) AS n",
        "WITH range(1, 100000000) AS l RETURN l[0] AS first",
    ] {
        let failure = client
            .rows(query)
            .await
            .expect_err("a list of 100M values is over 64 MiB");
        assert_eq!(code(&failure), format!("{:?}", P::from(OUT_OF_MEMORY)));
        assert!(failure_text(Some(failure)).contains("memory limit"));
    }
    // Within the limit it runs, and the connection carries on.
    assert_eq!(
        client.rows("RETURN size(range(1, 1000)) AS n").await,
        Ok(vec![vec![P::Int(1000)]])
    );
    assert_eq!(server.pool.as_ref().unwrap().used(), 0);
}

/// The memory this process (server and client together) holds now.
fn resident_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// All ten million rows of `UNWIND range(1, 10000000) AS i RETURN i`
/// pulled over Bolt, 10,000 at a time, with the process's memory flat
/// after the first million (the worker pool's and allocator's first
/// growth). Slow in a debug build, hence ignored (CI runs it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn ten_million_rows_stream_over_bolt_in_constant_memory() {
    let server = start(no_auth()).await;
    let mut client = Client::ready(server.address).await;
    let run = client
        .run(
            "UNWIND range(1, 10000000) AS i RETURN i",
            rhizome_server::packstream::map([]),
        )
        .await;
    assert!(matches!(run, P::Struct(0x70, _)), "{run:?}");
    let started = Instant::now();
    let (mut count, mut sum) = (0u64, 0u64);
    let mut before = None;
    let mut growth = 0usize;
    loop {
        let (records, last) = client.pull(10_000).await;
        for record in &records {
            let [P::Int(i)] = record[..] else {
                panic!("{record:?}")
            };
            count += 1;
            sum += i as u64;
        }
        if count >= 1_000_000 {
            let now = resident_bytes();
            let before = *before.get_or_insert(now);
            growth = growth.max(now.saturating_sub(before));
        }
        let P::Struct(0x70, meta) = &last else {
            panic!("{last:?}")
        };
        if meta[0].get("has_more").is_none() {
            break;
        }
    }
    eprintln!(
        "10M rows over Bolt in {:?}; growth after the first million: {} KiB",
        started.elapsed(),
        growth / 1024
    );
    assert_eq!(count, 10_000_000);
    assert_eq!(sum, 10_000_000 * 10_000_001 / 2);
    // Held whole, ten million values would take hundreds of MB.
    assert!(growth < 32 << 20, "grew by {} KiB", growth / 1024);
}
