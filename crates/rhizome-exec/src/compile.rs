//! Compilation of a plan for one snapshot: names resolved to ids once, so
//! operators and expressions never look up a label, type or key per row.
//!
//! The result is a tree of [`CNode`]s behind `Arc`s: immutable, shared by
//! every worker and by every inner run of a subquery. Per-run state (limit
//! counters, sink buffers) is created when a run is instantiated, not here.

use crate::in_set::{ConstList, Source};
use rhizome_common::Value;
use rhizome_plan::{
    AggregateItem, BinaryOp, ExpandDirection, Expr, IndexLookup, MapProjectionItem, OpKind,
    PathStep, PlanNode, Quantifier, SeekBound, Slot, SortKey, SubqueryKind, UnaryOp,
};
use rhizome_storage::{Catalog, GraphRead, LabelId, PropertyKeyId, RelTypeId, Snapshot};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A property key by name and, if the graph knows it, by id.
#[derive(Debug, Clone)]
pub struct Key {
    /// The name.
    pub name: Arc<str>,
    /// The id in the snapshot's catalog.
    pub id: Option<PropertyKeyId>,
}

/// Labels by name, resolved; `None` entries name labels the graph lacks
/// (a pattern requiring one of them matches nothing).
pub type Labels = Vec<Option<LabelId>>;

/// Relationship types allowed by an expansion.
#[derive(Debug, Clone)]
pub enum Types {
    /// Any type.
    Any,
    /// One of these (types the graph lacks are dropped; an empty list matches nothing).
    Some(Vec<RelTypeId>),
}

impl Types {
    /// The type ids to iterate, given all types of the graph.
    pub fn ids(&self, all: usize) -> Vec<RelTypeId> {
        match self {
            Types::Any => (0..all as RelTypeId).collect(),
            Types::Some(ids) => ids.clone(),
        }
    }

    /// Whether a relationship of `t` is allowed.
    pub fn allows(&self, t: RelTypeId) -> bool {
        match self {
            Types::Any => true,
            Types::Some(ids) => ids.contains(&t),
        }
    }
}

/// One name of a label predicate (`n:Name`), resolved both as a label and
/// as a relationship type (`None`: the graph has no such label or type).
pub type LabelTest = (Arc<str>, Option<LabelId>, Option<RelTypeId>);

/// A compiled expression.
#[derive(Debug, Clone)]
pub enum CExpr {
    /// A constant.
    Literal(Value),
    /// A parameter by name.
    Parameter(Arc<str>),
    /// A slot.
    Slot(Slot),
    /// Property access.
    Property(Box<CExpr>, Key),
    /// `a[b]`.
    Index(Box<CExpr>, Box<CExpr>),
    /// `a[b..c]`.
    Slice(Box<CExpr>, Option<Box<CExpr>>, Option<Box<CExpr>>),
    /// List literal.
    List(Vec<CExpr>),
    /// Map literal.
    Map(Vec<(Arc<str>, CExpr)>),
    /// Unary operator.
    Unary(UnaryOp, Box<CExpr>),
    /// Binary operator.
    Binary(BinaryOp, Box<CExpr>, Box<CExpr>),
    /// `x IN list` whose list is fixed for the statement (a literal or a
    /// parameter): searched through sorted vectors built once.
    InList(Box<CExpr>, Arc<ConstList>),
    /// `IS [NOT] NULL`.
    IsNull(Box<CExpr>, bool),
    /// Label / type predicate: names with resolved ids.
    HasLabels(Box<CExpr>, Vec<LabelTest>),
    /// `CASE`.
    Case {
        /// Operand.
        operand: Option<Box<CExpr>>,
        /// Branches.
        whens: Vec<(CExpr, CExpr)>,
        /// Else.
        else_: Option<Box<CExpr>>,
    },
    /// Scalar function.
    Function(Arc<str>, Vec<CExpr>),
    /// List comprehension.
    ListComprehension {
        /// Element slot.
        variable: Slot,
        /// List.
        list: Box<CExpr>,
        /// Filter.
        predicate: Option<Box<CExpr>>,
        /// Projection.
        projection: Option<Box<CExpr>>,
    },
    /// Quantifier.
    Quantified {
        /// Which.
        quantifier: Quantifier,
        /// Element slot.
        variable: Slot,
        /// List.
        list: Box<CExpr>,
        /// Predicate.
        predicate: Box<CExpr>,
    },
    /// `reduce`.
    Reduce {
        /// Accumulator slot.
        accumulator: Slot,
        /// Initial value.
        init: Box<CExpr>,
        /// Element slot.
        variable: Slot,
        /// List.
        list: Box<CExpr>,
        /// Step.
        expr: Box<CExpr>,
    },
    /// Map projection.
    MapProjection(Box<CExpr>, Vec<CMapItem>),
    /// Correlated subquery, and how its values are memoized if they may be.
    Subquery(Arc<CNode>, CSubquery, Option<CMemo>),
    /// Path built from slots.
    Path(Vec<PathStep>),
}

