//! The Bolt client against a real server over TCP: login, autocommit and
//! explicit transactions, parameters, entities, failures and recovery,
//! PULL in batches, RESET, a statement interrupted by RESET.

use rhizome_common::Value;
use rhizome_engine::Engine;
use rhizome_server::client::records::Entities;
use rhizome_server::client::{Auth, BoltClient, ClientError};
use rhizome_server::packstream::PackValue;
use rhizome_server::{AuthMode, Server, ServerConfig};
use std::collections::BTreeMap;

/// A server on a runtime of its own thread; stops when dropped.
struct Running {
    address: String,
    stop: rhizome_server::ShutdownHandle,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.shutdown();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start(auth: AuthMode, password: Option<&str>) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    let engine = Engine::open(&db).unwrap();
    let config = ServerConfig {
        bolt: "127.0.0.1:0".parse().unwrap(),
        auth,
        database: Some(db),
        initial_password: password.map(str::to_string),
        ..ServerConfig::default()
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let server = Server::bind(&config, engine).await.unwrap();
            sender
                .send((server.local_addr(), server.shutdown_handle()))
                .unwrap();
            server.run().await;
        });
    });
    let (address, stop) = receiver.recv().unwrap();
    Running {
        address: address.to_string(),
        stop,
        thread: Some(thread),
        _dir: dir,
    }
}

fn no_params() -> BTreeMap<String, Value> {
    BTreeMap::new()
}

fn single<S: std::io::Read + std::io::Write>(client: &mut BoltClient<S>, query: &str) -> PackValue {
    let mut result = client.query(query, &no_params()).unwrap();
    assert_eq!(result.records.len(), 1, "{query}");
    result.records.remove(0).remove(0)
}

#[test]
fn statements_parameters_and_entities_round_trip() {
    let server = start(AuthMode::None, None);
    let mut client = BoltClient::connect(&server.address, &Auth::None).unwrap();
    assert_eq!(client.version().to_string(), "5.4");
    let params = BTreeMap::from([
        ("n".to_string(), Value::Int(41)),
        ("s".to_string(), Value::String("héllo".into())),
    ]);
    let result = client
        .query("RETURN $n + 1 AS a, $s AS b", &params)
        .unwrap();
    assert_eq!(result.fields, ["a", "b"]);
    assert_eq!(result.records, [vec![PackValue::Int(42), "héllo".into()]]);
    let created = client
        .query(
            "CREATE p = (:Person {name: 'Ada'})-[:KNOWS {since: 2020}]->(:Person {name: 'Bob'}) RETURN p",
            &no_params(),
        )
        .unwrap();
    assert!(
        created.summary.get("stats").is_some(),
        "{:?}",
        created.summary
    );
    let mut entities = Entities::default();
    let values = entities.record(created.records[0].clone()).unwrap();
    let Value::Path(path) = &values[0] else {
        panic!("{values:?}")
    };
    let knows = &entities.rels[&path.rels[0]];
    assert_eq!(knows.rel_type, "KNOWS");
    assert_eq!(
        entities.nodes[&knows.start].properties["name"],
        Value::String("Ada".into())
    );
    assert_eq!(
        single(&mut client, "MATCH (n:Person) RETURN count(n)"),
        PackValue::Int(2)
    );
    client.goodbye().unwrap();
}

#[test]
fn failures_recover_the_connection_and_keep_the_server_message() {
    let server = start(AuthMode::None, None);
    let mut client = BoltClient::connect(&server.address, &Auth::None).unwrap();
    let err = client.query("RETURN nope(", &no_params()).unwrap_err();
    let ClientError::Server { code, message } = &err else {
        panic!("{err}")
    };
    assert_eq!(code, "Neo.ClientError.Statement.SyntaxError");
    assert!(!message.is_empty());
    // The connection is READY again.
    assert_eq!(single(&mut client, "RETURN 1"), PackValue::Int(1));
}

#[test]
fn explicit_transactions_commit_and_roll_back() {
    let server = start(AuthMode::None, None);
    let mut client = BoltClient::connect(&server.address, &Auth::None).unwrap();
    client.begin().unwrap();
    client.query("CREATE (:T {v: 1})", &no_params()).unwrap();
    assert_eq!(
        single(&mut client, "MATCH (t:T) RETURN count(t)"),
        PackValue::Int(1)
    );
    client.rollback().unwrap();
    assert_eq!(
        single(&mut client, "MATCH (t:T) RETURN count(t)"),
        PackValue::Int(0)
    );
    client.begin().unwrap();
    client.query("CREATE (:T {v: 2})", &no_params()).unwrap();
    let committed = client.commit().unwrap();
    assert!(committed.get("bookmark").is_some(), "{committed:?}");
    assert_eq!(
        single(&mut client, "MATCH (t:T) RETURN t.v"),
        PackValue::Int(2)
    );
    // A failure inside a transaction ends it; the client is READY after.
    client.begin().unwrap();
    client.query("CREATE (:T {v: 3})", &no_params()).unwrap();
    assert!(client.query("RETURN 1/0", &no_params()).is_err());
    assert!(client.commit().is_err(), "the transaction is gone");
    assert_eq!(
        single(&mut client, "MATCH (t:T) RETURN count(t)"),
        PackValue::Int(1)
    );
}

