//! A small blocking Bolt client: the `rhizome shell bolt://…` front end and
//! the server benchmark use it. It reuses the server's own PackStream,
//! framing and message definitions, so both ends speak one dialect.
//!
//! It speaks Bolt 5.0–5.4 and 4.4 (HELLO, LOGON, RUN, PULL, DISCARD, BEGIN,
//! COMMIT, ROLLBACK, RESET, GOODBYE) over any `Read + Write` stream:
//! [`BoltClient::connect`] opens plain TCP; [`BoltClient::over`] takes any
//! other stream; [`open`] connects to a [`BoltUri`], over TLS for the
//! `+s` / `+ssc` schemes ([`tls`]). Requests may be pipelined:
//! [`BoltClient::stream`] sends RUN and PULL in one write and reads both
//! answers.
//!
//! A statement can be interrupted while the client waits for its answers
//! ([`BoltClient::set_interrupt`]): the stream is given a read timeout, and
//! at each timeout the client asks the interrupt check; once it says yes,
//! the client sends RESET on the same connection, reads what the server
//! still owes, and returns [`ClientError::Interrupted`] with the connection
//! READY again. A statement the server finished before the RESET reached
//! it stands, and its result is returned, unless the RESET then ended the
//! explicit transaction it ran in.
//!
//! After a FAILURE the client reads the answers still owed to it, sends
//! RESET and waits for its SUCCESS, so the connection is READY again when a
//! [`ClientError::Server`] is returned (an explicit transaction is then
//! gone, as the server rolled it back).

pub mod records;
pub mod tls;

use crate::framing::ChunkDecoder;
use crate::handshake::{Version, MAGIC};
use crate::message::{Request, Response};
use crate::packstream::{self, map, PackValue};
use crate::values::ValueWriter;
use rhizome_common::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tls::{is_poll_tick, TlsTrust};

/// The largest message the client accepts from a server.
pub const MAX_RESPONSE: usize = 512 << 20;

/// How long connecting and logging in (TCP, TLS, the Bolt handshake,
/// HELLO and LOGON) may take by default before the client gives up: a
/// server that accepts the connection and never answers is an error, not
/// a hang (the drivers' default connection timeout is the same).
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a blocked read wakes up to look at the clock and the
/// interrupt check when the caller asked for no polling of its own.
const READ_TICK: Duration = Duration::from_millis(250);

/// Why a client call failed.
#[derive(Debug)]
pub enum ClientError {
    /// The connection failed or was closed.
    Io(std::io::Error),
    /// The server sent something that is not valid Bolt, or the wrong thing.
    Protocol(String),
    /// The server answered FAILURE.
    Server {
        /// The Neo4j status code.
        code: String,
        /// The server's message.
        message: String,
    },
    /// The interrupt check said stop: the statement was RESET (an explicit
    /// transaction with it); the connection is READY.
    Interrupted,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Io(e) => write!(f, "connection failed: {e}"),
            ClientError::Protocol(why) => write!(f, "protocol error: {why}"),
            ClientError::Server { code, message } => write!(f, "{code}: {message}"),
            ClientError::Interrupted => write!(f, "interrupted: the statement was reset"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> ClientError {
        ClientError::Io(e)
    }
}

/// How the client authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// No authentication (a server started with `--auth none`).
    None,
    /// A user name and password.
    Basic {
        /// The user.
        user: String,
        /// The password.
        password: String,
    },
}

impl Auth {
    /// The authentication token of HELLO (4.4, 5.0) or LOGON (5.1+).
    fn token(&self) -> Vec<(String, PackValue)> {
        match self {
            Auth::None => vec![("scheme".into(), "none".into())],
            Auth::Basic { user, password } => vec![
                ("scheme".into(), "basic".into()),
                ("principal".into(), user.as_str().into()),
                ("credentials".into(), password.as_str().into()),
            ],
        }
    }
}

/// Whether a connection is encrypted, and how the server is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encryption {
    /// Plain TCP (`bolt://`, `neo4j://`).
    None,
    /// TLS, the certificate verified (`bolt+s://`, `neo4j+s://`).
    Verified,
    /// TLS, any certificate accepted (`bolt+ssc://`, `neo4j+ssc://`).
    SelfSigned,
}

