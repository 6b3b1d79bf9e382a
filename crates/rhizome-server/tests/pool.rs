//! The server's statements on the engine's one worker pool: a statement's
//! thread only waits, so no more threads than the pool has workers run
//! query tasks at once; a streamed result the client does not fetch is
//! held (its tasks wait in its queue, not on a worker), so others still
//! answer; and a held result that is reset, dropped, timed out or stalled
//! ends and leaves the scheduler.
//!
//! The tests share the process-wide pool and look at its counters, so they
//! run one at a time.

use rhizome_exec::scheduler::WorkerPool;
use rhizome_server::packstream::{map, PackValue as P};
use rhizome_server::ServerConfig;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

mod support;
use support::*;

/// One test at a time: they read the shared pool's counters.
static SERIAL: Mutex<()> = Mutex::const_new(());

/// Rows of the large streamed result: many times the hand-off's capacity.
const BIG: i64 = 200_000;
const BIG_QUERY: &str = "UNWIND range(1, 200000) AS i RETURN i";

/// Waits (up to 20 s) until `done` holds; panics with `what` if not.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(
            Instant::now() < until,
            "{what}: {} executing, {} open",
            WorkerPool::global().executing(),
            WorkerPool::global().open_queries()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Starts the big stream on a new connection (in an explicit transaction
/// if `explicit`) and pulls its first rows; the client and their sum.
async fn started_stream(server: &Running, explicit: bool) -> (Client, i64) {
    let mut client = Client::ready(server.address).await;
    if explicit {
        client.send(0x11, vec![map([])]).await;
        let begun = client.receive().await;
        assert!(matches!(begun, Some(P::Struct(0x70, _))), "{begun:?}");
    }
    let run = client.run(BIG_QUERY, map([])).await;
    assert!(matches!(run, P::Struct(0x70, _)), "{run:?}");
    let (rows, last) = client.pull(100).await;
    assert_eq!(rows.len(), 100, "{last:?}");
    (client, sum(&rows))
}

/// The sum of a pulled single-integer column.
fn sum(rows: &[Vec<P>]) -> i64 {
    rows.iter()
        .map(|r| match r[..] {
            [P::Int(i)] => i,
            _ => panic!("not an integer row: {r:?}"),
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfetched_streams_hold_no_worker_and_a_small_query_still_answers() {
    let _serial = SERIAL.lock().await;
    let pool = WorkerPool::global();
    let server = start(no_auth()).await;
    // More streams left unfetched than the pool has workers.
    let mut streams = Vec::new();
    for _ in 0..pool.threads() + 2 {
        streams.push(started_stream(&server, streams.len() % 2 == 1).await);
    }
    // Each fills its hand-off and is held: no thread runs a task of theirs
    // (a task waiting for its client on a worker would count here).
    eventually("a task of a held stream kept running", || {
        pool.executing() == 0
    })
    .await;
    let mut small = Client::ready(server.address).await;
    let asked = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), small.rows("RETURN 1 AS one"))
        .await
        .expect("a small query waited behind unfetched streams");
    assert_eq!(answer, Ok(vec![vec![P::Int(1)]]));
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    // Each held stream resumes as its client pulls, and delivers every row.
    for (mut stream, first) in streams {
        let (rows, last) = stream.pull(-1).await;
        assert!(matches!(last, P::Struct(0x70, _)), "{last:?}");
        assert_eq!(rows.len() as i64, BIG - 100);
        assert_eq!(first + sum(&rows), BIG * (BIG + 1) / 2);
    }
    eventually("a query stayed open", || pool.open_queries() == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_more_threads_than_workers_run_query_tasks() {
    let _serial = SERIAL.lock().await;
    let pool = WorkerPool::global();
    let server = start(no_auth()).await;
    pool.reset_peak_executing();
    let clients = 16;
    let mut running = Vec::new();
    for c in 0..clients {
        let address = server.address;
        running.push(tokio::spawn(async move {
            let mut client = Client::ready(address).await;
            for round in 0..2 {
                let n = 20_000 + 1_000 * (c + round);
                let total = client
                    .rows(&format!("UNWIND range(1, {n}) AS i RETURN sum(i) AS s"))
                    .await
                    .unwrap();
                assert_eq!(total, vec![vec![P::Int(n * (n + 1) / 2)]]);
                let rows = client
                    .rows(&format!("UNWIND range(1, {n}) AS i RETURN i"))
                    .await
                    .unwrap();
                assert_eq!(sum(&rows), n * (n + 1) / 2);
            }
        }));
    }
    for client in running {
        client.await.unwrap();
    }
    let peak = pool.peak_executing();
    assert!(peak >= 1, "no task counted");
    assert!(
        peak <= pool.threads(),
        "{peak} threads ran query tasks at once on a pool of {}",
        pool.threads()
    );
}

/// Reads in explicit transactions run on the pool as autocommit reads do
/// (no thread waits for them): a held one ends the same ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_stream_ends_on_reset_disconnect_timeout_and_stall() {
    let _serial = SERIAL.lock().await;
    let pool = WorkerPool::global();
    let server = start(no_auth()).await;
    let timed = start(ServerConfig {
        transaction_timeout_secs: 1,
        ..no_auth()
    })
    .await;
    let stalled = start(ServerConfig {
        stream_stall_timeout_secs: 1,
        ..no_auth()
    })
    .await;
    let held = |what: &'static str| async move {
        eventually(what, || pool.executing() == 0 && pool.open_queries() == 1).await;
    };
    let ended = |what: &'static str| eventually(what, || pool.open_queries() == 0);

    for explicit in [false, true] {
        // RESET: the held query ends and the connection carries on.
        let (mut client, _) = started_stream(&server, explicit).await;
        held("reset: never held").await;
        client.reset().await;
        ended("a reset stream stayed open").await;
        assert_eq!(
            client.rows("RETURN 2 AS two").await,
            Ok(vec![vec![P::Int(2)]])
        );

        // A dropped connection.
        let (client, _) = started_stream(&server, explicit).await;
        held("disconnect: never held").await;
        drop(client);
        ended("a dropped connection's stream stayed open").await;

        // The statement's timeout passes while it is held.
        let (mut client, _) = started_stream(&timed, explicit).await;
        held("timeout: never held").await;
        ended("a held stream outlived its timeout").await;
        let (_, last) = client.pull(-1).await;
        assert!(
            failure_text(Some(last.clone())).contains("timeout"),
            "explicit {explicit}: {last:?}"
        );

        // The client fetches nothing for the stall timeout.
        let (mut client, _) = started_stream(&stalled, explicit).await;
        held("stall: never held").await;
        ended("a stalled stream stayed open").await;
        let (_, last) = client.pull(-1).await;
        assert!(
            failure_text(Some(last.clone())).contains("did not fetch"),
            "explicit {explicit}: {last:?}"
        );
    }
}

/// A write's updating plan runs as one job on one worker: a long bulk
/// write leaves the other workers to other clients, whose reads complete
/// while it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_write_holds_one_worker_and_other_clients_reads_complete() {
    let _serial = SERIAL.lock().await;
    let pool = WorkerPool::global();
    assert!(
        pool.threads() >= 2,
        "the test needs a pool of two workers or more (RHIZOME_WORKERS)"
    );
    let server = start(no_auth()).await;
    let mut writer = Client::ready(server.address).await;
    // Computes for minutes in a debug build and writes nothing.
    writer
        .send(
            0x10,
            vec![
                "UNWIND range(1, 2000000000) AS i WITH i WHERE i < 0 CREATE (:Never)".into(),
                map([]),
                map([]),
            ],
        )
        .await;
    let write = tokio::spawn(async move {
        let answer = writer.receive().await;
        (writer, answer)
    });
    // The write has started (its job holds a worker).
    eventually("the write never started", || pool.open_queries() >= 1).await;
    let mut reader = Client::ready(server.address).await;
    let asked = Instant::now();
    for round in 0..20_i64 {
        let n = 1_000 + round;
        let rows = tokio::time::timeout(
            Duration::from_secs(10),
            reader.rows(&format!("UNWIND range(1, {n}) AS i RETURN sum(i) AS s")),
        )
        .await
        .expect("a read waited behind the long write");
        assert_eq!(rows, Ok(vec![vec![P::Int(n * (n + 1) / 2)]]));
    }
    assert!(
        !write.is_finished(),
        "the write ended before the reads did: the test proves nothing (make it longer)"
    );
    assert!(asked.elapsed() < Duration::from_secs(20));
    // Dropping its connection stops the write.
    write.abort();
    ended_within_20s(pool).await;
}

/// Waits until no query is open on `pool`.
async fn ended_within_20s(pool: &WorkerPool) {
    eventually("the write stayed open after its connection closed", || {
        pool.open_queries() == 0
    })
    .await;
}
