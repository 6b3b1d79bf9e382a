//! The Bolt server state machine of one connection.
//!
//! States as the Bolt documentation names them: NEGOTIATION (after the
//! handshake, waiting for HELLO), AUTHENTICATION (5.1+: waiting for LOGON),
//! READY, STREAMING, TX_READY, TX_STREAMING, FAILED, INTERRUPTED and
//! DEFUNCT. [`Session::handle`] takes one message and writes its responses;
//! it never blocks a thread: every statement (on a native database or a
//! graph source) is planned and run by jobs on the engine's worker pool,
//! and the connection's task only awaits their answers. Only a wait for
//! the writer lock and a commit (which waits for the log's sync) use one of
//! tokio's blocking threads (waiting threads, not compute threads).
//!
//! An explicit transaction takes the writer lock at its first statement
//! that writes, not at BEGIN: until then it reads one snapshot (taken at
//! its first statement) and holds no lock, so read transactions (what the
//! drivers' `execute_read` and `execute_query` send) never wait for each
//! other or for writers. A transaction that read before it writes checks,
//! once it has the lock, that nothing was committed since its snapshot;
//! if something was, it is rolled back with
//! `Neo.TransientError.Transaction.Outdated`, which managed transactions
//! retry.
//!
//! INTERRUPTED: the connection's reader sees a RESET as soon as it arrives
//! and calls [`Interrupt::reset_arrived`], which stops the running query at
//! once; the session then answers IGNORED to every message queued before
//! that RESET and SUCCESS to the RESET itself.

use crate::admin;
use crate::auth::{LoginError, Need, User, UserStore};
use crate::handshake::Version;
use crate::message::{self, Request};
use crate::packstream::{map, PackValue};
use crate::registry::{DatabaseEntry, Registry, NEO4J_COMPATIBLE_VERSION};
use crate::status::{codes, Failure};
use crate::stream::{Next, ResultBuffer, StreamLimits};
use crate::transactions::{self, Owner, Registration, Running, Transactions, Viewer};
use crate::user_commands::{self, UserCommand};
use crate::values::{self, ValueWriter};
use rhizome_common::Value;
use rhizome_engine::{
    PlanDescription, QueryOptions, QueryResult, StatementInfo, Transaction, WriteCounters,
};
use rhizome_exec::scheduler::{CancelToken, ClientSession, JobOptions, Task, WorkerPool};
use rhizome_storage::Snapshot;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncWrite, AsyncWriteExt};

mod login;
mod pull;
mod run;
mod tx;

/// A connection's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Handshake done, waiting for HELLO.
    Negotiation,
    /// HELLO done (5.1+), waiting for LOGON.
    Authentication,
    /// Ready for a statement or a transaction.
    Ready,
    /// An autocommit result is open.
    Streaming,
    /// An explicit transaction is open, no result open.
    TxReady,
    /// An explicit transaction has open results.
    TxStreaming,
    /// A request failed; everything is ignored until RESET.
    Failed,
    /// A RESET is on its way; everything before it is ignored.
    Interrupted,
    /// The connection is finished and will be closed.
    Defunct,
}

/// Settings of every session of a server.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The hand-off sizes of streamed results.
    pub stream: StreamLimits,
    /// Longest an explicit transaction may stay open (and any statement run).
    pub transaction_timeout: Option<Duration>,
    /// Workers one query may use.
    pub threads: Option<usize>,
    /// Memory one query may use.
    pub memory_limit: Option<usize>,
    /// Memory all queries of the server share.
    pub memory_pool: Option<Arc<rhizome_engine::MemoryPool>>,
    /// The `host:port` drivers should route to (ROUTE answers).
    pub advertised_address: String,
    /// The transactions running on the server (SHOW / TERMINATE TRANSACTIONS).
    pub transactions: Arc<Transactions>,
    /// The scheduler tenant of each user ([`crate::tenants`]).
    pub tenants: Arc<crate::tenants::Tenants>,
}

