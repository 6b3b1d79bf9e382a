//! The abstract syntax tree of a Cypher statement.
//!
//! Every node that an error can point at carries a [`Span`] (a byte range in
//! the query text). Spans never take part in equality: two trees that differ
//! only in layout (whitespace, comments, redundant parentheses, keyword case)
//! compare equal, which is what the printer round-trip property relies on.

pub use rhizome_common::{Quantifier, ShortestPathKind, UnaryOp};
use std::fmt;

/// A byte range `start..end` in the query text.
///
/// `PartialEq` always returns `true`: positions are metadata, not meaning.
#[derive(Clone, Copy, Default)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset just past the last byte.
    pub end: usize,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

impl PartialEq for Span {
    fn eq(&self, _: &Span) -> bool {
        true
    }
}

impl std::hash::Hash for Span {
    /// Hashes nothing, consistent with `PartialEq` ignoring positions.
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A name written by the user: a variable, label, type, property key, alias.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    /// The name, unquoted (backticks removed, doubled backticks collapsed).
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

/// A complete statement, as accepted by [`crate::parse`].
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// `EXPLAIN` or `PROFILE` before the statement, if any.
    pub prefix: Option<QueryPrefix>,
    /// The statement proper.
    pub kind: StatementKind,
    /// The whole statement.
    pub span: Span,
}

/// `EXPLAIN` / `PROFILE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryPrefix {
    /// Plan only, do not run.
    Explain,
    /// Run and report per-operator counters.
    Profile,
}

