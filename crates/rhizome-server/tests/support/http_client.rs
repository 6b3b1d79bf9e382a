//! A minimal HTTP/1.1 client for the tests: one request per connection
//! (`Connection: close`), over plain TCP or TLS.

#![allow(dead_code)]

use serde_json::Value as Json;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Json {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first error's code.
    pub fn error_code(&self) -> String {
        self.json()["errors"][0]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// Where and how to connect.
#[derive(Clone)]
pub struct Target {
    pub address: SocketAddr,
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

/// A request.
pub struct Req<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub headers: Vec<(&'a str, String)>,
    pub body: Vec<u8>,
}

impl<'a> Req<'a> {
    pub fn new(method: &'a str, path: &'a str) -> Req<'a> {
        Req {
            method,
            path,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn json(mut self, body: &Json) -> Req<'a> {
        self.body = serde_json::to_vec(body).unwrap();
        self.headers
            .push(("Content-Type", "application/json".into()));
        self
    }

    pub fn raw(mut self, body: &[u8]) -> Req<'a> {
        self.body = body.to_vec();
        self
    }

    pub fn header(mut self, name: &'a str, value: impl Into<String>) -> Req<'a> {
        self.headers.push((name, value.into()));
        self
    }

    pub fn basic(self, user: &str, password: &str) -> Req<'a> {
        use base64::Engine as _;
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        self.header("Authorization", format!("Basic {token}"))
    }

    pub async fn send(self, target: &Target) -> Reply {
        let stream = TcpStream::connect(target.address).await.unwrap();
        match &target.tls {
            None => exchange(stream, &self).await,
            Some(config) => {
                let connector = tokio_rustls::TlsConnector::from(config.clone());
                let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
                let stream = connector.connect(name, stream).await.unwrap();
                exchange(stream, &self).await
            }
        }
    }
}

async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, req: &Req<'_>) -> Reply {
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n",
        req.method,
        req.path,
        req.body.len()
    );
    for (k, v) in &req.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&req.body).await.unwrap();
    stream.flush().await.unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw).await;
    parse(&raw)
}

fn parse(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        let start = end + 2;
        out.extend_from_slice(&data[start..start + size]);
        data = &data[start + size + 2..];
    }
}

/// A self-signed certificate for `localhost` and 127.0.0.1, written as
/// PEM files in `dir`; the client configuration that trusts it.
pub fn certificate(
    dir: &std::path::Path,
) -> (
    std::path::PathBuf,
    std::path::PathBuf,
    Arc<rustls::ClientConfig>,
) {
    let generated =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, generated.cert.pem()).unwrap();
    std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(generated.cert.der().clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    (cert, key, Arc::new(config))
}