impl Default for SessionConfig {
    fn default() -> SessionConfig {
        SessionConfig {
            stream: StreamLimits::default(),
            transaction_timeout: None,
            threads: None,
            memory_limit: None,
            memory_pool: None,
            advertised_address: "127.0.0.1:7687".into(),
            transactions: Arc::default(),
            tenants: Arc::default(),
        }
    }
}

/// Lets the connection's reader stop the running query of a session.
#[derive(Default)]
pub struct Interrupt {
    pending_resets: AtomicUsize,
    running: Mutex<Vec<Arc<ResultBuffer>>>,
}

impl Interrupt {
    /// A RESET was read: stop what runs; the session ignores what comes
    /// before the RESET.
    pub fn reset_arrived(&self) {
        self.pending_resets.fetch_add(1, Ordering::SeqCst);
        self.stop_all();
    }

    /// Stops every running query of the session (disconnect, shutdown).
    pub fn stop_all(&self) {
        for buffer in self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            buffer.close();
        }
    }

    /// Lists `buffer` until the returned guard is dropped (however its
    /// result ends: consumed, discarded, failed, reset or the connection
    /// gone), so the list holds only what runs or waits to be pulled.
    fn track(self: &Arc<Self>, buffer: &Arc<ResultBuffer>) -> Tracked {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        running.push(buffer.clone());
        Tracked {
            interrupt: self.clone(),
            buffer: buffer.clone(),
        }
    }

    fn forget(&self, buffer: &Arc<ResultBuffer>) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        running.retain(|b| !Arc::ptr_eq(b, buffer));
    }

    /// How many result buffers are listed (tests: none once results end).
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> usize {
        self.running.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// Closes a result buffer when dropped, unless taken out.
struct CloseOnDrop(Option<Arc<ResultBuffer>>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let Some(buffer) = self.0.take() {
            buffer.close();
        }
    }
}

/// What [`Session::start_on_pool`] did.
enum PoolStart {
    /// The read runs; its result and columns.
    Started(Box<OpenResult>, Vec<String>),
    /// The statement writes, or the user may not read, and it was not
    /// started: its description and (`EXPLAIN` / `PROFILE`) plan.
    NotStarted(StatementInfo, Option<PlanDescription>),
}

/// What `SHOW` / `TERMINATE TRANSACTIONS` answer: rows, or the Cypher (and
/// its parameters) that shapes them.
enum Listed {
    /// The rows, as they are.
    Answer(admin::ServerResult),
    /// The shaping Cypher and its parameters.
    Shape(String, BTreeMap<String, Value>),
}

/// The state a read started on the pool reads.
struct ReadOn {
    /// The snapshot it reads (and its entities are rendered from).
    snapshot: Snapshot,
    /// True inside a transaction that holds the writer lock.
    holding_writer: bool,
    /// When it (its transaction) must end.
    deadline: Option<Instant>,
}

/// A result buffer listed in its session's [`Interrupt`]; dropping it takes
/// the buffer off the list. (Forgetting it by hand missed results whose
/// stream had ended: every fully pulled read stayed listed, with its buffer,
/// for the life of the connection — the soak's memory growth.)
struct Tracked {
    interrupt: Arc<Interrupt>,
    buffer: Arc<ResultBuffer>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.interrupt.forget(&self.buffer);
    }
}

/// Whether the connection goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next message.
    Continue,
    /// Flush and close.
    Close,
}

/// Where the rows of an open result come from.
enum Rows {
    /// Streamed from a running query.
    Stream(Arc<ResultBuffer>),
    /// Computed already (writes, server statements).
    Done(std::vec::IntoIter<Vec<Value>>, Option<Box<QueryResult>>),
    /// Rows made as PackStream already (virtual entities), one row each.
    Packed(std::vec::IntoIter<Vec<PackValue>>),
}

