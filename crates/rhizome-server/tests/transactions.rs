//! SHOW TRANSACTIONS and TERMINATE TRANSACTION over TCP, with two
//! connections: one runs, the other lists and terminates.

use rhizome_server::packstream::{map, PackValue as P};
use std::time::{Duration, Instant};

mod support;
use support::*;

const TERMINATED: &str = "Neo.TransientError.Transaction.Terminated";

/// The `SHOW TRANSACTIONS` rows of transactions other than the SHOW itself,
/// as (transactionId, currentQuery, status).
async fn others(client: &mut Client) -> Vec<(String, String, String)> {
    let rows = client.rows("SHOW TRANSACTIONS").await.unwrap();
    let text = |v: &P| match v {
        P::String(s) => s.clone(),
        other => panic!("{other:?}"),
    };
    rows.iter()
        .map(|r| {
            assert_eq!(r.len(), 12, "{r:?}");
            assert_eq!(text(&r[0]), "neo4j");
            assert!(text(&r[3]).starts_with("bolt-"));
            assert!(text(&r[4]).starts_with("127.0.0.1:"));
            assert_eq!(text(&r[5]), "neo4j");
            assert!(
                matches!(r[9], P::Struct(0x45, _)),
                "elapsedTime is a duration"
            );
            (text(&r[1]), text(&r[6]), text(&r[8]))
        })
        .filter(|(_, query, _)| query != "SHOW TRANSACTIONS")
        .collect()
}

