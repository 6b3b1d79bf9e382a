//! What the TCP tests of the server share: a server on a free port over a
//! new database, and a minimal Bolt 5.4 client.

#![allow(dead_code)] // each test file uses a part

use rhizome_engine::Engine;
use rhizome_server::packstream::{decode, map, PackValue as P};
use rhizome_server::{framing, Server, ServerConfig};
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct Running {
    pub address: SocketAddr,
    /// The HTTP address, if the configuration asked for HTTP.
    pub http: Option<SocketAddr>,
    pub engine: Engine,
    pub stop: rhizome_server::ShutdownHandle,
    pub task: tokio::task::JoinHandle<()>,
    /// The memory all its queries share.
    pub pool: Option<std::sync::Arc<rhizome_engine::MemoryPool>>,
    pub _dir: tempfile::TempDir,
}

pub async fn start(config: ServerConfig) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    let engine = Engine::open(&db).unwrap();
    let config = ServerConfig {
        bolt: "127.0.0.1:0".parse().unwrap(),
        auth: config.auth,
        database: Some(db.clone()),
        ..config
    };
    let server = Server::bind(&config, engine.clone()).await.unwrap();
    let address = server.local_addr();
    let http = server.http_addr();
    let stop = server.shutdown_handle();
    let pool = server.memory_pool();
    let task = tokio::spawn(server.run());
    Running {
        address,
        http,
        engine,
        stop,
        task,
        pool,
        _dir: dir,
    }
}

pub fn no_auth() -> ServerConfig {
    ServerConfig {
        auth: rhizome_server::AuthMode::None,
        ..ServerConfig::default()
    }
}

pub const PROPOSE_5: [u8; 20] = [
    0x60, 0x60, 0xB0, 0x17, 0, 8, 8, 5, 0, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0,
];

pub struct Client {
    pub stream: TcpStream,
    decoder: framing::ChunkDecoder,
    buffer: Vec<u8>,
}

impl Client {
    pub async fn connect(address: SocketAddr) -> Client {
        let mut stream = TcpStream::connect(address).await.unwrap();
        stream.write_all(&PROPOSE_5).await.unwrap();
        let mut version = [0u8; 4];
        stream.read_exact(&mut version).await.unwrap();
        assert_eq!(version, [0, 0, 4, 5]);
        Client {
            stream,
            decoder: framing::ChunkDecoder::new(usize::MAX),
            buffer: Vec::new(),
        }
    }

    pub async fn send(&mut self, tag: u8, fields: Vec<P>) {
        let mut body = Vec::new();
        P::Struct(tag, fields).encode(&mut body);
        let mut out = Vec::new();
        framing::write_message(&mut out, &body);
        self.stream.write_all(&out).await.unwrap();
    }

    /// The next response, `None` once the server closed the connection.
    pub async fn receive(&mut self) -> Option<P> {
        loop {
            let (used, message) = self.decoder.decode(&self.buffer).unwrap();
            self.buffer.drain(..used);
            if let Some(message) = message {
                return Some(decode(&message).unwrap());
            }
            let mut chunk = [0u8; 4096];
            let n = self.stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            self.buffer.extend_from_slice(&chunk[..n]);
        }
    }

    pub async fn hello(&mut self) {
        self.send(0x01, vec![map([("user_agent", "t".into())])])
            .await;
        assert!(matches!(self.receive().await, Some(P::Struct(0x70, _))));
        self.send(0x6A, vec![map([("scheme", "none".into())])])
            .await;
        assert!(matches!(self.receive().await, Some(P::Struct(0x70, _))));
    }
}

pub fn failure_text(response: Option<P>) -> String {
    match response {
        Some(P::Struct(0x7F, fields)) => format!("{:?}", fields[0]),
        other => panic!("expected a FAILURE, got {other:?}"),
    }
}

impl Client {
    /// HELLO and LOGON with `basic` credentials; the LOGON response.
    pub async fn login(&mut self, user: &str, password: &str) -> Option<P> {
        self.send(0x01, vec![map([("user_agent", "t".into())])])
            .await;
        self.receive().await;
        let auth = map([
            ("scheme", "basic".into()),
            ("principal", user.into()),
            ("credentials", password.into()),
        ]);
        self.send(0x6A, vec![auth]).await;
        self.receive().await
    }

    /// RUN and PULL all; the PULL's last response (or the RUN's failure).
    pub async fn query(&mut self, query: &str) -> P {
        self.send(0x10, vec![query.into(), map([]), map([])]).await;
        let run = self.receive().await.unwrap();
        if !matches!(run, P::Struct(0x70, _)) {
            self.send(0x0F, vec![]).await;
            self.receive().await;
            return run;
        }
        self.send(0x3F, vec![map([("n", (-1).into())])]).await;
        loop {
            match self.receive().await.unwrap() {
                P::Struct(0x71, _) => continue,
                last => return last,
            }
        }
    }
}

pub fn code(response: &P) -> String {
    match response {
        P::Struct(0x7F, fields) => format!("{:?}", fields[0].get("code").unwrap()),
        other => format!("{other:?}"),
    }
}

impl Client {
    /// A client past HELLO and LOGON (no authentication).
    pub async fn ready(address: SocketAddr) -> Client {
        let mut client = Client::connect(address).await;
        client.hello().await;
        client
    }

    /// RUN `query` with `extra` (e.g. `{db}`); the RUN's response.
    pub async fn run(&mut self, query: &str, extra: P) -> P {
        self.send(0x10, vec![query.into(), map([]), extra]).await;
        self.receive().await.unwrap()
    }

    /// PULL `n`; the records and the last response.
    pub async fn pull(&mut self, n: i64) -> (Vec<Vec<P>>, P) {
        self.send(0x3F, vec![map([("n", n.into())])]).await;
        let mut records = Vec::new();
        loop {
            match self.receive().await.unwrap() {
                P::Struct(0x71, mut fields) => match fields.pop() {
                    Some(P::List(values)) => records.push(values),
                    other => panic!("a record without values: {other:?}"),
                },
                last => return (records, last),
            }
        }
    }

    /// RUN and PULL all: the records, or the failure of the RUN or PULL
    /// (the connection is RESET after a failure).
    pub async fn rows(&mut self, query: &str) -> Result<Vec<Vec<P>>, P> {
        let run = self.run(query, map([])).await;
        if !matches!(run, P::Struct(0x70, _)) {
            self.reset().await;
            return Err(run);
        }
        let (records, last) = self.pull(-1).await;
        if matches!(last, P::Struct(0x70, _)) {
            Ok(records)
        } else {
            self.reset().await;
            Err(last)
        }
    }

    /// RESET; asserts it succeeded.
    pub async fn reset(&mut self) {
        self.send(0x0F, vec![]).await;
        loop {
            match self.receive().await {
                Some(P::Struct(0x70, _)) => return,
                Some(P::Struct(0x7E, _)) => continue,
                other => panic!("RESET answered {other:?}"),
            }
        }
    }
}