/// A result the client has not consumed yet.
struct OpenResult {
    qid: i64,
    width: usize,
    rows: Rows,
    /// The rows of the current block not sent yet.
    pending: VecDeque<Value>,
    /// The snapshot entities are looked up in.
    graph: Option<Snapshot>,
    /// The statement text (error excerpts).
    query: String,
    db: String,
    started: Instant,
    updating: bool,
    /// The bookmark of an autocommit write.
    bookmark: Option<String>,
    /// The transaction it belongs to (terminated: the client is told).
    entry: Arc<Running>,
    /// An autocommit statement's own listing, ended (dropped) with the result.
    _registration: Option<Registration>,
    /// The plan of an `EXPLAIN` / `PROFILE` statement.
    plan: Option<PlanDescription>,
    /// True if the statement ran over a graph source.
    over_source: bool,
    /// A streamed result's listing for RESET and disconnects (ends with it).
    _tracked: Option<Tracked>,
}

impl OpenResult {
    /// A result of `width` columns with `rows`, of statement `query` on
    /// database `db` listed in `entry`; what else it has is set after.
    fn new(
        (qid, started): (i64, Instant),
        width: usize,
        rows: Rows,
        query: &str,
        db: &str,
        entry: Arc<Running>,
    ) -> OpenResult {
        OpenResult {
            qid,
            width,
            rows,
            pending: VecDeque::new(),
            graph: None,
            query: query.to_string(),
            db: db.to_string(),
            started,
            updating: false,
            bookmark: None,
            entry,
            _registration: None,
            plan: None,
            over_source: false,
            _tracked: None,
        }
    }
}

/// The outcome of taking rows from a result.
enum Taken {
    /// More rows remain.
    More,
    /// All rows were sent; the summary metadata.
    Done(PackValue),
}

/// An explicit transaction.
struct OpenTx {
    /// Its listing, which holds the write transaction between statements
    /// once it has one (a write statement's job has it while it runs).
    registration: Registration,
    db: DatabaseEntry,
    deadline: Option<Instant>,
    next_qid: i64,
    /// The snapshot its reads read while it holds no writer lock (taken
    /// by its first read; `None` before that and once it writes).
    reading: Option<Snapshot>,
    /// True once it holds the writer lock (its first write).
    writing: bool,
}

/// One connection's protocol state.
pub struct Session {
    version: Version,
    state: State,
    registry: Arc<Registry>,
    config: Arc<SessionConfig>,
    interrupt: Arc<Interrupt>,
    connection_id: String,
    client_address: String,
    user: String,
    /// The users, when authentication is on.
    users: Option<Arc<UserStore>>,
    results: Vec<OpenResult>,
    tx: Option<OpenTx>,
    out: Vec<u8>,
    scratch: Vec<u8>,
    /// The connection's place among its tenant's sessions in the worker
    /// pool: its statements' jobs and tasks go before those of sessions
    /// that have used more CPU (docs/scheduling.md).
    clock: Arc<ClientSession>,
}

/// True if `RHIZOME_BOLT_TRACE` is set: every request and state change is logged.
fn trace() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("RHIZOME_BOLT_TRACE").is_some())
}

/// Flushes `out` to the writer once it holds this much.
const FLUSH_AT: usize = 64 * 1024;

impl Session {
    /// A session after a handshake that settled on `version`.
    pub fn new(
        version: Version,
        registry: Arc<Registry>,
        config: Arc<SessionConfig>,
        interrupt: Arc<Interrupt>,
        connection_id: String,
    ) -> Session {
        Session {
            version,
            state: State::Negotiation,
            registry,
            config,
            interrupt,
            connection_id,
            client_address: String::new(),
            user: String::new(),
            users: None,
            results: Vec::new(),
            tx: None,
            out: Vec::with_capacity(FLUSH_AT),
            scratch: Vec::new(),
            clock: ClientSession::new(),
        }
    }

    /// Turns authentication on: logins are checked against `users` and
    /// statements against the user's roles.
    pub fn with_users(mut self, users: Option<Arc<UserStore>>) -> Session {
        self.users = users;
        self
    }

    /// A session whose user was authenticated elsewhere (the HTTP API
    /// checks credentials itself): READY, as after HELLO and LOGON.
    pub fn logged_in(mut self, user: impl Into<String>) -> Session {
        self.user = user.into();
        self.state = State::Ready;
        self
    }

