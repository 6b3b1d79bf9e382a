//! The shell's backend on a Bolt server (`rhizome shell bolt://HOST:PORT`):
//! statements go over [`rhizome_server::client`], results come back as the
//! same [`QueryResult`] a local statement gives, and the nodes and
//! relationships in them are printed from what the server sent.
//!
//! `EXPLAIN` / `PROFILE` plans come as the summary's `plan` / `profile`
//! trees; they are turned into the neutral [`PlanOutline`] and printed by
//! the same renderer as local plans. Ctrl-C while a statement runs cancels
//! the token the local shell uses; the client sees it at its next read
//! timeout and RESETs the statement on the same connection.

use super::{Backend, Executed, ShellError};
use crate::engine::{interrupt, QueryResult, QueryStats};
use crate::format::render_table;
use crate::graph::{GraphView, Properties};
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use rhizome_exec::{OperatorProfile, ProfileReport};
use rhizome_plan::{profile_annotation, render_outline, PlanOutline};
use rhizome_server::client::records::Entities;
use rhizome_server::client::{self, Auth, BoltUri, ClientError, ConnectOptions, Connection};
use rhizome_server::packstream::PackValue;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a running statement checks for Ctrl-C.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// Statements run by a server.
pub struct Remote {
    client: Connection,
    address: String,
    in_tx: bool,
}

impl Remote {
    /// Connects to the server `uri` names (over TLS for `+s` / `+ssc`,
    /// trusting `tls_ca` besides the system's roots) and logs in.
    pub fn connect(
        uri: &BoltUri,
        auth: &Auth,
        tls_ca: Option<PathBuf>,
    ) -> std::result::Result<Remote, ShellError> {
        let options = ConnectOptions {
            tls_ca,
            poll: Some(INTERRUPT_POLL),
        };
        let client = client::open(uri, auth, &options).map_err(|e| rendered(e, &uri.address))?;
        Ok(Remote {
            client,
            address: uri.address.clone(),
            in_tx: false,
        })
    }

    fn failed(&mut self, error: ClientError) -> ShellError {
        let mut error = rendered(error, &self.address);
        if self.in_tx {
            // The client RESET the connection: the server rolled it back.
            self.in_tx = false;
            match &mut error {
                ShellError::Remote(text) => {
                    text.push_str("\n(the open transaction was rolled back)")
                }
                ShellError::Local(error) => error
                    .message
                    .push_str("; the open transaction was rolled back"),
            }
        }
        error
    }

    /// Runs `query` and returns its rows as values (for the reports).
    fn rows(&mut self, query: &str) -> std::result::Result<QueryResult, ShellError> {
        Ok(self.execute(query, &BTreeMap::new())?.result)
    }
}

/// A client error as the shell prints it: the server's message as it
/// came (it starts with Rhizome's classification and carries the excerpt),
/// else the last part of its status code, then the message.
fn rendered(error: ClientError, address: &str) -> ShellError {
    match error {
        ClientError::Server { code, message } => {
            let classified = message.split_once(": ").is_some_and(|(word, _)| {
                !word.is_empty() && word.chars().all(char::is_alphanumeric)
            });
            if classified {
                ShellError::Remote(message)
            } else {
                let class = code.rsplit('.').next().unwrap_or(&code);
                ShellError::Remote(format!("{class}: {message} [{code}]"))
            }
        }
        ClientError::Io(e) => ShellError::Local(Error::new(
            ErrorKind::IoError,
            format!("the connection to {address} failed: {e}"),
        )),
        ClientError::Protocol(why) => ShellError::Local(Error::new(
            ErrorKind::IoError,
            format!("the server at {address} broke the Bolt protocol: {why}"),
        )),
        ClientError::Interrupted => ShellError::Local(Error::new(
            ErrorKind::QueryAborted,
            "the statement was cancelled (Ctrl-C); still connected",
        )),
    }
}

/// The EXPLAIN plan or PROFILE report in a summary, printed as a local
/// one is: the tree (with PROFILE's counters per operator) and, for
/// EXPLAIN, the result's columns.
fn plan_of(
    summary: &PackValue,
    fields: &[String],
    wall: Duration,
) -> (Option<String>, Option<ProfileReport>) {
    if let Some(tree) = summary.get("profile") {
        let mut operators = Vec::new();
        let outline = outline(tree, Some(&mut operators), 0);
        let busy = operators.iter().map(|o| o.time).sum();
        let report = ProfileReport {
            operators,
            wall,
            busy,
            text: render_outline(&outline),
        };
        return (None, Some(report));
    }
    if let Some(tree) = summary.get("plan") {
        let mut text = render_outline(&outline(tree, None, 0));
        text.push_str(&format!("Columns: {}\n", fields.join(", ")));
        return (Some(text), None);
    }
    (None, None)
}

