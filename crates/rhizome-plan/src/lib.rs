//! The physical query plan: what the planner produces and the runtime executes.
//!
//! A plan is a tree of [`PlanNode`]s over one *slot space*: every variable
//! and every intermediate value of the query has a [`Slot`] number, and every
//! row flowing through the plan has `width` slots (unset slots are null).
//! Operators read slots and write new ones; nothing is renamed. A nested plan
//! (the inner side of an apply, an `EXISTS` subquery) starts from an
//! [`OpKind::Argument`] that produces the outer row itself, so inner plans
//! see every outer slot.
//!
//! Labels, relationship types and property keys are names here, resolved by
//! the runtime against the snapshot it reads (a name the graph does not know
//! matches nothing). Expressions are trees of [`Expr`]; comparison chains,
//! `IS NOT NULL` and the like are already desugared by the planner.

mod describe;
mod display;
mod tree;
pub mod usage;

pub use describe::{describe_plan, PlanDescription};
pub use display::{profile_annotation, render_outline, render_plan, ExprDisplay, PlanOutline};

use rhizome_common::Value;
pub use rhizome_common::{AggregateKind, Quantifier, ShortestPathKind, UnaryOp};

/// Index of a value in a row.
pub type Slot = usize;

/// A complete plan ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The root operator.
    pub root: PlanNode,
    /// Number of slots in a row.
    pub width: usize,
    /// Result columns: name and the slot holding the value.
    pub columns: Vec<(String, Slot)>,
    /// A name for every slot (variables by name, temporaries as `  anon_N`), for EXPLAIN.
    pub slot_names: Vec<String>,
    /// Whether the result order is significant (the query ends in `ORDER BY`).
    pub ordered: bool,
    /// Whether the plan writes (contains an updating operator). Such a plan
    /// runs against one write transaction, its pipelines in order on one
    /// task, and its reads see the transaction's writes at every
    /// [`OpKind::Eager`] barrier.
    pub updating: bool,
}

/// One operator with its inputs and the planner's row estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanNode {
    /// What the operator does.
    pub kind: OpKind,
    /// Inputs; how many and what they mean is documented on each [`OpKind`].
    pub inputs: Vec<PlanNode>,
    /// Estimated number of rows this operator produces.
    pub estimated_rows: f64,
    /// Which optimizer rule produced or last changed this operator (for EXPLAIN).
    pub rule: Option<&'static str>,
}

impl PlanNode {
    /// A node with the given inputs and estimate.
    pub fn new(kind: OpKind, inputs: Vec<PlanNode>, estimated_rows: f64) -> PlanNode {
        PlanNode {
            kind,
            inputs,
            estimated_rows,
            rule: None,
        }
    }

    /// Visits this node and its inputs, depth first (not plans nested in expressions).
    pub fn walk(&self, f: &mut dyn FnMut(&PlanNode)) {
        f(self);
        for input in &self.inputs {
            input.walk(f);
        }
    }
}

/// Direction of an expansion relative to the node expanded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExpandDirection {
    /// Follow outgoing relationships.
    Outgoing,
    /// Follow incoming relationships.
    Incoming,
    /// Both (each relationship once per direction it is seen from; a self
    /// loop is found once).
    Both,
}

/// Bounds of an index range seek.
#[derive(Debug, Clone, PartialEq)]
pub enum SeekBound {
    /// No bound.
    Unbounded,
    /// `>= expr` / `<= expr`.
    Inclusive(Expr),
    /// `> expr` / `< expr`.
    Exclusive(Expr),
}

/// How an index is probed.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexLookup {
    /// Equality with the value of an expression (a list value from `IN` seeks each element).
    Equal(Expr),
    /// Any of the values of a list expression (`n.key IN [...]`).
    AnyOf(Expr),
    /// A range.
    Range(SeekBound, SeekBound),
}

/// Sort key.
#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    /// Slot holding the key (the planner projects sort expressions first).
    pub slot: Slot,
    /// Descending.
    pub descending: bool,
}

