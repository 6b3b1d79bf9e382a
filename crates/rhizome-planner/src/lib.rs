//! Rhizome's query planner: turns an analysed Cypher statement into a
//! physical [`Plan`] that the runtime executes.
//!
//! Stages, each in its own module:
//! * `logical` (private) builds the plan clause by clause from the
//!   analysed AST (scopes to slots, patterns to scans and expands,
//!   projections, subqueries, unions, calls), making the cost-based choices
//!   of where patterns start and in which order they expand;
//! * [`rules`] rewrites it with small optimizer rules applied to a fixed
//!   point (filter push-down, index seeks, top-k, factorized counting, ...);
//! * [`cost`] fills the estimated rows EXPLAIN prints.
//!
//! Planning is a pure function of the analysed statement and the
//! [`PlannerContext`]: it never panics and reports constructs it cannot plan
//! (writes, schema commands) as `SemanticError`s saying they are not
//! supported yet. Every plan passes [`validate::validate_plan`] (each slot
//! read is bound below its reader) before it is returned.
//!
//! What is planned: `MATCH` / `OPTIONAL MATCH` (labels, property maps,
//! `WHERE`, bound variables, cycles, disconnected parts, variable length,
//! `shortestPath` / `allShortestPaths`, named paths, relationship
//! uniqueness), `WITH` / `RETURN` (aliases, `*`, `DISTINCT`, aggregation,
//! `ORDER BY`, `SKIP`, `LIMIT`, `WHERE`), `UNWIND`, `UNION [ALL]`,
//! `CALL proc(...) [YIELD ...]`, `CALL { }`, and every expression
//! (including `EXISTS { }`, `COUNT { }`, pattern predicates and
//! comprehensions, list comprehensions, quantifiers, `reduce`, `CASE`, map
//! projections).

pub mod context;
pub mod cost;
mod expr;
mod logical;
pub mod rules;
pub mod scopes;
pub mod slots;
pub mod usage;
pub mod validate;

pub use context::{Dir, EmptyContext, PlannerContext, ProcedureInfo};

use rhizome_common::{Error, ErrorKind, Result};
use rhizome_cypher::ast::{QueryPrefix, StatementKind};
use rhizome_cypher::AnalyzedStatement;
use rhizome_plan::{render_plan, Plan, PlanNode};

/// A planned statement: the plan plus how the caller asked to run it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStatement {
    /// The plan (rows have `plan.width` slots; results are `plan.columns`).
    pub plan: Plan,
    /// The statement was prefixed with `EXPLAIN`: show the plan, do not run it.
    pub explain: bool,
    /// The statement was prefixed with `PROFILE`: run it and report per-operator counters.
    pub profile: bool,
}

/// Plans an analysed statement.
///
/// Errors: `SemanticError` ("... is not supported yet") for updating
/// clauses and schema or administration commands, and for standalone calls
/// with implicit arguments to procedures the context does not know
/// (`ProcedureError`). Never panics.
pub fn plan_statement(
    analyzed: &AnalyzedStatement,
    ctx: &dyn PlannerContext,
) -> Result<PlannedStatement> {
    plan_statement_with(analyzed, ctx, &rules::all_rules())
}

/// [`plan_statement`] with the statement's scheduling hint
/// ([`scopes::split_hint`]) applied over the planner's choice of scopes.
pub fn plan_statement_hinted(
    analyzed: &AnalyzedStatement,
    ctx: &dyn PlannerContext,
    hint: Option<&scopes::SchedulingHint>,
) -> Result<PlannedStatement> {
    let rule_set = rules::all_rules();
    on_planner_thread(|| plan_on_this_thread(analyzed, ctx, &rule_set, hint))
}

/// [`plan_statement`] with a chosen set of optimizer rules (none: the plan
/// as constructed from the clauses). For tests and for debugging a rule.
pub fn plan_statement_with(
    analyzed: &AnalyzedStatement,
    ctx: &dyn PlannerContext,
    rule_set: &[Box<dyn rules::OptimizerRule>],
) -> Result<PlannedStatement> {
    // Planning walks the plan tree recursively; it runs on its own thread
    // with a stack sized for the deepest plan allowed (`MAX_PLAN_DEPTH`), and
    // a panic (a planner bug) becomes an internal error, not a crash.
    on_planner_thread(|| plan_on_this_thread(analyzed, ctx, rule_set, None))
}

/// Runs `f` on a thread with the planner's stack; a panic becomes an internal error.
fn on_planner_thread<T: Send>(f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("rhizome-planner".into())
            .stack_size(PLANNER_STACK_BYTES)
            .spawn_scoped(scope, f)
            .map_err(|e| Error::internal(format!("cannot start the planner thread: {e}")))?;
        worker.join().unwrap_or_else(|_| {
            Err(Error::internal(
                "the planner panicked (a bug in rhizome-planner)",
            ))
        })
    })
}