/// Where a `bolt://` or `neo4j://` URI points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoltUri {
    /// The scheme (`bolt`, `neo4j`, `bolt+s`, ...).
    pub scheme: String,
    /// `host:port` (the port defaults to 7687).
    pub address: String,
    /// What the scheme asks for.
    pub encryption: Encryption,
}

impl BoltUri {
    /// True if `text` looks like a URI of a Bolt server (has a scheme).
    pub fn is_uri(text: &str) -> bool {
        text.contains("://")
    }

    /// Parses `bolt://HOST[:PORT]` or `neo4j://HOST[:PORT]` (one server:
    /// `neo4j://` connects directly), and their TLS forms `+s` (the
    /// certificate verified) and `+ssc` (any certificate accepted).
    pub fn parse(text: &str) -> Result<BoltUri, String> {
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(format!("`{text}` is not a URI: expected bolt://HOST:PORT"));
        };
        let encryption = match scheme {
            "bolt" | "neo4j" => Encryption::None,
            "bolt+s" | "neo4j+s" => Encryption::Verified,
            "bolt+ssc" | "neo4j+ssc" => Encryption::SelfSigned,
            other => {
                return Err(format!(
                    "unknown scheme `{other}://`: expected bolt://, neo4j:// or their +s / +ssc TLS forms"
                ))
            }
        };
        let host_port = rest.split(['/', '?']).next().unwrap_or_default();
        if host_port.is_empty() {
            return Err(format!(
                "`{text}` names no host: expected {scheme}://HOST:PORT"
            ));
        }
        let has_port = match host_port.rsplit_once(':') {
            Some((host, port)) => {
                if port.parse::<u16>().is_err() {
                    return Err(format!("`{port}` in `{text}` is not a port number"));
                }
                !host.is_empty()
            }
            None => false,
        };
        let address = if has_port {
            host_port.to_string()
        } else {
            format!("{host_port}:7687")
        };
        Ok(BoltUri {
            scheme: scheme.to_string(),
            address,
            encryption,
        })
    }
}

/// A stream a client can run over: TCP, or TLS over TCP.
pub trait Transport: Read + Write + Send {}

impl<T: Read + Write + Send> Transport for T {}

/// A client over whichever stream its URI asked for.
pub type Connection = BoltClient<Box<dyn Transport>>;

/// How [`open`] connects, beyond the URI.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// Certificates trusted besides the system's (`+s` schemes only).
    pub tls_ca: Option<PathBuf>,
    /// How often a client waiting for an answer asks its interrupt check
    /// (`None`: every 250 ms, with nothing to ask).
    pub poll: Option<Duration>,
    /// How long connecting and logging in may take (`None`:
    /// [`LOGIN_TIMEOUT`]).
    pub login_timeout: Option<Duration>,
}

/// Connects to the server `uri` names (over TLS for the `+s` / `+ssc`
/// schemes) and logs in.
pub fn open(
    uri: &BoltUri,
    auth: &Auth,
    options: &ConnectOptions,
) -> Result<Connection, ClientError> {
    let deadline = Instant::now() + options.login_timeout.unwrap_or(LOGIN_TIMEOUT);
    let tcp = connect_before(&uri.address, deadline)?;
    tcp.set_read_timeout(Some(options.poll.unwrap_or(READ_TICK)))?;
    let trust = match uri.encryption {
        Encryption::None => {
            return BoltClient::over_before(Box::new(tcp) as Box<dyn Transport>, auth, deadline)
        }
        Encryption::Verified => TlsTrust::Verified {
            ca_file: options.tls_ca.clone(),
        },
        Encryption::SelfSigned => TlsTrust::AnyCertificate,
    };
    let stream = tls::handshake(tcp, &uri.address, &trust, deadline)?;
    BoltClient::over_before(Box::new(stream) as Box<dyn Transport>, auth, deadline)
}

/// A TCP connection to `address` (`host:port`, every address it resolves
/// to tried in turn), given up at `deadline`.
fn connect_before(address: &str, deadline: Instant) -> std::io::Result<TcpStream> {
    use std::net::ToSocketAddrs;
    let mut last = None;
    for addr in address.to_socket_addrs()? {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(tcp) => {
                tcp.set_nodelay(true)?;
                return Ok(tcp);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| login_timed_out("connecting")))
}

