//! The state machine, one test per state, as transcripts: request bytes
//! in, response bytes out (decoded only where timings vary).

use super::*;
use crate::packstream::{decode, PackValue as P};
use crate::registry::Registry;
use rhizome_engine::Engine;

/// An engine over a new database holding `(:Person {name: 'Ada'})-[:KNOWS {since: 2020}]->(:Person {name: 'Bob'})`.
fn engine(dir: &std::path::Path) -> Engine {
    let db = dir.join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    let engine = Engine::open(&db).unwrap();
    engine
        .execute(
            "CREATE (:Person {name: 'Ada'})-[:KNOWS {since: 2020}]->(:Person {name: 'Bob'})",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    engine
}

struct Harness {
    session: Session,
    engine: Engine,
    _dir: tempfile::TempDir,
}

fn harness(version: Version) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let registry = Arc::new(Registry::single("graph", engine.clone()));
    let session = Session::new(
        version,
        registry,
        Arc::new(SessionConfig::default()),
        Arc::new(Interrupt::default()),
        "bolt-7".into(),
    );
    Harness {
        session,
        engine,
        _dir: dir,
    }
}

const V5_4: Version = Version { major: 5, minor: 4 };

fn msg(tag: u8, fields: Vec<P>) -> Vec<u8> {
    let mut out = Vec::new();
    P::Struct(tag, fields).encode(&mut out);
    out
}

fn hello() -> Vec<u8> {
    msg(0x01, vec![map([("user_agent", "test/1".into())])])
}
fn logon() -> Vec<u8> {
    msg(0x6A, vec![map([("scheme", "none".into())])])
}
fn run(query: &str) -> Vec<u8> {
    msg(0x10, vec![query.into(), map([]), map([])])
}
fn pull(n: i64) -> Vec<u8> {
    msg(0x3F, vec![map([("n", n.into())])])
}
fn discard() -> Vec<u8> {
    msg(0x2F, vec![map([("n", (-1).into())])])
}
const RESET: [u8; 2] = [0xB0, 0x0F];
const BEGIN: [u8; 3] = [0xB1, 0x11, 0xA0];
const COMMIT: [u8; 2] = [0xB0, 0x12];
const ROLLBACK: [u8; 2] = [0xB0, 0x13];
const GOODBYE: [u8; 2] = [0xB0, 0x02];
/// IGNORED, framed.
const IGNORED: [u8; 6] = [0x00, 0x02, 0xB0, 0x7E, 0x00, 0x00];
/// SUCCESS {}, framed.
const SUCCESS_EMPTY: [u8; 7] = [0x00, 0x03, 0xB1, 0x70, 0xA0, 0x00, 0x00];

impl Harness {
    /// Sends one message; the raw response bytes and the flow.
    async fn raw(&mut self, request: &[u8]) -> (Vec<u8>, Flow) {
        let mut out = Vec::new();
        let flow = self.session.handle(request, &mut out).await.unwrap();
        (out, flow)
    }

    /// Sends one message; the responses decoded, timings removed.
    async fn send(&mut self, request: &[u8]) -> Vec<P> {
        let (out, _) = self.raw(request).await;
        let mut decoder = crate::framing::ChunkDecoder::new(usize::MAX);
        let mut rest = &out[..];
        let mut messages = Vec::new();
        loop {
            let (used, message) = decoder.decode(rest).unwrap();
            rest = &rest[used..];
            let Some(message) = message else { break };
            messages.push(strip_timings(decode(&message).unwrap()));
        }
        assert!(rest.is_empty());
        messages
    }

    async fn ready(version: Version) -> Harness {
        let mut h = harness(version);
        h.send(&hello()).await;
        if version >= Version::V5_1 {
            h.send(&logon()).await;
        }
        assert_eq!(h.session.state(), State::Ready);
        h
    }

    fn count(&self, query: &str) -> i64 {
        let result = self
            .engine
            .execute(query, BTreeMap::new(), &QueryOptions::default())
            .unwrap();
        match result.rows.first() {
            Some([Value::Int(n)]) => *n,
            other => panic!("{other:?}"),
        }
    }
}

fn strip_timings(value: P) -> P {
    match value {
        P::Struct(tag, fields) => P::Struct(tag, fields.into_iter().map(strip_timings).collect()),
        P::Map(entries) => P::Map(
            entries
                .into_iter()
                .filter(|(k, _)| k != "t_first" && k != "t_last")
                .collect(),
        ),
        other => other,
    }
}

