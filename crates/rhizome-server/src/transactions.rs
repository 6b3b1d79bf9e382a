//! The transactions running on a server, for `SHOW TRANSACTIONS` and
//! `TERMINATE TRANSACTION[S]`.
//!
//! Every explicit transaction (from BEGIN to its end) and every autocommit
//! statement (from RUN until its result is consumed) has a [`Running`]
//! entry in the server's [`Transactions`], removed when its
//! [`Registration`] is dropped. Terminating one marks it, stops its running
//! query at once (its result buffer is closed, which cancels the query's
//! token, so queued morsels are dropped and a waiting worker returns), and
//! rolls back an explicit transaction that is between statements — the
//! writer lock is free at once. The session then answers the client with
//! `Neo.TransientError.Transaction.Terminated`.
//!
//! A statement that waits for the database's writer lock (an autocommit
//! write, or an explicit transaction's first write) is listed with the
//! status `Blocked by: …` ([`BLOCKED`]); terminating it answers its client
//! at once, and the lock, if the wait still gets it, is given back as soon
//! as it does.

use crate::admin::ServerResult;
use crate::status::{codes, Failure};
use crate::stream::ResultBuffer;
use rhizome_common::Value;
use rhizome_engine::Transaction;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

/// The transactions of one server.
#[derive(Default)]
pub struct Transactions {
    next_transaction: AtomicU64,
    next_query: AtomicU64,
    running: Mutex<BTreeMap<u64, Arc<Running>>>,
}

impl std::fmt::Debug for Transactions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transactions({} running)", lock(&self.running).len())
    }
}

/// Who runs a transaction.
#[derive(Debug, Clone)]
pub struct Owner {
    /// The connection (`bolt-7`).
    pub connection_id: String,
    /// The client's address.
    pub client_address: String,
    /// The logged-in user.
    pub username: String,
    /// The scheduler tenant the user's queries run as (the user, or the
    /// group it is a member of; docs/scheduling.md).
    pub tenant: String,
}

/// The statement a transaction runs now.
#[derive(Default)]
struct Current {
    query: Option<(u64, String, Instant)>,
    buffer: Option<Arc<ResultBuffer>>,
}

/// One running transaction.
pub struct Running {
    number: u64,
    database: String,
    owner: Owner,
    started: (SystemTime, Instant),
    current: Mutex<Current>,
    /// An explicit transaction between statements (a statement running
    /// holds it on its thread and gives it back through [`Running::put`]).
    idle: Mutex<Option<Transaction>>,
    terminated: AtomicBool,
    /// True while a statement of it waits for the writer lock.
    waiting: AtomicBool,
    /// Woken by a termination (for a statement that waits for the lock).
    stopped: tokio::sync::Notify,
}