/// The error of a login that ran out of time while `doing` something.
pub(crate) fn login_timed_out(doing: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!(
            "the server did not answer in time while {doing} (is it a Bolt server, and alive?)"
        ),
    )
}

/// Asked while a client waits for answers: true means stop the statement.
pub type InterruptCheck = Arc<dyn Fn() -> bool + Send + Sync>;

/// The answer to RUN.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The column names.
    pub fields: Vec<String>,
    /// The result's id inside an explicit transaction (-1 outside).
    pub qid: i64,
}

/// The end of a PULL or DISCARD.
#[derive(Debug, Clone, PartialEq)]
pub struct PullSummary {
    /// More records remain (PULL with `n` ran out first).
    pub has_more: bool,
    /// The SUCCESS metadata (`type`, `t_last`, `stats`, `bookmark`, ...).
    pub metadata: PackValue,
}

/// A whole result, records decoded as PackStream values.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientResult {
    /// The column names.
    pub fields: Vec<String>,
    /// The records.
    pub records: Vec<Vec<PackValue>>,
    /// The summary (the last SUCCESS's metadata).
    pub summary: PackValue,
}

/// One Bolt connection.
pub struct BoltClient<S: Read + Write = TcpStream> {
    stream: S,
    version: Version,
    decoder: ChunkDecoder,
    /// Bytes read: `input[read_pos..filled]` are not decoded yet.
    input: Vec<u8>,
    read_pos: usize,
    filled: usize,
    out: Vec<u8>,
    /// Answers owed by the server for requests sent (RECORDs not counted).
    owed: usize,
    /// The database named in RUN / BEGIN (`None`: the server's default).
    database: Option<String>,
    server_agent: String,
    /// Asked at each read timeout while waiting for answers.
    interrupt: Option<InterruptCheck>,
    /// RESET was sent because of the interrupt check; its answer is owed.
    interrupting: bool,
    /// An explicit transaction is open (BEGIN succeeded, no COMMIT,
    /// ROLLBACK or RESET since).
    in_transaction: bool,
    /// While logging in: when to give up waiting for the server.
    deadline: Option<Instant>,
}

/// The four proposals of the handshake: 5.4 down to 5.0, then 4.4.
const PROPOSALS: [[u8; 4]; 4] = [[0, 4, 4, 5], [0, 0, 4, 4], [0; 4], [0; 4]];

impl BoltClient<TcpStream> {
    /// Connects over plain TCP to `address` (`host:port`) and logs in.
    pub fn connect(address: &str, auth: &Auth) -> Result<BoltClient<TcpStream>, ClientError> {
        let deadline = Instant::now() + LOGIN_TIMEOUT;
        let stream = connect_before(address, deadline)?;
        stream.set_read_timeout(Some(READ_TICK))?;
        BoltClient::over_before(stream, auth, deadline)
    }
}

impl<S: Read + Write> BoltClient<S> {
    /// Speaks Bolt over `stream` (plain TCP, or a TLS stream wrapping it):
    /// handshake, HELLO and (5.1+) LOGON. The login gives up after
    /// [`LOGIN_TIMEOUT`] if `stream` has a read timeout (without one, its
    /// reads block).
    pub fn over(stream: S, auth: &Auth) -> Result<BoltClient<S>, ClientError> {
        BoltClient::over_before(stream, auth, Instant::now() + LOGIN_TIMEOUT)
    }

