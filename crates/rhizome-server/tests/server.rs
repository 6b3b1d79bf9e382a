//! The server over real TCP: handshake, HTTP on the Bolt port, limits,
//! dropped connections and shutdown.

use rhizome_engine::QueryOptions;
use rhizome_server::packstream::{map, PackValue as P};
use rhizome_server::ServerConfig;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_picks_the_best_version_or_answers_zero_and_closes() {
    let server = start(no_auth()).await;
    Client::connect(server.address).await; // asserts 5.4
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    let mut only_3 = PROPOSE_5;
    only_3[4..8].copy_from_slice(&[0, 0, 0, 3]);
    only_3[8..12].copy_from_slice(&[0, 0, 0, 0]);
    stream.write_all(&only_3).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    assert_eq!(answer, [0, 0, 0, 0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_a_handshake_is_closed_after_the_handshake_timeout() {
    let server = start(ServerConfig {
        handshake_timeout_secs: 1,
        ..no_auth()
    })
    .await;
    let started = Instant::now();
    let mut silent = TcpStream::connect(server.address).await.unwrap();
    silent.write_all(&PROPOSE_5[..6]).await.unwrap(); // half a handshake
    let mut answer = Vec::new();
    // The server closes the connection (a reset is a close too).
    let _ = tokio::time::timeout(Duration::from_secs(10), silent.read_to_end(&mut answer))
        .await
        .expect("closed by the server, not by this test's timeout");
    assert!(answer.is_empty(), "no version was chosen: {answer:?}");
    let waited = started.elapsed();
    assert!(
        (Duration::from_millis(900)..Duration::from_secs(5)).contains(&waited),
        "{waited:?}"
    );
    // The server goes on for others.
    Client::connect(server.address).await.hello().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_is_closed_after_the_idle_timeout() {
    let server = start(ServerConfig {
        idle_timeout_secs: 1,
        ..no_auth()
    })
    .await;
    let mut idle = Client::connect(server.address).await;
    idle.hello().await;
    let mut busy = Client::connect(server.address).await;
    busy.hello().await;
    let started = Instant::now();
    // `busy` speaks every 300 ms, so only `idle` goes silent for a second.
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        busy.send(0x0F, vec![]).await; // RESET
        assert!(matches!(busy.receive().await, Some(P::Struct(0x70, _))));
    }
    let closed = tokio::time::timeout(Duration::from_secs(10), idle.receive())
        .await
        .expect("closed by the server, not by this test's timeout");
    assert!(closed.is_none(), "{closed:?}");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    busy.send(0x0F, vec![]).await;
    assert!(matches!(busy.receive().await, Some(P::Struct(0x70, _))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_request_on_the_bolt_port_gets_an_http_error() {
    let server = start(no_auth()).await;
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("Bolt port"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_limit_are_refused_with_a_failure() {
    let server = start(ServerConfig {
        max_connections: 1,
        ..no_auth()
    })
    .await;
    let mut first = Client::connect(server.address).await;
    first.hello().await;
    let mut second = Client::connect(server.address).await;
    second.send(0x01, vec![map([])]).await;
    let text = failure_text(second.receive().await);
    assert!(text.contains("limit of 1 connections"), "{text}");
    assert!(second.receive().await.is_none(), "closed after the refusal");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_size_limit_fails_that_connection_only() {
    let server = start(ServerConfig {
        max_message_size: 1024,
        ..no_auth()
    })
    .await;
    let mut client = Client::connect(server.address).await;
    client.hello().await;
    client.stream.write_all(&[0x07, 0xD0]).await.unwrap(); // a 2000-byte chunk
    let text = failure_text(client.receive().await);
    assert!(text.contains("1024"), "{text}");
    assert!(client.receive().await.is_none());
    let mut other = Client::connect(server.address).await;
    other.hello().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_rolls_its_transaction_back_at_once() {
    let server = start(no_auth()).await;
    let mut client = Client::connect(server.address).await;
    client.hello().await;
    client.send(0x11, vec![map([])]).await;
    client.receive().await;
    client
        .send(0x10, vec!["CREATE (:Dropped)".into(), map([]), map([])])
        .await;
    client.receive().await;
    client.send(0x3F, vec![map([("n", (-1).into())])]).await;
    client.receive().await;
    drop(client);
    let engine = server.engine.clone();
    let started = Instant::now();
    let tx = tokio::task::spawn_blocking(move || engine.begin())
        .await
        .unwrap()
        .expect("the writer lock is released");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    tx.rollback();
    let count = server
        .engine
        .execute(
            "MATCH (n:Dropped) RETURN count(n)",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(
        count.rows.first(),
        Some(&[rhizome_common::Value::Int(0)][..])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_connections_and_rolls_back() {
    let server = start(no_auth()).await;
    let mut client = Client::connect(server.address).await;
    client.hello().await;
    client.send(0x11, vec![map([])]).await;
    client.receive().await;
    client
        .send(
            0x10,
            vec![
                "UNWIND range(1, 10000) AS a UNWIND range(1, 10000) AS b RETURN a * b".into(),
                map([]),
                map([]),
            ],
        )
        .await;
    client.receive().await;
    client.send(0x3F, vec![map([("n", 5.into())])]).await;
    for _ in 0..6 {
        client.receive().await;
    }
    server.stop.shutdown();
    tokio::time::timeout(Duration::from_secs(10), server.task)
        .await
        .expect("the server stops promptly")
        .unwrap();
    assert!(
        client.receive().await.is_none(),
        "the connection was closed"
    );
    server
        .engine
        .begin()
        .expect("the transaction was rolled back")
        .rollback();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_roles_and_failed_logins() {
    let server = start(ServerConfig {
        auth: rhizome_server::AuthMode::Basic,
        initial_password: Some("admin-pw".into()),
        ..ServerConfig::default()
    })
    .await;
    // The wrong password is refused and the connection closed.
    let mut intruder = Client::connect(server.address).await;
    let refused = intruder.login("neo4j", "guess").await.unwrap();
    assert!(
        code(&refused).contains("Security.Unauthorized"),
        "{refused:?}"
    );
    assert!(intruder.receive().await.is_none());
    // The administrator creates a reader and an editor.
    let mut admin = Client::connect(server.address).await;
    assert!(matches!(
        admin.login("neo4j", "admin-pw").await,
        Some(P::Struct(0x70, _))
    ));
    for command in [
        "CREATE USER rita SET PASSWORD 'r-pw' CHANGE NOT REQUIRED",
        "GRANT ROLE reader TO rita",
        "CREATE USER ed SET PASSWORD 'e-pw'",
        "GRANT ROLE editor TO ed",
    ] {
        let done = admin.query(command).await;
        assert!(matches!(done, P::Struct(0x70, _)), "{command}: {done:?}");
    }
    // A reader reads but may not write.
    let mut rita = Client::connect(server.address).await;
    assert!(matches!(
        rita.login("rita", "r-pw").await,
        Some(P::Struct(0x70, _))
    ));
    assert!(matches!(
        rita.query("MATCH (n) RETURN count(n)").await,
        P::Struct(0x70, _)
    ));
    let write = rita.query("CREATE (:Nope)").await;
    assert!(code(&write).contains("Security.Forbidden"), "{write:?}");
    let manage = rita.query("CREATE USER x SET PASSWORD 'x'").await;
    assert!(code(&manage).contains("Security.Forbidden"), "{manage:?}");
    // An editor must change its password first (CHANGE REQUIRED is the default), then writes.
    let mut ed = Client::connect(server.address).await;
    assert!(matches!(
        ed.login("ed", "e-pw").await,
        Some(P::Struct(0x70, _))
    ));
    let expired = ed.query("CREATE (:Yes)").await;
    assert!(code(&expired).contains("CredentialsExpired"), "{expired:?}");
    let changed = ed
        .query("ALTER CURRENT USER SET PASSWORD FROM 'e-pw' TO 'e-pw2'")
        .await;
    assert!(matches!(changed, P::Struct(0x70, _)), "{changed:?}");
    assert!(matches!(
        ed.query("CREATE (:Yes)").await,
        P::Struct(0x70, _)
    ));
    let schema = ed.query("CREATE INDEX FOR (n:Yes) ON (n.k)").await;
    assert!(code(&schema).contains("Security.Forbidden"), "{schema:?}");
    // Three failures in a row lock a user out for a while.
    for _ in 0..3 {
        let mut c = Client::connect(server.address).await;
        c.login("rita", "wrong").await;
    }
    let mut late = Client::connect(server.address).await;
    let limited = late.login("rita", "r-pw").await.unwrap();
    assert!(
        code(&limited).contains("AuthenticationRateLimit"),
        "{limited:?}"
    );
    // Users live with the database.
    let store = rhizome_server::auth::UserStore::open(&server._dir.path().join("db")).unwrap();
    assert_eq!(store.all().len(), 3);
}