/// The `status` of a transaction whose BEGIN waits for the writer lock.
pub const BLOCKED: &str =
    "Blocked by: the database's writer lock (another write transaction holds it)";

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Running {
    /// Its id as Neo4j writes it: `neo4j-transaction-42`.
    pub fn id(&self) -> String {
        format!("{}-transaction-{}", self.database, self.number)
    }

    /// True once it was terminated.
    pub fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::SeqCst)
    }

    /// Records that it runs `query` now.
    pub fn start_query(&self, transactions: &Transactions, query: &str) {
        let id = transactions.next_query.fetch_add(1, Ordering::Relaxed) + 1;
        let mut current = lock(&self.current);
        current.query = Some((id, query.to_string(), Instant::now()));
        current.buffer = None;
    }

    /// The result buffer of the query it runs (closed by a termination).
    pub fn set_buffer(&self, buffer: &Arc<ResultBuffer>) {
        lock(&self.current).buffer = Some(buffer.clone());
        if self.is_terminated() {
            buffer.close();
        }
    }

    /// Its statement ended.
    pub fn end_query(&self) {
        *lock(&self.current) = Current::default();
    }

    /// Its statement waits for the writer lock (listed [`BLOCKED`] until
    /// [`Running::stops_waiting`]).
    pub fn waits(&self) {
        self.waiting.store(true, Ordering::SeqCst);
    }

    /// Its wait for the writer lock ended.
    pub fn stops_waiting(&self) {
        self.waiting.store(false, Ordering::SeqCst);
    }

    /// Returns once it is terminated.
    pub async fn until_terminated(&self) {
        loop {
            let notified = self.stopped.notified();
            if self.is_terminated() {
                return;
            }
            notified.await;
        }
    }

    /// Takes its explicit transaction to run a statement in (`None` if it
    /// was terminated or a statement has it).
    pub fn take(&self) -> Option<Transaction> {
        lock(&self.idle).take()
    }

    /// The state its explicit transaction's next statement reads (`None`
    /// for an autocommit statement or while a statement runs).
    pub fn snapshot(&self) -> Option<rhizome_storage::Snapshot> {
        lock(&self.idle).as_ref().and_then(Transaction::snapshot)
    }

    /// Gives the transaction back after a statement; rolled back at once if
    /// it was terminated meanwhile.
    pub fn put(&self, tx: Option<Transaction>) {
        let mut idle = lock(&self.idle);
        *idle = tx;
        if self.is_terminated() {
            if let Some(tx) = idle.take() {
                tx.rollback();
            }
        }
    }

    /// Stops it: marks it, stops its query, rolls back an idle transaction.
    fn terminate(&self) {
        self.terminated.store(true, Ordering::SeqCst);
        self.stopped.notify_waiters();
        if let Some(buffer) = &lock(&self.current).buffer {
            buffer.close();
        }
        if let Some(tx) = lock(&self.idle).take() {
            tx.rollback();
        }
    }

    /// Its `SHOW TRANSACTIONS` row (columns as [`COLUMNS`]).
    fn row(&self) -> Vec<Value> {
        let current = lock(&self.current);
        let (query_id, query) = match &current.query {
            Some((id, text, _)) => (format!("query-{id}"), text.clone()),
            None => (String::new(), String::new()),
        };
        let elapsed = self.started.1.elapsed();
        let cpu_time = current
            .buffer
            .as_ref()
            .and_then(|b| b.busy_time())
            .map_or(Value::Null, duration);
        let status = if self.is_terminated() {
            "Terminated with reason: Transaction terminated by user".to_string()
        } else if self.waiting.load(Ordering::SeqCst) {
            BLOCKED.to_string()
        } else {
            "Running".to_string()
        };
        vec![
            Value::String(self.database.clone()),
            Value::String(self.id()),
            Value::String(query_id),
            Value::String(self.owner.connection_id.clone()),
            Value::String(self.owner.client_address.clone()),
            Value::String(self.owner.username.clone()),
            Value::String(query),
            Value::String(crate::log::utc_timestamp(self.started.0)),
            Value::String(status),
            duration(elapsed),
            Value::String(self.owner.tenant.clone()),
            cpu_time,
        ]
    }
}

/// `time` as a Cypher duration.
fn duration(time: std::time::Duration) -> Value {
    Value::Duration(rhizome_common::Duration {
        months: 0,
        days: 0,
        seconds: time.as_secs() as i64,
        nanos: time.subsec_nanos() as i32,
    })
}

/// Keeps a transaction listed; dropping it removes it.
pub struct Registration {
    entry: Arc<Running>,
    transactions: Arc<Transactions>,
}

impl Registration {
    /// The entry.
    pub fn entry(&self) -> &Arc<Running> {
        &self.entry
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&self.transactions.running).remove(&self.entry.number);
        // An explicit transaction still held here ends with its listing.
        if let Some(tx) = self.entry.take() {
            tx.rollback();
        }
    }
}

/// The columns of `SHOW TRANSACTIONS`: Neo4j's default ones, then the
/// scheduler tenant the transaction's queries run as and the worker time
/// its running query has used so far (null between statements and for a
/// statement that does not stream, such as a write).
pub const COLUMNS: [&str; 12] = [
    "database",
    "transactionId",
    "currentQueryId",
    "connectionId",
    "clientAddress",
    "username",
    "currentQuery",
    "startTime",
    "status",
    "elapsedTime",
    "tenant",
    "cpuTime",
];