    fn over_before(
        mut stream: S,
        auth: &Auth,
        deadline: Instant,
    ) -> Result<BoltClient<S>, ClientError> {
        let mut handshake = Vec::with_capacity(20);
        handshake.extend_from_slice(&MAGIC);
        for proposal in PROPOSALS {
            handshake.extend_from_slice(&proposal);
        }
        stream.write_all(&handshake)?;
        stream.flush()?;
        let mut answer = [0u8; 4];
        read_exact_patiently(&mut stream, &mut answer, deadline)?;
        if answer == [0; 4] {
            return Err(ClientError::Protocol(
                "the server speaks none of Bolt 5.0–5.4 and 4.4".into(),
            ));
        }
        if answer[..2] != [0, 0] || answer.starts_with(b"HT") {
            return Err(ClientError::Protocol(format!(
                "the server answered the handshake with {answer:02X?}, not a Bolt version (is it a Bolt port?)"
            )));
        }
        let version = Version {
            major: answer[3],
            minor: answer[2],
        };
        let mut client = BoltClient {
            stream,
            version,
            decoder: ChunkDecoder::new(MAX_RESPONSE),
            input: vec![0; 64 * 1024],
            read_pos: 0,
            filled: 0,
            out: Vec::with_capacity(4096),
            owed: 0,
            database: None,
            server_agent: String::new(),
            interrupt: None,
            interrupting: false,
            in_transaction: false,
            deadline: Some(deadline),
        };
        client.login(auth)?;
        client.deadline = None;
        Ok(client)
    }

    fn login(&mut self, auth: &Auth) -> Result<(), ClientError> {
        let mut hello = vec![(
            "user_agent".to_string(),
            PackValue::from(concat!("rhizome/", env!("CARGO_PKG_VERSION"))),
        )];
        let separate_logon = self.version >= Version::V5_1;
        if !separate_logon {
            hello.extend(auth.token());
        }
        self.push(&Request::Hello(PackValue::Map(hello)));
        if separate_logon {
            self.push(&Request::Logon(PackValue::Map(auth.token())));
        }
        self.flush()?;
        let metadata = self.success()?;
        if let Some(PackValue::String(agent)) = metadata.get("server") {
            self.server_agent = agent.clone();
        }
        if separate_logon {
            self.success()?;
        }
        Ok(())
    }

    /// The Bolt version agreed on.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The server's agent string (`Neo4j/5.x.y`-style), from HELLO's answer.
    pub fn server_agent(&self) -> &str {
        &self.server_agent
    }

    /// Sends RUN and PULL statements to database `name` (`None`: the server's default).
    pub fn use_database(&mut self, name: Option<String>) {
        self.database = name;
    }

    /// Sets (or clears) what the client asks, at each read timeout of its
    /// stream, whether to interrupt the statement it waits for (see the
    /// module doc). Without a read timeout on the stream it is never asked.
    pub fn set_interrupt(&mut self, check: Option<InterruptCheck>) {
        self.interrupt = check;
    }

    /// Queues a request (sent by [`BoltClient::flush`]).
    fn push(&mut self, request: &Request) {
        request.encode(&mut self.out);
        self.owed += 1;
    }

    /// Queues RUN with parameters given as Rhizome values.
    fn push_run(&mut self, query: &str, params: &BTreeMap<String, Value>) {
        let mut body = Vec::with_capacity(32 + query.len());
        packstream::write_struct_header(&mut body, 0x10, 3);
        packstream::write_string(&mut body, query);
        let writer = ValueWriter {
            v5: self.version.is_v5(),
            graph: None,
        };
        packstream::write_map_header(&mut body, params.len());
        for (name, value) in params {
            packstream::write_string(&mut body, name);
            writer.write(&mut body, value);
        }
        self.extra().encode(&mut body);
        crate::framing::write_message(&mut self.out, &body);
        self.owed += 1;
    }

    /// RUN's and BEGIN's extra map.
    fn extra(&self) -> PackValue {
        match &self.database {
            Some(db) => map([("db", db.as_str().into())]),
            None => map([]),
        }
    }

    /// Writes what was queued.
    fn flush(&mut self) -> Result<(), ClientError> {
        self.stream.write_all(&self.out)?;
        self.stream.flush()?;
        self.out.clear();
        Ok(())
    }

