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

    async fn hello(&mut self, extra: PackValue) {
        if !self.version_at_least(Version::V5_1) {
            // Before 5.1 the credentials come with HELLO.
            if let Err(failure) = self.authenticate(&extra).await {
                message::failure(&mut self.out, failure.code, &failure.message);
                self.state = State::Defunct;
                return;
            }
        }
        let mut metadata = vec![
            (
                "server".to_string(),
                PackValue::from(format!("Neo4j/{NEO4J_COMPATIBLE_VERSION}")),
            ),
            (
                "connection_id".to_string(),
                self.connection_id.as_str().into(),
            ),
        ];
        if self.version.is_v5() {
            metadata.push(("hints".to_string(), map([])));
        }
        self.success(PackValue::Map(metadata));
        self.state = if self.version_at_least(Version::V5_1) {
            State::Authentication
        } else {
            State::Ready
        };
    }

    fn version_at_least(&self, v: Version) -> bool {
        self.version >= v
    }

    /// Checks credentials. With authentication off (allowed on loopback
    /// only) every scheme is accepted and the client is `neo4j`; with it on,
    /// only `basic` with a user's right password (argon2, off the I/O
    /// threads), and repeated failures are rate-limited and logged.
    async fn authenticate(&mut self, auth: &PackValue) -> Result<(), Failure> {
        let text = |key: &str| match auth.get(key) {
            Some(PackValue::String(s)) => Some(s.clone()),
            _ => None,
        };
        let Some(users) = self.users.clone() else {
            self.user = "neo4j".into();
            return Ok(());
        };
        let unauthorized = || {
            Failure::new(
                codes::UNAUTHORIZED,
                "The client is unauthorized due to authentication failure.",
            )
        };
        let (Some("basic"), Some(principal), Some(credentials)) = (
            text("scheme").as_deref(),
            text("principal"),
            text("credentials"),
        ) else {
            crate::log(format_args!(
                "{}: failed login: the server needs scheme `basic` with a user name and password",
                self.connection_id
            ));
            return Err(unauthorized());
        };
        let name = principal.clone();
        let login = tokio::task::spawn_blocking(move || users.login(&name, &credentials))
            .await
            .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?;
        match login {
            Ok(_) => {
                self.user = principal;
                Ok(())
            }
            Err(LoginError::Refused) => {
                crate::log(format_args!(
                    "{}: failed login for user `{principal}`",
                    self.connection_id
                ));
                Err(unauthorized())
            }
            Err(LoginError::RateLimited) => {
                crate::log(format_args!(
                    "{}: login for user `{principal}` refused: too many failed attempts, locked for {} s",
                    self.connection_id,
                    crate::auth::LOCKOUT.as_secs()
                ));
                Err(Failure::new(
                    "Neo.ClientError.Security.AuthenticationRateLimit",
                    "The client has provided incorrect authentication details too many times in a row.",
                ))
            }
        }
    }

    async fn logon(&mut self, auth: PackValue) {
        match self.authenticate(&auth).await {
            Ok(()) => {
                self.success(map([]));
                self.state = State::Ready;
            }
            Err(failure) => {
                message::failure(&mut self.out, failure.code, &failure.message);
                self.state = State::Defunct;
            }
        }
    }

    /// The logged-in user as stored now (`None` without authentication).
    fn current_user(&self) -> Option<Result<User, Failure>> {
        let users = self.users.as_ref()?;
        Some(users.get(&self.user).ok_or_else(|| {
            Failure::new(
                codes::UNAUTHORIZED,
                format!("the user `{}` no longer exists", self.user),
            )
        }))
    }

    /// Fails unless the user may do `need` (and need not change its password first).
    fn check(&self, need: Need, what: &str) -> Result<(), Failure> {
        let Some(user) = self.current_user() else {
            return Ok(());
        };
        let user = user?;
        if user.change_required {
            return Err(Failure::new(
                "Neo.ClientError.Security.CredentialsExpired",
                "The password must be changed first: ALTER CURRENT USER SET PASSWORD FROM 'old' TO 'new'",
            ));
        }
        if user.may(need) {
            Ok(())
        } else {
            Err(Failure::new(
                "Neo.ClientError.Security.Forbidden",
                format!(
                    "{what} is not allowed for user `{}` with roles {:?}",
                    self.user,
                    user.roles.iter().map(|r| r.name()).collect::<Vec<_>>()
                ),
            ))
        }
    }

    /// Runs a user or role command.
    async fn user_command(&mut self, command: UserCommand) -> Result<admin::ServerResult, Failure> {
        let Some(users) = self.users.clone() else {
            return Err(Failure::new(
                "Neo.ClientError.Statement.NotSystemDatabaseError",
                "users and roles exist only when the server runs with authentication (auth = basic)",
            ));
        };
        if let Some(need) = command.need() {
            self.check(need, "managing users and roles")?;
        }
        let current = self.user.clone();
        tokio::task::spawn_blocking(move || user_commands::run(command, &users, &current))
            .await
            .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?
    }

    fn route(&mut self, _routing: PackValue, db: Option<String>) {
        let Some(entry) = self.registry.get(db.as_deref()) else {
            return self.fail(database_not_found(db.as_deref().unwrap_or("")));
        };
        let address = PackValue::List(vec![self.config.advertised_address.as_str().into()]);
        let server = |role: &str| map([("addresses", address.clone()), ("role", role.into())]);
        let table = map([
            ("ttl", 300.into()),
            ("db", entry.name.as_str().into()),
            (
                "servers",
                PackValue::List(vec![server("WRITE"), server("READ"), server("ROUTE")]),
            ),
        ]);
        self.success(map([("rt", table)]));
    }

    async fn reset(&mut self) {
        self.close_results();
        if let Some(open) = self.tx.take() {
            if let Some(tx) = open.take() {
                tx.rollback();
            }
        }
        self.success(map([]));
        self.state = State::Ready;
    }

    /// Stops and forgets every open result.
    fn close_results(&mut self) {
        for result in &mut self.results {
            if let Rows::Stream(buffer) = &result.rows {
                buffer.close();
            }
        }
        self.results.clear();
    }

    /// Makes `registration` the session's open transaction on `entry` and
    /// answers BEGIN: the one way both native and source transactions start.
    fn enter_tx(
        &mut self,
        registration: Registration,
        entry: DatabaseEntry,
        timeout: Option<Duration>,
    ) {
        self.tx = Some(OpenTx {
            registration,
            db: entry,
            deadline: timeout.map(|t| Instant::now() + t),
            next_qid: 0,
            reading: None,
            writing: false,
        });
        self.success(map([]));
        self.state = State::TxReady;
    }

    /// Opens an explicit transaction. It takes no lock: the writer lock
    /// is taken by its first statement that writes (see the module docs).
    fn begin(&mut self, extra: PackValue) {
        let db = match extra.get("db") {
            Some(PackValue::String(s)) => Some(s.clone()),
            _ => None,
        };
        let Some(entry) = self.registry.get(db.as_deref()).cloned() else {
            return self.fail(database_not_found(db.as_deref().unwrap_or("")));
        };
        let timeout = tx_timeout(&extra).or(self.config.transaction_timeout);
        let registration = self
            .config
            .transactions
            .register(&entry.name, self.owner(), None);
        self.enter_tx(registration, entry, timeout);
    }

    /// Waits for `entry`'s writer lock on a blocking thread, listed in
    /// `running` as blocked meanwhile: SHOW TRANSACTIONS shows the wait and
    /// TERMINATE ends it at once (a lock the abandoned wait still gets is
    /// given back as soon as it does).
    async fn lock_writer(
        entry: &DatabaseEntry,
        running: &Arc<Running>,
    ) -> Result<Transaction, Failure> {
        let engine = entry.engine.clone();
        running.waits();
        let mut waiting = tokio::task::spawn_blocking(move || engine.begin());
        let began = tokio::select! {
            began = &mut waiting => began,
            _ = running.until_terminated() => {
                tokio::spawn(async move {
                    if let Ok(Ok(tx)) = waiting.await {
                        tx.rollback();
                    }
                });
                return Err(transactions::terminated());
            }
        };
        running.stops_waiting();
        match began {
            Ok(Ok(tx)) if running.is_terminated() => {
                tx.rollback();
                Err(transactions::terminated())
            }
            Ok(Ok(tx)) => Ok(tx),
            Ok(Err(e)) => Err(Failure::from_error(&e, "")),
            Err(e) => Err(Failure::new(codes::UNKNOWN, e.to_string())),
        }
    }

    /// Gives the open transaction the writer lock for its first write. If
    /// it read before, its reads must still hold: a commit since its
    /// snapshot rolls it back with a retryable `Outdated` failure.
    async fn upgrade(&mut self, running: &Arc<Running>) -> Result<(), Failure> {
        let Some(open) = self.tx.as_mut() else {
            return Ok(());
        };
        if open.writing {
            return Ok(());
        }
        let tx = Session::lock_writer(&open.db, running).await?;
        if let Some(seen) = open.reading.take() {
            if !tx.snapshot().is_some_and(|now| now.same_state(&seen)) {
                tx.rollback();
                return Err(outdated());
            }
        }
        open.writing = true;
        running.put(Some(tx));
        Ok(())
    }

    async fn commit(&mut self) {
        self.finish_open_results();
        let Some(open) = self.tx.take() else {
            return self.fail(Failure::invalid("no transaction is open"));
        };
        if open.expired() {
            if let Some(tx) = open.take() {
                tx.rollback();
            }
            return self.fail(timed_out());
        }
        if open.db.source.is_some() || !open.writing {
            // Nothing to commit: its statements only read (a source, or a
            // snapshot without the writer lock).
            if open.registration.entry().is_terminated() {
                return self.fail(transactions::terminated());
            }
            let metadata = match open.db.source {
                Some(_) => map([]),
                None => map([("bookmark", bookmark(0).into())]),
            };
            self.success(metadata);
            self.state = State::Ready;
            return;
        }
        let Some(tx) = open.take() else {
            return self.fail(transactions::terminated());
        };
        match tokio::task::spawn_blocking(move || tx.commit()).await {
            Ok(Ok(info)) => {
                self.success(map([("bookmark", bookmark(info.commit).into())]));
                self.state = State::Ready;
            }
            Ok(Err(e)) => self.fail(Failure::from_error(&e, "")),
            Err(e) => self.fail(Failure::new(codes::UNKNOWN, e.to_string())),
        }
    }

    async fn rollback(&mut self) {
        self.close_results();
        if let Some(open) = self.tx.take() {
            if let Some(tx) = open.take() {
                tx.rollback();
            }
        }
        self.success(map([]));
        self.state = State::Ready;
    }

    /// Lets every open result of the transaction run to its end, its rest
    /// kept in memory for the client to pull, before its next statement or
    /// its commit. The next statement need not wait for them: they read
    /// states that its writes do not change.
    fn finish_open_results(&mut self) {
        for result in &self.results {
            if let Rows::Stream(buffer) = &result.rows {
                buffer.unbound();
            }
        }
    }

    async fn run(&mut self, query: String, params: PackValue, extra: PackValue) {
        let params = match values::parameters(params) {
            Ok(p) => p,
            Err(why) => return self.fail(Failure::invalid(why)),
        };
        let in_tx = self.tx.is_some();
        if in_tx {
            self.finish_open_results();
            if self.tx.as_ref().is_some_and(OpenTx::expired) {
                return self.fail(timed_out());
            }
        }
        let entry = match &self.tx {
            Some(open) => open.db.clone(),
            None => {
                let db = match extra.get("db") {
                    Some(PackValue::String(s)) => Some(s.clone()),
                    _ => None,
                };
                match self.registry.get(db.as_deref()) {
                    Some(entry) => entry.clone(),
                    None => return self.fail(database_not_found(db.as_deref().unwrap_or(""))),
                }
            }
        };
        let qid = match self.tx.as_mut() {
            Some(open) => {
                open.next_qid += 1;
                open.next_qid - 1
            }
            None => -1,
        };
        // The statement's listing: its transaction's, or one of its own.
        let (running, registration) = match &self.tx {
            Some(open) => (open.registration.entry().clone(), None),
            None => {
                let registration =
                    self.config
                        .transactions
                        .register(&entry.name, self.owner(), None);
                (registration.entry().clone(), Some(registration))
            }
        };
        if running.is_terminated() {
            return self.fail(transactions::terminated());
        }
        running.start_query(&self.config.transactions, &query);
        let started = Instant::now();
        let mut shaping = None;
        let answer = match (
            transactions::parse(&query, &params),
            user_commands::parse(&query, &params),
        ) {
            (Some(Ok(command)), _) => match self.transaction_command(command, &params) {
                Ok(Listed::Answer(answer)) => Some(Ok(answer)),
                Ok(Listed::Shape(cypher, rows)) => {
                    shaping = Some((cypher, rows));
                    None
                }
                Err(failure) => Some(Err(failure)),
            },
            (Some(Err(failure)), _) => Some(Err(failure)),
            (None, Some(Ok(command))) => Some(self.user_command(command).await),
            (None, Some(Err(failure))) => Some(Err(failure)),
            (None, None) => {
                let roles = match self.current_user() {
                    Some(Ok(user)) => user.roles.iter().map(|r| r.name().to_string()).collect(),
                    _ => vec!["admin".to_string()],
                };
                admin::answer(&query, &self.registry, &self.user, &roles).map(Ok)
            }
        };
        let answer = match answer {
            Some(Ok(answer)) => Some(answer),
            Some(Err(failure)) => return self.fail(failure),
            None => None,
        };
        let opened = if let Some(shaping) = shaping {
            let listing = (running.clone(), registration);
            self.start_shaping(&entry, shaping, (qid, started), listing)
                .await
        } else if answer.is_none() && crate::schema_view::is_call(&query) {
            self.schema_view(&entry, &query, (qid, started), running.clone())
                .map(|mut result| {
                    result._registration = registration;
                    let columns = crate::schema_view::COLUMNS.map(String::from).to_vec();
                    (result, columns)
                })
        } else if let Some(answer) = answer {
            let mut result = OpenResult::new(
                (qid, started),
                answer.columns.len(),
                Rows::Done(answer.rows.into_iter(), None),
                &query,
                &entry.name,
                running.clone(),
            );
            result._registration = registration;
            Ok((result, answer.columns))
        } else {
            let listing = (running.clone(), registration);
            self.start(entry, query, params, &extra, (qid, started), listing)
                .await
        };
        match opened {
            Ok((result, columns)) => {
                let fields = PackValue::List(columns.into_iter().map(PackValue::String).collect());
                let mut metadata = vec![
                    ("fields".to_string(), fields),
                    (
                        "t_first".to_string(),
                        PackValue::Int(started.elapsed().as_millis() as i64),
                    ),
                ];
                if in_tx {
                    metadata.push(("qid".to_string(), PackValue::Int(qid)));
                }
                self.results.push(result);
                self.success(PackValue::Map(metadata));
                self.state = if in_tx {
                    State::TxStreaming
                } else {
                    State::Streaming
                };
            }
            Err(_) if running.is_terminated() => self.fail(transactions::terminated()),
            Err(failure) => self.fail(failure),
        }
    }

    /// Answers `SHOW TRANSACTIONS` or `TERMINATE TRANSACTIONS`. The rows of
    /// a SHOW with `YIELD` or `WHERE` are to be shaped by the engine: they
    /// come back as the shaping Cypher and its parameters (the statement's
    /// own, and the rows in [`transactions::ROWS_PARAMETER`]), which
    /// [`Session::start_shaping`] runs on the pool like any read.
    fn transaction_command(
        &mut self,
        command: transactions::Command,
        params: &BTreeMap<String, Value>,
    ) -> Result<Listed, Failure> {
        self.check(Need::Read, "listing transactions")?;
        let viewer = Viewer {
            user: &self.user,
            admin: self.is_admin(),
        };
        let answer = self.config.transactions.answer(&command, &viewer);
        let transactions::Command::Show(_, Some(shaping)) = command else {
            return Ok(Listed::Answer(answer));
        };
        let rows = answer
            .rows
            .into_iter()
            .map(|row| Value::Map(answer.columns.iter().cloned().zip(row).collect()))
            .collect();
        let mut params = params.clone();
        params.insert(transactions::ROWS_PARAMETER.to_string(), Value::List(rows));
        Ok(Listed::Shape(shaping, params))
    }

    /// Starts the Cypher that shapes `SHOW TRANSACTIONS … YIELD …` rows as
    /// one job on the worker pool, as every read starts
    /// ([`Session::start_on_pool`]): no blocking thread runs it, and its
    /// rows stream. It runs over the database's native base (it reads only
    /// its parameters; over a graph source that base is empty), in the
    /// transaction's state inside one. A tail that would write (`YIELD x
    /// CREATE …`) is refused: listing transactions never changes data.
    async fn start_shaping(
        &mut self,
        entry: &DatabaseEntry,
        (query, params): (String, BTreeMap<String, Value>),
        (qid, started): (i64, Instant),
        (running, registration): (Arc<Running>, Option<Registration>),
    ) -> Result<(OpenResult, Vec<String>), Failure> {
        let native = DatabaseEntry {
            source: None,
            ..entry.clone()
        };
        let read = self.read_on(&native).ok_or_else(transactions::terminated)?;
        match self
            .start_on_pool(
                &native,
                (&query, params),
                (qid, started),
                &running,
                read,
                (false, true),
            )
            .await?
        {
            PoolStart::Started(mut result, columns) => {
                result.over_source = false;
                result._registration = registration;
                Ok((*result, columns))
            }
            PoolStart::NotStarted(..) => Err(Failure::new(
                transactions::SYNTAX,
                "SHOW TRANSACTIONS … YIELD … only reads: its WHERE, YIELD and RETURN \
                 may not write",
            )),
        }
    }

    /// The result of `CALL db.schema.visualization()` on what the
    /// statement would read (the transaction's state in one).
    fn schema_view(
        &mut self,
        entry: &DatabaseEntry,
        query: &str,
        (qid, started): (i64, Instant),
        running: Arc<Running>,
    ) -> Result<OpenResult, Failure> {
        self.check(Need::Read, "reading")?;
        let graph = match &entry.source {
            Some(source) => source.snapshot(None),
            None => self
                .tx
                .as_ref()
                .and_then(|open| {
                    open.reading
                        .clone()
                        .or_else(|| open.registration.entry().snapshot())
                })
                .unwrap_or_else(|| entry.engine.database().snapshot()),
        };
        let row = crate::schema_view::visualization(&graph, self.version.is_v5());
        Ok(OpenResult::new(
            (qid, started),
            row.len(),
            Rows::Packed(vec![row].into_iter()),
            query,
            &entry.name,
            running,
        ))
    }

    /// Who runs this connection's transactions (SHOW TRANSACTIONS).
    fn owner(&self) -> Owner {
        Owner {
            connection_id: self.connection_id.clone(),
            client_address: self.client_address.clone(),
            username: self.user.clone(),
            tenant: self.config.tenants.of(&self.user).name().to_string(),
        }
    }

    /// True if the user is an administrator (always, without authentication).
    fn is_admin(&self) -> bool {
        match self.current_user() {
            None => true,
            Some(Ok(user)) => user.may(Need::Admin),
            Some(Err(_)) => false,
        }
    }

    fn query_options(&self, cancel: Arc<CancelToken>, deadline: Option<Instant>) -> QueryOptions {
        let timeout = match deadline {
            Some(d) => Some(d.saturating_duration_since(Instant::now())),
            None => self.config.transaction_timeout,
        };
        QueryOptions {
            threads: self.config.threads,
            timeout,
            memory_limit: self.config.memory_limit,
            memory_pool: self.config.memory_pool.clone(),
            cancel: Some(cancel),
            // This statement's thread only waits: every task runs on the
            // engine's worker pool (docs/server.md, Threads).
            caller_waits: true,
            tenant: Some(self.config.tenants.of(&self.user)),
            session: Some(self.clock.clone()),
            ..QueryOptions::default()
        }
    }

    /// The state a read of this session reads now: a fresh snapshot
    /// outside a transaction, the snapshot of a transaction that has only
    /// read (taken now if it is its first read), or the state of a write
    /// transaction (its own writes included). `None` if the transaction's
    /// state is gone (terminated).
    fn read_on(&self, entry: &DatabaseEntry) -> Option<ReadOn> {
        let Some(open) = &self.tx else {
            return Some(ReadOn {
                snapshot: entry.engine.database().snapshot(),
                holding_writer: false,
                deadline: self.config.transaction_timeout.map(|t| Instant::now() + t),
            });
        };
        let snapshot = match (open.writing, &open.reading) {
            (true, _) => open.registration.entry().snapshot()?,
            (false, Some(seen)) => seen.clone(),
            (false, None) => entry.engine.database().snapshot(),
        };
        Some(ReadOn {
            snapshot,
            holding_writer: open.writing,
            deadline: open.deadline,
        })
    }

    /// Starts a statement: checks it, then runs it (a read streams; a write
    /// runs to its end here, its rows kept).
    async fn start(
        &mut self,
        entry: DatabaseEntry,
        query: String,
        params: BTreeMap<String, Value>,
        extra: &PackValue,
        (qid, started): (i64, Instant),
        (running, registration): (Arc<Running>, Option<Registration>),
    ) -> Result<(OpenResult, Vec<String>), Failure> {
        // Only a statement that names EXPLAIN or PROFILE can have a plan to
        // send (the engine decides; this spares other statements a lookup).
        let may_have_plan = query
            .as_bytes()
            .windows(7)
            .any(|w| w.eq_ignore_ascii_case(b"EXPLAIN") || w.eq_ignore_ascii_case(b"PROFILE"));
        // Every statement is planned by one job on the pool, which also
        // starts it there if it reads: no thread waits for it. A write
        // comes back described, to run below.
        let Some(read) = self.read_on(&entry) else {
            return Err(transactions::terminated());
        };
        let may_read = self.check(Need::Read, "").is_ok();
        let (info, plan) = match self
            .start_on_pool(
                &entry,
                (&query, params.clone()),
                (qid, started),
                &running,
                read,
                (may_have_plan, may_read),
            )
            .await?
        {
            PoolStart::Started(mut result, columns) => {
                if let Some(open) = self.tx.as_mut() {
                    if !open.writing && entry.source.is_none() {
                        // Its later reads read the same snapshot.
                        open.reading = result.graph.clone();
                    }
                }
                result._registration = registration;
                return Ok((*result, columns));
            }
            PoolStart::NotStarted(info, plan) => (info, plan),
        };
        if info.updating {
            if let Some(source) = &entry.source {
                return Err(read_only(&entry.name, source));
            }
        }
        let need = match (info.updating, user_commands::is_schema_command(&query)) {
            (false, _) => Need::Read,
            (true, false) => Need::Write,
            (true, true) => Need::Admin,
        };
        let what = match need {
            Need::Read => "reading",
            Need::Write => "writing data",
            Need::Admin => "changing the schema",
        };
        self.check(need, what)?;
        let _ = extra; // `mode` is a routing hint only: one server serves both.
        let deadline = match self.tx.as_ref() {
            Some(open) => open.deadline,
            None => self.config.transaction_timeout.map(|t| Instant::now() + t),
        };
        let cancel = CancelToken::root();
        let options = self.query_options(cancel.clone(), deadline);
        let buffer = ResultBuffer::new(cancel, self.config.stream, info.ordered);
        let tracked = self.interrupt.track(&buffer);
        running.set_buffer(&buffer);
        let width = info.columns.len();
        let mut result = OpenResult::new(
            (qid, started),
            width,
            Rows::Done(Vec::new().into_iter(), None),
            &query,
            &entry.name,
            running.clone(),
        );
        result.updating = info.updating;
        result.plan = plan;
        result.over_source = entry.source.is_some();
        result._registration = registration;
        if info.updating {
            // Writes run to their end before RUN is answered; their rows are
            // the engine's collected rows (the engine materialises them
            // anyway). The writer lock is waited for on a blocking thread
            // (an autocommit write takes a transaction of its own; an
            // explicit one takes it at its first write), the updating plan
            // runs as a job on the worker pool, and the commit (which waits
            // for the log) on a blocking thread again.
            self.upgrade(&running).await?;
            let tx = self.tx.as_mut().and_then(|open| open.take());
            let own = self.tx.is_none();
            let mut writer = match tx {
                Some(tx) => tx,
                None if own => Session::lock_writer(&entry, &running).await?,
                None => return Err(transactions::terminated()),
            };
            let (answer, answered) = tokio::sync::oneshot::channel();
            let job_options = JobOptions {
                tenant: options.tenant.clone(),
                session: options.session.clone(),
                short: false,
            };
            let job: Task = Box::new(move |_| {
                let r = writer.execute(&query, params, &options);
                let snapshot = writer.snapshot();
                let _ = answer.send((r.map(|r| (r, snapshot)), writer));
            });
            WorkerPool::global().submit_with(job_options, job);
            let (outcome, writer) = answered.await.map_err(|_| {
                Failure::new(
                    codes::UNKNOWN,
                    "the statement's job ended without an answer",
                )
            })?;
            let (outcome, tx) = match (own, outcome) {
                (false, outcome) => (outcome, Some(writer)),
                (true, Ok(done)) => {
                    let committed = tokio::task::spawn_blocking(move || writer.commit())
                        .await
                        .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?;
                    (committed.map(|_| done), None)
                }
                (true, Err(e)) => {
                    writer.rollback();
                    (Err(e), None)
                }
            };
            drop(tracked);
            if let Some(open) = self.tx.as_mut() {
                open.registration.entry().put(tx);
            }
            let (mut outcome, snapshot) =
                outcome.map_err(|e| Failure::from_error(&e, &result.query))?;
            result.graph = Some(snapshot.unwrap_or_else(|| entry.engine.database().snapshot()));
            if self.tx.is_none() && has_updates(&outcome.counters) {
                result.bookmark = Some(bookmark(0));
            }
            let rows = std::mem::replace(&mut outcome.rows, rhizome_engine::Rows::new(width));
            result.rows = Rows::Done(rows.into_blocks(), Some(Box::new(outcome)));
        } else {
            // A read is started on the pool above, unless the user may not
            // read, which the check refused.
            return Err(Failure::new(
                codes::UNKNOWN,
                "a read was neither started nor refused",
            ));
        }
        Ok((result, info.columns))
    }

    /// Starts a read with one job on the engine's worker pool, which plans
    /// the statement and starts its query there (its first task on that
    /// worker: a query of one morsel ends inside the job), over the state
    /// `read` names (outside a transaction, or in one). The connection's
    /// task only awaits the job's answer and then the result's blocks: no
    /// thread of its own waits for the query, and a short read costs one
    /// hand-over each way. A statement that turns out to write, or any
    /// statement when `may_read` is false, is not started: its description
    /// (and plan, if `may_have_plan`) comes back for the usual path.
    async fn start_on_pool(
        &mut self,
        entry: &DatabaseEntry,
        (query, params): (&str, BTreeMap<String, Value>),
        (qid, started): (i64, Instant),
        running: &Arc<Running>,
        read: ReadOn,
        (may_have_plan, may_read): (bool, bool),
    ) -> Result<PoolStart, Failure> {
        let cancel = CancelToken::root();
        let options = self.query_options(cancel.clone(), read.deadline);
        let buffer = ResultBuffer::new(cancel, self.config.stream, false);
        let tracked = self.interrupt.track(&buffer);
        running.set_buffer(&buffer);
        let (answer, answered) = tokio::sync::oneshot::channel();
        // Over a source: the statement's own view of it (read live, through
        // the source's cache), which its entities render from.
        let (source, statement) = match &entry.source {
            Some(source) => {
                let statement = source.statement(&options);
                (Some(source.clone()), Some(statement))
            }
            None => (None, None),
        };
        let snapshot = match &statement {
            Some(statement) => statement.snapshot().clone(),
            None => read.snapshot,
        };
        let (engine, q, state, receiver) = (
            entry.engine.clone(),
            query.to_string(),
            snapshot.clone(),
            buffer.clone(),
        );
        let holding_writer = read.holding_writer;
        let native = source.is_none();
        // Closes the buffer (stopping the query) if this future is dropped
        // before the result is the session's (a request gone mid-RUN).
        let mut abandoned = CloseOnDrop(Some(buffer.clone()));
        // A native read's start never blocks: it may run nested in a long
        // task at a yield point, so it starts within a quantum. (One over a
        // source may wait for its backend.)
        let job_options = JobOptions {
            tenant: options.tenant.clone(),
            session: options.session.clone(),
            short: native,
        };
        let job: Task = Box::new(move |_| {
            let plan = match (may_have_plan, &source) {
                (false, _) => Ok(None),
                (true, Some(source)) => source.plan_description(&q, &params),
                (true, None) => engine.plan_description_on(&state, &q, &params),
            };
            let plan = match plan {
                Ok(plan) => plan,
                Err(e) => {
                    let _ = answer.send(Err(e));
                    return;
                }
            };
            let finisher = receiver.clone();
            let mut answer = Some(answer);
            // RUN is answered before the query's first task runs here.
            let admit = |info: &StatementInfo| {
                if !may_read {
                    return false;
                }
                receiver.set_ordered(info.ordered);
                if let Some(answer) = answer.take() {
                    let _ = answer.send(Ok((info.clone(), true, plan.clone())));
                }
                true
            };
            let done: rhizome_exec::OnEnd = Box::new(move |result| finisher.finish(result));
            let outcome = match (&source, &statement) {
                (Some(source), Some(statement)) => source.start_statement(
                    statement,
                    &q,
                    params,
                    &options,
                    receiver.clone(),
                    admit,
                    done,
                ),
                _ => engine.start_streaming_on(
                    state,
                    holding_writer,
                    &q,
                    params,
                    &options,
                    receiver.clone(),
                    admit,
                    done,
                ),
            };
            if let Some(answer) = answer {
                let _ = answer.send(outcome.map(|(info, started)| (info, started, plan)));
            }
        });
        WorkerPool::global().submit_with(job_options, job);
        let outcome = answered
            .await
            .map_err(|_| {
                Failure::new(
                    codes::UNKNOWN,
                    "the statement's job ended without an answer",
                )
            })?
            .map_err(|e| Failure::from_error(&e, query))?;
        abandoned.0 = None;
        let (info, true, plan) = outcome else {
            return Ok(PoolStart::NotStarted(outcome.0, outcome.2));
        };
        let mut result = OpenResult::new(
            (qid, started),
            info.columns.len(),
            Rows::Stream(buffer),
            query,
            &entry.name,
            running.clone(),
        );
        result.graph = Some(snapshot);
        result.plan = plan;
        result.over_source = entry.source.is_some();
        result._tracked = Some(tracked);
        Ok(PoolStart::Started(Box::new(result), info.columns))
    }

    async fn pull<W: AsyncWrite + Unpin>(
        &mut self,
        n: i64,
        qid: i64,
        discard: bool,
        writer: &mut W,
    ) -> std::io::Result<()> {
        let index = if qid == -1 {
            self.results.len().checked_sub(1)
        } else {
            self.results.iter().position(|r| r.qid == qid)
        };
        let Some(index) = index else {
            self.fail(Failure::invalid(format!(
                "there is no open result with qid {qid}"
            )));
            return Ok(());
        };
        if discard && n < 0 && self.tx.is_none() {
            // Discarding the rest of an autocommit read stops its query at
            // once (in a transaction the rest is drained instead: a
            // cancelled statement would fail the transaction).
            if let Rows::Stream(buffer) = &self.results[index].rows {
                buffer.close();
                let summary = self.summary(index).await;
                self.results.remove(index);
                self.success(summary);
                self.state = if self.results.is_empty() {
                    State::Ready
                } else {
                    State::Streaming
                };
                return Ok(());
            }
        }
        if self.results[index].entry.is_terminated() {
            self.fail(transactions::terminated());
            return Ok(());
        }
        let mut left = if n < 0 { u64::MAX } else { n as u64 };
        let v5 = self.version.is_v5();
        let taken = if let Rows::Packed(rows) = &mut self.results[index].rows {
            while left > 0 {
                let Some(row) = rows.next() else { break };
                if !discard {
                    self.scratch.clear();
                    message::record_header(&mut self.scratch, row.len());
                    for value in &row {
                        value.encode(&mut self.scratch);
                    }
                    crate::framing::write_message(&mut self.out, &self.scratch);
                }
                left -= 1;
            }
            if rows.len() > 0 {
                Taken::More
            } else {
                Taken::Done(self.summary(index).await)
            }
        } else {
            loop {
                let result = &mut self.results[index];
                // Send rows already at hand.
                while left > 0 && result.pending.len() >= result.width.max(1) {
                    if result.width == 0 {
                        result.pending.clear();
                        break;
                    }
                    if !discard {
                        self.scratch.clear();
                        message::record_header(&mut self.scratch, result.width);
                        let writer_ = ValueWriter {
                            v5,
                            graph: result
                                .graph
                                .as_ref()
                                .map(|s| s as &dyn rhizome_storage::GraphRead),
                        };
                        for value in result.pending.drain(..result.width) {
                            writer_.write(&mut self.scratch, &value);
                        }
                        crate::framing::write_message(&mut self.out, &self.scratch);
                    } else {
                        result.pending.drain(..result.width);
                    }
                    left -= 1;
                    if self.out.len() >= FLUSH_AT {
                        break;
                    }
                }
                if self.out.len() >= FLUSH_AT {
                    self.flush_if_large(writer).await?;
                    continue;
                }
                if left == 0 {
                    break Taken::More;
                }
                let result = &mut self.results[index];
                match next_rows(result).await {
                    Some(Ok(rows)) => result.pending.extend(rows),
                    Some(Err(failure)) => {
                        let failure = if result.entry.is_terminated() {
                            transactions::terminated()
                        } else {
                            failure
                        };
                        self.fail(failure);
                        return Ok(());
                    }
                    None => {
                        let summary = self.summary(index).await;
                        break Taken::Done(summary);
                    }
                }
            }
        };
        match taken {
            Taken::More => {
                // Is there really more? A result whose query has ended
                // with nothing left says has_more only if rows remain.
                self.success(map([("has_more", true.into())]));
            }
            Taken::Done(summary) => {
                // Dropping the result (its `Tracked`) unlists its buffer.
                let result = self.results.remove(index);
                if self.results.is_empty() {
                    result.entry.end_query();
                }
                self.success(summary);
                self.state = match (self.tx.is_some(), self.results.is_empty()) {
                    (true, true) => State::TxReady,
                    (true, false) => State::TxStreaming,
                    (false, true) => State::Ready,
                    (false, false) => State::Streaming,
                };
            }
        }
        Ok(())
    }

    /// The metadata of the last response of a result.
    async fn summary(&mut self, index: usize) -> PackValue {
        let result = &mut self.results[index];
        let outcome = match &mut result.rows {
            Rows::Done(_, outcome) => outcome.take(),
            Rows::Stream(_) | Rows::Packed(_) => None,
        };
        let counters = outcome.as_ref().map(|o| o.counters).unwrap_or_default();
        let kind = if result.updating {
            if has_updates(&counters) {
                "w"
            } else {
                "rw"
            }
        } else {
            "r"
        };
        let mut metadata = vec![
            ("type".to_string(), PackValue::from(kind)),
            (
                "t_last".to_string(),
                PackValue::Int(result.started.elapsed().as_millis() as i64),
            ),
            ("db".to_string(), result.db.as_str().into()),
        ];
        if has_updates(&counters) {
            metadata.push(("stats".to_string(), stats(&counters)));
        }
        if let Some(bookmark) = &result.bookmark {
            metadata.push(("bookmark".to_string(), bookmark.as_str().into()));
        }
        if let Some(outcome) = &outcome {
            // EXPLAIN / PROFILE: the plan tree (drivers' summary.plan / .profile).
            metadata.extend(crate::plan::summary_entries(
                outcome,
                result.plan.as_ref(),
                result.over_source,
            ));
        }
        PackValue::Map(metadata)
    }
}

/// The next block of a result's rows, `None` at its end, or its failure.
async fn next_rows(result: &mut OpenResult) -> Option<Result<Vec<Value>, Failure>> {
    match &mut result.rows {
        Rows::Done(blocks, _) => blocks.next().map(Ok),
        Rows::Packed(_) => None,
        Rows::Stream(buffer) => match buffer.next().await {
            Next::Rows(rows) => Some(Ok(rows)),
            Next::Finished(outcome) => match *outcome {
                Ok(outcome) => {
                    result.rows = Rows::Done(Vec::new().into_iter(), Some(Box::new(outcome)));
                    None
                }
                Err(e) => Some(Err(Failure::from_error(&e, &result.query))),
            },
        },
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
#[path = "session_tests.rs"]
mod tests;
