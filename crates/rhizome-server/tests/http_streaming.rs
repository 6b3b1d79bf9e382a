//! The Query API streams its answers: a large result is read whole by a
//! client that takes it chunk by chunk (the server charges nothing and
//! holds only a few batches), a client that goes away stops its
//! statement at once, and an error after the body started ends it with
//! valid JSON carrying an `errors` array.

use rhizome_server::packstream::PackValue as P;
use rhizome_server::ServerConfig;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;
use support::*;

/// An answer read as it comes, its chunked body taken apart incrementally.
struct Streamed {
    stream: TcpStream,
    buffer: Vec<u8>,
    status: u16,
    chunked: bool,
    done: bool,
}

impl Streamed {
    /// Sends `statement` to the Query API and reads the answer's head.
    async fn open(address: SocketAddr, statement: &str) -> Streamed {
        let body = serde_json::to_vec(&serde_json::json!({ "statement": statement })).unwrap();
        let mut stream = TcpStream::connect(address).await.unwrap();
        let head = format!(
            "POST /db/neo4j/query/v2 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&body).await.unwrap();
        let mut buffer = Vec::new();
        let split = loop {
            if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
            let mut more = [0u8; 4096];
            let n = stream.read(&mut more).await.unwrap();
            assert!(n > 0, "no answer head");
            buffer.extend_from_slice(&more[..n]);
        };
        let head = String::from_utf8_lossy(&buffer[..split]).to_lowercase();
        let status = head[9..12].parse().unwrap();
        let chunked = head.contains("transfer-encoding: chunked");
        buffer.drain(..split + 4);
        Streamed {
            stream,
            buffer,
            status,
            chunked,
            done: false,
        }
    }

    async fn fill(&mut self) -> bool {
        let mut more = vec![0u8; 64 * 1024];
        let n = self.stream.read(&mut more).await.unwrap_or(0);
        self.buffer.extend_from_slice(&more[..n]);
        n > 0
    }

    /// The next piece of the body; `None` at its end.
    async fn next(&mut self) -> Option<Vec<u8>> {
        if self.done {
            return None;
        }
        if !self.chunked {
            // A whole answer (Content-Length): up to the close.
            while self.fill().await {}
            self.done = true;
            return Some(std::mem::take(&mut self.buffer));
        }
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\r\n") {
                let size =
                    usize::from_str_radix(String::from_utf8_lossy(&self.buffer[..end]).trim(), 16)
                        .unwrap();
                if size == 0 {
                    self.done = true;
                    return None;
                }
                if self.buffer.len() >= end + 2 + size + 2 {
                    let data = self.buffer[end + 2..end + 2 + size].to_vec();
                    self.buffer.drain(..end + 2 + size + 2);
                    return Some(data);
                }
            }
            assert!(self.fill().await, "the answer ended inside a chunk");
        }
    }
}

/// The memory this process holds now (server and client together).
fn resident_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// Reads a streamed `UNWIND range(1, n) AS i RETURN i` answer, keeping
/// only the count and sum of the numbers in its rows and the tail; the
/// most memory the process grew by while it streamed, after a warm-up of
/// 1000 batches (the worker pool's and allocator's first growth).
async fn read_range(address: SocketAddr, n: u64) -> (u64, u64, String, usize) {
    let mut answer = Streamed::open(address, &format!("UNWIND range(1, {n}) AS i RETURN i")).await;
    assert_eq!(answer.status, 202);
    assert!(answer.chunked, "a large answer is streamed");
    let mut before = usize::MAX;
    let mut growth = 0usize;
    let (mut count, mut sum, mut number, mut in_number) = (0u64, 0u64, 0u64, false);
    let mut tail = Vec::new();
    let mut pieces = 0u64;
    while let Some(piece) = answer.next().await {
        for &b in &piece {
            if b.is_ascii_digit() {
                number = number * 10 + u64::from(b - b'0');
                in_number = true;
            } else if in_number {
                count += 1;
                sum += number;
                number = 0;
                in_number = false;
            }
        }
        tail.extend_from_slice(&piece);
        let keep = tail.len().saturating_sub(300);
        tail.drain(..keep);
        pieces += 1;
        if pieces == 1000 {
            before = resident_bytes();
        }
        if pieces.is_multiple_of(64) {
            growth = growth.max(resident_bytes().saturating_sub(before));
        }
    }
    (
        count,
        sum,
        String::from_utf8_lossy(&tail).to_string(),
        growth,
    )
}