impl Transactions {
    /// Lists a new transaction on `database` of `owner`, holding `tx` if
    /// it is an explicit one.
    pub fn register(
        self: &Arc<Self>,
        database: &str,
        owner: Owner,
        tx: Option<Transaction>,
    ) -> Registration {
        self.listed(database, owner, tx)
    }

    fn listed(
        self: &Arc<Self>,
        database: &str,
        owner: Owner,
        tx: Option<Transaction>,
    ) -> Registration {
        let number = self.next_transaction.fetch_add(1, Ordering::Relaxed) + 1;
        let entry = Arc::new(Running {
            number,
            database: database.to_string(),
            owner,
            started: (SystemTime::now(), Instant::now()),
            current: Mutex::default(),
            idle: Mutex::new(tx),
            terminated: AtomicBool::new(false),
            waiting: AtomicBool::new(false),
            stopped: tokio::sync::Notify::new(),
        });
        lock(&self.running).insert(number, entry.clone());
        Registration {
            entry,
            transactions: self.clone(),
        }
    }

    /// The transactions `viewer` may see: all for an administrator, else
    /// the viewer's own; only those in `ids` if any are named.
    fn visible(&self, viewer: &Viewer<'_>, ids: &[String]) -> Vec<Arc<Running>> {
        lock(&self.running)
            .values()
            .filter(|t| viewer.admin || t.owner.username == viewer.user)
            .filter(|t| ids.is_empty() || ids.contains(&t.id()))
            .cloned()
            .collect()
    }

    /// Answers a `SHOW` or `TERMINATE` command for `viewer`.
    pub fn answer(&self, command: &Command, viewer: &Viewer<'_>) -> ServerResult {
        match command {
            Command::Show(ids, _) => ServerResult {
                columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
                rows: self.visible(viewer, ids).iter().map(|t| t.row()).collect(),
            },
            Command::Terminate(ids) => {
                let found = self.visible(viewer, ids);
                let rows = ids
                    .iter()
                    .map(|id| {
                        let (user, message) = match found.iter().find(|t| &t.id() == id) {
                            Some(t) => {
                                t.terminate();
                                crate::log(format_args!(
                                    "{}: transaction {id} of user `{}` terminated by `{}`",
                                    t.owner.connection_id, t.owner.username, viewer.user
                                ));
                                (
                                    Value::String(t.owner.username.clone()),
                                    "Transaction terminated.",
                                )
                            }
                            None => (Value::Null, "Transaction not found."),
                        };
                        vec![
                            Value::String(id.clone()),
                            user,
                            Value::String(message.into()),
                        ]
                    })
                    .collect();
                ServerResult {
                    columns: ["transactionId", "username", "message"]
                        .iter()
                        .map(|c| c.to_string())
                        .collect(),
                    rows,
                }
            }
        }
    }
}

/// Who asks.
pub struct Viewer<'a> {
    /// The user.
    pub user: &'a str,
    /// True for an administrator (sees and terminates everyone's).
    pub admin: bool,
}

/// A transaction command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `SHOW TRANSACTION[S] [ids] [YIELD … | WHERE …]`: the ids and, if
    /// there is a `YIELD` or `WHERE` part, the Cypher that shapes the rows
    /// (see [`shaping_query`]).
    Show(Vec<String>, Option<String>),
    /// `TERMINATE TRANSACTION[S] ids`.
    Terminate(Vec<String>),
}

/// The failure a terminated transaction's client gets.
pub fn terminated() -> Failure {
    Failure::new(
        codes::TERMINATED,
        "The transaction has been terminated. Retry your operation in a new transaction, \
         and you should see a successful result. Explicitly terminated by the user.",
    )
}