/// One aggregate computed by [`OpKind::Aggregate`].
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateItem {
    /// Output slot.
    pub slot: Slot,
    /// The function.
    pub function: AggregateKind,
    /// Arguments (none for `count(*)`; the percentile is the second).
    pub args: Vec<Expr>,
    /// `DISTINCT` inside the call.
    pub distinct: bool,
}

impl AggregateItem {
    /// True if the aggregate's result over a multiset of rows equals its
    /// result over the set of their values (`min`, `max`, any `DISTINCT`
    /// aggregate): duplicate rows cannot change it.
    pub fn ignores_duplicates(&self) -> bool {
        self.distinct || matches!(self.function, AggregateKind::Min | AggregateKind::Max)
    }
}

/// Operators. `inputs` of the [`PlanNode`] are noted per variant; "input" alone means one.
#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    /// No inputs. Produces one row: the outer row of the enclosing apply, or
    /// an empty row at the top of a plan.
    Argument,
    /// Input: the rows to extend. For every input row and every node, writes `out`.
    AllNodesScan {
        /// Slot of the node.
        out: Slot,
    },
    /// Input: the rows to extend. Nodes carrying `label`.
    LabelScan {
        /// Slot of the node.
        out: Slot,
        /// The label.
        label: String,
    },
    /// Input: the rows to extend. Nodes with `label` found by the index on `key`.
    IndexSeek {
        /// Slot of the node.
        out: Slot,
        /// The label.
        label: String,
        /// The property key.
        key: String,
        /// How to probe.
        lookup: IndexLookup,
    },
    /// Input: the rows to extend. The node with the given id (from `id(n) = expr`), if it exists.
    NodeByIdSeek {
        /// Slot of the node.
        out: Slot,
        /// The id (or a list of ids).
        ids: Expr,
    },
    /// Input. For each row, each relationship of `from` matching types and
    /// direction: writes the relationship to `rel` and the other node to `to`.
    /// With `optional`, a row without matches is kept once with nulls.
    Expand {
        /// Node to expand from.
        from: Slot,
        /// Slot for the relationship (always written; the planner may leave it unused).
        rel: Slot,
        /// Slot for the neighbour.
        to: Slot,
        /// Allowed types; empty means any.
        types: Vec<String>,
        /// Direction.
        direction: ExpandDirection,
        /// Labels the neighbour must carry.
        to_labels: Vec<String>,
        /// Relationships (slots, single relationships or lists) this one must differ from.
        distinct_from: Vec<Slot>,
        /// Keep rows without matches (with nulls).
        optional: bool,
    },
    /// Input. Like `Expand` but both ends are bound: keeps the relationships
    /// between `from` and `to`.
    ExpandInto {
        /// One end.
        from: Slot,
        /// Slot for the relationship.
        rel: Slot,
        /// The other end (already bound).
        to: Slot,
        /// Allowed types; empty means any.
        types: Vec<String>,
        /// Direction from `from` to `to`.
        direction: ExpandDirection,
        /// Relationships this one must differ from.
        distinct_from: Vec<Slot>,
        /// Keep rows without matches (with nulls).
        optional: bool,
    },
    /// Input. Paths of `min..=max` relationships from `from`, no relationship
    /// twice in a path; writes the list of relationships to `rels` and the
    /// last node to `to`. With `into`, `to` is bound and only paths ending
    /// there are kept.
    VarExpand {
        /// Start node.
        from: Slot,
        /// Slot for the list of relationships.
        rels: Slot,
        /// End node.
        to: Slot,
        /// Allowed types; empty means any.
        types: Vec<String>,
        /// Direction.
        direction: ExpandDirection,
        /// Fewest hops.
        min: u64,
        /// Most hops (`None` = unbounded).
        max: Option<u64>,
        /// Labels the end node must carry.
        to_labels: Vec<String>,
        /// Predicate every relationship of the path must satisfy, with the
        /// relationship bound to `rel_var` (from `{k: v}` maps or `all(r IN rels WHERE ...)`).
        rel_predicate: Option<(Slot, Expr)>,
        /// Predicate every node of the path from a hop on must satisfy
        /// (from `all(x IN nodes(path)[k..] WHERE ...)`): a prefix whose
        /// node fails is not extended.
        node_predicate: Option<PathNodePredicate>,
        /// How the paths of the input rows (the loop scope's instances)
        /// are scheduled (docs/scheduling.md).
        scope: LoopScope,
        /// `to` is already bound.
        into: bool,
        /// Relationships outside the path that path relationships must differ from.
        distinct_from: Vec<Slot>,
        /// Keep rows without matches (with nulls).
        optional: bool,
    },
    /// Input. Shortest path(s) between two bound nodes; writes the path.
    ShortestPath {
        /// Start node.
        from: Slot,
        /// End node.
        to: Slot,
        /// Slot for the path.
        path: Slot,
        /// Slot for the relationship list, if the pattern names it.
        rels: Option<Slot>,
        /// Allowed types.
        types: Vec<String>,
        /// Direction.
        direction: ExpandDirection,
        /// Fewest hops (0 or 1).
        min: u64,
        /// Most hops.
        max: Option<u64>,
        /// One or all.
        kind: ShortestPathKind,
        /// Predicate on the whole path, with the path in its slot (`WHERE` parts that mention the path).
        path_predicate: Option<Expr>,
        /// Keep rows without a path (with null).
        optional: bool,
    },
    /// Input. Keeps rows where the predicate is true.
    Filter {
        /// The predicate.
        predicate: Expr,
    },
    /// Input. Writes each expression's value into its slot.
    Project {
        /// (slot, value) pairs, evaluated in order (later ones may read earlier ones).
        items: Vec<(Slot, Expr)>,
    },
    /// Input. Groups by the key slots' values and computes aggregates; a pipeline breaker.
    /// Without keys, produces exactly one row even for empty input.
    Aggregate {
        /// Grouping keys: (slot, expression).
        keys: Vec<(Slot, Expr)>,
        /// Aggregates.
        aggregates: Vec<AggregateItem>,
    },
    /// Input. Drops rows whose values in `slots` were seen before.
    Distinct {
        /// Slots compared.
        slots: Vec<Slot>,
    },
    /// Input. Sorts by the keys (stable); a pipeline breaker.
    Sort {
        /// Keys in priority order.
        keys: Vec<SortKey>,
    },
    /// Input. The first `limit` rows in key order (skip + limit when combined).
    Top {
        /// Keys in priority order.
        keys: Vec<SortKey>,
        /// How many rows to keep (a constant expression).
        limit: Expr,
    },
    /// Input. Drops the first `count` rows.
    Skip {
        /// A constant expression.
        count: Expr,
    },
    /// Input. Keeps the first `count` rows and stops all work upstream once they are found.
    Limit {
        /// A constant expression.
        count: Expr,
    },
    /// Input. One row per element of the list (a non-list value is a one-element list, null none).
    Unwind {
        /// The list.
        list: Expr,
        /// Slot for the element.
        out: Slot,
    },
    /// Inputs: [input, inner]. For each input row, runs `inner` (whose
    /// `Argument` yields that row); emits its rows, or the input row with
    /// `nullable` slots set to null if it produced none (`OPTIONAL MATCH`).
    Optional {
        /// Slots the inner side binds, nulled when it finds nothing.
        nullable: Vec<Slot>,
        /// How the inner runs (the branch scope's instances) are scheduled
        /// (docs/scheduling.md).
        scope: LoopScope,
    },
    /// Inputs: [input, inner]. For each input row, emits the rows of `inner` run with it.
    Apply {
        /// How the inner runs (the branch scope's instances) are scheduled.
        scope: LoopScope,
    },
    /// Inputs: [input, inner]. Keeps input rows for which `inner` produces at
    /// least one row (`anti`: none). Stops the inner run at its first row.
    SemiApply {
        /// Keep rows with no match instead.
        anti: bool,
        /// How the inner runs (the branch scope's instances) are scheduled.
        scope: LoopScope,
    },
    /// Inputs: [left, right]. Every combination; right is computed once.
    CartesianProduct,
    /// Inputs: [build, probe]. Joins rows whose key slots are equal (nulls never match).
    HashJoin {
        /// Key slots on the build side.
        build_keys: Vec<Slot>,
        /// Key slots on the probe side, pairwise with `build_keys`.
        probe_keys: Vec<Slot>,
    },
    /// Inputs: the branches, each writing the same output slots. `distinct` removes duplicates.
    Union {
        /// `UNION` (not `UNION ALL`).
        distinct: bool,
        /// The output slots (compared by `distinct`).
        slots: Vec<Slot>,
    },
    /// Input. Calls a procedure per input row; writes yielded fields.
    ProcedureCall {
        /// Qualified name, e.g. `db.labels`.
        name: String,
        /// Arguments.
        args: Vec<Expr>,
        /// (output field, slot) pairs.
        yields: Vec<(String, Slot)>,
    },
    /// Input. Factorized last hop of a counting query: for each row, writes
    /// to `count_slot` the number of relationships of `from` matching types,
    /// direction, neighbour labels, the relationship predicate and
    /// distinctness — the rows an `Expand` would have produced — without
    /// producing them. The planner sums `count_slot` instead of counting rows.
    ExpandCount {
        /// Node the walk starts from.
        from: Slot,
        /// Hops walked before the counted one, never materialized: each
        /// relationship of the walk is distinct from the others and from
        /// `distinct_from`, and the counted hop starts where the last one ends.
        prefix: Vec<CountHop>,
        /// Allowed types.
        types: Vec<String>,
        /// Direction.
        direction: ExpandDirection,
        /// Labels the neighbour must carry.
        to_labels: Vec<String>,
        /// Predicate on the relationship, with it bound to the slot.
        rel_predicate: Option<(Slot, Expr)>,
        /// Relationships that must not be counted.
        distinct_from: Vec<Slot>,
        /// Slot receiving the count for this row.
        count_slot: Slot,
    },
    /// Input: rows whose `from` node starts a walk; a pipeline breaker.
    /// Produces one row per distinct node that ends a walk over `hops`
    /// from any input row's `from` (null `from`s start none), with the node
    /// in `to` and every other slot null — what a duplicate-insensitive
    /// aggregate over the paths' last node needs, without the paths.
    /// Consecutive hops never reuse a relationship (kept exactly: a node
    /// reached by one relationship only may not leave over the same one);
    /// the planner uses it only where other pairs of hops cannot share a
    /// relationship (their types are disjoint) and no hop must differ from a
    /// relationship bound outside the walk.
    DistinctEndpoints {
        /// Node every walk starts from.
        from: Slot,
        /// The hops, in pattern order (at least one).
        hops: Vec<FrontierHop>,
        /// Slot receiving each distinct end node.
        to: Slot,
    },
    /// Input. A barrier: every input row is produced (and every write below
    /// done) before the first row leaves. Write operators sit between two
    /// barriers, so reads before a write never see its effects and reads
    /// after it see all of them.
    Eager,
    /// Input. For each row, in order, creates the nodes, then the
    /// relationships, writing them to their slots. Updating.
    Create {
        /// Nodes created (unbound pattern nodes), in pattern order.
        nodes: Vec<CreateNode>,
        /// Relationships created, in pattern order.
        rels: Vec<CreateRel>,
    },
    /// Input. For each row, applies the assignments in order (each sees the
    /// previous ones). Updating.
    SetItems {
        /// The assignments.
        items: Vec<SetItem>,
    },
    /// Input. For each row, removes properties and labels in order. Updating.
    RemoveItems {
        /// What is removed.
        items: Vec<RemoveItem>,
    },
    /// Input. For each row deletes the entities (nodes, relationships, the
    /// parts of paths; null is skipped; an entity deleted before by the same
    /// statement is skipped). Relationships go first; a node deleted without
    /// `detach` that still has relationships when the statement ends fails
    /// the statement (`ConstraintVerificationFailed`). Updating.
    Delete {
        /// The entities.
        exprs: Vec<Expr>,
        /// `DETACH DELETE`.
        detach: bool,
    },
    /// Inputs: [input, match]. For each input row, runs `match` (its
    /// `Argument` yields the row) against the current state; if it produces
    /// rows, applies `on_match` to each and emits them; otherwise creates
    /// `nodes` and `rels` on the row, applies `on_create` and emits it. A
    /// later row sees what earlier rows created. Updating.
    Merge {
        /// Nodes created when nothing matches.
        nodes: Vec<CreateNode>,
        /// Relationships created when nothing matches.
        rels: Vec<CreateRel>,
        /// `ON CREATE SET` assignments.
        on_create: Vec<SetItem>,
        /// `ON MATCH SET` assignments.
        on_match: Vec<SetItem>,
    },
    /// Inputs: [input, body]. For each input row and each element of `list`
    /// (null: none), runs the updating `body` with the element in
    /// `variable`; emits the input row once. Updating.
    Foreach {
        /// Slot of the loop variable.
        variable: Slot,
        /// The list.
        list: Expr,
    },
}