fn http_server_config(memory_limit: usize) -> ServerConfig {
    ServerConfig {
        http: Some("127.0.0.1:0".parse().unwrap()),
        memory_limit: Some(memory_limit),
        ..no_auth()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_answer_streams_and_nothing_is_charged() {
    // A million rows are ~8 MB of JSON; the query may hold 4 MiB and is
    // charged nothing: the rows are never all held.
    let server = start(http_server_config(4 << 20)).await;
    let n = 1_000_000u64;
    let (count, sum, tail, _) = read_range(server.http.unwrap(), n).await;
    assert_eq!(count, n);
    assert_eq!(sum, n * (n + 1) / 2);
    assert!(tail.ends_with("]]},\"bookmarks\":[]}"), "{tail}");
    assert_eq!(server.pool.as_ref().unwrap().peak(), 0);
    // The whole answer is valid JSON (a smaller one, read whole).
    let mut small =
        Streamed::open(server.http.unwrap(), "UNWIND range(1, 5000) AS i RETURN i").await;
    let mut body = Vec::new();
    while let Some(piece) = small.next().await {
        body.extend(piece);
    }
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["data"]["fields"], serde_json::json!(["i"]));
    // Every element once (the parallel workers' order is free).
    let mut values: Vec<i64> = json["data"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[0].as_i64().unwrap())
        .collect();
    values.sort_unstable();
    assert_eq!(values, (1..=5000).collect::<Vec<i64>>());
}

/// Ten million rows (~90 MB of JSON, which the server answered whole
/// before) stream while the process stays flat from the first million
/// rows to the last (it grows by 90-180 MB in its first few hundred
/// batches, as it does streaming over Bolt alone: worker and allocator
/// arenas). Slow in a debug
/// build: `cargo test -p rhizome-server --test http_streaming -- --ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn ten_million_rows_stream_in_constant_memory() {
    let server = start(http_server_config(4 << 20)).await;
    let n = 10_000_000u64;
    let started = Instant::now();
    let (count, sum, tail, growth) = read_range(server.http.unwrap(), n).await;
    assert_eq!(count, n);
    assert_eq!(sum, n * (n + 1) / 2);
    assert!(tail.ends_with("]]},\"bookmarks\":[]}"), "{tail}");
    eprintln!(
        "10M rows over HTTP in {:?}; after warm-up the process grew by at most {} KiB",
        started.elapsed(),
        growth >> 10
    );
    assert!(growth < 32 << 20, "grew by {growth} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_stops_its_statement() {
    let server = start(http_server_config(1 << 30)).await;
    let mut admin = Client::ready(server.address).await;
    let query = "UNWIND range(1, 1000000000) AS i RETURN i";
    let mut answer = Streamed::open(server.http.unwrap(), query).await;
    assert_eq!(answer.status, 202);
    let first = answer.next().await.unwrap();
    assert!(first.starts_with(b"{\"data\":{\"fields\":[\"i\"],\"values\":[["));
    // Listed while it streams.
    let listed = |rows: &[Vec<P>]| {
        rows.iter()
            .filter(|r| r[6] == P::from(query))
            .map(|r| r[3].clone())
            .collect::<Vec<_>>()
    };
    let rows = admin.rows("SHOW TRANSACTIONS").await.unwrap();
    let connection = listed(&rows);
    assert_eq!(connection.len(), 1, "{rows:?}");
    assert!(matches!(&connection[0], P::String(c) if c.starts_with("http-")));
    drop(answer);
    let gone = Instant::now();
    loop {
        let rows = admin.rows("SHOW TRANSACTIONS").await.unwrap();
        if listed(&rows).is_empty() {
            break;
        }
        assert!(
            gone.elapsed() < Duration::from_secs(5),
            "still running: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The workers are free for the next client.
    assert_eq!(
        admin.rows("RETURN 1 AS one").await,
        Ok(vec![vec![P::Int(1)]])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_after_the_body_started_ends_it_with_errors() {
    let server = start(http_server_config(1 << 30)).await;
    // Rows stream first; the division by zero comes with the range's last
    // element, which the workers reach last.
    let mut answer = Streamed::open(
        server.http.unwrap(),
        "UNWIND range(1, 300000) AS i RETURN 1 / (300000 - i) AS x",
    )
    .await;
    assert_eq!(answer.status, 202);
    let mut body = Vec::new();
    while let Some(piece) = answer.next().await {
        body.extend(piece);
    }
    let json: serde_json::Value = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&body)));
    let values = json["data"]["values"].as_array().unwrap();
    assert!(
        values.len() >= 1000 && values.len() < 300000,
        "{}",
        values.len()
    );
    assert_eq!(
        json["errors"][0]["code"],
        "Neo.ClientError.Statement.ArithmeticError"
    );
    assert!(json.get("bookmarks").is_none());
    // An error in the first batch still gets its status.
    let mut early = Streamed::open(
        server.http.unwrap(),
        "UNWIND range(1, 10) AS i RETURN 1 / (5 - i) AS x",
    )
    .await;
    assert_eq!(early.status, 400);
    let body = early.next().await.unwrap();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        json["errors"][0]["code"],
        "Neo.ClientError.Statement.ArithmeticError"
    );
}