    /// Names the client's address (SHOW TRANSACTIONS shows it).
    pub fn with_client_address(mut self, address: String) -> Session {
        self.client_address = address;
        self
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// The authenticated user (empty before authentication).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Handles one message (its bytes, unframed), writing the responses to
    /// `writer` (flushed before it returns).
    pub async fn handle<W: AsyncWrite + Unpin>(
        &mut self,
        bytes: &[u8],
        writer: &mut W,
    ) -> std::io::Result<Flow> {
        let flow = match message::parse(bytes) {
            Ok(request) => {
                if trace() {
                    crate::log(format_args!(
                        "{} <- {request:?} in {:?}",
                        self.connection_id, self.state
                    ));
                }
                let flow = self.request(request, writer).await?;
                if trace() {
                    crate::log(format_args!(
                        "{} -> {} bytes, now {:?}",
                        self.connection_id,
                        self.out.len(),
                        self.state
                    ));
                }
                flow
            }
            Err(e) => {
                // A message that is not Bolt: the connection cannot be trusted.
                message::failure(&mut self.out, codes::REQUEST_INVALID, &e.0);
                self.state = State::Defunct;
                Flow::Close
            }
        };
        writer.write_all(&self.out).await?;
        self.out.clear();
        writer.flush().await?;
        Ok(flow)
    }

    async fn flush_if_large<W: AsyncWrite + Unpin>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        if self.out.len() >= FLUSH_AT {
            writer.write_all(&self.out).await?;
            self.out.clear();
        }
        Ok(())
    }

    fn fail(&mut self, failure: Failure) {
        message::failure(&mut self.out, failure.code, &failure.message);
        self.close_results();
        // A failed explicit transaction is rolled back at once, freeing the writer lock.
        if let Some(open) = self.tx.take() {
            if let Some(tx) = open.take() {
                tx.rollback();
            }
        }
        self.state = State::Failed;
    }

    fn success(&mut self, metadata: PackValue) {
        message::success(&mut self.out, &metadata);
    }

    async fn request<W: AsyncWrite + Unpin>(
        &mut self,
        request: Request,
        writer: &mut W,
    ) -> std::io::Result<Flow> {
        if matches!(request, Request::Goodbye) {
            self.close_results();
            self.state = State::Defunct;
            return Ok(Flow::Close);
        }
        if self.interrupt.pending_resets.load(Ordering::SeqCst) > 0 {
            if matches!(request, Request::Reset) {
                self.interrupt.pending_resets.fetch_sub(1, Ordering::SeqCst);
                self.reset().await;
            } else {
                self.state = State::Interrupted;
                message::ignored(&mut self.out);
            }
            return Ok(Flow::Continue);
        }
        match (self.state, request) {
            (State::Defunct, _) => return Ok(Flow::Close),
            (State::Negotiation, Request::Hello(extra)) => self.hello(extra).await,
            (State::Negotiation, other) => {
                message::failure(
                    &mut self.out,
                    codes::REQUEST_INVALID,
                    &format!("expected HELLO first, got {}", other.name()),
                );
                self.state = State::Defunct;
                return Ok(Flow::Close);
            }
            (State::Authentication, Request::Logon(auth)) => self.logon(auth).await,
            (_, Request::Reset) => self.reset().await,
            (State::Failed | State::Interrupted, _) => message::ignored(&mut self.out),
            (State::Authentication, other) => {
                message::failure(
                    &mut self.out,
                    codes::UNAUTHORIZED,
                    &format!("{} needs authentication first (LOGON)", other.name()),
                );
                self.state = State::Defunct;
                return Ok(Flow::Close);
            }
            (_, Request::Telemetry) => self.success(map([])),
            (State::Ready, Request::Logoff) => {
                self.user.clear();
                self.success(map([]));
                self.state = State::Authentication;
            }
            (State::Ready, Request::Route { routing, db }) => self.route(routing, db),
            (State::Ready, Request::Begin(extra)) => self.begin(extra),
            (
                State::Ready | State::TxReady | State::TxStreaming,
                Request::Run {
                    query,
                    params,
                    extra,
                },
            ) => self.run(query, params, extra).await,
            (State::Streaming | State::TxStreaming, Request::Pull { n, qid }) => {
                self.pull(n, qid, false, writer).await?
            }
            (State::Streaming | State::TxStreaming, Request::Discard { n, qid }) => {
                self.pull(n, qid, true, writer).await?
            }
            // No result is open (a RESET ended it, as the JavaScript driver
            // does before it discards on closing a session): nothing to send.
            (State::Ready | State::TxReady, Request::Pull { .. } | Request::Discard { .. }) => {
                self.success(map([]))
            }
            (State::TxReady | State::TxStreaming, Request::Commit) => self.commit().await,
            (State::TxReady | State::TxStreaming, Request::Rollback) => self.rollback().await,
            (state, other) => self.fail(Failure::invalid(format!(
                "{} is not allowed in state {state:?}",
                other.name()
            ))),
        }
        // A refused login leaves the connection DEFUNCT: it closes.
        Ok(if self.state == State::Defunct {
            Flow::Close
        } else {
            Flow::Continue
        })
    }
}