impl OpKind {
    /// Whether the operator writes to the graph.
    pub fn is_update(&self) -> bool {
        matches!(
            self,
            OpKind::Create { .. }
                | OpKind::SetItems { .. }
                | OpKind::RemoveItems { .. }
                | OpKind::Delete { .. }
                | OpKind::Merge { .. }
                | OpKind::Foreach { .. }
        )
    }
}

impl PlanNode {
    /// Whether this node or anything below it (inputs, not expressions) writes.
    pub fn has_updates(&self) -> bool {
        let mut found = false;
        self.walk(&mut |n| found |= n.kind.is_update() || matches!(n.kind, OpKind::Eager));
        found
    }
}

/// A node made by [`OpKind::Create`] or [`OpKind::Merge`].
#[derive(Debug, Clone, PartialEq)]
pub struct CreateNode {
    /// Slot receiving the new node.
    pub slot: Slot,
    /// Its labels.
    pub labels: Vec<String>,
    /// Its properties: a map expression (null entries are skipped).
    pub properties: Option<Expr>,
}

/// A relationship made by [`OpKind::Create`] or [`OpKind::Merge`], after the nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateRel {
    /// Slot receiving the new relationship.
    pub slot: Slot,
    /// Slot of the start node (bound or created by the same operator).
    pub start: Slot,
    /// Slot of the end node.
    pub end: Slot,
    /// The type.
    pub rel_type: String,
    /// Its properties: a map expression.
    pub properties: Option<Expr>,
}