/// Deeper plans than this are cut off (a server's tree is data, not trusted).
const MAX_PLAN_DEPTH: usize = 200;

/// One operator of a Bolt plan (`operatorType`, `args` with `Details`,
/// `EstimatedRows`, `Rule`, `Morsels`, `Workers`; `rows`, `time` in ns;
/// `children`) as a listing line; with `profile`, its counters are also
/// collected, numbered depth first as the engine numbers them.
fn outline(
    operator: &PackValue,
    mut profile: Option<&mut Vec<OperatorProfile>>,
    depth: usize,
) -> PlanOutline {
    let text = |value: Option<&PackValue>| match value {
        Some(PackValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let number = |value: Option<&PackValue>| match value {
        Some(PackValue::Int(n)) => *n as f64,
        Some(PackValue::Float(x)) => *x,
        _ => 0.0,
    };
    let count = |value: Option<&PackValue>| number(value).max(0.0) as u64;
    let args = operator.get("args");
    let arg = |key: &str| args.and_then(|a| a.get(key));
    let name = text(operator.get("operatorType"));
    let details = text(arg("Details"));
    let description = if details.is_empty() {
        name
    } else {
        format!("{name} {details}")
    };
    let mut annotation = String::new();
    if let Some(operators) = profile.as_deref_mut() {
        let counters = OperatorProfile {
            id: operators.len(),
            rows: count(operator.get("rows")),
            time: Duration::from_nanos(count(operator.get("time"))),
            morsels: count(arg("Morsels")),
            workers: count(arg("Workers")).min(u32::MAX as u64) as u32,
        };
        annotation = profile_annotation(
            counters.rows,
            counters.time,
            counters.morsels,
            counters.workers,
        );
        operators.push(counters);
    }
    let mut inputs = Vec::new();
    if let (Some(PackValue::List(children)), true) =
        (operator.get("children"), depth < MAX_PLAN_DEPTH)
    {
        for child in children {
            inputs.push(outline(child, profile.as_deref_mut(), depth + 1));
        }
    }
    PlanOutline {
        description,
        estimated_rows: number(arg("EstimatedRows")),
        rule: Some(text(arg("Rule"))).filter(|r| !r.is_empty()),
        annotation,
        inputs,
    }
}

/// The counters of a summary's `stats` map.
fn counters(summary: &PackValue) -> QueryStats {
    let mut stats = QueryStats::default();
    let Some(PackValue::Map(entries)) = summary.get("stats") else {
        return stats;
    };
    for (key, value) in entries {
        let PackValue::Int(n) = value else { continue };
        let n = (*n).max(0) as u64;
        let slot = match key.as_str() {
            "nodes-created" => &mut stats.nodes_created,
            "nodes-deleted" => &mut stats.nodes_deleted,
            "relationships-created" => &mut stats.relationships_created,
            "relationships-deleted" => &mut stats.relationships_deleted,
            "properties-set" => &mut stats.properties_set,
            "labels-added" => &mut stats.labels_added,
            "labels-removed" => &mut stats.labels_removed,
            "indexes-added" => &mut stats.indexes_added,
            "indexes-removed" => &mut stats.indexes_removed,
            "constraints-added" => &mut stats.constraints_added,
            "constraints-removed" => &mut stats.constraints_removed,
            _ => continue,
        };
        *slot = n;
    }
    stats
}

/// Entities as the server described them.
struct EntitiesView(Entities);

fn not_sent(what: &str, id: u64) -> Error {
    Error::new(
        ErrorKind::EntityNotFound,
        format!("{what} {id} is referred to but the server did not send it"),
    )
}

impl GraphView for EntitiesView {
    fn node_labels(&self, id: NodeId) -> Result<Vec<String>> {
        let node = self.0.nodes.get(&id).ok_or_else(|| not_sent("node", id))?;
        Ok(node.labels.clone())
    }
    fn node_properties(&self, id: NodeId) -> Result<Properties> {
        let node = self.0.nodes.get(&id).ok_or_else(|| not_sent("node", id))?;
        Ok(node.properties.clone())
    }
    fn rel_type(&self, id: RelId) -> Result<String> {
        let rel = self
            .0
            .rels
            .get(&id)
            .ok_or_else(|| not_sent("relationship", id))?;
        Ok(rel.rel_type.clone())
    }
    fn rel_endpoints(&self, id: RelId) -> Result<(NodeId, NodeId)> {
        let rel = self
            .0
            .rels
            .get(&id)
            .ok_or_else(|| not_sent("relationship", id))?;
        Ok((rel.start, rel.end))
    }
    fn rel_properties(&self, id: RelId) -> Result<Properties> {
        let rel = self
            .0
            .rels
            .get(&id)
            .ok_or_else(|| not_sent("relationship", id))?;
        Ok(rel.properties.clone())
    }
}

impl Backend for Remote {
    fn execute(
        &mut self,
        text: &str,
        params: &BTreeMap<String, Value>,
    ) -> std::result::Result<Executed, ShellError> {
        let started = Instant::now();
        let mut records = Vec::new();
        let cancel = interrupt::arm();
        self.client
            .set_interrupt(Some(Arc::new(move || cancel.is_cancelled())));
        let streamed = self.client.stream(text, params, |r| records.push(r));
        interrupt::disarm();
        self.client.set_interrupt(None);
        // Until the last answer: the statement's commit is included.
        let elapsed = started.elapsed();
        let (run, pulled) = streamed.map_err(|e| self.failed(e))?;
        let (plan, profile) = plan_of(&pulled.metadata, &run.fields, elapsed);
        let mut entities = Entities::default();
        let rows = records
            .into_iter()
            .map(|r| entities.record(r))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|why| {
                ShellError::Local(Error::new(
                    ErrorKind::IoError,
                    format!(
                        "the server at {} sent a value the shell cannot read: {why}",
                        self.address
                    ),
                ))
            })?;
        let result = QueryResult {
            columns: run.fields,
            rows: rows.into(),
            elapsed,
            plan,
            profile,
            counters: counters(&pulled.metadata),
        };
        Ok(Executed {
            result,
            graph: Box::new(EntitiesView(entities)),
        })
    }

    fn begin(&mut self) -> std::result::Result<(), ShellError> {
        self.client.begin().map_err(|e| self.failed(e))?;
        self.in_tx = true;
        Ok(())
    }

    fn commit(&mut self) -> std::result::Result<(), ShellError> {
        let committed = self.client.commit();
        let outcome = committed.map(drop).map_err(|e| self.failed(e));
        self.in_tx = false;
        outcome
    }

    fn rollback(&mut self) -> std::result::Result<(), ShellError> {
        let rolled_back = self.client.rollback();
        let outcome = rolled_back.map_err(|e| self.failed(e));
        self.in_tx = false;
        outcome
    }

    fn in_transaction(&self) -> bool {
        self.in_tx
    }

    fn schema(&mut self) -> std::result::Result<String, ShellError> {
        let mut out = String::new();
        for (title, query) in [
            (
                "Node labels",
                "MATCH (n) UNWIND labels(n) AS label RETURN ':' + label AS label, count(*) AS nodes ORDER BY label",
            ),
            (
                "Relationship types",
                "MATCH ()-[r]->() RETURN ':' + type(r) AS type, count(*) AS relationships ORDER BY type",
            ),
            ("Property keys", "CALL db.propertyKeys()"),
        ] {
            let result = self.rows(query)?;
            out.push_str(&format!("{title} ({}):\n", result.rows.len()));
            out.push_str(&grid(&result)?);
        }
        Ok(out)
    }

    fn stats(&mut self) -> std::result::Result<String, ShellError> {
        let result = self.rows(
            "CALL { MATCH (n) RETURN count(n) AS nodes } \
             CALL { MATCH ()-[r]->() RETURN count(r) AS relationships } \
             RETURN nodes, relationships",
        )?;
        grid(&result)
    }
}

/// A report's table without the footer.
fn grid(result: &QueryResult) -> std::result::Result<String, ShellError> {
    let table = render_table(result, &EntitiesView(Entities::default()))?;
    let body = table.trim_end_matches('\n');
    Ok(match body.rfind('\n') {
        Some(footer) => body[..=footer].to_string(),
        None => String::new(),
    })
}