/// What kind of statement.
#[derive(Debug, Clone, PartialEq)]
pub enum StatementKind {
    /// A query (reading and/or updating), possibly a UNION.
    Query(Query),
    /// `CREATE INDEX [name] [IF NOT EXISTS] FOR (v:Label) ON (v.p, ...)`
    /// or the legacy `CREATE INDEX ON :Label(p, ...)`.
    CreateIndex(IndexSpec),
    /// `DROP INDEX name [IF EXISTS]` or `DROP INDEX ON :Label(p, ...)`.
    DropIndex(DropTarget),
    /// `CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (v:Label) REQUIRE v.p IS UNIQUE`.
    CreateConstraint(ConstraintSpec),
    /// `DROP CONSTRAINT name [IF EXISTS]`.
    DropConstraint(DropTarget),
    /// `SHOW INDEXES`.
    ShowIndexes,
    /// `SHOW CONSTRAINTS`.
    ShowConstraints,
    /// `SHOW TRANSACTIONS`.
    ShowTransactions,
    /// `TERMINATE TRANSACTIONS id, ...`.
    TerminateTransactions(Vec<Expr>),
    /// `BEGIN` (shell transaction control).
    Begin,
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK`.
    Rollback,
}

/// What an index covers.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSpec {
    /// The index name, if given.
    pub name: Option<Ident>,
    /// `IF NOT EXISTS` was given.
    pub if_not_exists: bool,
    /// The variable of the `FOR (v:Label)` pattern (`None` in the legacy form).
    pub variable: Option<Ident>,
    /// The label (or relationship type when `relationship` is set).
    pub label: Ident,
    /// Whether the index is on a relationship type (`FOR ()-[r:T]-()`).
    pub relationship: bool,
    /// The indexed property keys.
    pub properties: Vec<Ident>,
}

/// What a uniqueness constraint covers.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstraintSpec {
    /// The constraint name, if given.
    pub name: Option<Ident>,
    /// `IF NOT EXISTS` was given.
    pub if_not_exists: bool,
    /// The variable of the `FOR (v:Label)` pattern.
    pub variable: Ident,
    /// The label.
    pub label: Ident,
    /// The constrained property keys (`v.p` or `(v.p, v.q)`).
    pub properties: Vec<Ident>,
    /// What is required of them.
    pub kind: ConstraintKind,
}

/// The requirement of a constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstraintKind {
    /// `IS UNIQUE`
    Unique,
    /// `IS NOT NULL`
    NotNull,
    /// `IS NODE KEY`
    NodeKey,
}

/// What a `DROP INDEX` / `DROP CONSTRAINT` names.
#[derive(Debug, Clone, PartialEq)]
pub enum DropTarget {
    /// By name, optionally `IF EXISTS`.
    Named {
        /// The name.
        name: Ident,
        /// `IF EXISTS` was given.
        if_exists: bool,
    },
    /// Legacy `DROP INDEX ON :Label(p, ...)`.
    On {
        /// The label.
        label: Ident,
        /// The property keys.
        properties: Vec<Ident>,
    },
}

/// A query: one or more single queries joined by `UNION` / `UNION ALL`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The first single query.
    pub first: SingleQuery,
    /// The following `UNION [ALL]` parts, in order.
    pub unions: Vec<UnionPart>,
    /// The whole query.
    pub span: Span,
}

/// `UNION [ALL] <single query>`.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionPart {
    /// `UNION ALL` (keep duplicates) rather than `UNION`.
    pub all: bool,
    /// The query after the keyword.
    pub query: SingleQuery,
    /// The `UNION [ALL]` keyword(s).
    pub span: Span,
}

/// A sequence of clauses without `UNION`.
#[derive(Debug, Clone, PartialEq)]
pub struct SingleQuery {
    /// The clauses in order.
    pub clauses: Vec<Clause>,
    /// The whole single query.
    pub span: Span,
}

/// A clause.
#[derive(Debug, Clone, PartialEq)]
pub enum Clause {
    /// `[OPTIONAL] MATCH pattern [WHERE expr]`
    Match(Match),
    /// `UNWIND expr AS variable`
    Unwind(Unwind),
    /// `WITH projection [WHERE expr]`
    With(Projection),
    /// `RETURN projection`
    Return(Projection),
    /// `CREATE pattern`
    Create(Create),
    /// `MERGE pattern [ON CREATE SET ... | ON MATCH SET ...]*`
    Merge(Merge),
    /// `SET item, ...`
    Set(SetClause),
    /// `REMOVE item, ...`
    Remove(Remove),
    /// `[DETACH] DELETE expr, ...`
    Delete(Delete),
    /// `FOREACH (v IN list | clause ...)`
    Foreach(Foreach),
    /// `CALL proc(args) [YIELD ...]`
    Call(CallProcedure),
    /// `CALL { query }`
    CallSubquery(CallSubquery),
}

impl Clause {
    /// The span of the clause.
    pub fn span(&self) -> Span {
        match self {
            Clause::Match(c) => c.span,
            Clause::Unwind(c) => c.span,
            Clause::With(c) | Clause::Return(c) => c.span,
            Clause::Create(c) => c.span,
            Clause::Merge(c) => c.span,
            Clause::Set(c) => c.span,
            Clause::Remove(c) => c.span,
            Clause::Delete(c) => c.span,
            Clause::Foreach(c) => c.span,
            Clause::Call(c) => c.span,
            Clause::CallSubquery(c) => c.span,
        }
    }

    /// The clause keyword(s) as written in error messages, e.g. `OPTIONAL MATCH`.
    pub fn name(&self) -> &'static str {
        match self {
            Clause::Match(m) if m.optional => "OPTIONAL MATCH",
            Clause::Match(_) => "MATCH",
            Clause::Unwind(_) => "UNWIND",
            Clause::With(_) => "WITH",
            Clause::Return(_) => "RETURN",
            Clause::Create(_) => "CREATE",
            Clause::Merge(_) => "MERGE",
            Clause::Set(_) => "SET",
            Clause::Remove(_) => "REMOVE",
            Clause::Delete(_) => "DELETE",
            Clause::Foreach(_) => "FOREACH",
            Clause::Call(_) | Clause::CallSubquery(_) => "CALL",
        }
    }

    /// Whether the clause writes to the graph (directly or in a nested part).
    pub fn is_update(&self) -> bool {
        match self {
            Clause::Create(_)
            | Clause::Merge(_)
            | Clause::Set(_)
            | Clause::Remove(_)
            | Clause::Delete(_)
            | Clause::Foreach(_) => true,
            Clause::CallSubquery(c) => std::iter::once(&c.query.first)
                .chain(c.query.unions.iter().map(|u| &u.query))
                .any(|q| q.clauses.iter().any(Clause::is_update)),
            _ => false,
        }
    }
}

/// `[OPTIONAL] MATCH`.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    /// `OPTIONAL MATCH`.
    pub optional: bool,
    /// The comma-separated pattern parts.
    pub pattern: Vec<PatternPart>,
    /// The `WHERE` predicate.
    pub where_: Option<Expr>,
    /// The clause.
    pub span: Span,
}

/// `UNWIND expr AS variable`.
#[derive(Debug, Clone, PartialEq)]
pub struct Unwind {
    /// The list.
    pub expr: Expr,
    /// The variable bound to each element.
    pub variable: Ident,
    /// The clause.
    pub span: Span,
}

/// The body of `WITH` and `RETURN`.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// `DISTINCT`.
    pub distinct: bool,
    /// `*` (all variables in scope) was written first.
    pub star: bool,
    /// The explicit items.
    pub items: Vec<ProjectionItem>,
    /// `ORDER BY` items.
    pub order_by: Vec<SortItem>,
    /// `SKIP` expression.
    pub skip: Option<Expr>,
    /// `LIMIT` expression.
    pub limit: Option<Expr>,
    /// `WHERE` (only for `WITH`).
    pub where_: Option<Expr>,
    /// The clause.
    pub span: Span,
}

/// `expr [AS alias]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectionItem {
    /// The projected expression.
    pub expr: Expr,
    /// The alias, if written.
    pub alias: Option<Ident>,
    /// When there is no alias: the expression's source text, which is the
    /// column name (and what the printer prints). Empty when aliased.
    pub text: String,
    /// The item.
    pub span: Span,
}

impl ProjectionItem {
    /// The column name: the alias, or the source text of the expression.
    pub fn column_name(&self) -> &str {
        self.alias.as_ref().map_or(self.text.as_str(), |a| &a.name)
    }
}

/// `expr [ASC|DESC]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SortItem {
    /// The sort key.
    pub expr: Expr,
    /// `DESC` / `DESCENDING`.
    pub descending: bool,
    /// The item.
    pub span: Span,
}