/// One assignment of [`OpKind::SetItems`] (and of `MERGE`'s actions).
#[derive(Debug, Clone, PartialEq)]
pub enum SetItem {
    /// `entity.key = value` (null removes the property; a null entity is skipped).
    Property {
        /// The node or relationship.
        entity: Expr,
        /// The key.
        key: String,
        /// The value.
        value: Expr,
    },
    /// `entity = map` (`replace`: all other properties are removed) or `entity += map`.
    Properties {
        /// The node or relationship.
        entity: Expr,
        /// A map, node or relationship whose properties are copied.
        map: Expr,
        /// `=` rather than `+=`.
        replace: bool,
    },
    /// `entity:A:B`.
    Labels {
        /// The node.
        entity: Expr,
        /// Labels added.
        labels: Vec<String>,
    },
}

/// One item of [`OpKind::RemoveItems`].
#[derive(Debug, Clone, PartialEq)]
pub enum RemoveItem {
    /// `entity.key`.
    Property {
        /// The node or relationship.
        entity: Expr,
        /// The key.
        key: String,
    },
    /// `entity:A:B`.
    Labels {
        /// The node.
        entity: Expr,
        /// Labels removed.
        labels: Vec<String>,
    },
}

/// One hop of the walk before an [`OpKind::ExpandCount`]'s counted hop.
#[derive(Debug, Clone, PartialEq)]
pub struct CountHop {
    /// Allowed types; empty means any.
    pub types: Vec<String>,
    /// Direction.
    pub direction: ExpandDirection,
    /// Labels the hop's end node must carry.
    pub to_labels: Vec<String>,
    /// Predicate on the hop's relationship, with it bound to the slot.
    pub rel_predicate: Option<(Slot, Expr)>,
}