fn success(meta: P) -> P {
    P::Struct(0x70, vec![meta])
}
fn record(values: Vec<P>) -> P {
    P::Struct(0x71, vec![P::List(values)])
}
fn code_of(failure: &P) -> String {
    match failure {
        P::Struct(0x7F, fields) => match fields[0].get("code") {
            Some(P::String(code)) => code.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("not a FAILURE: {other:?}"),
    }
}
fn fields(names: &[&str]) -> P {
    P::List(names.iter().map(|&n| n.into()).collect())
}

#[tokio::test]
async fn negotiation_hello_then_authentication_in_5_1_and_later() {
    let mut h = harness(V5_4);
    let (out, flow) = h.raw(&hello()).await;
    // SUCCESS {server: "Neo4j/5.26.0", connection_id: "bolt-7", hints: {}}
    let mut expected = Vec::new();
    crate::message::success(
        &mut expected,
        &map([
            ("server", "Neo4j/5.26.0".into()),
            ("connection_id", "bolt-7".into()),
            ("hints", map([])),
        ]),
    );
    assert_eq!(out, expected);
    assert_eq!(flow, Flow::Continue);
    assert_eq!(h.session.state(), State::Authentication);

    let mut h = harness(Version::V4_4);
    h.send(&hello()).await;
    assert_eq!(
        h.session.state(),
        State::Ready,
        "4.4 authenticates in HELLO"
    );

    let mut h = harness(V5_4);
    let (out, flow) = h.raw(&run("RETURN 1")).await;
    assert_eq!(flow, Flow::Close);
    assert_eq!(h.session.state(), State::Defunct);
    assert!(String::from_utf8_lossy(&out).contains("expected HELLO first"));
}

#[tokio::test]
async fn authentication_logon_then_ready_and_nothing_before_it() {
    let mut h = harness(V5_4);
    h.send(&hello()).await;
    let (out, _) = h.raw(&logon()).await;
    assert_eq!(out, SUCCESS_EMPTY);
    assert_eq!(h.session.state(), State::Ready);
    assert_eq!(h.session.user(), "neo4j");
    // LOGOFF goes back to AUTHENTICATION, where RUN is refused.
    assert_eq!(h.raw(&[0xB0, 0x6B]).await.0, SUCCESS_EMPTY);
    assert_eq!(h.session.state(), State::Authentication);
    let responses = h.send(&run("RETURN 1")).await;
    assert_eq!(code_of(&responses[0]), codes::UNAUTHORIZED);
    assert_eq!(h.session.state(), State::Defunct);
}

#[tokio::test]
async fn ready_run_pull_returns_to_ready_and_route_names_this_server() {
    let mut h = Harness::ready(V5_4).await;
    assert_eq!(
        h.send(&run("RETURN 1 AS x, 'a' AS y")).await,
        vec![success(map([("fields", fields(&["x", "y"]))]))]
    );
    assert_eq!(h.session.state(), State::Streaming);
    assert_eq!(
        h.send(&pull(-1)).await,
        vec![
            record(vec![1.into(), "a".into()]),
            success(map([("type", "r".into()), ("db", "graph".into())])),
        ]
    );
    assert_eq!(h.session.state(), State::Ready);
    let route = msg(0x66, vec![map([]), P::List(vec![]), map([("db", P::Null)])]);
    let responses = h.send(&route).await;
    let P::Struct(0x70, meta) = &responses[0] else {
        panic!("{responses:?}")
    };
    let rt = meta[0].get("rt").unwrap();
    assert_eq!(rt.get("db"), Some(&"graph".into()));
    assert_eq!(
        rt.get("servers")
            .map(|s| matches!(s, P::List(l) if l.len() == 3)),
        Some(true)
    );
    // TELEMETRY (5.4) is acknowledged and changes nothing.
    let telemetry = msg(0x54, vec![P::Int(2)]);
    assert_eq!(h.raw(&telemetry).await.0, SUCCESS_EMPTY);
    assert_eq!(h.session.state(), State::Ready);
    // A message the state does not allow fails.
    let responses = h.send(&COMMIT).await;
    assert_eq!(code_of(&responses[0]), codes::REQUEST_INVALID);
    assert_eq!(h.session.state(), State::Failed);
}

#[tokio::test]
async fn streaming_pull_n_says_has_more_and_discard_ends_the_result() {
    let mut h = Harness::ready(V5_4).await;
    h.send(&run("UNWIND range(1, 5) AS i RETURN i")).await;
    assert_eq!(
        h.send(&pull(2)).await,
        vec![
            record(vec![1.into()]),
            record(vec![2.into()]),
            success(map([("has_more", true.into())])),
        ]
    );
    assert_eq!(h.session.state(), State::Streaming);
    assert_eq!(h.send(&pull(2)).await.len(), 3);
    let end = h.send(&discard()).await;
    assert_eq!(
        end,
        vec![success(map([("type", "r".into()), ("db", "graph".into())]))]
    );
    assert_eq!(h.session.state(), State::Ready);
}

#[tokio::test]
async fn tx_ready_and_tx_streaming_commit_and_rollback() {
    let mut h = Harness::ready(V5_4).await;
    assert_eq!(h.raw(&BEGIN).await.0, SUCCESS_EMPTY);
    assert_eq!(h.session.state(), State::TxReady);
    assert_eq!(
        h.send(&run("CREATE (n:T {v: 1}) RETURN n.v AS v")).await,
        vec![success(map([
            ("fields", fields(&["v"])),
            ("qid", 0.into())
        ]))]
    );
    assert_eq!(h.session.state(), State::TxStreaming);
    // A second statement before the first is consumed: both stay open.
    h.send(&run("MATCH (n:T) RETURN count(n) AS c")).await;
    let second = h
        .send(&msg(
            0x3F,
            vec![map([("n", (-1).into()), ("qid", 1.into())])],
        ))
        .await;
    assert_eq!(
        second[0],
        record(vec![1.into()]),
        "the transaction reads its own write"
    );
    assert_eq!(h.session.state(), State::TxStreaming);
    let first = h.send(&pull(-1)).await;
    assert_eq!(first[0], record(vec![1.into()]));
    let P::Struct(0x70, meta) = &first[1] else {
        panic!()
    };
    assert_eq!(
        meta[0].get("stats").and_then(|s| s.get("nodes-created")),
        Some(&1.into())
    );
    assert_eq!(h.session.state(), State::TxReady);
    let committed = h.send(&COMMIT).await;
    assert!(
        committed[0].clone() != P::Null
            && matches!(&committed[0], P::Struct(0x70, m) if m[0].get("bookmark").is_some())
    );
    assert_eq!(h.session.state(), State::Ready);
    assert_eq!(h.count("MATCH (n:T) RETURN count(n)"), 1);

    h.send(&BEGIN).await;
    h.send(&run("CREATE (:T)")).await;
    h.send(&pull(-1)).await;
    assert_eq!(h.raw(&ROLLBACK).await.0, SUCCESS_EMPTY);
    assert_eq!(h.session.state(), State::Ready);
    assert_eq!(h.count("MATCH (n:T) RETURN count(n)"), 1, "rolled back");
}

#[tokio::test]
async fn failed_ignores_until_reset() {
    let mut h = Harness::ready(V5_4).await;
    let responses = h.send(&run("RETURN )")).await;
    assert_eq!(
        code_of(&responses[0]),
        "Neo.ClientError.Statement.SyntaxError"
    );
    assert_eq!(h.session.state(), State::Failed);
    assert_eq!(h.raw(&pull(-1)).await.0, IGNORED);
    assert_eq!(h.raw(&run("RETURN 1")).await.0, IGNORED);
    assert_eq!(h.raw(&RESET).await.0, SUCCESS_EMPTY);
    assert_eq!(h.session.state(), State::Ready);
    // A failure inside a transaction rolls it back at once (the lock is free).
    h.send(&BEGIN).await;
    h.send(&run("CREATE (:Lost)")).await;
    h.send(&pull(-1)).await;
    h.send(&run("RETURN 1/0")).await;
    let failure = h.send(&pull(-1)).await;
    assert_eq!(
        code_of(&failure[0]),
        "Neo.ClientError.Statement.ArithmeticError"
    );
    let tx = h.engine.begin().expect("the writer lock was released");
    tx.rollback();
    assert_eq!(h.count("MATCH (n:Lost) RETURN count(n)"), 0);
}

#[tokio::test]
async fn interrupted_stops_the_running_query_and_ignores_until_the_reset() {
    let mut h = Harness::ready(V5_4).await;
    h.send(&run(
        "UNWIND range(1, 10000) AS a UNWIND range(1, 10000) AS b RETURN a * b",
    ))
    .await;
    h.send(&pull(1)).await;
    let buffer = match &h.session.results[0].rows {
        Rows::Stream(buffer) => buffer.clone(),
        Rows::Done(..) | Rows::Packed(..) => panic!("a read streams"),
    };
    // The reader saw a RESET arrive: the query stops at once.
    h.session.interrupt.reset_arrived();
    assert!(buffer.cancel_token().is_cancelled());
    assert_eq!(h.raw(&pull(10)).await.0, IGNORED);
    assert_eq!(h.session.state(), State::Interrupted);
    assert_eq!(h.raw(&RESET).await.0, SUCCESS_EMPTY);
    assert_eq!(h.session.state(), State::Ready);
    assert_eq!(h.send(&run("RETURN 2 AS x")).await.len(), 1);
}

#[tokio::test]
async fn defunct_after_goodbye_and_a_dropped_session_rolls_back() {
    let mut h = Harness::ready(V5_4).await;
    h.send(&BEGIN).await;
    h.send(&run("CREATE (:Gone)")).await;
    h.send(&pull(-1)).await;
    let (out, flow) = h.raw(&GOODBYE).await;
    assert!(out.is_empty());
    assert_eq!(flow, Flow::Close);
    assert_eq!(h.session.state(), State::Defunct);
    let Harness {
        session,
        engine,
        _dir,
    } = h;
    drop(session);
    engine
        .begin()
        .expect("the writer lock was released")
        .rollback();
    let count = engine
        .execute(
            "MATCH (n:Gone) RETURN count(n)",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(count.rows.first(), Some(&[Value::Int(0)][..]));
}

#[tokio::test]
async fn entities_and_paths_carry_labels_properties_and_element_ids() {
    let mut h = Harness::ready(V5_4).await;
    h.send(&run("MATCH p = (a)-[r:KNOWS]->(b) RETURN a, r, p"))
        .await;
    let responses = h.send(&pull(-1)).await;
    let P::Struct(0x71, fields) = &responses[0] else {
        panic!("{responses:?}")
    };
    let P::List(values) = &fields[0] else {
        panic!()
    };
    let P::Struct(0x4E, node) = &values[0] else {
        panic!("{values:?}")
    };
    assert_eq!(node[1], P::List(vec!["Person".into()]));
    assert_eq!(node[2], map([("name", "Ada".into())]));
    assert_eq!(
        node[3],
        P::String(match &node[0] {
            P::Int(i) => format!("n:{i}"),
            _ => panic!(),
        })
    );
    let P::Struct(0x52, rel) = &values[1] else {
        panic!()
    };
    assert_eq!(
        (rel.len(), &rel[3], &rel[4]),
        (8, &"KNOWS".into(), &map([("since", 2020.into())]))
    );
    let P::Struct(0x50, path) = &values[2] else {
        panic!()
    };
    assert!(matches!(&path[0], P::List(n) if n.len() == 2));
    assert!(matches!(&path[1], P::List(r) if matches!(&r[0], P::Struct(0x72, f) if f.len() == 4)));
    assert_eq!(path[2], P::List(vec![1.into(), 1.into()]));

    // Bolt 4.4: no element ids.
    let mut h = Harness::ready(Version::V4_4).await;
    h.send(&run("MATCH (a)-[r]->() RETURN a, r")).await;
    let responses = h.send(&pull(-1)).await;
    let P::Struct(0x71, fields) = &responses[0] else {
        panic!()
    };
    let P::List(values) = &fields[0] else {
        panic!()
    };
    assert!(matches!(&values[0], P::Struct(0x4E, f) if f.len() == 3));
    assert!(matches!(&values[1], P::Struct(0x52, f) if f.len() == 5));
}

#[tokio::test]
async fn server_statements_and_missing_databases() {
    let mut h = Harness::ready(V5_4).await;
    h.send(&run("SHOW DATABASES")).await;
    let rows = h.send(&pull(-1)).await;
    let P::Struct(0x71, fields) = &rows[0] else {
        panic!("{rows:?}")
    };
    let P::List(values) = &fields[0] else {
        panic!()
    };
    assert_eq!(values[0], "graph".into());
    let run_on = msg(
        0x10,
        vec!["RETURN 1".into(), map([]), map([("db", "neo4j".into())])],
    );
    assert_eq!(
        h.send(&run_on).await.len(),
        1,
        "`neo4j` is the default's alias"
    );
    h.send(&discard()).await;
    let run_missing = msg(
        0x10,
        vec!["RETURN 1".into(), map([]), map([("db", "nope".into())])],
    );
    let failure = h.send(&run_missing).await;
    assert_eq!(code_of(&failure[0]), codes::DATABASE_NOT_FOUND);
    h.send(&RESET).await;
    h.send(&run("CALL dbms.components() YIELD name, versions"))
        .await;
    assert_eq!(h.send(&pull(-1)).await.len(), 2);
}

#[tokio::test]
async fn a_malformed_message_ends_the_connection_with_a_failure() {
    let mut h = Harness::ready(V5_4).await;
    let (out, flow) = h.raw(&[0xB1, 0x10, 0xD6, 0xFF, 0xFF, 0xFF, 0xFF]).await;
    assert_eq!(flow, Flow::Close);
    assert!(String::from_utf8_lossy(&out).contains("Neo.ClientError.Request.Invalid"));
}

#[tokio::test]
async fn discarding_an_autocommit_read_stops_its_query() {
    let mut h = Harness::ready(V5_4).await;
    h.send(&run(
        "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN a * b",
    ))
    .await;
    h.send(&pull(1)).await;
    let buffer = match &h.session.results[0].rows {
        Rows::Stream(buffer) => buffer.clone(),
        Rows::Done(..) | Rows::Packed(..) => panic!("a read streams"),
    };
    let started = Instant::now();
    let end = h.send(&discard()).await;
    assert_eq!(
        end,
        vec![success(map([("type", "r".into()), ("db", "graph".into())]))]
    );
    assert!(buffer.cancel_token().is_cancelled());
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(h.session.state(), State::Ready);
}

#[tokio::test]
async fn a_transaction_past_its_timeout_is_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let config = SessionConfig {
        transaction_timeout: Some(Duration::from_millis(100)),
        ..SessionConfig::default()
    };
    let mut h = Harness {
        session: Session::new(
            V5_4,
            Arc::new(Registry::single("graph", engine.clone())),
            Arc::new(config),
            Arc::new(Interrupt::default()),
            "bolt-8".into(),
        ),
        engine,
        _dir: dir,
    };
    h.send(&hello()).await;
    h.send(&logon()).await;
    h.send(&BEGIN).await;
    h.send(&run("CREATE (:Late)")).await;
    h.send(&pull(-1)).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let failure = h.send(&COMMIT).await;
    assert_eq!(code_of(&failure[0]), codes::TIMED_OUT);
    h.engine
        .begin()
        .expect("the writer lock was released")
        .rollback();
    assert_eq!(h.count("MATCH (n:Late) RETURN count(n)"), 0);
}

#[tokio::test]
async fn an_ordered_result_streams_in_order() {
    let mut h = Harness::ready(V5_4).await;
    h.send(&run(
        "UNWIND range(1, 200000) AS i RETURN i ORDER BY i DESC",
    ))
    .await;
    let mut expected = 200_000;
    loop {
        let responses = h.send(&pull(7000)).await;
        for response in &responses {
            if let P::Struct(0x71, fields) = response {
                assert_eq!(fields[0], P::List(vec![P::Int(expected)]));
                expected -= 1;
            }
        }
        if h.session.state() == State::Ready {
            break;
        }
    }
    assert_eq!(expected, 0);
}

/// The value of property `key` of the Bolt node `node`.
fn node_property(node: &P, key: &str) -> P {
    match node {
        P::Struct(0x4E, fields) => fields[2].get(key).cloned().unwrap_or(P::Null),
        other => panic!("not a node: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entities_are_rendered_from_the_state_their_statement_saw() {
    let mut h = Harness::ready(V5_4).await;
    h.count("CREATE (c:Counter {v: 0}) RETURN count(c)");
    // Another client keeps changing the node while this one reads and writes it.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (engine, stop) = (h.engine.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                engine
                    .execute(
                        "MATCH (c:Counter) SET c.v = c.v + 1",
                        BTreeMap::new(),
                        &QueryOptions::default(),
                    )
                    .unwrap();
            }
        })
    };
    let mut mismatches = Vec::new();
    for _ in 0..150 {
        for query in [
            "MATCH (c:Counter) SET c.v = c.v + 1 RETURN c, c.v AS v",
            "MATCH (c:Counter) RETURN c, c.v AS v",
        ] {
            h.send(&run(query)).await;
            let responses = h.send(&pull(-1)).await;
            let P::Struct(0x71, fields) = &responses[0] else {
                panic!("{responses:?}")
            };
            let P::List(values) = &fields[0] else {
                panic!()
            };
            let rendered = node_property(&values[0], "v");
            if rendered != values[1] {
                mismatches.push((query, rendered, values[1].clone()));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    assert!(
        mismatches.is_empty(),
        "{} node(s) rendered from another state than their statement's: {:?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(5)]
    );
}

#[tokio::test]
async fn the_schema_visualization_has_a_node_per_label_and_a_relationship_per_pattern() {
    let mut h = Harness::ready(V5_4).await;
    h.count("CREATE (:City {name: 'Oslo'})<-[:LIVES_IN]-(:Person {name: 'Cy'}) RETURN 1");
    h.send(&run("CALL db.schema.visualization()")).await;
    let responses = h.send(&pull(-1)).await;
    let P::Struct(0x71, fields) = &responses[0] else {
        panic!("{responses:?}")
    };
    let P::List(row) = &fields[0] else { panic!() };
    let (P::List(nodes), P::List(relationships)) = (&row[0], &row[1]) else {
        panic!("{row:?}")
    };
    // Virtual node ids by label name.
    let mut ids = BTreeMap::new();
    for node in nodes {
        let P::Struct(0x4E, f) = node else {
            panic!("{node:?}")
        };
        let P::String(name) = f[2].get("name").unwrap() else {
            panic!()
        };
        assert_eq!(f[1], P::List(vec![name.as_str().into()]));
        assert!(
            matches!(f[0], P::Int(id) if id < 0),
            "virtual ids are negative"
        );
        let P::Int(id) = f[0] else { panic!() };
        ids.insert(id, name.clone());
    }
    assert_eq!(
        ids.values().cloned().collect::<Vec<_>>(),
        vec!["City".to_string(), "Person".to_string()]
    );
    let mut patterns: Vec<(String, String, String)> = relationships
        .iter()
        .map(|r| {
            let P::Struct(0x52, f) = r else {
                panic!("{r:?}")
            };
            assert_eq!(f.len(), 8, "element ids in Bolt 5");
            let P::String(t) = &f[3] else { panic!() };
            let (P::Int(start), P::Int(end)) = (&f[1], &f[2]) else {
                panic!()
            };
            (ids[start].clone(), t.clone(), ids[end].clone())
        })
        .collect();
    patterns.sort();
    assert_eq!(
        patterns,
        vec![
            ("Person".into(), "KNOWS".into(), "Person".into()),
            ("Person".into(), "LIVES_IN".into(), "City".into()),
        ]
    );
    assert_eq!(h.session.state(), State::Ready);
}

#[tokio::test]
async fn ended_results_leave_nothing_listed_for_interrupts() {
    // Every result ended by a full PULL, a DISCARD, a COMMIT or a RESET
    // takes its buffer off the session's interrupt list; an open one is on
    // it. (A fully pulled read used to stay listed for the life of the
    // connection, so a long-lived driver connection grew without bound.)
    let mut h = Harness::ready(V5_4).await;
    let listed = |h: &Harness| h.session.interrupt.tracked();
    for _ in 0..50 {
        h.send(&run("MATCH (p:Person) RETURN p.name AS name")).await;
        h.send(&pull(-1)).await;
    }
    assert_eq!(listed(&h), 0, "fully pulled autocommit reads");
    h.send(&run("UNWIND range(1, 5) AS i RETURN i")).await;
    h.send(&pull(2)).await;
    assert_eq!(listed(&h), 1, "an open result is listed");
    h.send(&pull(-1)).await;
    assert_eq!(listed(&h), 0, "pulled in pieces");
    h.send(&run("UNWIND range(1, 5) AS i RETURN i")).await;
    h.send(&discard()).await;
    assert_eq!(listed(&h), 0, "discarded");
    for _ in 0..10 {
        h.send(&BEGIN).await;
        h.send(&run("MATCH (p:Person) RETURN count(p) AS c")).await;
        h.send(&pull(-1)).await;
        h.send(&run("CREATE (:T)")).await;
        h.send(&pull(-1)).await;
        h.send(&COMMIT).await;
    }
    assert_eq!(listed(&h), 0, "reads and writes in transactions");
    h.send(&run("UNWIND range(1, 5) AS i RETURN i")).await;
    h.send(&pull(1)).await;
    h.raw(&RESET).await;
    assert_eq!(listed(&h), 0, "reset");
    h.send(&run("UNWIND [1, 0] AS i RETURN 1 / i")).await;
    h.send(&pull(-1)).await;
    h.raw(&RESET).await;
    assert_eq!(listed(&h), 0, "a failed stream, then reset");
}

/// A ready session whose engine has `test.thread()`, which yields the name
/// of the thread that runs it.
async fn thread_probe() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = engine(dir.path());
    engine.register_procedure(rhizome_exec::procedures::Procedure {
        name: "test.thread".into(),
        inputs: vec![],
        outputs: vec![("name".into(), "STRING?".into())],
        defaults: vec![],
        body: Arc::new(|_, _| {
            let name = std::thread::current().name().unwrap_or("").to_string();
            Ok(vec![vec![Value::String(name)]])
        }),
    });
    let registry = Arc::new(Registry::single("graph", engine.clone()));
    let session = Session::new(
        V5_4,
        registry,
        Arc::new(SessionConfig::default()),
        Arc::new(Interrupt::default()),
        "bolt-7".into(),
    );
    let mut h = Harness {
        session,
        engine,
        _dir: dir,
    };
    h.send(&hello()).await;
    h.send(&logon()).await;
    h
}

impl Harness {
    /// Runs `query` and pulls all of it; its single string value.
    async fn single_string(&mut self, query: &str) -> String {
        let run = self.send(&run(query)).await;
        assert!(matches!(&run[0], P::Struct(0x70, _)), "{query}: {run:?}");
        let pulled = self.send(&pull(-1)).await;
        match &pulled[0] {
            P::Struct(0x71, fields) => match &fields[0] {
                P::List(values) => match &values[0] {
                    P::String(s) => s.clone(),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            },
            other => panic!("{query}: {other:?}"),
        }
    }
}

/// Every statement on a native database runs on the engine's pool: reads
/// and writes, autocommit and in an explicit transaction before and after
/// its first write (never on a thread of its own, such as tokio's
/// blocking threads, which run only lock waits and commits).
#[tokio::test]
async fn reads_and_writes_run_on_pool_workers_in_and_out_of_transactions() {
    let mut h = thread_probe().await;
    let on_worker = |name: &str, what: &str| {
        assert!(
            name.starts_with("rhizome-worker-"),
            "{what} ran on thread `{name}`, not a pool worker"
        );
    };
    let read = "CALL test.thread() YIELD name RETURN name";
    let write = "CREATE (n:Probe) WITH n CALL test.thread() YIELD name RETURN name";
    on_worker(&h.single_string(read).await, "an autocommit read");
    on_worker(&h.single_string(write).await, "an autocommit write");
    assert_eq!(h.raw(&BEGIN).await.0, SUCCESS_EMPTY);
    on_worker(&h.single_string(read).await, "a read before a write");
    on_worker(&h.single_string(write).await, "a write in a transaction");
    on_worker(&h.single_string(read).await, "a read after a write");
    let explained = h.send(&run(&format!("PROFILE {read}"))).await;
    assert!(matches!(&explained[0], P::Struct(0x70, _)), "{explained:?}");
    let profiled = h.send(&pull(-1)).await;
    let P::Struct(0x70, meta) = profiled.last().unwrap() else {
        panic!("{profiled:?}")
    };
    assert!(meta[0].get("profile").is_some(), "{profiled:?}");
    h.send(&COMMIT).await;
    assert_eq!(h.count("MATCH (n:Probe) RETURN count(n)"), 2);
}

/// `SHOW TRANSACTIONS … YIELD …` is shaped by Cypher that runs on a pool
/// worker like any read (the probe, called from the shaping Cypher, names
/// its thread), in and out of a transaction; the statement's own
/// parameters reach it; a tail that would write is refused.
#[tokio::test]
async fn show_transactions_yield_is_shaped_on_a_pool_worker() {
    let mut h = thread_probe().await;
    // `YIELD` items run up to the first clause keyword, so the CALL is part
    // of the shaping Cypher (`WITH transactionId AS id CALL test.thread() …`).
    let probe =
        "SHOW TRANSACTIONS YIELD transactionId AS id CALL test.thread() YIELD name RETURN name";
    let name = h.single_string(probe).await;
    assert!(name.starts_with("rhizome-worker-"), "shaped on `{name}`");
    assert_eq!(h.raw(&BEGIN).await.0, SUCCESS_EMPTY);
    h.send(&run("CREATE (:Listed)")).await;
    h.send(&pull(-1)).await;
    let name = h.single_string(probe).await;
    assert!(
        name.starts_with("rhizome-worker-"),
        "in a transaction: `{name}`"
    );
    assert_eq!(h.send(&COMMIT).await.len(), 1);

    // The statement's parameters are there beside the rows.
    let with_params = msg(
        0x10,
        vec![
            "SHOW TRANSACTIONS YIELD currentQuery WHERE currentQuery STARTS WITH $prefix RETURN $prefix AS p"
                .into(),
            map([("prefix", "SHOW".into())]),
            map([]),
        ],
    );
    let answered = h.send(&with_params).await;
    assert!(matches!(&answered[0], P::Struct(0x70, _)), "{answered:?}");
    assert_eq!(h.send(&pull(-1)).await[0], record(vec!["SHOW".into()]));

    // Listing transactions never writes.
    let sneaky = h
        .send(&run(
            "SHOW TRANSACTIONS YIELD transactionId AS id CREATE (:Sneaky) RETURN id",
        ))
        .await;
    assert_eq!(code_of(&sneaky[0]), "Neo.ClientError.Statement.SyntaxError");
    h.send(&RESET).await;
    assert_eq!(h.count("MATCH (n:Sneaky) RETURN count(n)"), 0);
    assert_eq!(h.count("MATCH (n:Listed) RETURN count(n)"), 1);
}

/// An explicit transaction takes the writer lock at its first write: one
/// that only reads runs while another transaction holds the lock. One
/// that read and then writes commits if nothing was committed since its
/// snapshot, and fails with a retryable `Outdated` (rolled back) if
/// something was.
#[tokio::test]
async fn a_transaction_takes_the_writer_lock_at_its_first_write() {
    let mut h = Harness::ready(V5_4).await;
    let persons = "MATCH (p:Person) RETURN count(p) AS c";
    let holder = h.engine.begin().unwrap();
    assert_eq!(h.raw(&BEGIN).await.0, SUCCESS_EMPTY);
    h.send(&run(persons)).await;
    assert_eq!(h.send(&pull(-1)).await[0], record(vec![2.into()]));
    let committed = h.send(&COMMIT).await;
    assert!(
        matches!(&committed[0], P::Struct(0x70, m) if m[0].get("bookmark").is_some()),
        "{committed:?}"
    );
    holder.rollback();

    // It reads one snapshot: a commit of another between its reads is not seen.
    h.send(&BEGIN).await;
    h.send(&run(persons)).await;
    assert_eq!(h.send(&pull(-1)).await[0], record(vec![2.into()]));
    h.engine
        .execute(
            "CREATE (:Person {name: 'Cy'})",
            BTreeMap::new(),
            &QueryOptions::default(),
        )
        .unwrap();
    h.send(&run(persons)).await;
    assert_eq!(h.send(&pull(-1)).await[0], record(vec![2.into()]));
    // So its write fails: what it read is out of date.
    let failed = h.send(&run("CREATE (:Stale)")).await;
    assert_eq!(
        code_of(&failed[0]),
        "Neo.TransientError.Transaction.Outdated"
    );
    assert_eq!(h.session.state(), State::Failed);
    h.send(&RESET).await;
    assert_eq!(h.count("MATCH (n:Stale) RETURN count(n)"), 0);

    // Read, then write, with no commit in between: it commits.
    h.send(&BEGIN).await;
    h.send(&run(persons)).await;
    assert_eq!(h.send(&pull(-1)).await[0], record(vec![3.into()]));
    h.send(&run("CREATE (:Fresh)")).await;
    h.send(&pull(-1)).await;
    h.send(&run("MATCH (n:Fresh) RETURN count(n) AS c")).await;
    assert_eq!(h.send(&pull(-1)).await[0], record(vec![1.into()]));
    let committed = h.send(&COMMIT).await;
    assert!(matches!(&committed[0], P::Struct(0x70, _)), "{committed:?}");
    assert_eq!(h.count("MATCH (n:Fresh) RETURN count(n)"), 1);
    // The lock is free.
    h.engine
        .begin()
        .expect("the writer lock is free")
        .rollback();
}

/// A read in an explicit transaction streams from the pool like an
/// autocommit one: the same rows, its failure at PULL, and a RESET stops it
/// at once.
#[tokio::test]
async fn reads_in_a_transaction_stream_and_stop_on_reset() {
    let mut h = Harness::ready(V5_4).await;
    let query = "UNWIND range(1, 5) AS i RETURN i, i * 2 AS d ORDER BY i DESC";
    h.send(&run(query)).await;
    let autocommit = h.send(&pull(-1)).await;
    h.send(&BEGIN).await;
    h.send(&run(query)).await;
    let in_tx = h.send(&pull(-1)).await;
    assert_eq!(in_tx[..5], autocommit[..5]);
    assert_eq!(in_tx.len(), 6);

    h.send(&run(
        "UNWIND range(1, 10000) AS a UNWIND range(1, 10000) AS b RETURN a * b",
    ))
    .await;
    h.send(&pull(1)).await;
    let buffer = match &h.session.results[0].rows {
        Rows::Stream(buffer) => buffer.clone(),
        Rows::Done(..) | Rows::Packed(..) => panic!("a read streams"),
    };
    h.session.interrupt.reset_arrived();
    assert!(buffer.cancel_token().is_cancelled());
    assert_eq!(h.raw(&pull(10)).await.0, IGNORED);
    assert_eq!(h.raw(&RESET).await.0, SUCCESS_EMPTY);
    assert_eq!(h.session.state(), State::Ready);
    assert_eq!(h.session.interrupt.tracked(), 0);

    h.send(&BEGIN).await;
    h.send(&run("RETURN 1/0 AS x")).await;
    let failure = h.send(&pull(-1)).await;
    assert_eq!(
        code_of(&failure[0]),
        "Neo.ClientError.Statement.ArithmeticError"
    );
    assert_eq!(h.session.state(), State::Failed);
}