/// How a memoizable subquery's values are cached
/// ([`crate::memo::SubqueryMemo`]).
#[derive(Debug, Clone)]
pub struct CMemo {
    /// Unique to this compilation of the subquery in the process (a plan
    /// compiled again, as updating runs do, gets a new one), so two
    /// subqueries never share cache entries.
    pub id: usize,
    /// The slots whose values decide the subquery's value
    /// ([`rhizome_plan::usage::subquery_memo_key`]).
    pub slots: Box<[Slot]>,
}

static NEXT_MEMO_ID: AtomicUsize = AtomicUsize::new(0);

impl CMemo {
    /// A fresh memo identity keyed by `slots`.
    pub fn new(slots: Vec<Slot>) -> CMemo {
        CMemo {
            id: NEXT_MEMO_ID.fetch_add(1, Ordering::Relaxed),
            slots: slots.into_boxed_slice(),
        }
    }
}

/// A compiled map projection item.
#[derive(Debug, Clone)]
pub enum CMapItem {
    /// `.key`
    Property(Key),
    /// `.*`
    All,
    /// `key: expr`
    Entry(Arc<str>, CExpr),
}

/// What a compiled subquery computes: the plan's [`SubqueryKind`] over
/// compiled expressions.
pub type CSubquery = SubqueryKind<CExpr>;

/// A compiled operator.
#[derive(Debug)]
pub struct CNode {
    /// Position in depth-first order (PROFILE counters are indexed by it).
    pub id: usize,
    /// The operator as planned.
    pub kind: OpKind,
    /// Resolved names and compiled expressions of the operator.
    pub c: COp,
    /// Inputs.
    pub inputs: Vec<Arc<CNode>>,
}

/// Resolved parts of an operator, by kind (only what the runtime needs).
#[derive(Debug, Default)]
pub struct COp {
    /// Label (scans, index seeks).
    pub label: Option<LabelId>,
    /// Label name known but missing from the graph (a scan of it is empty).
    pub label_missing: bool,
    /// Property key (index seeks).
    pub key: Option<PropertyKeyId>,
    /// Relationship types (expansions).
    pub types: Option<Types>,
    /// Target labels (expansions).
    pub to_labels: Labels,
    /// Compiled expressions in the operator's own order (see each operator).
    pub exprs: Vec<CExpr>,
    /// Aggregates (for `Aggregate`).
    pub aggregates: Vec<(AggregateItem, Vec<CExpr>)>,
    /// Prefix hops (for `ExpandCount`), the walk (for `DistinctEndpoints`).
    pub hops: Vec<CHop>,
    /// For an updating operator, per expression of [`OpKind::exprs`]: the
    /// id of the first operator of the plans nested in it. The write path
    /// compiles such an expression anew for each row (names it creates
    /// must resolve); starting there, its plans count into their own
    /// PROFILE counters.
    pub expr_ids: Vec<usize>,
    /// For a `SemiApply`: how its instances' answers are memoized by the
    /// values of the slots its inner plan reads, if they may be (as an
    /// `EXISTS` expression's are, [`CMemo`]).
    pub memo: Option<CMemo>,
    /// An expression of [`COp::exprs`] holds an expression subquery
    /// (`EXISTS { }`, `COUNT { }`, a pattern comprehension), which may
    /// pause at the task's quantum ([`crate::expr::Suspension`]).
    pub has_subquery: bool,
}

