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
use crate::graph::{GraphView, Properties};
use crate::schema::{
    listing, render_schema_report, render_stats_report, DegreeReport, Listing, RelTypeReport,
    SchemaReport, StatsReport, PROPERTY_SCAN_LIMIT, SHOW_CONSTRAINTS, SHOW_INDEXES,
};
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use rhizome_exec::{OperatorProfile, ProfileReport};
use rhizome_plan::{profile_annotation, render_outline, PlanOutline};
use rhizome_server::client::records::Entities;
use rhizome_server::client::{self, Auth, BoltUri, ClientError, ConnectOptions, Connection};
use rhizome_server::packstream::PackValue;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a running statement checks for Ctrl-C.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// Statements run by a server.
pub struct Remote {
    client: Connection,
    address: String,
    /// The URI connected to, as `:stats` names the database.
    uri: String,
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
            login_timeout: None,
        };
        let client = client::open(uri, auth, &options).map_err(|e| rendered(e, &uri.address))?;
        Ok(Remote {
            client,
            address: uri.address.clone(),
            uri: format!("{}://{}", uri.scheme, uri.address),
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
    let mut name = text(operator.get("operatorType"));
    if let Some(kind) = arg("Subquery") {
        // The root of a plan nested in an expression of its parent.
        name = format!("[{} subquery] {name}", text(Some(kind)));
    }
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
        Ok(render_schema_report(&self.schema_report()?))
    }

    fn stats(&mut self) -> std::result::Result<String, ShellError> {
        Ok(render_stats_report(&self.stats_report()?))
    }
}

/// The text of a string value (empty for anything else).
fn string_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// A count value (0 for anything else).
fn count_of(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::Int(n)) => (*n).max(0) as u64,
        _ => 0,
    }
}

/// The strings of a list value.
fn strings_of(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::List(items)) => items.iter().map(|v| string_of(Some(v))).collect(),
        _ => Vec::new(),
    }
}

/// Degree summary columns of the queries in [`Remote::stats_report`]:
/// type, nodes with at least one, relationships, largest degree.
fn degrees(result: &QueryResult) -> HashMap<String, (u64, u64, u64)> {
    (&result.rows)
        .into_iter()
        .map(|row| {
            let at = |i: usize| row.get(i);
            (
                string_of(at(0)),
                (count_of(at(1)), count_of(at(2)), count_of(at(3))),
            )
        })
        .collect()
}

/// Relationships of one type per `(start label, end label)`, ordered by
/// the labels' catalog positions, then names.
type PatternCounts = BTreeMap<(Option<usize>, Option<usize>, String, String), u64>;

/// `rels / nodes`, 0 for no nodes.
fn mean(nodes: u64, rels: u64) -> f64 {
    if nodes == 0 {
        0.0
    } else {
        rels as f64 / nodes as f64
    }
}

impl Remote {
    /// The first column of `query`'s rows, as strings.
    fn names(&mut self, query: &str) -> std::result::Result<Vec<String>, ShellError> {
        let result = self.rows(query)?;
        Ok((&result.rows)
            .into_iter()
            .map(|row| string_of(row.first()))
            .collect())
    }

    /// `(name, count)` rows of `query` as a map.
    fn counts(&mut self, query: &str) -> std::result::Result<HashMap<String, u64>, ShellError> {
        let result = self.rows(query)?;
        Ok((&result.rows)
            .into_iter()
            .map(|row| (string_of(row.first()), count_of(row.get(1))))
            .collect())
    }

    /// A `SHOW` statement's rows, or why they could not be had.
    fn listing(&mut self, (statement, columns): &(&str, [&str; 6])) -> Listing {
        match self.rows(statement) {
            Ok(result) => Ok(listing(&result, columns)),
            Err(ShellError::Remote(text)) => Err(text),
            Err(ShellError::Local(error)) => Err(error.to_string()),
        }
    }

    /// The node and relationship totals.
    fn totals(&mut self) -> std::result::Result<(u64, u64), ShellError> {
        let result = self.rows(
            "CALL { MATCH (n) RETURN count(n) AS nodes } \
             CALL { MATCH ()-[r]->() RETURN count(r) AS relationships } \
             RETURN nodes, relationships",
        )?;
        let row = result.rows.first();
        Ok((
            count_of(row.and_then(|r| r.first())),
            count_of(row.and_then(|r| r.get(1))),
        ))
    }