/// `CREATE pattern`.
#[derive(Debug, Clone, PartialEq)]
pub struct Create {
    /// The pattern parts.
    pub pattern: Vec<PatternPart>,
    /// The clause.
    pub span: Span,
}

/// `MERGE pattern actions`.
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    /// The single pattern part.
    pub pattern: PatternPart,
    /// `ON CREATE SET` / `ON MATCH SET` actions, in order.
    pub actions: Vec<MergeAction>,
    /// The clause.
    pub span: Span,
}

/// `ON CREATE SET ...` or `ON MATCH SET ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeAction {
    /// `ON CREATE` (else `ON MATCH`).
    pub on_create: bool,
    /// The set items.
    pub items: Vec<SetItem>,
    /// The action.
    pub span: Span,
}

/// `SET item, ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct SetClause {
    /// The items.
    pub items: Vec<SetItem>,
    /// The clause.
    pub span: Span,
}

/// One `SET` item.
#[derive(Debug, Clone, PartialEq)]
pub enum SetItem {
    /// `target.key = value` (target is an expression, usually a variable).
    Property {
        /// The property expression (`ExprKind::Property`).
        target: Expr,
        /// The new value.
        value: Expr,
        /// The item.
        span: Span,
    },
    /// `v = map` (replace all properties).
    Replace {
        /// The entity variable.
        variable: Ident,
        /// The new properties.
        value: Expr,
        /// The item.
        span: Span,
    },
    /// `v += map` (merge properties).
    Merge {
        /// The entity variable.
        variable: Ident,
        /// The properties to add.
        value: Expr,
        /// The item.
        span: Span,
    },
    /// `v:Label:...`.
    Labels {
        /// The node variable.
        variable: Ident,
        /// Labels to add.
        labels: Vec<Ident>,
        /// The item.
        span: Span,
    },
}

/// `REMOVE item, ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Remove {
    /// The items.
    pub items: Vec<RemoveItem>,
    /// The clause.
    pub span: Span,
}

/// One `REMOVE` item.
#[derive(Debug, Clone, PartialEq)]
pub enum RemoveItem {
    /// `target.key`.
    Property(Expr),
    /// `v:Label:...`.
    Labels {
        /// The node variable.
        variable: Ident,
        /// Labels to remove.
        labels: Vec<Ident>,
        /// The item.
        span: Span,
    },
}

/// `[DETACH] DELETE expr, ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    /// `DETACH DELETE`.
    pub detach: bool,
    /// The entities to delete.
    pub exprs: Vec<Expr>,
    /// The clause.
    pub span: Span,
}

