//! `rhizome serve --http` end to end: the flags, the address files, a
//! Query API request, and a clean stop on SIGTERM.

#![cfg(unix)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn wait_for(file: &Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            if !text.is_empty() {
                return text;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn post(address: &str, path: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn serve_answers_the_query_api_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let status = Command::new(env!("CARGO_BIN_EXE_rhizome"))
        .args(["demo", db.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let bolt_file = dir.path().join("bolt");
    let http_file = dir.path().join("http");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rhizome"))
        .args(["serve", db.to_str().unwrap(), "--auth", "none"])
        .args(["--bolt", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        .arg("--address-file")
        .arg(&bolt_file)
        .arg("--http-address-file")
        .arg(&http_file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let http = wait_for(&http_file);
    let bolt = wait_for(&bolt_file);
    assert_ne!(http, bolt);
    let answer = post(
        &http,
        "/db/neo4j/query/v2",
        r#"{"statement": "MATCH (m:Movie {title: $t}) RETURN m.released AS year", "parameters": {"t": "The Matrix"}}"#,
    );
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    assert!(
        answer.contains(r#"{"data":{"fields":["year"],"values":[[1999]]}"#),
        "{answer}"
    );
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let start = Instant::now();
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(exit.success(), "{log}");
    assert!(log.contains("and HTTP at http://"), "{log}");
    assert!(log.contains("http: stopped"), "{log}");
}