/// A predicate on the nodes of an [`OpKind::VarExpand`] path: the node
/// reached after hop `from_hop` and every later one (hop 0 is the start
/// node) must make `predicate` true with the node bound to `var`, or the
/// path is dropped and not extended. Sound because a path's node list is
/// its prefixes' node lists plus one node: a prefix with a failing node
/// cannot extend to a passing path.
#[derive(Debug, Clone, PartialEq)]
pub struct PathNodePredicate {
    /// Slot the node is bound to while `predicate` runs.
    pub var: Slot,
    /// The predicate (may hold subqueries reading `var`).
    pub predicate: Expr,
    /// The first node position tested: `k` of `nodes(path)[k..]`.
    pub from_hop: u64,
}

/// The order in which a scope runs its instances' pending work
/// (docs/scheduling.md, "Scopes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScopePolicy {
    /// No scope: the plain pipelined operator (each input row run to the
    /// end in input order; a branch subquery runs to its last row).
    #[default]
    Off,
    /// Pending work in the order it was created, over all active instances.
    Fifo,
    /// Earliest loop depth first (level by level).
    Bfs,
    /// Deepest (most advanced) work first.
    Dfs,
}

impl ScopePolicy {
    /// The policy's name in hints and EXPLAIN (`off`, `fifo`, `bfs`, `dfs`).
    pub fn name(self) -> &'static str {
        match self {
            ScopePolicy::Off => "off",
            ScopePolicy::Fifo => "fifo",
            ScopePolicy::Bfs => "bfs",
            ScopePolicy::Dfs => "dfs",
        }
    }

    /// The policy named `name` (case-insensitive), if any.
    pub fn from_name(name: &str) -> Option<ScopePolicy> {
        [
            ScopePolicy::Off,
            ScopePolicy::Fifo,
            ScopePolicy::Bfs,
            ScopePolicy::Dfs,
        ]
        .into_iter()
        .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

/// A scope's settings (a loop scope's or a branch scope's): the policy
/// between the pending work of its instances and MAX_SI, the most
/// instances active at once (at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopScope {
    /// The order of pending work.
    pub policy: ScopePolicy,
    /// Most instances (input rows) active at once.
    pub max_si: u32,
    /// Whether a loop scope prunes ends (see [`PruneEnds`]). Off for
    /// branch scopes and for hints `scheduling=off` / `prune=off`.
    pub prune_ends: PruneEnds,
}