    /// The next response.
    fn receive(&mut self) -> Result<Response, ClientError> {
        loop {
            let (used, message) = self
                .decoder
                .decode(&self.input[self.read_pos..self.filled])
                .map_err(|e| ClientError::Protocol(e.to_string()))?;
            self.read_pos += used;
            if let Some(message) = message {
                let response = Response::parse(&message).map_err(|e| ClientError::Protocol(e.0))?;
                if !matches!(response, Response::Record(_)) {
                    self.owed = self.owed.saturating_sub(1);
                }
                return Ok(response);
            }
            // Keep the undecoded tail at the front; grow only when it fills
            // the whole buffer (the decoder keeps partial messages itself).
            self.input.copy_within(self.read_pos..self.filled, 0);
            self.filled -= self.read_pos;
            self.read_pos = 0;
            if self.filled == self.input.len() {
                self.input.resize(self.input.len() * 2, 0);
            }
            let n = match self.stream.read(&mut self.input[self.filled..]) {
                Ok(n) => n,
                Err(e) if is_poll_tick(&e) => {
                    self.poll_interrupt()?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                return Err(ClientError::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                )));
            }
            self.filled += n;
        }
    }

    /// Sends RESET once the interrupt check says so (and answers are owed).
    fn poll_interrupt(&mut self) -> Result<(), ClientError> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(login_timed_out("logging in").into());
        }
        let asked = self.interrupt.as_ref().is_some_and(|check| check());
        if asked && !self.interrupting && self.owed > 0 {
            self.interrupting = true;
            self.push(&Request::Reset);
            self.flush()?;
        }
        Ok(())
    }

    /// After an interrupting RESET: reads every answer still owed (the
    /// RESET's SUCCESS last), so the connection is READY.
    fn finish_interrupt(&mut self) -> ClientError {
        self.interrupting = false;
        // RESET ends an explicit transaction.
        self.in_transaction = false;
        while self.owed > 0 {
            if let Err(e) = self.receive() {
                return e;
            }
        }
        ClientError::Interrupted
    }

    /// Reads one answer that must be SUCCESS; after a FAILURE it recovers
    /// the connection (see the module doc) and returns the failure.
    fn success(&mut self) -> Result<PackValue, ClientError> {
        let response = self.receive()?;
        if self.interrupting {
            match response {
                // RUN's answer with its PULL still to come: the PULL's
                // reader settles the interrupt.
                Response::Success(metadata) if self.owed > 1 => return Ok(metadata),
                _ => return Err(self.finish_interrupt()),
            }
        }
        match response {
            Response::Success(metadata) => Ok(metadata),
            other => Err(self.unexpected(other)),
        }
    }

    /// Turns a response that should not have come into an error; a
    /// FAILURE also brings the connection back to READY.
    fn unexpected(&mut self, response: Response) -> ClientError {
        match response {
            Response::Failure { code, message } => {
                // The failure says more than a failed recovery would (a
                // server may close the connection after a refused login).
                let _ = self.recover();
                ClientError::Server { code, message }
            }
            Response::Ignored => ClientError::Protocol("the server ignored a request".into()),
            Response::Record(_) => ClientError::Protocol("a RECORD came out of turn".into()),
            Response::Success(_) => ClientError::Protocol("a SUCCESS came out of turn".into()),
        }
    }

    /// Reads the answers still owed (IGNORED after a failure), then RESET.
    fn recover(&mut self) -> Result<(), ClientError> {
        while self.owed > 0 {
            self.receive()?;
        }
        self.push(&Request::Reset);
        self.flush()?;
        loop {
            match self.receive()? {
                Response::Success(_) if self.owed == 0 => {
                    // An interrupting RESET sent meanwhile is answered too.
                    self.interrupting = false;
                    self.in_transaction = false;
                    return Ok(());
                }
                Response::Failure { code, message } => {
                    return Err(ClientError::Server { code, message })
                }
                _ => {}
            }
        }
    }

    /// Runs a statement; read its records with [`BoltClient::pull`].
    pub fn run(
        &mut self,
        query: &str,
        params: &BTreeMap<String, Value>,
    ) -> Result<RunSummary, ClientError> {
        self.push_run(query, params);
        self.flush()?;
        let metadata = self.success()?;
        run_summary(&metadata)
    }

    /// Fetches up to `n` records (-1: all) of result `qid` (-1: the last),
    /// handing each to `record`.
    pub fn pull(
        &mut self,
        n: i64,
        qid: i64,
        record: impl FnMut(Vec<PackValue>),
    ) -> Result<PullSummary, ClientError> {
        self.push(&Request::Pull { n, qid });
        self.flush()?;
        self.records(record)
    }

    /// Throws away the rest of result `qid` (-1: the last).
    pub fn discard(&mut self, qid: i64) -> Result<PullSummary, ClientError> {
        self.push(&Request::Discard { n: -1, qid });
        self.flush()?;
        self.records(|_| {})
    }

    /// Reads RECORDs up to the SUCCESS (or FAILURE) that ends them.
    fn records(
        &mut self,
        mut record: impl FnMut(Vec<PackValue>),
    ) -> Result<PullSummary, ClientError> {
        loop {
            match self.receive()? {
                Response::Record(values) => record(values),
                Response::Success(metadata) => {
                    let has_more = matches!(metadata.get("has_more"), Some(PackValue::Bool(true)));
                    if self.interrupting {
                        // The statement ended before the RESET reached it.
                        // Whole and outside a transaction, it stands (an
                        // autocommit write committed); otherwise the RESET
                        // threw away the rest, or the transaction.
                        let complete = !has_more && !self.in_transaction;
                        let reset = self.finish_interrupt();
                        if !complete || !matches!(reset, ClientError::Interrupted) {
                            return Err(reset);
                        }
                    }
                    return Ok(PullSummary { has_more, metadata });
                }
                _ if self.interrupting => return Err(self.finish_interrupt()),
                other => return Err(self.unexpected(other)),
            }
        }
    }

    /// Runs a statement and streams all its records to `record`, RUN and
    /// PULL pipelined in one write (one round trip). Returns the columns
    /// and the summary.
    pub fn stream(
        &mut self,
        query: &str,
        params: &BTreeMap<String, Value>,
        record: impl FnMut(Vec<PackValue>),
    ) -> Result<(RunSummary, PullSummary), ClientError> {
        self.push_run(query, params);
        self.push(&Request::Pull { n: -1, qid: -1 });
        self.flush()?;
        let run = run_summary(&self.success()?)?;
        let pulled = self.records(record)?;
        Ok((run, pulled))
    }

    /// Runs a statement and collects its records.
    pub fn query(
        &mut self,
        query: &str,
        params: &BTreeMap<String, Value>,
    ) -> Result<ClientResult, ClientError> {
        let mut records = Vec::new();
        let (run, pulled) = self.stream(query, params, |r| records.push(r))?;
        Ok(ClientResult {
            fields: run.fields,
            records,
            summary: pulled.metadata,
        })
    }

    /// Opens an explicit transaction.
    pub fn begin(&mut self) -> Result<(), ClientError> {
        let extra = self.extra();
        self.push(&Request::Begin(extra));
        self.flush()?;
        self.success()?;
        self.in_transaction = true;
        Ok(())
    }

    /// Commits the explicit transaction; returns COMMIT's metadata (its bookmark).
    pub fn commit(&mut self) -> Result<PackValue, ClientError> {
        self.push(&Request::Commit);
        self.flush()?;
        self.in_transaction = false;
        self.success()
    }

    /// Rolls the explicit transaction back.
    pub fn rollback(&mut self) -> Result<(), ClientError> {
        self.push(&Request::Rollback);
        self.flush()?;
        self.in_transaction = false;
        self.success().map(drop)
    }

    /// Stops what runs, forgets open results and transaction: READY again.
    pub fn reset(&mut self) -> Result<(), ClientError> {
        self.recover()
    }

    /// Says goodbye and closes the connection.
    pub fn goodbye(mut self) -> Result<(), ClientError> {
        self.push(&Request::Goodbye);
        self.flush()
    }
}

