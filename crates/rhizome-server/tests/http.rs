//! The HTTP Query API over real TCP (and TLS): every route, plain and
//! typed JSON of every value type, transactions, auth, errors and limits.

#[path = "support/http_client.rs"]
mod http_client;

use http_client::{Req, Target};
use rhizome_engine::Engine;
use rhizome_server::{AuthMode, Server, ServerConfig};
use serde_json::{json, Value as Json};
use std::time::Duration;

struct Running {
    target: Target,
    bolt: std::net::SocketAddr,
    stop: rhizome_server::ShutdownHandle,
    task: tokio::task::JoinHandle<()>,
    dir: tempfile::TempDir,
}

const PASSWORD: &str = "s3cret-pw";

async fn start_with(config: ServerConfig, tls: bool) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    let engine = Engine::open(&db).unwrap();
    let client_tls = if tls {
        let (cert, key, client) = http_client::certificate(dir.path());
        Some((cert, key, client))
    } else {
        None
    };
    let config = ServerConfig {
        bolt: "127.0.0.1:0".parse().unwrap(),
        http: Some("127.0.0.1:0".parse().unwrap()),
        database: Some(db.clone()),
        initial_password: Some(PASSWORD.into()),
        tls_cert: client_tls.as_ref().map(|t| t.0.clone()),
        tls_key: client_tls.as_ref().map(|t| t.1.clone()),
        ..config
    };
    let server = Server::bind(&config, engine).await.unwrap();
    let target = Target {
        address: server.http_addr().unwrap(),
        tls: client_tls.map(|t| t.2),
    };
    let bolt = server.local_addr();
    let stop = server.shutdown_handle();
    let task = tokio::spawn(server.run());
    Running {
        target,
        bolt,
        stop,
        task,
        dir,
    }
}

async fn start() -> Running {
    start_with(ServerConfig::default(), false).await
}

impl Running {
    async fn query(&self, statement: &str, parameters: Json) -> http_client::Reply {
        as_admin("POST", "/db/neo4j/query/v2")
            .json(&json!({"statement": statement, "parameters": parameters}))
            .send(&self.target)
            .await
    }

    async fn stop(self) {
        self.stop.stop_now();
        let _ = self.task.await;
    }
}

trait StopNow {
    fn stop_now(&self);
}