/// A compiled hop of an `ExpandCount` prefix.
#[derive(Debug)]
pub struct CHop {
    /// Allowed types.
    pub types: Types,
    /// End-node labels.
    pub to_labels: Labels,
    /// Relationship predicate.
    pub predicate: Option<CExpr>,
}

/// Where the right side of an `IN` comes from when it is fixed for the
/// statement: a literal, a parameter, or a list literal of literals.
fn constant_list(e: &Expr) -> Option<Source> {
    match e {
        Expr::Literal(v) => Some(Source::Literal(v.clone())),
        Expr::Parameter(p) => Some(Source::Parameter(p.clone())),
        Expr::List(items) => items
            .iter()
            .map(|i| match i {
                Expr::Literal(v) => Some(v.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(|items| Source::Literal(Value::List(items))),
        _ => None,
    }
}

/// Compiles plans against one snapshot's catalog.
pub struct Compiler<'a> {
    catalog: &'a Catalog,
    next_id: usize,
    /// Expression subqueries compiled so far.
    subqueries: usize,
}

fn key(catalog: &Catalog, name: &str) -> Key {
    Key {
        name: name.into(),
        id: catalog.property_key_id(name),
    }
}

impl<'a> Compiler<'a> {
    /// A compiler for `snapshot`.
    pub fn new(snapshot: &'a Snapshot) -> Compiler<'a> {
        Compiler::numbering_from(snapshot, 0)
    }

    /// A compiler whose first operator gets id `first` (the plans nested in
    /// an updating operator's expression, see [`COp::expr_ids`]).
    pub fn numbering_from(snapshot: &'a Snapshot, first: usize) -> Compiler<'a> {
        Compiler {
            catalog: snapshot.catalog(),
            next_id: first,
            subqueries: 0,
        }
    }

    /// Number of operators compiled so far (the next id).
    pub fn operator_count(&self) -> usize {
        self.next_id
    }

    fn types(&self, names: &[String]) -> Types {
        if names.is_empty() {
            Types::Any
        } else {
            // `[:T|:T]` lists a type twice; each relationship matches once.
            let mut ids: Vec<RelTypeId> = names
                .iter()
                .filter_map(|n| self.catalog.rel_type_id(n))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            Types::Some(ids)
        }
    }

    fn labels(&self, names: &[String]) -> Labels {
        names.iter().map(|n| self.catalog.label_id(n)).collect()
    }

    /// Compiles an operator tree; ids are assigned depth first (matching `render_plan`).
    pub fn node(&mut self, node: &PlanNode) -> Arc<CNode> {
        let id = self.next_id;
        self.next_id += 1;
        let mut c = COp::default();
        let subqueries_before = self.subqueries;
        match &node.kind {
            OpKind::LabelScan { label, .. } => {
                c.label = self.catalog.label_id(label);
                c.label_missing = c.label.is_none();
            }
            OpKind::IndexSeek {
                label,
                key: k,
                lookup,
                ..
            } => {
                c.label = self.catalog.label_id(label);
                c.label_missing = c.label.is_none();
                c.key = self.catalog.property_key_id(k);
                match lookup {
                    IndexLookup::Equal(e) | IndexLookup::AnyOf(e) => c.exprs.push(self.expr(e)),
                    IndexLookup::Range(lo, hi) => {
                        for b in [lo, hi] {
                            match b {
                                SeekBound::Unbounded => c.exprs.push(CExpr::Literal(Value::Null)),
                                SeekBound::Inclusive(e) | SeekBound::Exclusive(e) => {
                                    c.exprs.push(self.expr(e))
                                }
                            }
                        }
                    }
                }
            }
            OpKind::NodeByIdSeek { ids, .. } => c.exprs.push(self.expr(ids)),
            OpKind::Expand {
                types, to_labels, ..
            } => {
                c.types = Some(self.types(types));
                c.to_labels = self.labels(to_labels);
            }
            OpKind::ExpandInto { types, .. } | OpKind::ShortestPath { types, .. } => {
                c.types = Some(self.types(types));
                if let OpKind::ShortestPath {
                    path_predicate: Some(p),
                    ..
                } = &node.kind
                {
                    c.exprs.push(self.expr(p));
                }
            }
            OpKind::VarExpand {
                types,
                to_labels,
                rel_predicate,
                node_predicate,
                ..
            } => {
                c.types = Some(self.types(types));
                c.to_labels = self.labels(to_labels);
                // exprs[0]: the relationship predicate, then the node
                // predicate (VarExpand finds each by what the plan holds).
                if let Some((_, p)) = rel_predicate {
                    c.exprs.push(self.expr(p));
                }
                if let Some(np) = node_predicate {
                    c.exprs.push(self.expr(&np.predicate));
                }
            }
            OpKind::ExpandCount {
                types,
                to_labels,
                rel_predicate,
                prefix,
                ..
            } => {
                c.types = Some(self.types(types));
                c.to_labels = self.labels(to_labels);
                if let Some((_, p)) = rel_predicate {
                    c.exprs.push(self.expr(p));
                }
                c.hops = prefix
                    .iter()
                    .map(|h| CHop {
                        types: self.types(&h.types),
                        to_labels: self.labels(&h.to_labels),
                        predicate: h.rel_predicate.as_ref().map(|(_, p)| self.expr(p)),
                    })
                    .collect();
            }
            OpKind::DistinctEndpoints { hops, .. } => {
                c.hops = hops
                    .iter()
                    .map(|h| CHop {
                        types: self.types(&h.types),
                        to_labels: self.labels(&h.to_labels),
                        predicate: None,
                    })
                    .collect();
            }
            OpKind::Filter { predicate } => c.exprs.push(self.expr(predicate)),
            OpKind::SemiApply { .. } => {
                c.memo = node
                    .inputs
                    .get(1)
                    .and_then(|inner| {
                        rhizome_plan::usage::subquery_memo_key(inner, &SubqueryKind::Exists)
                    })
                    .map(CMemo::new);
            }
            OpKind::Project { items } => {
                c.exprs = items.iter().map(|(_, e)| self.expr(e)).collect()
            }
            OpKind::Aggregate { keys, aggregates } => {
                c.exprs = keys.iter().map(|(_, e)| self.expr(e)).collect();
                c.aggregates = aggregates
                    .iter()
                    .map(|a| (a.clone(), a.args.iter().map(|e| self.expr(e)).collect()))
                    .collect();
            }
            OpKind::Top { limit, .. } => c.exprs.push(self.expr(limit)),
            OpKind::Skip { count } | OpKind::Limit { count } => c.exprs.push(self.expr(count)),
            OpKind::Unwind { list, .. } => c.exprs.push(self.expr(list)),
            OpKind::ProcedureCall { args, .. } => {
                c.exprs = args.iter().map(|e| self.expr(e)).collect()
            }
            kind if kind.is_update() => {
                // Numbered here, as a read operator's (nested plans before
                // inputs); compiled again where they run.
                for e in kind.exprs() {
                    c.expr_ids.push(self.next_id);
                    self.expr(e);
                }
            }
            _ => {}
        }
        c.has_subquery = self.subqueries > subqueries_before;
        let inputs = node.inputs.iter().map(|i| self.node(i)).collect();
        Arc::new(CNode {
            id,
            kind: node.kind.clone(),
            c,
            inputs,
        })
    }

    fn boxed(&mut self, e: &Expr) -> Box<CExpr> {
        Box::new(self.expr(e))
    }

    fn opt(&mut self, e: &Option<Box<Expr>>) -> Option<Box<CExpr>> {
        e.as_ref().map(|e| self.boxed(e))
    }

    /// Compiles an expression.
    pub fn expr(&mut self, e: &Expr) -> CExpr {
        match e {
            Expr::Literal(v) => CExpr::Literal(v.clone()),
            Expr::Parameter(p) => CExpr::Parameter(p.as_str().into()),
            Expr::Slot(s) => CExpr::Slot(*s),
            Expr::Property(b, k) => CExpr::Property(self.boxed(b), key(self.catalog, k)),
            Expr::Index(b, i) => CExpr::Index(self.boxed(b), self.boxed(i)),
            Expr::Slice(b, x, y) => CExpr::Slice(self.boxed(b), self.opt(x), self.opt(y)),
            Expr::List(items) => CExpr::List(items.iter().map(|i| self.expr(i)).collect()),
            Expr::Map(items) => CExpr::Map(
                items
                    .iter()
                    .map(|(k, v)| (k.as_str().into(), self.expr(v)))
                    .collect(),
            ),
            Expr::Unary(op, a) => CExpr::Unary(*op, self.boxed(a)),
            Expr::Binary(BinaryOp::In, a, b) if constant_list(b).is_some() => {
                let source = constant_list(b).expect("checked by the guard");
                CExpr::InList(self.boxed(a), Arc::new(ConstList::new(source)))
            }
            Expr::Binary(op, a, b) => CExpr::Binary(*op, self.boxed(a), self.boxed(b)),
            Expr::IsNull(a, n) => CExpr::IsNull(self.boxed(a), *n),
            Expr::HasLabels(a, labels) => CExpr::HasLabels(
                self.boxed(a),
                labels
                    .iter()
                    .map(|l| {
                        (
                            l.as_str().into(),
                            self.catalog.label_id(l),
                            self.catalog.rel_type_id(l),
                        )
                    })
                    .collect(),
            ),
            Expr::Case {
                operand,
                whens,
                else_,
            } => CExpr::Case {
                operand: self.opt(operand),
                whens: whens
                    .iter()
                    .map(|(w, t)| (self.expr(w), self.expr(t)))
                    .collect(),
                else_: self.opt(else_),
            },
            Expr::Function(name, args) => CExpr::Function(
                name.as_str().into(),
                args.iter().map(|a| self.expr(a)).collect(),
            ),
            Expr::ListComprehension {
                variable,
                list,
                predicate,
                projection,
            } => CExpr::ListComprehension {
                variable: *variable,
                list: self.boxed(list),
                predicate: self.opt(predicate),
                projection: self.opt(projection),
            },
            Expr::Quantified {
                quantifier,
                variable,
                list,
                predicate,
            } => CExpr::Quantified {
                quantifier: *quantifier,
                variable: *variable,
                list: self.boxed(list),
                predicate: self.boxed(predicate),
            },
            Expr::Reduce {
                accumulator,
                init,
                variable,
                list,
                expr,
            } => CExpr::Reduce {
                accumulator: *accumulator,
                init: self.boxed(init),
                variable: *variable,
                list: self.boxed(list),
                expr: self.boxed(expr),
            },
            Expr::MapProjection(b, items) => CExpr::MapProjection(
                self.boxed(b),
                items
                    .iter()
                    .map(|i| match i {
                        MapProjectionItem::Property(k) => CMapItem::Property(key(self.catalog, k)),
                        MapProjectionItem::AllProperties => CMapItem::All,
                        MapProjectionItem::Entry(k, e) => {
                            CMapItem::Entry(k.as_str().into(), self.expr(e))
                        }
                    })
                    .collect(),
            ),
            Expr::Subquery(plan, kind) => {
                self.subqueries += 1;
                let memo = rhizome_plan::usage::subquery_memo_key(plan, kind).map(CMemo::new);
                let node = self.node(plan);
                let kind = match kind {
                    SubqueryKind::Exists => CSubquery::Exists,
                    SubqueryKind::Count => CSubquery::Count,
                    SubqueryKind::Collect(e) => CSubquery::Collect(self.boxed(e)),
                };
                CExpr::Subquery(node, kind, memo)
            }
            Expr::Path(steps) => CExpr::Path(steps.clone()),
        }
    }
}

/// Sort keys are already slots; re-exported for operator code.
pub type Keys = Vec<SortKey>;

/// Direction helper for expansions over `Both`.
pub fn directions(d: ExpandDirection) -> &'static [rhizome_storage::Direction] {
    use rhizome_storage::Direction::{Incoming, Outgoing};
    match d {
        ExpandDirection::Outgoing => &[Outgoing],
        ExpandDirection::Incoming => &[Incoming],
        ExpandDirection::Both => &[Outgoing, Incoming],
    }
}