/// `read_exact` that waits through read timeouts (set for interrupt
/// checks, which have nothing to interrupt before the login) until
/// `deadline`.
fn read_exact_patiently(
    stream: &mut impl Read,
    buf: &mut [u8],
    deadline: Instant,
) -> Result<(), ClientError> {
    let mut done = 0;
    while done < buf.len() {
        match stream.read(&mut buf[done..]) {
            Ok(0) => {
                return Err(ClientError::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the connection during the handshake",
                )))
            }
            Ok(n) => done += n,
            Err(e) if is_poll_tick(&e) => {
                if Instant::now() >= deadline {
                    return Err(login_timed_out("answering the Bolt handshake").into());
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn run_summary(metadata: &PackValue) -> Result<RunSummary, ClientError> {
    let fields = match metadata.get("fields") {
        Some(PackValue::List(fields)) => fields
            .iter()
            .map(|f| match f {
                PackValue::String(s) => Ok(s.clone()),
                other => Err(ClientError::Protocol(format!(
                    "a field name is a {}, not a String",
                    other.type_name()
                ))),
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let qid = match metadata.get("qid") {
        Some(PackValue::Int(q)) => *q,
        _ => -1,
    };
    Ok(RunSummary { fields, qid })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_parse_or_say_why_not() {
        let uri = BoltUri::parse("bolt://127.0.0.1:7688").unwrap();
        assert_eq!(uri.address, "127.0.0.1:7688");
        assert_eq!(
            BoltUri::parse("neo4j://db.example").unwrap().address,
            "db.example:7687"
        );
        assert_eq!(
            BoltUri::parse("bolt://[::1]:9000/").unwrap().address,
            "[::1]:9000"
        );
        assert_eq!(
            BoltUri::parse("bolt+s://h:1").unwrap().encryption,
            Encryption::Verified
        );
        assert_eq!(
            BoltUri::parse("neo4j+ssc://h").unwrap().encryption,
            Encryption::SelfSigned
        );
        assert_eq!(
            BoltUri::parse("neo4j://h").unwrap().encryption,
            Encryption::None
        );
        assert!(BoltUri::parse("bolt+x://h:1")
            .unwrap_err()
            .contains("scheme"));
        assert!(BoltUri::parse("http://h:1").unwrap_err().contains("scheme"));
        assert!(BoltUri::parse("bolt://h:x").unwrap_err().contains("port"));
        assert!(BoltUri::parse("bolt://").unwrap_err().contains("no host"));
        assert!(BoltUri::is_uri("bolt://h") && !BoltUri::is_uri("/tmp/db"));
    }

    /// A scripted server: what it answers, and what the client sent.
    struct Scripted {
        answer: std::io::Cursor<Vec<u8>>,
        sent: Vec<u8>,
    }

    impl Read for Scripted {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.answer.read(buf)
        }
    }

    impl Write for Scripted {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.sent.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn scripted(answer: Vec<u8>) -> Scripted {
        Scripted {
            answer: std::io::Cursor::new(answer),
            sent: Vec::new(),
        }
    }

    #[test]
    fn a_refused_handshake_and_a_non_bolt_port_are_clear_errors() {
        let err = BoltClient::over(scripted(vec![0, 0, 0, 0]), &Auth::None)
            .err()
            .unwrap();
        assert!(err.to_string().contains("none of Bolt"), "{err}");
        let err = BoltClient::over(scripted(b"HTTP/1.1 400".to_vec()), &Auth::None)
            .err()
            .unwrap();
        assert!(err.to_string().contains("not a Bolt version"), "{err}");
        let err = BoltClient::over(scripted(vec![0, 0, 4]), &Auth::None)
            .err()
            .unwrap();
        assert!(matches!(err, ClientError::Io(_)), "{err}");
    }

    #[test]
    fn a_failure_is_followed_by_reset_and_the_login_error_is_returned() {
        let mut answer = vec![0, 0, 4, 5];
        crate::message::success(&mut answer, &map([("server", "Neo4j/5.26.0".into())]));
        crate::message::failure(&mut answer, "Neo.ClientError.Security.Unauthorized", "no");
        crate::message::success(&mut answer, &map([]));
        let mut auth_sent = Vec::new();
        let err = match BoltClient::over(
            scripted(answer),
            &Auth::Basic {
                user: "neo4j".into(),
                password: "pw".into(),
            },
        ) {
            Err(ClientError::Server { code, message }) => {
                auth_sent.push(message);
                code
            }
            other => panic!("{:?}", other.err()),
        };
        assert_eq!(err, "Neo.ClientError.Security.Unauthorized");
        assert_eq!(auth_sent, ["no"]);
    }

    #[test]
    fn truncated_or_garbage_answers_fail_without_panicking() {
        let mut answer = vec![0, 0, 4, 5];
        answer.extend_from_slice(&[0, 3, 0xB1, 0x70]); // cut off
        assert!(matches!(
            BoltClient::over(scripted(answer), &Auth::None),
            Err(ClientError::Io(_))
        ));
        let mut answer = vec![0, 0, 4, 5];
        crate::framing::write_message(&mut answer, &[0xC7]);
        assert!(matches!(
            BoltClient::over(scripted(answer), &Auth::None),
            Err(ClientError::Protocol(_))
        ));
    }

    /// A scripted server whose answer pauses once (a read timeout) at
    /// `pause`, bytes into it.
    struct Pausing {
        answer: std::io::Cursor<Vec<u8>>,
        pause: Option<u64>,
        sent: Vec<u8>,
    }

    impl Read for Pausing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let at = self.answer.position();
            match self.pause {
                Some(pause) if at == pause => {
                    self.pause = None;
                    Err(std::io::ErrorKind::WouldBlock.into())
                }
                Some(pause) if at < pause => {
                    let room = ((pause - at) as usize).min(buf.len());
                    self.answer.read(&mut buf[..room])
                }
                _ => self.answer.read(buf),
            }
        }
    }

    impl Write for Pausing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.sent.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Logs in over a pausing script whose statement answers are `tail`,
    /// interrupts at the pause, and runs one statement.
    fn interrupted(tail: impl Fn(&mut Vec<u8>)) -> (Result<usize, ClientError>, Vec<u8>) {
        let mut answer = vec![0, 0, 4, 5];
        crate::message::success(&mut answer, &map([]));
        crate::message::success(&mut answer, &map([]));
        let pause = answer.len() as u64;
        tail(&mut answer);
        let stream = Pausing {
            answer: std::io::Cursor::new(answer),
            pause: Some(pause),
            sent: Vec::new(),
        };
        let mut client = BoltClient::over(stream, &Auth::None).unwrap();
        client.set_interrupt(Some(Arc::new(|| true)));
        let mut rows = 0;
        let outcome = client
            .stream("RETURN 1", &BTreeMap::new(), |_| rows += 1)
            .map(|_| rows);
        if !matches!(outcome, Err(ClientError::Io(_))) {
            assert_eq!(client.owed, 0, "every answer read: {outcome:?}");
            assert!(!client.interrupting);
        }
        (outcome, client.stream.sent)
    }

    const RESET: [u8; 6] = [0x00, 0x02, 0xB0, 0x0F, 0x00, 0x00];

    #[test]
    fn an_interrupt_sends_reset_and_reads_what_was_owed() {
        let run_and_record = |answer: &mut Vec<u8>| {
            crate::message::success(
                answer,
                &map([("fields", PackValue::List(vec!["1".into()]))]),
            );
            let mut body = Vec::new();
            crate::message::record_header(&mut body, 1);
            PackValue::Int(1).encode(&mut body);
            crate::framing::write_message(answer, &body);
        };
        // The RESET stopped the statement: its PULL failed.
        let (outcome, sent) = interrupted(|answer| {
            run_and_record(answer);
            crate::message::failure(answer, "Neo.TransientError.Transaction.Terminated", "reset");
            crate::message::success(answer, &map([]));
        });
        assert!(
            matches!(outcome, Err(ClientError::Interrupted)),
            "{outcome:?}"
        );
        assert!(sent.ends_with(&RESET));
        // Or was IGNORED.
        let (outcome, _) = interrupted(|answer| {
            run_and_record(answer);
            crate::message::ignored(answer);
            crate::message::success(answer, &map([]));
        });
        assert!(
            matches!(outcome, Err(ClientError::Interrupted)),
            "{outcome:?}"
        );
        // The statement was done before the RESET reached it: it stands.
        let (outcome, sent) = interrupted(|answer| {
            run_and_record(answer);
            crate::message::success(answer, &map([]));
            crate::message::success(answer, &map([]));
        });
        assert_eq!(outcome.unwrap(), 1);
        assert!(sent.ends_with(&RESET));
        // A connection that closes meanwhile is an I/O error, not a hang.
        let (outcome, _) = interrupted(run_and_record);
        assert!(matches!(outcome, Err(ClientError::Io(_))), "{outcome:?}");
    }
}