impl StopNow for rhizome_server::ShutdownHandle {
    fn stop_now(&self) {
        self.shutdown();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_needs_no_auth() {
    let server = start().await;
    let reply = Req::new("GET", "/health").send(&server.target).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["status"], "ok");
    let reply = Req::new("POST", "/health").send(&server.target).await;
    assert_eq!(reply.status, 405);
    let reply = Req::new("GET", "/nothing-here").send(&server.target).await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.error_code(), "Neo.ClientError.Request.Invalid");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_page_is_served_without_auth() {
    let server = start().await;
    let content_type = |reply: &http_client::Reply| {
        reply
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let page = Req::new("GET", "/").send(&server.target).await;
    assert_eq!(page.status, 200);
    assert!(content_type(&page).starts_with("text/html"));
    assert!(String::from_utf8_lossy(&page.body).contains("<script src=\"app.js\">"));
    for (path, kind) in [("/app.js", "text/javascript"), ("/app.css", "text/css")] {
        let reply = Req::new("GET", path).send(&server.target).await;
        assert_eq!(reply.status, 200, "{path}");
        assert!(content_type(&reply).starts_with(kind), "{path}");
        assert!(!reply.body.is_empty(), "{path}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_in_plain_json_with_entities_and_bookmarks() {
    let server = start().await;
    let reply = server
        .query(
            "CREATE (a:Person {name: $a})-[r:KNOWS {since: 2020}]->(b:Person {name: 'Bo'}) \
             RETURN elementId(a) AS ea, elementId(r) AS er, elementId(b) AS eb",
            json!({"a": "Ann"}),
        )
        .await;
    assert_eq!(
        reply.status,
        202,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let created = reply.json();
    let ids = &created["data"]["values"][0];
    assert_eq!(created["bookmarks"].as_array().unwrap().len(), 1);
    let reply = server
        .query(
            "MATCH p = (a:Person)-[r:KNOWS]->(b) RETURN a, r, p, a.name AS name",
            json!({}),
        )
        .await;
    assert_eq!(reply.status, 202);
    let answer = reply.json();
    assert_eq!(answer["data"]["fields"], json!(["a", "r", "p", "name"]));
    let row = &answer["data"]["values"][0];
    assert_eq!(
        row[0],
        json!({"elementId": ids[0], "labels": ["Person"], "properties": {"name": "Ann"}})
    );
    assert_eq!(
        row[1],
        json!({"elementId": ids[1], "startNodeElementId": ids[0], "endNodeElementId": ids[2],
               "type": "KNOWS", "properties": {"since": 2020}})
    );
    assert_eq!(row[2].as_array().unwrap().len(), 3);
    assert_eq!(row[2][0]["elementId"], ids[0]);
    assert_eq!(row[2][1]["elementId"], ids[1]);
    assert_eq!(row[2][2]["properties"]["name"], "Bo");
    assert_eq!(row[3], "Ann");
    assert_eq!(answer["bookmarks"], json!([]));
    assert!(answer.get("counters").is_none());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_json_of_every_value_type() {
    let server = start().await;
    server
        .query("CREATE (:A {k: 1})-[:R {w: 0.5}]->(:B)", json!({}))
        .await;
    let reply = as_admin("POST", "/db/neo4j/query/v2")
        .header("Accept", "application/vnd.neo4j.query")
        .json(
            &json!({"statement": "MATCH p = (a:A)-[r:R]->(b:B) RETURN null, true, 42, 1.5, 'x', \
            [1, 'a'], {k: 2}, date('2024-01-02'), time('12:30:00+01:00'), localtime('12:30:15'), \
            localdatetime('2024-01-02T03:04:05'), datetime('2024-01-02T03:04:05+02:00'), \
            datetime('2024-07-01T12:00:00[Europe/Stockholm]'), duration('P1DT2H'), a, r, p"}),
        )
        .send(&server.target)
        .await;
    assert_eq!(
        reply.status,
        202,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(
        reply.header("content-type"),
        Some("application/vnd.neo4j.query")
    );
    let row = reply.json()["data"]["values"][0].clone();
    let expect = [
        json!({"$type": "Null", "_value": null}),
        json!({"$type": "Boolean", "_value": true}),
        json!({"$type": "Integer", "_value": "42"}),
        json!({"$type": "Float", "_value": "1.5"}),
        json!({"$type": "String", "_value": "x"}),
        json!({"$type": "List", "_value": [{"$type": "Integer", "_value": "1"}, {"$type": "String", "_value": "a"}]}),
        json!({"$type": "Map", "_value": {"k": {"$type": "Integer", "_value": "2"}}}),
        json!({"$type": "Date", "_value": "2024-01-02"}),
        json!({"$type": "Time", "_value": "12:30+01:00"}),
        json!({"$type": "LocalTime", "_value": "12:30:15"}),
        json!({"$type": "LocalDateTime", "_value": "2024-01-02T03:04:05"}),
        json!({"$type": "OffsetDateTime", "_value": "2024-01-02T03:04:05+02:00"}),
        json!({"$type": "ZonedDateTime", "_value": "2024-07-01T12:00+02:00[Europe/Stockholm]"}),
        json!({"$type": "Duration", "_value": "P1DT2H"}),
    ];
    for (i, want) in expect.iter().enumerate() {
        assert_eq!(&row[i], want, "column {i}");
    }
    let node = &row[14];
    assert_eq!(node["$type"], "Node");
    assert_eq!(node["_value"]["_labels"], json!(["A"]));
    assert_eq!(
        node["_value"]["_properties"],
        json!({"k": {"$type": "Integer", "_value": "1"}})
    );
    let a_id = node["_value"]["_element_id"].as_str().unwrap().to_string();
    let rel = &row[15];
    assert_eq!(rel["$type"], "Relationship");
    assert_eq!(rel["_value"]["_type"], "R");
    assert_eq!(rel["_value"]["_start_node_element_id"], a_id.as_str());
    assert_eq!(
        rel["_value"]["_properties"],
        json!({"w": {"$type": "Float", "_value": "0.5"}})
    );
    let path = &row[16];
    assert_eq!(path["$type"], "Path");
    let parts = path["_value"].as_array().unwrap();
    assert_eq!(
        parts
            .iter()
            .map(|p| p["$type"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["Node", "Relationship", "Node"]
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_parameters_round_trip() {
    let server = start().await;
    let reply = as_admin("POST", "/db/neo4j/query/v2")
        .header("Accept", "application/vnd.neo4j.query")
        .header("Content-Type", "application/vnd.neo4j.query")
        .raw(
            json!({"statement": "RETURN $i + 1 AS i, $d AS d, $dt AS dt, $dur AS dur, $m.k AS k",
            "parameters": {
                "i": {"$type": "Integer", "_value": "41"},
                "d": {"$type": "Date", "_value": "2024-02-29"},
                "dt": {"$type": "OffsetDateTime", "_value": "2024-01-02T03:04:05-05:00"},
                "dur": {"$type": "Duration", "_value": "PT90M"},
                "m": {"$type": "Map", "_value": {"k": {"$type": "String", "_value": "v"}}}
            }})
            .to_string()
            .as_bytes(),
        )
        .send(&server.target)
        .await;
    assert_eq!(
        reply.status,
        202,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let row = reply.json()["data"]["values"][0].clone();
    assert_eq!(row[0], json!({"$type": "Integer", "_value": "42"}));
    assert_eq!(row[1], json!({"$type": "Date", "_value": "2024-02-29"}));
    assert_eq!(
        row[2],
        json!({"$type": "OffsetDateTime", "_value": "2024-01-02T03:04:05-05:00"})
    );
    assert_eq!(row[3], json!({"$type": "Duration", "_value": "PT1H30M"}));
    assert_eq!(row[4], json!({"$type": "String", "_value": "v"}));
    // A bad typed parameter is named.
    let reply = as_admin("POST", "/db/neo4j/query/v2")
        .header("Content-Type", "application/vnd.neo4j.query")
        .raw(br#"{"statement": "RETURN $x", "parameters": {"x": {"$type": "Date", "_value": "nope"}}}"#)
        .send(&server.target)
        .await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.error_code(), "Neo.ClientError.Request.InvalidFormat");
    let message = reply.json()["errors"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("parameter `x`"), "{message}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_basic_bearer_lockout_and_roles() {
    let server = start().await;
    let body = json!({"statement": "RETURN 1"});
    let none = Req::new("POST", "/db/neo4j/query/v2")
        .json(&body)
        .send(&server.target)
        .await;
    assert_eq!(none.status, 401);
    assert_eq!(none.error_code(), "Neo.ClientError.Security.Unauthorized");
    let garbage = Req::new("POST", "/db/neo4j/query/v2")
        .header("Authorization", "Digest abc")
        .json(&body)
        .send(&server.target)
        .await;
    assert_eq!(garbage.status, 401);
    // A reader, then its write refused with 403.
    let made = server
        .query(
            "CREATE USER reed SET PASSWORD 'reed-pw' CHANGE NOT REQUIRED",
            json!({}),
        )
        .await;
    assert_eq!(made.status, 202, "{}", String::from_utf8_lossy(&made.body));
    server.query("GRANT ROLE reader TO reed", json!({})).await;
    let write = Req::new("POST", "/db/neo4j/query/v2")
        .basic("reed", "reed-pw")
        .json(&json!({"statement": "CREATE (:X)"}))
        .send(&server.target)
        .await;
    assert_eq!(write.status, 403);
    assert_eq!(write.error_code(), "Neo.ClientError.Security.Forbidden");
    // Bearer tokens.
    let token = Req::new("POST", "/auth/token")
        .basic("reed", "reed-pw")
        .send(&server.target)
        .await;
    assert_eq!(token.status, 200);
    let token = token.json()["token"].as_str().unwrap().to_string();
    let read = Req::new("POST", "/db/neo4j/query/v2")
        .header("Authorization", format!("Bearer {token}"))
        .json(&json!({"statement": "SHOW CURRENT USER"}))
        .send(&server.target)
        .await;
    assert_eq!(read.status, 202, "{}", String::from_utf8_lossy(&read.body));
    assert_eq!(read.json()["data"]["values"][0][0], "reed");
    let revoked = Req::new("DELETE", "/auth/token")
        .header("Authorization", format!("Bearer {token}"))
        .send(&server.target)
        .await;
    assert_eq!(revoked.status, 200);
    let stale = Req::new("POST", "/db/neo4j/query/v2")
        .header("Authorization", format!("Bearer {token}"))
        .json(&body)
        .send(&server.target)
        .await;
    assert_eq!(stale.status, 401);
    // Wrong passwords: refused, then locked out even with the right one.
    for _ in 0..3 {
        let wrong = Req::new("POST", "/db/neo4j/query/v2")
            .basic("reed", "wrong")
            .json(&body)
            .send(&server.target)
            .await;
        assert_eq!(wrong.status, 401);
    }
    let locked = Req::new("POST", "/db/neo4j/query/v2")
        .basic("reed", "reed-pw")
        .json(&body)
        .send(&server.target)
        .await;
    assert_eq!(locked.status, 429);
    assert_eq!(
        locked.error_code(),
        "Neo.ClientError.Security.AuthenticationRateLimit"
    );
    server.stop().await;
}

/// A request to `path` as the admin user `neo4j`.
fn as_admin<'a>(method: &'a str, path: &'a str) -> Req<'a> {
    Req::new(method, path).basic("neo4j", PASSWORD)
}

async fn tx_request(
    server: &Running,
    method: &str,
    path: &str,
    statement: Option<&str>,
) -> http_client::Reply {
    let req = as_admin(method, path);
    let req = match statement {
        Some(s) => req.json(&json!({"statement": s})),
        None => req,
    };
    req.send(&server.target).await
}

async fn count(server: &Running) -> i64 {
    let reply = server.query("MATCH (n:T) RETURN count(n)", json!({})).await;
    reply.json()["data"]["values"][0][0].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_transactions_commit_rollback_and_expire() {
    let server = start_with(
        ServerConfig {
            // Long enough for a loaded machine between two requests.
            http_transaction_timeout_secs: 3,
            ..ServerConfig::default()
        },
        false,
    )
    .await;
    // Open with a statement, run another, commit.
    let open = tx_request(
        &server,
        "POST",
        "/db/neo4j/query/v2/tx",
        Some("CREATE (:T {i: 1})"),
    )
    .await;
    assert_eq!(open.status, 202, "{}", String::from_utf8_lossy(&open.body));
    let answer = open.json();
    let id = answer["transaction"]["id"].as_str().unwrap().to_string();
    assert!(answer["transaction"]["expires"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    let run = tx_request(
        &server,
        "POST",
        &format!("/db/neo4j/query/v2/tx/{id}"),
        Some("MATCH (t:T) RETURN count(t)"),
    )
    .await;
    assert_eq!(run.status, 202);
    assert_eq!(run.json()["data"]["values"][0][0], 1);
    assert_eq!(count(&server).await, 0, "not visible before the commit");
    let commit = tx_request(
        &server,
        "POST",
        &format!("/db/neo4j/query/v2/tx/{id}/commit"),
        None,
    )
    .await;
    assert_eq!(
        commit.status,
        200,
        "{}",
        String::from_utf8_lossy(&commit.body)
    );
    assert_eq!(commit.json()["bookmarks"].as_array().unwrap().len(), 1);
    assert_eq!(count(&server).await, 1);
    let again = tx_request(
        &server,
        "POST",
        &format!("/db/neo4j/query/v2/tx/{id}/commit"),
        None,
    )
    .await;
    assert_eq!(again.status, 404);
    assert_eq!(
        again.error_code(),
        "Neo.ClientError.Transaction.TransactionNotFound"
    );

    // Rollback.
    let open = tx_request(&server, "POST", "/db/neo4j/query/v2/tx", None).await;
    let id = open.json()["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    tx_request(
        &server,
        "POST",
        &format!("/db/neo4j/query/v2/tx/{id}"),
        Some("CREATE (:T)"),
    )
    .await;
    let rolled = tx_request(
        &server,
        "DELETE",
        &format!("/db/neo4j/query/v2/tx/{id}"),
        None,
    )
    .await;
    assert_eq!(rolled.status, 200);
    assert_eq!(count(&server).await, 1);

    // Commit with a last statement.
    let open = tx_request(&server, "POST", "/db/neo4j/query/v2/tx", None).await;
    let id = open.json()["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let commit = tx_request(
        &server,
        "POST",
        &format!("/db/neo4j/query/v2/tx/{id}/commit"),
        Some("CREATE (:T) RETURN 7 AS seven"),
    )
    .await;
    assert_eq!(commit.status, 200);
    assert_eq!(commit.json()["data"]["values"][0][0], 7);
    assert_eq!(count(&server).await, 2);

    // Expiry: the transaction is rolled back and its write lock freed.
    let open = tx_request(
        &server,
        "POST",
        "/db/neo4j/query/v2/tx",
        Some("CREATE (:T)"),
    )
    .await;
    let id = open.json()["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    tokio::time::sleep(Duration::from_millis(4200)).await;
    let late = tx_request(
        &server,
        "POST",
        &format!("/db/neo4j/query/v2/tx/{id}"),
        Some("RETURN 1"),
    )
    .await;
    assert_eq!(late.status, 404);
    let write = server.query("CREATE (:T)", json!({})).await;
    assert_eq!(write.status, 202, "the expired transaction's lock is free");
    assert_eq!(count(&server).await, 3);

    // A failing statement rolls its transaction back.
    let open = tx_request(
        &server,
        "POST",
        "/db/neo4j/query/v2/tx",
        Some("CREATE (:T)"),
    )
    .await;
    let id = open.json()["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let bad = tx_request(
        &server,
        "POST",
        &format!("/db/neo4j/query/v2/tx/{id}"),
        Some("RETURN 1/0"),
    )
    .await;
    assert_eq!(bad.status, 400);
    let gone = tx_request(
        &server,
        "POST",
        &format!("/db/neo4j/query/v2/tx/{id}/commit"),
        None,
    )
    .await;
    assert_eq!(gone.status, 404);
    assert_eq!(count(&server).await, 3);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_cannot_touch_a_transaction() {
    let server = start().await;
    server
        .query(
            "CREATE USER eve SET PASSWORD 'eve-pw' CHANGE NOT REQUIRED",
            json!({}),
        )
        .await;
    let open = tx_request(&server, "POST", "/db/neo4j/query/v2/tx", None).await;
    let id = open.json()["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let theirs = Req::new("DELETE", &format!("/db/neo4j/query/v2/tx/{id}"))
        .basic("eve", "eve-pw")
        .send(&server.target)
        .await;
    assert_eq!(theirs.status, 404);
    let mine = tx_request(
        &server,
        "DELETE",
        &format!("/db/neo4j/query/v2/tx/{id}"),
        None,
    )
    .await;
    assert_eq!(mine.status, 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_have_codes_and_statuses() {
    let server = start_with(
        ServerConfig {
            database_name: "movies".into(),
            max_message_size: 4096,
            ..ServerConfig::default()
        },
        false,
    )
    .await;
    let syntax = server.query("RETURN (", json!({})).await;
    assert_eq!(syntax.status, 400);
    assert_eq!(syntax.error_code(), "Neo.ClientError.Statement.SyntaxError");
    let missing = server.query("RETURN $nope", json!({})).await;
    assert_eq!(missing.status, 400);
    assert_eq!(
        missing.error_code(),
        "Neo.ClientError.Statement.ParameterMissing"
    );
    // `neo4j` is an alias of the configured name; other names are not found.
    let by_name = as_admin("POST", "/db/movies/query/v2")
        .json(&json!({"statement": "RETURN 1"}))
        .send(&server.target)
        .await;
    assert_eq!(by_name.status, 202);
    let unknown = as_admin("POST", "/db/nope/query/v2")
        .json(&json!({"statement": "RETURN 1"}))
        .send(&server.target)
        .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(
        unknown.error_code(),
        "Neo.ClientError.Database.DatabaseNotFound"
    );
    let malformed = as_admin("POST", "/db/neo4j/query/v2")
        .header("Content-Type", "application/json")
        .raw(b"{\"statement\": \"RETURN 1\",")
        .send(&server.target)
        .await;
    assert_eq!(malformed.status, 400);
    assert_eq!(
        malformed.error_code(),
        "Neo.ClientError.Request.InvalidFormat"
    );
    let message = malformed.json()["errors"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("malformed JSON") && message.contains("column"),
        "{message}"
    );
    let unknown_field = as_admin("POST", "/db/neo4j/query/v2")
        .json(&json!({"query": "RETURN 1"}))
        .send(&server.target)
        .await;
    assert_eq!(unknown_field.status, 400);
    let big = format!("{{\"statement\": \"RETURN '{}'\"}}", "x".repeat(8000));
    let oversize = as_admin("POST", "/db/neo4j/query/v2")
        .raw(big.as_bytes())
        .send(&server.target)
        .await;
    assert_eq!(oversize.status, 413);
    let text = as_admin("POST", "/db/neo4j/query/v2")
        .header("Content-Type", "text/plain")
        .raw(b"RETURN 1")
        .send(&server.target)
        .await;
    assert_eq!(text.status, 415);
    let small = server
        .query("UNWIND range(1, 10) AS i RETURN i", json!({}))
        .await;
    assert_eq!(small.status, 202);
    assert_eq!(small.json()["data"]["values"].as_array().unwrap().len(), 10);
    let wrong_method = as_admin("GET", "/db/neo4j/query/v2")
        .send(&server.target)
        .await;
    assert_eq!(wrong_method.status, 405);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_and_plans() {
    let server = start().await;
    let reply = as_admin("POST", "/db/neo4j/query/v2")
        .json(&json!({"statement": "CREATE (:P {a: 1}), (:P)", "includeCounters": true}))
        .send(&server.target)
        .await;
    let counters = &reply.json()["counters"];
    assert_eq!(counters["containsUpdates"], true);
    assert_eq!(counters["nodesCreated"], 2);
    assert_eq!(counters["propertiesSet"], 1);
    assert_eq!(counters["labelsAdded"], 2);
    assert_eq!(counters["relationshipsCreated"], 0);
    let explain = server
        .query(
            "EXPLAIN MATCH (p:P) WHERE p.a = 1 RETURN p.a AS a",
            json!({}),
        )
        .await;
    let answer = explain.json();
    assert_eq!(answer["data"]["values"], json!([]));
    let plan = &answer["queryPlan"];
    assert!(plan["operatorType"].is_string(), "{answer}");
    assert!(plan["arguments"]["EstimatedRows"].is_number());
    assert!(plan["identifiers"].is_array());
    fn operators(plan: &Json, out: &mut Vec<String>) {
        out.push(plan["operatorType"].as_str().unwrap().to_string());
        for child in plan["children"].as_array().unwrap() {
            operators(child, out);
        }
    }
    let mut names = Vec::new();
    operators(plan, &mut names);
    assert!(names.iter().any(|n| n.contains("Scan")), "{names:?}");
    let profile = server
        .query("PROFILE MATCH (p:P) RETURN count(p) AS n", json!({}))
        .await;
    let answer = profile.json();
    assert_eq!(answer["data"]["values"], json!([[2]]));
    let plan = &answer["profiledQueryPlan"];
    assert!(plan["records"].is_number(), "{answer}");
    assert!(plan["time"].is_number());
    assert_eq!(plan["hasPageCacheStats"], false);
    fn max_records(plan: &Json) -> i64 {
        let own = plan["records"].as_i64().unwrap();
        plan["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(max_records)
            .fold(own, i64::max)
    }
    assert!(max_records(plan) >= 2, "{plan}");
    fn find<'a>(plan: &'a Json, name: &str) -> Option<&'a Json> {
        if plan["operatorType"] == name {
            return Some(plan);
        }
        plan["children"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|c| find(c, name))
    }
    // Identifiers are the variables bound at each operator's output.
    let aggregate = find(plan, "Aggregate").expect("an Aggregate");
    assert_eq!(aggregate["identifiers"], json!(["n"]), "{plan}");
    let scan = find(plan, "LabelScan").expect("a LabelScan");
    assert_eq!(scan["identifiers"], json!(["p"]));
    assert_eq!(scan["records"], 2);
    assert_eq!(scan["arguments"]["Details"], "(p:P)");
    // A subquery's plan is a child of the operator holding it, with its
    // own counters.
    let created = server
        .query(
            "MATCH (p:P {a: 1}) CREATE (p)-[:R]->(:Q), (p)-[:R]->(:Q)",
            json!({}),
        )
        .await;
    assert_eq!(created.status, 202);
    let profile = server
        .query(
            "PROFILE MATCH (p:P) WHERE COUNT { (p)-[:R]->(q:Q) } > 1 RETURN p.a AS a",
            json!({}),
        )
        .await;
    let answer = profile.json();
    assert_eq!(answer["data"]["values"], json!([[1]]), "{answer}");
    let plan = &answer["profiledQueryPlan"];
    fn subquery(plan: &Json) -> Option<&Json> {
        let children = plan["children"].as_array().unwrap();
        children
            .iter()
            .find(|c| c["arguments"]["Subquery"] == "COUNT")
            .or_else(|| children.iter().find_map(subquery))
    }
    let nested = subquery(plan).unwrap_or_else(|| panic!("no COUNT subquery in {plan}"));
    let expand = find(nested, "Expand").unwrap_or_else(|| panic!("{nested}"));
    assert!(
        expand["identifiers"]
            .as_array()
            .unwrap()
            .contains(&json!("q")),
        "{expand}"
    );
    // Run once per P node: the two relationships of the first.
    assert_eq!(expand["records"], 2, "{plan}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_auth_mode_needs_no_header() {
    let server = start_with(
        ServerConfig {
            auth: AuthMode::None,
            ..ServerConfig::default()
        },
        false,
    )
    .await;
    let reply = Req::new("POST", "/db/neo4j/query/v2")
        .json(&json!({"statement": "RETURN 1 AS one"}))
        .send(&server.target)
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.json()["data"]["values"], json!([[1]]));
    let _ = &server.dir;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_and_bolt_over_tls() {
    let server = start_with(ServerConfig::default(), true).await;
    let reply = server.query("RETURN 'secure' AS s", json!({})).await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.json()["data"]["values"], json!([["secure"]]));
    // Plain HTTP to the TLS port is not served.
    let plain = Target {
        address: server.target.address,
        tls: None,
    };
    let stream = tokio::net::TcpStream::connect(plain.address).await.unwrap();
    drop(stream);
    // Bolt over TLS: handshake, HELLO, LOGON, RUN, PULL.
    use rhizome_server::framing::{write_message, ChunkDecoder};
    use rhizome_server::packstream::{decode, map, PackValue as P};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let tcp = tokio::net::TcpStream::connect(server.bolt).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(server.target.tls.clone().unwrap());
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    tls.write_all(&[
        0x60, 0x60, 0xB0, 0x17, 0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ])
    .await
    .unwrap();
    let mut version = [0u8; 4];
    tls.read_exact(&mut version).await.unwrap();
    assert_eq!(version, [0, 0, 4, 5]);
    let mut decoder = ChunkDecoder::new(usize::MAX);
    let mut buffer = Vec::new();
    let mut replies = Vec::new();
    for (tag, fields) in [
        (0x01u8, vec![map([("user_agent", "t".into())])]),
        (
            0x6A,
            vec![map([
                ("scheme", "basic".into()),
                ("principal", "neo4j".into()),
                ("credentials", PASSWORD.into()),
            ])],
        ),
        (0x10, vec![P::from("RETURN 40 + 2 AS x"), map([]), map([])]),
        (0x3F, vec![map([("n", P::Int(-1))])]),
    ] {
        let mut body = Vec::new();
        P::Struct(tag, fields).encode(&mut body);
        let mut out = Vec::new();
        write_message(&mut out, &body);
        tls.write_all(&out).await.unwrap();
    }
    while replies.len() < 5 {
        let (used, message) = decoder.decode(&buffer).unwrap();
        buffer.drain(..used);
        if let Some(message) = message {
            replies.push(decode(&message).unwrap());
            continue;
        }
        let mut chunk = [0u8; 4096];
        let n = tls.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed early after {replies:?}");
        buffer.extend_from_slice(&chunk[..n]);
    }
    assert!(
        matches!(&replies[3], P::Struct(0x71, f) if f[0] == P::List(vec![P::Int(42)])),
        "{replies:?}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_cancels_a_running_request_and_open_transactions() {
    let server = start().await;
    let open = tx_request(
        &server,
        "POST",
        "/db/neo4j/query/v2/tx",
        Some("CREATE (:T)"),
    )
    .await;
    assert_eq!(open.status, 202);
    let target = server.target.clone();
    let slow = tokio::spawn(async move {
        as_admin("POST", "/db/neo4j/query/v2")
            .json(&json!({"statement":
                "UNWIND range(1, 100000) AS i UNWIND range(1, 100000) AS j RETURN sum(i + j)"}))
            .send(&target)
            .await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let asked = std::time::Instant::now();
    server.stop.shutdown();
    tokio::time::timeout(Duration::from_secs(10), server.task)
        .await
        .expect("the server stops within seconds")
        .unwrap();
    assert!(asked.elapsed() < Duration::from_secs(10));
    let slow = slow.await.unwrap();
    // Closed without an answer (status 0) or refused: not finished.
    assert_ne!(
        slow.status, 202,
        "the statement was cancelled, not finished"
    );
    // The transaction was rolled back: a new server on the database sees nothing.
    let engine = Engine::open(&server.dir.path().join("db")).unwrap();
    let rows = engine
        .execute(
            "MATCH (t:T) RETURN count(t)",
            Default::default(),
            &rhizome_engine::QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(rows.rows.get(0), Some(&[rhizome_common::Value::Int(0)][..]));
}