/// Waits until `client`'s other transactions are as `wanted` says.
async fn wait_for(
    client: &mut Client,
    wanted: impl Fn(&[(String, String, String)]) -> bool,
) -> Vec<(String, String, String)> {
    let started = Instant::now();
    loop {
        let listed = others(client).await;
        if wanted(&listed) {
            return listed;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{listed:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn terminate(client: &mut Client, id: &str) -> Vec<Vec<P>> {
    client
        .rows(&format!("TERMINATE TRANSACTION '{id}'"))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_explicit_transaction_is_listed_terminated_and_rolled_back() {
    let server = start(no_auth()).await;
    let mut runner = Client::ready(server.address).await;
    let mut admin = Client::ready(server.address).await;
    runner.send(0x11, vec![map([])]).await;
    assert!(matches!(runner.receive().await, Some(P::Struct(0x70, _))));
    assert!(runner.rows("CREATE (:Held)").await.is_ok());
    let listed = wait_for(&mut admin, |l| l.len() == 1).await;
    let (id, query, status) = &listed[0];
    assert!(id.starts_with("neo4j-transaction-"), "{id}");
    assert_eq!((query.as_str(), status.as_str()), ("", "Running"));

    // YIELD and WHERE shape the rows as in Neo4j.
    let yielded = admin
        .rows("SHOW TRANSACTIONS YIELD transactionId AS id, currentQuery WHERE currentQuery = '' RETURN id")
        .await
        .unwrap();
    assert_eq!(yielded, vec![vec![P::String(id.clone())]]);
    let none = admin
        .rows("SHOW TRANSACTIONS WHERE username = 'nobody'")
        .await;
    assert_eq!(none, Ok(vec![]));
    let mine = admin
        .rows("SHOW TRANSACTIONS YIELD currentQuery, status ORDER BY currentQuery DESC LIMIT 1")
        .await
        .unwrap();
    assert_eq!(mine[0].len(), 2);
    assert!(matches!(&mine[0][0], P::String(q) if q.starts_with("SHOW TRANSACTIONS YIELD")));

    let answer = terminate(&mut admin, id).await;
    assert_eq!(
        answer,
        vec![vec![
            P::String(id.clone()),
            "neo4j".into(),
            "Transaction terminated.".into()
        ]]
    );
    // The writer lock is free at once, the write is gone.
    let engine = server.engine.clone();
    let started = Instant::now();
    tokio::task::spawn_blocking(move || engine.begin())
        .await
        .unwrap()
        .expect("the writer lock was released")
        .rollback();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        admin.rows("MATCH (n:Held) RETURN count(n)").await,
        Ok(vec![vec![P::Int(0)]])
    );
    // Its client learns on its next request, and carries on after RESET.
    let failure = runner.run("RETURN 1", map([])).await;
    assert_eq!(code(&failure), format!("{:?}", P::from(TERMINATED)));
    runner.reset().await;
    assert_eq!(
        runner.rows("RETURN 1 AS one").await,
        Ok(vec![vec![P::Int(1)]])
    );
    // An unknown id is not found.
    let answer = terminate(&mut admin, "neo4j-transaction-999").await;
    assert_eq!(answer[0][2], P::from("Transaction not found."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_query_is_stopped_at_once() {
    let server = start(no_auth()).await;
    let mut admin = Client::ready(server.address).await;
    for (query, explicit) in [
        // A streamed read, autocommit and in a transaction.
        (
            "UNWIND range(1, 200000000) AS i WITH i WHERE i < 0 RETURN count(*) AS c",
            false,
        ),
        (
            "UNWIND range(1, 200000000) AS i WITH i WHERE i < 0 RETURN count(*) AS c",
            true,
        ),
        // An autocommit write (it runs while the client waits for RUN).
        (
            "UNWIND range(1, 200000000) AS i WITH i WHERE i < 0 CREATE (:Never)",
            false,
        ),
    ] {
        let mut runner = Client::ready(server.address).await;
        if explicit {
            runner.send(0x11, vec![map([])]).await;
            assert!(matches!(runner.receive().await, Some(P::Struct(0x70, _))));
        }
        runner
            .send(0x10, vec![query.into(), map([]), map([])])
            .await;
        runner.send(0x3F, vec![map([("n", (-1).into())])]).await;
        let listed = wait_for(&mut admin, |l| l.iter().any(|(_, q, _)| q == query)).await;
        let id = listed
            .iter()
            .find(|(_, q, _)| q == query)
            .unwrap()
            .0
            .clone();
        let stopped = Instant::now();
        assert_eq!(
            terminate(&mut admin, &id).await[0][2],
            P::from("Transaction terminated.")
        );
        // The client gets Terminated for its RUN or PULL.
        let failure = loop {
            match runner.receive().await.unwrap() {
                P::Struct(0x70, _) => continue, // RUN's SUCCESS of a read
                other => break other,
            }
        };
        assert_eq!(
            code(&failure),
            format!("{:?}", P::from(TERMINATED)),
            "{query}"
        );
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "{:?}",
            stopped.elapsed()
        );
        runner.reset().await;
        assert_eq!(
            runner.rows("RETURN 1 AS one").await,
            Ok(vec![vec![P::Int(1)]])
        );
        wait_for(&mut admin, |l| l.is_empty()).await;
    }
    // The writer lock is free.
    let engine = server.engine.clone();
    tokio::task::spawn_blocking(move || engine.begin())
        .await
        .unwrap()
        .unwrap()
        .rollback();
}

/// A running query's row shows the tenant its user's queries run as (a
/// group of the `[scheduling]` table here) and the worker time it has used,
/// which grows while it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_query_shows_its_tenant_and_cpu_time() {
    let mut config = no_auth();
    config.scheduling = toml::from_str("[groups.ops]\nshare = 2\nmembers = [\"neo4j\"]\n").unwrap();
    let server = start(config).await;
    let mut admin = Client::ready(server.address).await;
    let mut runner = Client::ready(server.address).await;
    let query = "UNWIND range(1, 200000000) AS i WITH i WHERE i < 0 RETURN count(*) AS c";
    runner
        .send(0x10, vec![query.into(), map([]), map([])])
        .await;
    runner.send(0x3F, vec![map([("n", (-1).into())])]).await;
    let show = format!(
        "SHOW TRANSACTIONS YIELD currentQuery, tenant, cpuTime WHERE currentQuery = '{query}'"
    );
    let nanos = |row: &[P]| match &row[2] {
        P::Struct(0x45, fields) => match (&fields[2], &fields[3]) {
            (P::Int(s), P::Int(n)) => s * 1_000_000_000 + n,
            other => panic!("{other:?}"),
        },
        P::Null => 0,
        other => panic!("cpuTime is a duration or null: {other:?}"),
    };
    let started = Instant::now();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let rows = admin.rows(&show).await.unwrap();
        if let Some(row) = rows.first() {
            assert_eq!(row[1], P::from("ops"));
            let cpu = nanos(row);
            if cpu > 0 && seen.last().is_none_or(|last| cpu > *last) {
                seen.push(cpu);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{seen:?} {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let id = admin
        .rows("SHOW TRANSACTIONS YIELD transactionId, currentQuery WHERE currentQuery STARTS WITH 'UNWIND' RETURN transactionId")
        .await
        .unwrap();
    let P::String(id) = &id[0][0] else { panic!() };
    terminate(&mut admin, id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_waiting_for_the_writer_lock_is_listed_blocked_and_terminated() {
    let server = start(no_auth()).await;
    let mut holder = Client::ready(server.address).await;
    let mut waiter = Client::ready(server.address).await;
    let mut admin = Client::ready(server.address).await;
    holder.send(0x11, vec![map([])]).await;
    assert!(matches!(holder.receive().await, Some(P::Struct(0x70, _))));
    assert!(holder.rows("CREATE (:Holder)").await.is_ok());
    // A second transaction begins at once and reads (it takes no lock
    // before it writes); its first write waits for the lock the first
    // transaction holds.
    waiter.send(0x11, vec![map([])]).await;
    assert!(matches!(waiter.receive().await, Some(P::Struct(0x70, _))));
    assert_eq!(
        waiter.rows("MATCH (n:Holder) RETURN count(n)").await,
        Ok(vec![vec![P::Int(0)]])
    );
    waiter
        .send(0x10, vec!["CREATE (:Waiter)".into(), map([]), map([])])
        .await;
    let listed = wait_for(&mut admin, |l| {
        l.len() == 2 && l.iter().any(|(_, _, s)| s.starts_with("Blocked by: "))
    })
    .await;
    let blocked: Vec<_> = listed
        .iter()
        .filter(|(_, _, s)| s.starts_with("Blocked by: "))
        .collect();
    assert_eq!(blocked.len(), 1, "{listed:?}");
    assert!(blocked[0].2.contains("writer lock"), "{listed:?}");
    let id = blocked[0].0.clone();
    let stopped = Instant::now();
    assert_eq!(
        terminate(&mut admin, &id).await[0][2],
        P::from("Transaction terminated.")
    );
    // Its client is told at once, well before the lock wait runs out.
    let failure = waiter.receive().await.unwrap();
    assert_eq!(code(&failure), format!("{:?}", P::from(TERMINATED)));
    assert!(
        stopped.elapsed() < Duration::from_secs(2),
        "{:?}",
        stopped.elapsed()
    );
    let listed = wait_for(&mut admin, |l| l.len() == 1).await;
    assert_eq!(listed[0].2, "Running");
    // The holder is untouched and commits; then the lock is free (the
    // abandoned wait gave back what it got).
    holder.send(0x12, vec![]).await;
    assert!(matches!(holder.receive().await, Some(P::Struct(0x70, _))));
    waiter.reset().await;
    waiter.send(0x11, vec![map([])]).await;
    assert!(matches!(waiter.receive().await, Some(P::Struct(0x70, _))));
    assert_eq!(
        waiter.rows("MATCH (n:Holder) RETURN count(n)").await,
        Ok(vec![vec![P::Int(1)]])
    );
    assert!(waiter.rows("CREATE (:Waiter)").await.is_ok());
    waiter.send(0x13, vec![]).await;
    assert!(matches!(waiter.receive().await, Some(P::Struct(0x70, _))));
}