/// The status of a malformed transaction command.
pub const SYNTAX: &str = "Neo.ClientError.Statement.SyntaxError";

/// Parses `query` if it is `SHOW TRANSACTION[S] [ids]` or `TERMINATE
/// TRANSACTION[S] ids`; ids are string literals separated by commas or
/// one parameter holding a string or a list of strings.
pub fn parse(query: &str, params: &BTreeMap<String, Value>) -> Option<Result<Command, Failure>> {
    let text = query.trim().trim_end_matches(';').trim();
    let mut words = text.splitn(3, char::is_whitespace);
    let verb = words.next()?.to_ascii_uppercase();
    let noun = words.next()?.to_ascii_uppercase();
    if !matches!(noun.as_str(), "TRANSACTION" | "TRANSACTIONS")
        || !matches!(verb.as_str(), "SHOW" | "TERMINATE")
    {
        return None;
    }
    let rest = words.next().unwrap_or("").trim();
    let (rest, tail) = match (verb.as_str(), keyword_at(rest, &["YIELD", "WHERE"])) {
        ("SHOW", Some(at)) => (rest[..at].trim(), Some(&rest[at..])),
        _ => (rest, None),
    };
    Some(ids(rest, params).and_then(|ids| {
        if verb == "SHOW" {
            let shaping = tail.map(shaping_query).transpose()?;
            Ok(Command::Show(ids, shaping))
        } else if ids.is_empty() {
            Err(Failure::new(
                SYNTAX,
                "TERMINATE TRANSACTIONS needs the ids of the transactions, e.g. \
                 TERMINATE TRANSACTION 'neo4j-transaction-3' (SHOW TRANSACTIONS lists them)",
            ))
        } else {
            Ok(Command::Terminate(ids))
        }
    }))
}

/// The transaction ids in `text`.
fn ids(text: &str, params: &BTreeMap<String, Value>) -> Result<Vec<String>, Failure> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(name) = text.strip_prefix('$') {
        return match params.get(name) {
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::List(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(Failure::new(
                        "Neo.ClientError.Statement.TypeError",
                        format!("transaction ids are strings, got {}", other.type_name()),
                    )),
                })
                .collect(),
            Some(other) => Err(Failure::new(
                "Neo.ClientError.Statement.TypeError",
                format!(
                    "parameter `{name}` must be a string or a list of strings, got {}",
                    other.type_name()
                ),
            )),
            None => Err(Failure::new(
                "Neo.ClientError.Statement.ParameterMissing",
                format!("expected parameter(s): {name}"),
            )),
        };
    }
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(quote) = chars.next_if(|c| *c == '\'' || *c == '"') else {
            let rest: String = chars.collect();
            return Err(Failure::new(
                SYNTAX,
                format!(
                    "expected transaction ids as quoted strings separated by commas, got `{rest}`"
                ),
            ));
        };
        let mut id = String::new();
        loop {
            match chars.next() {
                Some(c) if c == quote => break,
                Some(c) => id.push(c),
                None => return Err(Failure::new(SYNTAX, "a transaction id is not closed")),
            }
        }
        out.push(id);
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        match chars.next() {
            None => return Ok(out),
            Some(',') => continue,
            Some(c) => {
                return Err(Failure::new(
                    SYNTAX,
                    format!("unexpected `{c}` after a transaction id"),
                ))
            }
        }
    }
}

/// The parameter [`shaping_query`]'s Cypher reads the rows from.
pub const ROWS_PARAMETER: &str = "__transactions";

/// Every column `YIELD` may name (all of [`COLUMNS`]: Rhizome has no others).
fn all_columns() -> String {
    COLUMNS.join(", ")
}