    /// `:schema` gathered with Cypher: names in the server's catalog order
    /// (as a local report lists them), counts by scanning.
    fn schema_report(&mut self) -> std::result::Result<SchemaReport, ShellError> {
        let label_names = self.names("CALL db.labels()")?;
        let label_counts =
            self.counts("MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS nodes")?;
        let labels = label_names
            .iter()
            .map(|name| (name.clone(), label_counts.get(name).copied().unwrap_or(0)))
            .collect();
        let type_names = self.names("CALL db.relationshipTypes()")?;
        let triples = self.rows(
            "MATCH (a)-[r]->(b) \
             RETURN type(r) AS type, labels(a) AS from, labels(b) AS to, count(*) AS n",
        )?;
        let label_rank = |name: &str| label_names.iter().position(|l| l == name);
        let mut type_counts: HashMap<String, u64> = HashMap::new();
        let mut patterns: HashMap<String, PatternCounts> = HashMap::new();
        for row in &triples.rows {
            let rel_type = string_of(row.first());
            let n = count_of(row.get(3));
            *type_counts.entry(rel_type.clone()).or_default() += n;
            let of_type = patterns.entry(rel_type).or_default();
            for from in strings_of(row.get(1)) {
                for to in strings_of(row.get(2)) {
                    let key = (label_rank(&from), label_rank(&to), from.clone(), to);
                    *of_type.entry(key).or_default() += n;
                }
            }
        }
        let rel_types = type_names
            .into_iter()
            .map(|name| RelTypeReport {
                count: type_counts.get(&name).copied().unwrap_or(0),
                patterns: patterns
                    .remove(&name)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|((_, _, from, to), n)| (from, to, n))
                    .collect(),
                name,
            })
            .collect();
        let property_keys = self.names("CALL db.propertyKeys()")?;
        let (nodes, relationships) = self.totals()?;
        let key_counts = if nodes + relationships > PROPERTY_SCAN_LIMIT {
            None
        } else {
            let on_nodes =
                self.counts("MATCH (n) UNWIND keys(n) AS key RETURN key, count(*) AS n")?;
            let on_rels =
                self.counts("MATCH ()-[r]->() UNWIND keys(r) AS key RETURN key, count(*) AS n")?;
            let per_key = |counts: &HashMap<String, u64>| {
                property_keys
                    .iter()
                    .map(|k| counts.get(k).copied().unwrap_or(0))
                    .collect()
            };
            Some((per_key(&on_nodes), per_key(&on_rels)))
        };
        Ok(SchemaReport {
            labels,
            rel_types,
            key_counts,
            property_keys,
            indexes: self.listing(&SHOW_INDEXES),
            constraints: self.listing(&SHOW_CONSTRAINTS),
        })
    }

    /// `:stats` gathered with Cypher (degrees by scanning).
    fn stats_report(&mut self) -> std::result::Result<StatsReport, ShellError> {
        let (nodes, relationships) = self.totals()?;
        let labels = self.names("CALL db.labels()")?.len();
        let type_names = self.names("CALL db.relationshipTypes()")?;
        let property_keys = self.names("CALL db.propertyKeys()")?.len();
        let outgoing = degrees(&self.rows(
            "MATCH (a)-[r]->() WITH type(r) AS type, a, count(*) AS d \
             RETURN type, count(*) AS nodes, sum(d) AS rels, max(d) AS most",
        )?);
        let incoming = degrees(&self.rows(
            "MATCH ()-[r]->(b) WITH type(r) AS type, b, count(*) AS d \
             RETURN type, count(*) AS nodes, sum(d) AS rels, max(d) AS most",
        )?);
        let rel_types = type_names.len();
        let degrees = type_names
            .into_iter()
            .map(|name| {
                let (out_nodes, count, out_max) = outgoing.get(&name).copied().unwrap_or_default();
                let (in_nodes, in_rels, in_max) = incoming.get(&name).copied().unwrap_or_default();
                DegreeReport {
                    count,
                    out_mean: mean(out_nodes, count),
                    out_max,
                    in_mean: mean(in_nodes, in_rels),
                    in_max,
                    name,
                }
            })
            .collect();
        Ok(StatsReport {
            database: self.uri.clone(),
            nodes,
            relationships,
            labels,
            rel_types,
            property_keys,
            indexes: self.listing(&SHOW_INDEXES).ok().map(|rows| rows.len()),
            degrees,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_plan::PlanDescription;
    use rhizome_server::packstream::map;

    const PLAN: &str = "\
Top p.name LIMIT 3  [est. 3 rows] [limit_to_top]
└─ Aggregate keys [p.name AS name], aggregates [CountStar() AS count(*)]  [est. 4 rows]
   ├─ Filter (m.released > 1990)  [est. 16 rows]
   │  └─ Expand (p)-[  anon_0:ACTED_IN]->(m)  [est. 54 rows]
   └─ LabelScan (p:Person)  [est. 56 rows]
      └─ Argument  [est. 1 rows]
";

    /// One operator of [`PLAN`] as the engine describes it.
    fn op(
        id: usize,
        name: &'static str,
        details: &str,
        estimated_rows: f64,
        rule: Option<&'static str>,
        children: Vec<PlanDescription>,
    ) -> PlanDescription {
        PlanDescription {
            id: Some(id),
            name,
            details: details.to_string(),
            estimated_rows,
            rule,
            subquery: None,
            identifiers: Vec::new(),
            children,
        }
    }

    /// [`PLAN`] as the structured tree the server sends.
    fn plan_description() -> PlanDescription {
        let scan = op(
            4,
            "LabelScan",
            "(p:Person)",
            56.0,
            None,
            vec![op(5, "Argument", "", 1.0, None, vec![])],
        );
        let expand = op(
            3,
            "Expand",
            "(p)-[  anon_0:ACTED_IN]->(m)",
            54.0,
            None,
            vec![],
        );
        let filter = op(2, "Filter", "(m.released > 1990)", 16.0, None, vec![expand]);
        let aggregate = op(
            1,
            "Aggregate",
            "keys [p.name AS name], aggregates [CountStar() AS count(*)]",
            4.0,
            None,
            vec![filter, scan],
        );
        op(
            0,
            "Top",
            "p.name LIMIT 3",
            3.0,
            Some("limit_to_top"),
            vec![aggregate],
        )
    }

    fn summary_of(result: &QueryResult) -> PackValue {
        let plan = plan_description();
        PackValue::Map(rhizome_server::plan::summary_entries(
            result,
            Some(&plan),
            false,
        ))
    }

    #[test]
    fn a_plan_the_server_sent_prints_as_the_engine_printed_it() {
        let explained = QueryResult {
            plan: Some(format!("{PLAN}Columns: name, count(*)\n")),
            ..QueryResult::default()
        };
        let fields = ["name".to_string(), "count(*)".to_string()];
        let (plan, profile) = plan_of(&summary_of(&explained), &fields, Duration::ZERO);
        assert_eq!(plan.as_deref(), explained.plan.as_deref());
        assert!(profile.is_none());

        let counters = |id: usize| OperatorProfile {
            id,
            rows: 10 * id as u64,
            time: Duration::from_micros(1500 + id as u64),
            morsels: id as u64 + 1,
            workers: 2,
        };
        let operators: Vec<OperatorProfile> = (0..6).map(counters).collect();
        let mut lines = PLAN.lines();
        let text: String = operators
            .iter()
            .map(|o| {
                let annotation = profile_annotation(o.rows, o.time, o.morsels, o.workers);
                format!("{} {annotation}\n", lines.next().unwrap())
            })
            .collect();
        let profiled = QueryResult {
            profile: Some(ProfileReport {
                operators: operators.clone(),
                wall: Duration::from_millis(3),
                busy: Duration::from_millis(2),
                text: text.clone(),
            }),
            ..QueryResult::default()
        };
        let (plan, profile) = plan_of(&summary_of(&profiled), &fields, Duration::from_millis(3));
        assert!(plan.is_none());
        let profile = profile.unwrap();
        assert_eq!(profile.text, text);
        assert_eq!(profile.operators, operators);
    }

    #[test]
    fn odd_plans_never_panic_and_deep_ones_are_cut() {
        let mut deep = map([("operatorType", "Argument".into())]);
        for _ in 0..(MAX_PLAN_DEPTH + 100) {
            deep = map([
                ("operatorType", "Apply".into()),
                ("children", PackValue::List(vec![deep])),
            ]);
        }
        for summary in [
            map([("plan", PackValue::Int(1))]),
            map([("plan", map([("children", "x".into())]))]),
            map([(
                "profile",
                map([
                    ("args", PackValue::List(vec![])),
                    ("rows", PackValue::Int(-5)),
                    ("time", PackValue::Float(f64::NAN)),
                ]),
            )]),
            map([("profile", deep.clone())]),
            map([("plan", deep)]),
        ] {
            let (plan, profile) = plan_of(&summary, &[], Duration::ZERO);
            let text = plan.or(profile.map(|p| p.text)).unwrap();
            assert!(text.lines().count() <= MAX_PLAN_DEPTH + 2, "{}", text.len());
        }
    }
}