/// A loop scope under a `DISTINCT` of its end node (the planner proves
/// that the rows above are judged by the end node, and perhaps by values
/// of the input row): the scope produces each end once and cancels the
/// path prefixes whose every reachable end it already produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PruneEnds {
    /// Every path goes out.
    #[default]
    Off,
    /// The rows are judged by the end node alone: one set of produced
    /// ends for all input rows.
    Shared,
    /// The rows are judged by the end node and values of the input row:
    /// one set per input row.
    PerRow,
}

impl Default for LoopScope {
    fn default() -> LoopScope {
        LoopScope {
            policy: ScopePolicy::Off,
            max_si: 1,
            prune_ends: PruneEnds::Off,
        }
    }
}

/// One hop of an [`OpKind::DistinctEndpoints`] walk.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierHop {
    /// Allowed types; empty means any.
    pub types: Vec<String>,
    /// Direction.
    pub direction: ExpandDirection,
    /// Labels the hop's end node must carry.
    pub to_labels: Vec<String>,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `AND` (three-valued, short-circuits on false).
    And,
    /// `OR` (three-valued, short-circuits on true).
    Or,
    /// `XOR`.
    Xor,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `^`
    Pow,
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `STARTS WITH`
    StartsWith,
    /// `ENDS WITH`
    EndsWith,
    /// `CONTAINS`
    Contains,
    /// `=~`
    RegexMatch,
    /// `IN`
    In,
}