/// The Cypher that turns the rows of `SHOW TRANSACTIONS` (maps in
/// [`ROWS_PARAMETER`]) into what `tail` asks for: `WHERE cond` keeps some
/// rows; `YIELD items [ORDER BY …] [SKIP n] [LIMIT n] [WHERE cond] [RETURN
/// …]` works as Neo4j's (as a `WITH`, then the `RETURN`, or the yielded
/// columns).
pub fn shaping_query(tail: &str) -> Result<String, Failure> {
    let start = format!(
        "UNWIND ${ROWS_PARAMETER} AS __row WITH {}",
        COLUMNS
            .iter()
            .map(|c| format!("__row.{c} AS {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let tail = tail.trim().trim_end_matches(';').trim();
    let word_len = tail.find(char::is_whitespace).unwrap_or(tail.len());
    let (keyword, rest) = tail.split_at(word_len);
    let rest = rest.trim();
    if rest.is_empty() {
        return Err(Failure::new(
            SYNTAX,
            format!("`{keyword}` after SHOW TRANSACTIONS needs something after it"),
        ));
    }
    if keyword.eq_ignore_ascii_case("WHERE") {
        return Ok(format!("{start} WHERE {rest} RETURN {}", all_columns()));
    }
    // YIELD: the items run up to the first clause keyword.
    let end =
        keyword_at(rest, &["ORDER", "SKIP", "LIMIT", "WHERE", "RETURN"]).unwrap_or(rest.len());
    let items = rest[..end].trim();
    let items = if items == "*" {
        all_columns()
    } else {
        items.to_string()
    };
    let clauses = &rest[end..];
    let shaped = format!("{start} WITH {items} {}", clauses.trim());
    let shaped = shaped.trim_end();
    if keyword_at(clauses, &["RETURN"]).is_some() {
        return Ok(shaped.to_string());
    }
    // Without RETURN the yielded columns are the result.
    let names: Vec<&str> = items
        .split(',')
        .map(|item| item.split_whitespace().last().unwrap_or(""))
        .collect();
    if names.iter().any(|n| n.is_empty()) {
        return Err(Failure::new(
            SYNTAX,
            format!("cannot read the YIELD items `{items}`"),
        ));
    }
    Ok(format!("{shaped} RETURN {}", names.join(", ")))
}

/// Where the first of `keywords` starts in `text` as a word of its own,
/// outside strings and backquoted names (case-insensitive).
fn keyword_at(text: &str, keywords: &[&str]) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None if b == b'\'' || b == b'"' || b == b'`' => quote = Some(b),
            None => {
                let boundary_before =
                    i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
                if boundary_before {
                    for keyword in keywords {
                        let end = i + keyword.len();
                        let matches = end <= bytes.len()
                            && text.is_char_boundary(i)
                            && text.is_char_boundary(end)
                            && text[i..end].eq_ignore_ascii_case(keyword)
                            && (end == bytes.len()
                                || !(bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_'));
                        if matches {
                            return Some(i);
                        }
                    }
                }
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(query: &str) -> Result<Command, Failure> {
        let params = [
            ("one".to_string(), Value::String("a-transaction-1".into())),
            (
                "two".to_string(),
                Value::List(vec![Value::String("x".into()), Value::String("y".into())]),
            ),
        ]
        .into();
        parse(query, &params).expect("a transaction command")
    }

    #[test]
    fn show_and_terminate_with_literal_and_parameter_ids() {
        assert_eq!(parsed("SHOW TRANSACTIONS"), Ok(Command::Show(vec![], None)));
        assert_eq!(
            parsed("show transaction 'neo4j-transaction-3';"),
            Ok(Command::Show(vec!["neo4j-transaction-3".into()], None))
        );
        let Ok(Command::Show(ids, Some(shaping))) =
            parsed("SHOW TRANSACTIONS 'a' YIELD transactionId AS id, status WHERE status = 'x'")
        else {
            panic!()
        };
        assert_eq!(ids, vec!["a".to_string()]);
        assert!(
            shaping
                .ends_with("WITH transactionId AS id, status WHERE status = 'x' RETURN id, status"),
            "{shaping}"
        );
        assert_eq!(
            parsed("TERMINATE TRANSACTIONS 'a', \"b\""),
            Ok(Command::Terminate(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            parsed("TERMINATE TRANSACTION $one"),
            Ok(Command::Terminate(vec!["a-transaction-1".into()]))
        );
        assert_eq!(
            parsed("TERMINATE TRANSACTIONS $two"),
            Ok(Command::Terminate(vec!["x".into(), "y".into()]))
        );
        for bad in [
            "TERMINATE TRANSACTION",
            "TERMINATE TRANSACTION 'a' 'b'",
            "TERMINATE TRANSACTION 'a",
            "SHOW TRANSACTIONS YIELD",
            "SHOW TRANSACTIONS WHERE",
            "TERMINATE TRANSACTION $missing",
        ] {
            assert!(parsed(bad).is_err(), "{bad}");
        }
        assert!(parse("SHOW DATABASES", &BTreeMap::new()).is_none());
        assert!(parse("MATCH (n) RETURN n", &BTreeMap::new()).is_none());
    }

    #[test]
    fn yield_and_where_become_cypher_over_the_rows() {
        let shaped = |tail: &str| shaping_query(tail).unwrap();
        let prefix = shaped("WHERE true");
        assert!(
            prefix.starts_with("UNWIND $__transactions AS __row WITH __row.database AS database,")
        );
        assert!(prefix.ends_with(&format!("WHERE true RETURN {}", all_columns())));
        assert!(shaped("YIELD *").ends_with(&format!(
            "WITH {} RETURN {}",
            all_columns(),
            all_columns()
        )));
        assert!(
            shaped("YIELD username, currentQuery ORDER BY username LIMIT 3 RETURN username")
                .ends_with("WITH username, currentQuery ORDER BY username LIMIT 3 RETURN username")
        );
        // Keywords inside strings are not clauses.
        assert!(shaped("YIELD status WHERE status <> 'RETURN x'")
            .ends_with("WITH status WHERE status <> 'RETURN x' RETURN status"));
        assert_eq!(keyword_at("a returned RETURN", &["RETURN"]), Some(11));
        // Any text, cut anywhere, never panics.
        let text = "YIELD é, 'ü\\'' WHERE `x` RETURN ✓ LIMIT";
        for end in (0..=text.len()).filter(|&e| text.is_char_boundary(e)) {
            keyword_at(&text[..end], &["RETURN", "WHERE", "LIMIT"]);
            let _ = shaping_query(&text[..end]);
        }
    }

    #[test]
    fn others_see_and_terminate_only_their_own() {
        let transactions = Arc::new(Transactions::default());
        let owner = |user: &str| Owner {
            connection_id: "bolt-1".into(),
            client_address: "127.0.0.1:5".into(),
            username: user.into(),
            tenant: user.into(),
        };
        let ada = transactions.register("neo4j", owner("ada"), None);
        let bob = transactions.register("neo4j", owner("bob"), None);
        ada.entry().start_query(&transactions, "RETURN 1");
        let show = Command::Show(vec![], None);
        let as_ada = Viewer {
            user: "ada",
            admin: false,
        };
        let listed = transactions.answer(&show, &as_ada);
        assert_eq!(listed.rows.len(), 1);
        assert_eq!(listed.rows[0][1], Value::String(ada.entry().id()));
        assert_eq!(listed.rows[0][6], Value::String("RETURN 1".into()));
        let admin = Viewer {
            user: "neo4j",
            admin: true,
        };
        assert_eq!(transactions.answer(&show, &admin).rows.len(), 2);
        let terminate = Command::Terminate(vec![bob.entry().id()]);
        let refused = transactions.answer(&terminate, &as_ada);
        assert_eq!(
            refused.rows[0][2],
            Value::String("Transaction not found.".into())
        );
        assert!(!bob.entry().is_terminated());
        let done = transactions.answer(&terminate, &admin);
        assert_eq!(
            done.rows[0][2],
            Value::String("Transaction terminated.".into())
        );
        assert!(bob.entry().is_terminated());
        drop(bob);
        assert_eq!(transactions.answer(&show, &admin).rows.len(), 1);
    }
}