impl OpenTx {
    /// Takes the transaction to run a statement in or end it (`None` if it
    /// was terminated).
    fn take(&self) -> Option<Transaction> {
        self.registration.entry().take()
    }

    fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

fn tx_timeout(extra: &PackValue) -> Option<Duration> {
    match extra.get("tx_timeout") {
        Some(PackValue::Int(ms)) if *ms > 0 => Some(Duration::from_millis(*ms as u64)),
        _ => None,
    }
}

fn bookmark(commit: u64) -> String {
    format!("rhizome:{commit}")
}

/// The failure of a transaction whose snapshot a commit made stale before
/// it could write (retryable: the drivers run it again).
fn outdated() -> Failure {
    Failure::new(
        "Neo.TransientError.Transaction.Outdated",
        "the transaction read a state that another transaction's commit changed before this \
         one could write; it was rolled back, run it again",
    )
}

fn timed_out() -> Failure {
    Failure::new(
        codes::TIMED_OUT,
        "the transaction ran longer than its timeout and was rolled back",
    )
}

/// The failure of a write on the graph-source database `name`.
fn read_only(name: &str, source: &rhizome_sources::SourceEngine) -> Failure {
    Failure::new(
        codes::READ_ONLY,
        format!(
            "database `{name}` is {}, which is read-only: statements that create, change or \
             delete data or schema cannot run on it",
            source.source().describe()
        ),
    )
}

fn database_not_found(name: &str) -> Failure {
    Failure::new(
        codes::DATABASE_NOT_FOUND,
        format!("there is no database named `{name}` on this server"),
    )
}

fn has_updates(c: &WriteCounters) -> bool {
    *c != WriteCounters::default()
}

fn stats(c: &WriteCounters) -> PackValue {
    let all = [
        ("nodes-created", c.nodes_created),
        ("nodes-deleted", c.nodes_deleted),
        ("relationships-created", c.relationships_created),
        ("relationships-deleted", c.relationships_deleted),
        ("properties-set", c.properties_set),
        ("labels-added", c.labels_added),
        ("labels-removed", c.labels_removed),
        ("indexes-added", c.indexes_added),
        ("indexes-removed", c.indexes_removed),
        ("constraints-added", c.constraints_added),
        ("constraints-removed", c.constraints_removed),
    ];
    let mut entries: Vec<(String, PackValue)> = all
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| (k.to_string(), PackValue::Int(*n as i64)))
        .collect();
    entries.push(("contains-updates".into(), true.into()));
    PackValue::Map(entries)
}

/// Writes a whole PackStream value framed as a message (tests, fixtures).
pub fn framed(value: &PackValue) -> Vec<u8> {
    let mut body = Vec::new();
    value.encode(&mut body);
    let mut out = Vec::new();
    crate::framing::write_message(&mut out, &body);
    out
}

#[cfg(test)]
#[path = "../session_tests.rs"]
mod tests;