/// `FOREACH (variable IN list | clauses)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Foreach {
    /// The loop variable.
    pub variable: Ident,
    /// The list.
    pub list: Expr,
    /// The updating clauses of the body.
    pub clauses: Vec<Clause>,
    /// The clause.
    pub span: Span,
}

/// `CALL ns.proc(args) [YIELD ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallProcedure {
    /// Namespace parts and name, e.g. `["db", "labels"]`.
    pub name: Vec<Ident>,
    /// The arguments; `None` when no parentheses were written (implicit arguments).
    pub args: Option<Vec<Expr>>,
    /// The `YIELD` part.
    pub yield_: Option<YieldSpec>,
    /// The clause.
    pub span: Span,
}

impl CallProcedure {
    /// The qualified name, e.g. `db.labels`.
    pub fn qualified_name(&self) -> String {
        join_names(&self.name)
    }
}

/// Joins name parts with `.`.
pub fn join_names(parts: &[Ident]) -> String {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(&p.name);
    }
    out
}

/// `YIELD *` or `YIELD field [AS alias], ... [WHERE expr]`.
#[derive(Debug, Clone, PartialEq)]
pub struct YieldSpec {
    /// `YIELD *`.
    pub star: bool,
    /// The yielded fields with optional aliases.
    pub items: Vec<YieldItem>,
    /// A filter on the yielded rows.
    pub where_: Option<Expr>,
    /// The `YIELD` part.
    pub span: Span,
}

/// `field [AS alias]`.
#[derive(Debug, Clone, PartialEq)]
pub struct YieldItem {
    /// The procedure's output field.
    pub field: Ident,
    /// The variable name to bind instead of the field name.
    pub alias: Option<Ident>,
}

impl YieldItem {
    /// The variable the item binds.
    pub fn variable(&self) -> &Ident {
        self.alias.as_ref().unwrap_or(&self.field)
    }
}

/// `CALL { query }`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSubquery {
    /// The inner query.
    pub query: Query,
    /// The clause.
    pub span: Span,
}

/// One comma-separated part of a pattern: `[p =] element`, or
/// `[p =] shortestPath(element)` / `allShortestPaths(element)`.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternPart {
    /// The path variable.
    pub variable: Option<Ident>,
    /// `shortestPath` / `allShortestPaths`, if used.
    pub shortest: Option<ShortestPathKind>,
    /// The node-relationship chain.
    pub element: PatternElement,
    /// The part.
    pub span: Span,
}

/// `(a)-[r]->(b)<-[s]-(c)...`.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternElement {
    /// The first node.
    pub start: NodePattern,
    /// Each following relationship and node.
    pub chain: Vec<(RelationshipPattern, NodePattern)>,
    /// The element.
    pub span: Span,
}

/// `(v:Label {props})`.
#[derive(Debug, Clone, PartialEq)]
pub struct NodePattern {
    /// The variable.
    pub variable: Option<Ident>,
    /// The labels (all must be present).
    pub labels: Vec<Ident>,
    /// A map literal or parameter.
    pub properties: Option<Box<Expr>>,
    /// The node pattern.
    pub span: Span,
}

/// Relationship direction as written left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `-->`
    Outgoing,
    /// `<--`
    Incoming,
    /// `--` (or `<-->`)
    Both,
}

/// `-[v:T1|T2 *min..max {props}]->`.
#[derive(Debug, Clone, PartialEq)]
pub struct RelationshipPattern {
    /// The variable.
    pub variable: Option<Ident>,
    /// Alternative types (any of them).
    pub types: Vec<Ident>,
    /// Variable length, if `*` was written.
    pub length: Option<LengthRange>,
    /// A map literal or parameter.
    pub properties: Option<Box<Expr>>,
    /// The direction.
    pub direction: Direction,
    /// The relationship pattern.
    pub span: Span,
}

/// `*`, `*n`, `*min..`, `*..max`, `*min..max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthRange {
    /// Lower bound (default 1).
    pub min: Option<u64>,
    /// Upper bound (default unbounded).
    pub max: Option<u64>,
    /// A single number `*n` was written (both bounds equal, no `..`).
    pub exact: bool,
}

/// An expression with its span.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it was written.
    pub span: Span,
}

impl Expr {
    /// An expression of `kind` at `span`.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
}

/// A literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer (decimal, `0x` hex or `0o` octal in the source).
    Integer(i64),
    /// A float.
    Float(f64),
    /// A string (escapes resolved).
    String(String),
}