#[test]
fn pull_in_batches_discard_and_reset() {
    let server = start(AuthMode::None, None);
    let mut client = BoltClient::connect(&server.address, &Auth::None).unwrap();
    let run = client
        .run("UNWIND range(1, 2500) AS i RETURN i", &no_params())
        .unwrap();
    assert_eq!(run.fields, ["i"]);
    let mut seen = 0;
    let first = client.pull(1000, -1, |_| seen += 1).unwrap();
    assert!(first.has_more);
    assert_eq!(seen, 1000);
    let rest = client.pull(-1, -1, |_| seen += 1).unwrap();
    assert!(!rest.has_more);
    assert_eq!(seen, 2500);
    client
        .run("UNWIND range(1, 100000) AS i RETURN i", &no_params())
        .unwrap();
    client.discard(-1).unwrap();
    client
        .run("UNWIND range(1, 100000) AS i RETURN i", &no_params())
        .unwrap();
    client.reset().unwrap();
    assert_eq!(single(&mut client, "RETURN 2"), PackValue::Int(2));
}

#[test]
fn basic_auth_logs_in_and_a_wrong_password_is_refused() {
    let server = start(AuthMode::Basic, Some("secret"));
    let good = Auth::Basic {
        user: "neo4j".into(),
        password: "secret".into(),
    };
    let mut client = BoltClient::connect(&server.address, &good).unwrap();
    assert_eq!(single(&mut client, "RETURN 1"), PackValue::Int(1));
    let bad = Auth::Basic {
        user: "neo4j".into(),
        password: "wrong".into(),
    };
    match BoltClient::connect(&server.address, &bad) {
        Err(ClientError::Server { code, .. }) => {
            assert_eq!(code, "Neo.ClientError.Security.Unauthorized")
        }
        other => panic!("{:?}", other.err()),
    }
}

#[test]
fn an_interrupt_resets_the_running_statement_and_the_connection_stays_ready() {
    use rhizome_server::client::{open, BoltUri, ConnectOptions};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let server = start(AuthMode::None, None);
    let uri = BoltUri::parse(&format!("bolt://{}", server.address)).unwrap();
    let options = ConnectOptions {
        poll: Some(Duration::from_millis(20)),
        ..ConnectOptions::default()
    };
    let mut client = open(&uri, &Auth::None, &options).unwrap();
    let long = "UNWIND range(1, 1000000000) AS i WITH i WHERE i < 0 RETURN count(*) AS n";
    for in_transaction in [false, true] {
        let stop = Arc::new(AtomicBool::new(false));
        let check = stop.clone();
        client.set_interrupt(Some(Arc::new(move || check.load(Ordering::Relaxed))));
        if in_transaction {
            client.begin().unwrap();
            client.query("CREATE (:Interrupted)", &no_params()).unwrap();
        }
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, Ordering::Relaxed);
        });
        let started = Instant::now();
        let err = client.query(long, &no_params()).err().unwrap();
        setter.join().unwrap();
        assert!(matches!(err, ClientError::Interrupted), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        client.set_interrupt(None);
        // READY again: the next statement runs; the transaction is gone.
        assert_eq!(single(&mut client, "RETURN 7"), PackValue::Int(7));
        assert!(client.commit().is_err());
    }
    assert_eq!(
        single(&mut client, "MATCH (n:Interrupted) RETURN count(n)"),
        PackValue::Int(0)
    );
    // Without a read timeout the check is never asked, and nothing breaks.
    let mut plain = BoltClient::connect(&server.address, &Auth::None).unwrap();
    plain.set_interrupt(Some(Arc::new(|| true)));
    assert_eq!(single(&mut plain, "RETURN 8"), PackValue::Int(8));
}

#[test]
fn a_server_that_never_answers_fails_the_login_in_time() {
    use rhizome_server::client::{open, BoltUri, ConnectOptions};
    use std::time::{Duration, Instant};
    // Accepts connections (the kernel does, from the backlog) and never
    // answers: the handshake, plain or TLS, must give up, not hang.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = silent.local_addr().unwrap();
    let options = ConnectOptions {
        login_timeout: Some(Duration::from_millis(600)),
        ..ConnectOptions::default()
    };
    for scheme in ["bolt", "bolt+ssc"] {
        let uri = BoltUri::parse(&format!("{scheme}://{address}")).unwrap();
        let started = Instant::now();
        let err = open(&uri, &Auth::None, &options).err().expect("no login");
        let waited = started.elapsed();
        assert!(
            err.to_string().contains("did not answer in time"),
            "{scheme}: {err}"
        );
        assert!(
            waited < Duration::from_secs(5),
            "{scheme}: waited {waited:?}"
        );
    }
    drop(silent);
}