/// The deepest plan (operators from root to leaf) the planner builds; deeper
/// queries (e.g. patterns of thousands of relationships) are rejected.
pub const MAX_PLAN_DEPTH: usize = 4_000;

/// Stack of the planner thread: enough for [`MAX_PLAN_DEPTH`] in debug builds.
const PLANNER_STACK_BYTES: usize = 64 << 20;

/// Depth of a plan tree, without recursion.
fn plan_depth(root: &PlanNode) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 1usize)];
    while let Some((n, d)) = stack.pop() {
        deepest = deepest.max(d);
        stack.extend(n.inputs.iter().map(|i| (i, d + 1)));
    }
    deepest
}

fn plan_on_this_thread(
    analyzed: &AnalyzedStatement,
    ctx: &dyn PlannerContext,
    rule_set: &[Box<dyn rules::OptimizerRule>],
    hint: Option<&scopes::SchedulingHint>,
) -> Result<PlannedStatement> {
    let statement = &analyzed.statement;
    let explain = statement.prefix == Some(QueryPrefix::Explain);
    let profile = statement.prefix == Some(QueryPrefix::Profile);
    let query = match &statement.kind {
        StatementKind::Query(q) => q,
        StatementKind::CreateIndex(_) => return Err(logical::unsupported("CREATE INDEX")),
        StatementKind::DropIndex(_) => return Err(logical::unsupported("DROP INDEX")),
        StatementKind::CreateConstraint(_) => {
            return Err(logical::unsupported("CREATE CONSTRAINT"))
        }
        StatementKind::DropConstraint(_) => return Err(logical::unsupported("DROP CONSTRAINT")),
        StatementKind::ShowIndexes => return Err(logical::unsupported("SHOW INDEXES")),
        StatementKind::ShowConstraints => return Err(logical::unsupported("SHOW CONSTRAINTS")),
        StatementKind::ShowTransactions => return Err(logical::unsupported("SHOW TRANSACTIONS")),
        StatementKind::TerminateTransactions(_) => {
            return Err(logical::unsupported("TERMINATE TRANSACTIONS"))
        }
        StatementKind::Begin | StatementKind::Commit | StatementKind::Rollback => {
            return Err(logical::unsupported("transaction control"))
        }
    };
    let mut planner = logical::Planner::new(ctx);
    planner.analyzed_columns = analyzed.columns.clone();
    let planned = planner.query(
        query,
        logical::argument(),
        &logical::Scope::default(),
        false,
    )?;
    if plan_depth(&planned.plan) > MAX_PLAN_DEPTH {
        return Err(Error::new(
            ErrorKind::SemanticError,
            format!("the query is too large to plan (more than {MAX_PLAN_DEPTH} nested operators)"),
        ));
    }
    let mut columns = planned.columns;
    // The analysed names are authoritative (e.g. `RETURN *` ordering).
    if columns.len() == analyzed.columns.len() {
        for (c, name) in columns.iter_mut().zip(&analyzed.columns) {
            c.0 = name.clone();
        }
    }
    let mut slots = planner.slots;
    let mut rule_ctx = rules::RuleContext {
        ctx,
        columns: columns.iter().map(|(_, s)| *s).collect(),
        slots: &mut slots,
    };
    let root = if planned.plan.has_updates() {
        rules::optimize_around_writes(planned.plan, rule_set, &mut rule_ctx)
    } else {
        rules::optimize_with(planned.plan, rule_set, &mut rule_ctx)
    };
    let mut root = scopes::choose_scopes(root, hint);
    cost::annotate(&mut root, ctx);
    let width = slots.width();
    let updating = root.has_updates();
    let plan = Plan {
        root,
        width,
        columns,
        slot_names: slots.into_names(),
        ordered: planned.ordered,
        updating,
    };
    validate::validate_plan(&plan)?;
    Ok(PlannedStatement {
        plan,
        explain,
        profile,
    })
}

/// The EXPLAIN text of a planned statement: the operator tree with
/// estimated rows and the optimizer rule behind each changed operator (the
/// plans of expression subqueries — `EXISTS`, `COUNT`, pattern
/// comprehensions — listed under their operator after its inputs, marked
/// `[COUNT subquery]`), followed by the result columns.
pub fn explain(planned: &PlannedStatement) -> String {
    // Rendering recurses over the tree like planning does.
    on_planner_thread(|| Ok(explain_on_this_thread(planned)))
        .unwrap_or_else(|e| format!("(cannot render the plan: {e})\n"))
}

fn explain_on_this_thread(planned: &PlannedStatement) -> String {
    let mut out = render_plan(&planned.plan, &mut |_, _| String::new());
    let cols: Vec<&str> = planned
        .plan
        .columns
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    out.push_str(&format!("Columns: {}\n", cols.join(", ")));
    out
}