/// One entry of a map projection.
#[derive(Debug, Clone, PartialEq)]
pub enum MapProjectionItem {
    /// `.key`
    Property(String),
    /// `.*`
    AllProperties,
    /// `key: expr` (and `var`, as `var: var`).
    Entry(String, Expr),
}

/// What an expression subquery computes from the rows of its plan. The
/// runtime's compiled form is the same enum over its compiled expressions
/// (`SubqueryKind<CExpr>`), not a copy of the list.
#[derive(Debug, Clone, PartialEq)]
pub enum SubqueryKind<E = Expr> {
    /// `EXISTS { }` and pattern predicates: true if any row.
    Exists,
    /// `COUNT { }`: number of rows.
    Count,
    /// Pattern comprehension: the list of the expression's values, one per row.
    Collect(Box<E>),
}

/// One piece of a path value built from slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStep {
    /// The start node.
    Node(Slot),
    /// A single relationship, then the node it leads to.
    Rel(Slot, Slot),
    /// A list of relationships (variable length), then the node they lead to.
    Rels(Slot, Slot),
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A constant.
    Literal(Value),
    /// A query parameter by name.
    Parameter(String),
    /// The value in a slot.
    Slot(Slot),
    /// `base.key` on a node, relationship, map or temporal value.
    Property(Box<Expr>, String),
    /// `base[index]`: list element, or map/entity property by dynamic key.
    Index(Box<Expr>, Box<Expr>),
    /// `base[from..to]`.
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// `[a, b, ...]`.
    List(Vec<Expr>),
    /// `{k: v, ...}`.
    Map(Vec<(String, Expr)>),
    /// Unary operator.
    Unary(UnaryOp, Box<Expr>),
    /// Binary operator.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `e IS NULL` (`negated`: `IS NOT NULL`).
    IsNull(Box<Expr>, bool),
    /// `e:A:B`: node carries all labels (relationship: has one of the types).
    HasLabels(Box<Expr>, Vec<String>),
    /// `CASE`.
    Case {
        /// Simple form's operand.
        operand: Option<Box<Expr>>,
        /// (when, then) pairs.
        whens: Vec<(Expr, Expr)>,
        /// Else value (null if absent).
        else_: Option<Box<Expr>>,
    },
    /// A scalar function call; `name` is lower-case and qualified (`date.truncate`).
    Function(String, Vec<Expr>),
    /// `[v IN list WHERE p | e]` with the element bound to `variable`.
    ListComprehension {
        /// Slot of the element variable.
        variable: Slot,
        /// The list.
        list: Box<Expr>,
        /// Filter.
        predicate: Option<Box<Expr>>,
        /// Mapped value.
        projection: Option<Box<Expr>>,
    },
    /// `all/any/none/single(v IN list WHERE p)`.
    Quantified {
        /// Which quantifier.
        quantifier: Quantifier,
        /// Slot of the element variable.
        variable: Slot,
        /// The list.
        list: Box<Expr>,
        /// The predicate.
        predicate: Box<Expr>,
    },
    /// `reduce(acc = init, v IN list | e)`.
    Reduce {
        /// Slot of the accumulator.
        accumulator: Slot,
        /// Initial value.
        init: Box<Expr>,
        /// Slot of the element variable.
        variable: Slot,
        /// The list.
        list: Box<Expr>,
        /// Step.
        expr: Box<Expr>,
    },
    /// `base { ... }`.
    MapProjection(Box<Expr>, Vec<MapProjectionItem>),
    /// A correlated subquery evaluated per row: its plan starts from an
    /// `Argument` producing the current row.
    Subquery(Box<PlanNode>, SubqueryKind),
    /// A path assembled from slots.
    Path(Vec<PathStep>),
}