/// Binary operators (comparisons are [`ExprKind::Comparison`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `OR`
    Or,
    /// `XOR`
    Xor,
    /// `AND`
    And,
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

/// Comparison operators; a chain `a < b <= c` means `a < b AND b <= c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
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
}

/// One entry of a map projection `v { ... }`.
#[derive(Debug, Clone, PartialEq)]
pub enum MapProjectionItem {
    /// `.key`
    Property(Ident),
    /// `.*`
    AllProperties,
    /// `key: expr`
    Literal(Ident, Expr),
    /// `var` (key and value from a variable)
    Variable(Ident),
}

/// The body of `EXISTS { }` / `COUNT { }`.
#[derive(Debug, Clone, PartialEq)]
pub enum SubqueryBody {
    /// A pattern with optional `WHERE`: `EXISTS { (a)-->(b) WHERE ... }`.
    Pattern {
        /// The pattern parts.
        pattern: Vec<PatternPart>,
        /// The filter.
        where_: Option<Box<Expr>>,
    },
    /// A full query: `EXISTS { MATCH ... RETURN ... }`.
    Query(Box<Query>),
}

/// Expressions.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A literal.
    Literal(Literal),
    /// `$name` or `$0`.
    Parameter(String),
    /// A variable reference.
    Variable(String),
    /// `[a, b, ...]`
    List(Vec<Expr>),
    /// `{k: v, ...}`
    Map(Vec<(Ident, Expr)>),
    /// `expr.key`
    Property(Box<Expr>, Ident),
    /// `expr[index]` (list index or dynamic property).
    Index(Box<Expr>, Box<Expr>),
    /// `expr[from..to]`
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    /// `NOT e`, `-e`, `+e`
    Unary(UnaryOp, Box<Expr>),
    /// `a op b`
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `a < b <= c ...`: the first operand and each (operator, operand) after it.
    Comparison(Box<Expr>, Vec<(CompareOp, Expr)>),
    /// `e IS NULL` (false) / `e IS NOT NULL` (true).
    IsNull(Box<Expr>, bool),
    /// `e:Label:...` label predicate.
    HasLabels(Box<Expr>, Vec<Ident>),
    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`
    Case {
        /// The simple form's operand.
        operand: Option<Box<Expr>>,
        /// `WHEN` / `THEN` pairs.
        whens: Vec<(Expr, Expr)>,
        /// The `ELSE` value.
        else_: Option<Box<Expr>>,
    },
    /// `ns.f(DISTINCT args)`
    FunctionCall {
        /// Namespace parts and name.
        name: Vec<Ident>,
        /// `DISTINCT` inside the parentheses.
        distinct: bool,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// `count(*)`
    CountStar,
    /// `[v IN list WHERE pred | proj]`
    ListComprehension {
        /// The element variable.
        variable: Ident,
        /// The list.
        list: Box<Expr>,
        /// The filter.
        predicate: Option<Box<Expr>>,
        /// The mapped value.
        projection: Option<Box<Expr>>,
    },
    /// `[p = (a)-->(b) WHERE pred | proj]`
    PatternComprehension {
        /// The path variable.
        variable: Option<Ident>,
        /// The pattern.
        pattern: PatternElement,
        /// The filter.
        predicate: Option<Box<Expr>>,
        /// The value collected per match.
        projection: Box<Expr>,
    },
    /// `reduce(acc = init, v IN list | expr)`
    Reduce {
        /// The accumulator.
        accumulator: Ident,
        /// Its initial value.
        init: Box<Expr>,
        /// The element variable.
        variable: Ident,
        /// The list.
        list: Box<Expr>,
        /// The step expression.
        expr: Box<Expr>,
    },
    /// `all(v IN list WHERE pred)` etc.
    Quantified {
        /// Which quantifier.
        quantifier: Quantifier,
        /// The element variable.
        variable: Ident,
        /// The list.
        list: Box<Expr>,
        /// The predicate.
        predicate: Option<Box<Expr>>,
    },
    /// A relationship pattern used as a predicate: `(a)-[:T]->()`.
    PatternPredicate(PatternElement),
    /// `EXISTS { ... }`
    Exists(SubqueryBody),
    /// `COUNT { ... }`
    CountSubquery(SubqueryBody),
    /// `v { .a, b: 1, .* }`
    MapProjection(Ident, Vec<MapProjectionItem>),
}
