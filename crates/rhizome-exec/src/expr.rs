//! Expression evaluation row by row within a chunk.
//!
//! Row-at-a-time evaluation keeps Cypher's short-circuit semantics exact
//! (`CASE` and `AND`/`OR` never evaluate a branch whose errors must not
//! surface). Filters and projections first try the column-at-a-time
//! evaluator ([`crate::vector`]) and come here for expressions it does not
//! take and for chunks where some row raises an error. Property reads of
//! node slots read columns directly. Value semantics come from
//! `rhizome_functions`.

use crate::chunk::{Chunk, NULL_ID};
use crate::compile::{CExpr, CMapItem, CNode, CSubquery, Key, LabelTest};
use crate::context::{
    InlineLimit, PausedScope, QueryContext, ScopeConsumer, ScopeEnd, ScopeRun, ScopeStats,
};
use crate::in_set::Source;
use rhizome_common::{Error, ErrorKind, PathValue, Result, Value};
use rhizome_functions::{functions, ops};
use rhizome_plan::{
    BinaryOp, LoopScope, PathStep, PruneEnds, Quantifier, ScopePolicy, Slot, UnaryOp,
};
use rhizome_storage::GraphRead;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A row being evaluated: a row of a chunk plus local bindings of
/// comprehension variables (innermost last), which shadow the chunk's slots.
#[derive(Clone, Copy)]
pub struct Row<'a> {
    /// The chunk.
    pub chunk: &'a Chunk,
    /// The row in it.
    pub row: usize,
    /// Local bindings.
    pub locals: &'a [(Slot, Value)],
}

impl<'a> Row<'a> {
    /// A row without local bindings.
    pub fn new(chunk: &'a Chunk, row: usize) -> Row<'a> {
        Row {
            chunk,
            row,
            locals: &[],
        }
    }

    /// The value of `slot` in this row.
    #[inline]
    pub fn get(&self, slot: Slot) -> Value {
        if let Some((_, v)) = self.locals.iter().rev().find(|(s, _)| *s == slot) {
            return v.clone();
        }
        self.chunk.value(slot, self.row)
    }

    /// The length of the list in `slot` if the chunk keeps it as a
    /// collected list ([`crate::chunk::ColumnData::Lists`]) and no local
    /// binding hides it: `size()` without boxing the list.
    #[inline]
    pub fn list_len(&self, slot: Slot) -> Option<usize> {
        if self.locals.iter().any(|(s, _)| *s == slot) {
            return None;
        }
        self.chunk.column(slot)?.list_len(self.row)
    }

    /// All slots of the row with locals applied (to start an inner run).
    pub fn materialize(&self) -> Vec<Value> {
        let mut values = self.chunk.row_values(self.row);
        for (slot, v) in self.locals {
            if *slot >= values.len() {
                values.resize(*slot + 1, Value::Null);
            }
            values[*slot] = v.clone();
        }
        values
    }

    /// The row as [`Row::materialize`] gives it, but only `slots` hold
    /// their values (the others are null): the argument of a subquery
    /// that reads only those, without copying the row's other values
    /// (lists of paths, say) for every run.
    pub fn materialize_only(&self, slots: &[Slot]) -> Vec<Value> {
        let width = self
            .locals
            .iter()
            .map(|(slot, _)| slot + 1)
            .fold(self.chunk.width(), usize::max);
        let mut values = vec![Value::Null; width];
        for &slot in slots {
            if slot < width {
                values[slot] = self.get(slot);
            }
        }
        values
    }
}

/// A predicate's value as a filter reads it: only `true` keeps a row
/// (null and false both drop it); any other value is a `TypeError`.
pub fn truth(value: Value) -> Result<bool> {
    match value {
        Value::Bool(b) => Ok(b),
        Value::Null => Ok(false),
        other => Err(type_error(format!(
            "expected a boolean predicate, got {} ({other})",
            other.type_name()
        ))),
    }
}

fn type_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::TypeError, message).with_code("InvalidArgumentType")
}

fn bool_value(b: Option<bool>) -> Value {
    b.map_or(Value::Null, Value::Bool)
}

/// `op x`: the one place a unary operator meets `rhizome_functions`.
pub(crate) fn unary_op(op: UnaryOp, x: &Value) -> Result<Value> {
    match op {
        UnaryOp::Not => ops::not(x),
        UnaryOp::Neg => ops::negate(x),
        UnaryOp::Plus => ops::unary_plus(x),
    }
}

/// `x op y` with both sides evaluated (short-circuiting `AND`/`OR` is the
/// caller's part): the one place an operator meets `rhizome_functions`.
pub(crate) fn binary_op(op: BinaryOp, x: &Value, y: &Value) -> Result<Value> {
    match op {
        BinaryOp::And => ops::and(x, y),
        BinaryOp::Or => ops::or(x, y),
        BinaryOp::Xor => ops::xor(x, y),
        BinaryOp::Add => ops::add(x, y),
        BinaryOp::Sub => ops::subtract(x, y),
        BinaryOp::Mul => ops::multiply(x, y),
        BinaryOp::Div => ops::divide(x, y),
        BinaryOp::Mod => ops::modulo(x, y),
        BinaryOp::Pow => ops::power(x, y),
        BinaryOp::Eq => Ok(bool_value(ops::equals(x, y))),
        BinaryOp::Ne => Ok(bool_value(ops::equals(x, y).map(|b| !b))),
        BinaryOp::Lt => Ok(bool_value(ops::less_than(x, y))),
        BinaryOp::Gt => Ok(bool_value(ops::greater_than(x, y))),
        BinaryOp::Le => Ok(bool_value(ops::less_equal(x, y))),
        BinaryOp::Ge => Ok(bool_value(ops::greater_equal(x, y))),
        BinaryOp::StartsWith => Ok(bool_value(ops::starts_with(x, y))),
        BinaryOp::EndsWith => Ok(bool_value(ops::ends_with(x, y))),
        BinaryOp::Contains => Ok(bool_value(ops::contains(x, y))),
        BinaryOp::RegexMatch => Ok(bool_value(ops::regex_match(x, y)?)),
        BinaryOp::In => Ok(bool_value(ops::in_list(x, y)?)),
    }
}

/// Evaluates expressions for one query.
pub struct Evaluator<'q> {
    q: &'q QueryContext,
    /// Expression subqueries run as resumable branch-scope instances.
    suspension: Option<&'q Suspension<'q>>,
    /// Expression subqueries only take the memo's answers
    /// ([`Evaluator::memo_only`]); set once one had none.
    memo_only: Option<Cell<bool>>,
}

/// The state of one row's evaluation that a task hands back to a new one
/// when an expression subquery's instance pauses at the task's quantum
/// ([`Suspension`]): the answers of the row's subqueries that ended, and
/// the paused instance. The new task evaluates the row again: the ended
/// subqueries take their answers, and the paused one resumes.
#[derive(Default)]
pub struct SuspendedRow {
    /// (inner plan, argument row, answer) of the subqueries that ended.
    done: Vec<(usize, Vec<Value>, Value)>,
    /// The instance paused, with its inner plan and argument row.
    paused: Option<(usize, Vec<Value>, PausedScope)>,
}

impl SuspendedRow {
    /// True for a row not evaluated before (nothing answered or paused).
    pub fn is_new(&self) -> bool {
        self.done.is_empty() && self.paused.is_none()
    }
}

/// Lets an operator's expression subqueries (`EXISTS { }`, `COUNT { }`
/// and pattern comprehensions inside an expression, such as CQ6's
/// `all(x IN … WHERE EXISTS { … })`) run as branch-scope instances that
/// pause at the operator's task's quantum, as a semi-apply's do
/// (`crate::pipeline::instances`), instead of running inline to their
/// end: the evaluation then fails, the operator takes the row's state
/// ([`Suspension::take_suspended`]) and hands it, with the rows not
/// done, to a new task, which evaluates that row again
/// ([`Suspension::begin_row`]) and resumes the instance.
pub struct Suspension<'s> {
    /// True once the task should hand its work back.
    pause: &'s dyn Fn() -> bool,
    /// True once the operator was stopped.
    stopped: &'s dyn Fn() -> bool,
    /// The operator's PROFILE scope counters.
    stats: Option<&'s ScopeStats>,
    /// A subquery ran since the last [`Suspension::ran_subquery`].
    ran: Cell<bool>,
    row: RefCell<SuspendedRow>,
}

impl<'s> Suspension<'s> {
    /// Subqueries that pause once `pause` holds, stop when `stopped`
    /// holds, and count their instances in `stats`.
    pub fn new(
        pause: &'s dyn Fn() -> bool,
        stopped: &'s dyn Fn() -> bool,
        stats: Option<&'s ScopeStats>,
    ) -> Suspension<'s> {
        Suspension {
            pause,
            stopped,
            stats,
            ran: Cell::new(false),
            row: RefCell::new(SuspendedRow::default()),
        }
    }

    /// Starts a row's evaluation from `state` (a new row: the default).
    pub fn begin_row(&self, state: SuspendedRow) {
        *self.row.borrow_mut() = state;
    }

    /// The row's state if its evaluation failed because a subquery paused
    /// (none: the failure was an error of the expression's).
    pub fn take_suspended(&self) -> Option<SuspendedRow> {
        let mut row = self.row.borrow_mut();
        row.paused.as_ref()?;
        Some(std::mem::take(&mut *row))
    }

    /// True if a subquery ran since the last call (rows without one need
    /// no look at the clock).
    pub fn ran_subquery(&self) -> bool {
        self.ran.replace(false)
    }
}

/// The consumer of an expression subquery's one instance.
struct OneInstance<'s> {
    suspension: &'s Suspension<'s>,
    output: Vec<Chunk>,
}

impl ScopeConsumer for OneInstance<'_> {
    fn may_start(&mut self, _first: bool) -> bool {
        true
    }

    fn stopped(&self) -> bool {
        (self.suspension.stopped)()
    }

    fn pausable(&self) -> bool {
        true
    }

    fn pause(&self) -> bool {
        (self.suspension.pause)()
    }

    fn ended(&mut self, _row: usize, output: Vec<Chunk>) -> Result<bool> {
        self.output = output;
        Ok(true)
    }
}

/// What an evaluation that paused at a subquery fails with; the operator
/// that asked for pauses never lets it out ([`Suspension`]).
fn paused_error() -> Error {
    Error::internal("an expression subquery paused outside a resumable operator")
}

impl<'q> Evaluator<'q> {
    /// An evaluator reading the query's snapshot and parameters.
    pub fn new(q: &'q QueryContext) -> Evaluator<'q> {
        Evaluator {
            q,
            suspension: None,
            memo_only: None,
        }
    }

    /// An evaluator whose expression subqueries run nothing: one the
    /// statement's memo cannot answer fails the evaluation, and
    /// [`Evaluator::missed_subquery`] then says so. A walk's per-hop
    /// predicate tries it first, since most of its nodes were answered
    /// before, and sets up a resumable evaluation ([`Suspension`]) only
    /// for the rest.
    pub fn memo_only(q: &'q QueryContext) -> Evaluator<'q> {
        Evaluator {
            q,
            suspension: None,
            memo_only: Some(Cell::new(false)),
        }
    }

    /// True if an evaluation of a [`Evaluator::memo_only`] evaluator
    /// failed because a subquery had no memoised answer (reset here).
    pub fn missed_subquery(&self) -> bool {
        self.memo_only.as_ref().is_some_and(|m| m.replace(false))
    }

    /// An evaluator whose expression subqueries run as resumable instances
    /// that pause as `suspension` says ([`Suspension`]).
    pub fn with_suspension(q: &'q QueryContext, suspension: &'q Suspension<'q>) -> Evaluator<'q> {
        Evaluator {
            q,
            suspension: Some(suspension),
            memo_only: None,
        }
    }

    /// True only if `e` evaluates to `true` (null and false are both false).
    /// A value that is neither boolean nor null is a `TypeError`.
    pub fn predicate(&self, e: &CExpr, row: &Row<'_>) -> Result<bool> {
        truth(self.eval(e, row)?)
    }

    /// `value`, read as a property of `entity`; a null read from an entity
    /// that no longer exists (deleted by this statement) is an error.
    fn checked(&self, value: Value, entity: Value) -> Result<Value> {
        if !value.is_null() {
            return Ok(value);
        }
        let exists = match entity {
            Value::Node(id) => self.q.snapshot.node_exists(id),
            Value::Relationship(id) => self.q.snapshot.relationship(id).is_some(),
            _ => true,
        };
        if exists {
            Ok(value)
        } else {
            Err(crate::context::deleted_entity(&entity))
        }
    }

    fn property(&self, base: Value, key: &Key) -> Result<Value> {
        match base {
            Value::Null => Ok(Value::Null),
            Value::Node(id) => self.checked(
                key.id
                    .map_or(Value::Null, |k| self.q.snapshot.node_property(id, k)),
                Value::Node(id),
            ),
            Value::Relationship(id) => self.checked(
                key.id
                    .map_or(Value::Null, |k| self.q.snapshot.rel_property(id, k)),
                Value::Relationship(id),
            ),
            other => ops::property(&other, &key.name, &self.q.graph()),
        }
    }

    /// `v:A:B`: whether the node `v` has every label (the relationship `v`
    /// has the type) named; null for null, an error for other values.
    pub(crate) fn has_labels(&self, v: Value, labels: &[LabelTest]) -> Result<Value> {
        match v {
            Value::Null => Ok(Value::Null),
            Value::Node(id) => {
                Ok(Value::Bool(labels.iter().all(|(_, l, _)| {
                    l.is_some_and(|l| self.q.snapshot.has_label(id, l))
                })))
            }
            Value::Relationship(id) => {
                let t = self.q.snapshot.relationship(id).map(|i| i.rel_type);
                Ok(Value::Bool(
                    labels
                        .iter()
                        .all(|(_, _, want)| want.is_some() && *want == t),
                ))
            }
            other => Err(type_error(format!(
                "label predicate on {}",
                other.type_name()
            ))),
        }
    }

    fn list_of(&self, v: Value, what: &str) -> Result<Option<Vec<Value>>> {
        match v {
            Value::Null => Ok(None),
            Value::List(items) => Ok(Some(items)),
            other => Err(type_error(format!(
                "{what} expects a list, got {}",
                other.type_name()
            ))),
        }
    }

    /// Evaluates `e` in `row`.
    pub fn eval(&self, e: &CExpr, row: &Row<'_>) -> Result<Value> {
        match e {
            CExpr::Literal(v) => Ok(v.clone()),
            CExpr::Parameter(name) => self.q.params.get(&**name).cloned().ok_or_else(|| {
                Error::new(
                    ErrorKind::ParameterMissing,
                    format!("expected a parameter named ${name}"),
                )
                .with_code("MissingParameter")
            }),
            CExpr::Slot(s) => Ok(row.get(*s)),
            CExpr::Property(base, key) => {
                if let CExpr::Slot(s) = &**base {
                    if row.locals.is_empty() {
                        if let Some(column) = row.chunk.column(*s) {
                            if let Some(node) = column.node(row.row) {
                                if node == NULL_ID {
                                    return Ok(Value::Null);
                                }
                                let v = key.id.map_or(Value::Null, |k| {
                                    self.q.snapshot.node_property(node, k)
                                });
                                return self.checked(v, Value::Node(node));
                            }
                        } else {
                            return Ok(Value::Null);
                        }
                    }
                }
                let base = self.eval(base, row)?;
                self.property(base, key)
            }
            CExpr::Index(base, index) => {
                let base = self.eval(base, row)?;
                let index = self.eval(index, row)?;
                match (&base, &index) {
                    (Value::Node(_) | Value::Relationship(_), Value::String(k)) => {
                        let key = Key {
                            name: k.as_str().into(),
                            id: self.q.snapshot.catalog().property_key_id(k),
                        };
                        self.property(base, &key)
                    }
                    _ => ops::index(&base, &index, &self.q.graph()),
                }
            }
            CExpr::Slice(base, from, to) => {
                let base = self.eval(base, row)?;
                let from = from.as_ref().map(|f| self.eval(f, row)).transpose()?;
                let to = to.as_ref().map(|t| self.eval(t, row)).transpose()?;
                ops::slice(&base, from.as_ref(), to.as_ref())
            }
            CExpr::List(items) => Ok(Value::List(
                items
                    .iter()
                    .map(|i| self.eval(i, row))
                    .collect::<Result<_>>()?,
            )),
            CExpr::Map(items) => {
                let mut map = BTreeMap::new();
                for (k, v) in items {
                    map.insert(k.to_string(), self.eval(v, row)?);
                }
                Ok(Value::Map(map))
            }
            CExpr::Unary(op, a) => unary_op(*op, &self.eval(a, row)?),
            CExpr::Binary(op, a, b) => self.binary(*op, a, b, row),
            CExpr::InList(x, list) => {
                let x = self.eval(x, row)?;
                match list.set(&self.q.params) {
                    Some(set) => Ok(bool_value(set.contains(&x)?)),
                    None => {
                        let list = match list.source() {
                            Source::Literal(v) => v.clone(),
                            Source::Parameter(p) => {
                                self.eval(&CExpr::Parameter(p.as_str().into()), row)?
                            }
                        };
                        Ok(bool_value(ops::in_list(&x, &list)?))
                    }
                }
            }
            CExpr::IsNull(a, negated) => {
                let v = self.eval(a, row)?;
                Ok(Value::Bool(v.is_null() != *negated))
            }
            CExpr::HasLabels(a, labels) => {
                let v = self.eval(a, row)?;
                self.has_labels(v, labels)
            }
            CExpr::Case {
                operand,
                whens,
                else_,
            } => {
                match operand {
                    Some(operand) => {
                        let v = self.eval(operand, row)?;
                        for (w, t) in whens {
                            let w = self.eval(w, row)?;
                            if ops::equals(&v, &w) == Some(true) {
                                return self.eval(t, row);
                            }
                        }
                    }
                    None => {
                        for (w, t) in whens {
                            if self.eval(w, row)? == Value::Bool(true) {
                                return self.eval(t, row);
                            }
                        }
                    }
                }
                match else_ {
                    Some(e) => self.eval(e, row),
                    None => Ok(Value::Null),
                }
            }
            CExpr::Function(name, args) => {
                if let [CExpr::Slot(s)] = args.as_slice() {
                    if let Some(len) = row.list_len(*s) {
                        if name.eq_ignore_ascii_case("size") {
                            return Ok(Value::Int(len as i64));
                        }
                    }
                }
                let args: Vec<Value> = args
                    .iter()
                    .map(|a| self.eval(a, row))
                    .collect::<Result<_>>()?;
                if name.eq_ignore_ascii_case("range") {
                    // The list is built whole: it must fit the query's memory first.
                    if let Some(len) = functions::list::range_len(&args) {
                        let bytes = len.min(1 << 32) * crate::context::VALUE_BYTES;
                        self.q.memory.check_room(bytes)?;
                    }
                }
                functions::call(name, &args, &self.q.graph())
            }
            CExpr::ListComprehension {
                variable,
                list,
                predicate,
                projection,
            } => {
                let Some(items) = self.list_of(self.eval(list, row)?, "a list comprehension")?
                else {
                    return Ok(Value::Null);
                };
                let mut locals = row.locals.to_vec();
                locals.push((*variable, Value::Null));
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let last = locals.len() - 1;
                    locals[last].1 = item;
                    let inner = Row {
                        locals: &locals,
                        ..*row
                    };
                    if let Some(p) = predicate {
                        if !self.predicate(p, &inner)? {
                            continue;
                        }
                    }
                    out.push(match projection {
                        Some(p) => self.eval(p, &inner)?,
                        None => locals[last].1.clone(),
                    });
                }
                Ok(Value::List(out))
            }
            CExpr::Quantified {
                quantifier,
                variable,
                list,
                predicate,
            } => {
                let Some(items) = self.list_of(self.eval(list, row)?, "a quantifier")? else {
                    return Ok(Value::Null);
                };
                let mut locals = row.locals.to_vec();
                locals.push((*variable, Value::Null));
                let (mut trues, mut nulls) = (0usize, 0usize);
                let total = items.len();
                for item in items {
                    let last = locals.len() - 1;
                    locals[last].1 = item;
                    let inner = Row {
                        locals: &locals,
                        ..*row
                    };
                    match self.eval(predicate, &inner)? {
                        Value::Bool(true) => trues += 1,
                        Value::Bool(false) => {}
                        Value::Null => nulls += 1,
                        other => {
                            return Err(type_error(format!(
                                "quantifier predicate gave {}",
                                other.type_name()
                            )))
                        }
                    }
                    // Early exits where the answer can no longer change.
                    match quantifier {
                        Quantifier::Any if trues > 0 => return Ok(Value::Bool(true)),
                        Quantifier::None if trues > 0 => return Ok(Value::Bool(false)),
                        Quantifier::Single if trues > 1 => return Ok(Value::Bool(false)),
                        _ => {}
                    }
                }
                let falses = total - trues - nulls;
                Ok(match quantifier {
                    Quantifier::All if falses > 0 => Value::Bool(false),
                    Quantifier::All if nulls > 0 => Value::Null,
                    Quantifier::All => Value::Bool(true),
                    Quantifier::Any | Quantifier::None if nulls > 0 => Value::Null,
                    Quantifier::Any => Value::Bool(false),
                    Quantifier::None => Value::Bool(true),
                    Quantifier::Single if nulls > 0 => Value::Null,
                    Quantifier::Single => Value::Bool(trues == 1),
                })
            }
            CExpr::Reduce {
                accumulator,
                init,
                variable,
                list,
                expr,
            } => {
                let acc = self.eval(init, row)?;
                let Some(items) = self.list_of(self.eval(list, row)?, "reduce")? else {
                    return Ok(Value::Null);
                };
                let mut locals = row.locals.to_vec();
                locals.push((*accumulator, acc));
                locals.push((*variable, Value::Null));
                for item in items {
                    let n = locals.len();
                    locals[n - 1].1 = item;
                    let inner = Row {
                        locals: &locals,
                        ..*row
                    };
                    let next = self.eval(expr, &inner)?;
                    locals[n - 2].1 = next;
                }
                Ok(locals[locals.len() - 2].1.clone())
            }
            CExpr::MapProjection(base, items) => {
                let base = self.eval(base, row)?;
                if base.is_null() {
                    return Ok(Value::Null);
                }
                let mut map = BTreeMap::new();
                for item in items {
                    match item {
                        CMapItem::Property(key) => {
                            map.insert(key.name.to_string(), self.property(base.clone(), key)?);
                        }
                        CMapItem::All => match &base {
                            Value::Map(m) => map.extend(m.clone()),
                            Value::Node(_) | Value::Relationship(_) => {
                                let props = functions::call(
                                    "properties",
                                    std::slice::from_ref(&base),
                                    &self.q.graph(),
                                )?;
                                if let Value::Map(m) = props {
                                    map.extend(m);
                                }
                            }
                            other => {
                                return Err(type_error(format!(
                                    "map projection of {}",
                                    other.type_name()
                                )))
                            }
                        },
                        CMapItem::Entry(k, e) => {
                            map.insert(k.to_string(), self.eval(e, row)?);
                        }
                    }
                }
                Ok(Value::Map(map))
            }
            CExpr::Subquery(plan, kind, memo) => {
                let key = match memo {
                    Some(memo) if self.q.memo.has_room() => {
                        let key: Vec<Value> = memo.slots.iter().map(|s| row.get(*s)).collect();
                        match self.q.memo.get(memo.id, key) {
                            Ok(v) => return Ok(v),
                            Err(key) => Some(key),
                        }
                    }
                    _ => None,
                };
                if let Some(missed) = &self.memo_only {
                    missed.set(true);
                    return Err(paused_error());
                }
                // A pure subquery reads only its memo key's slots.
                let argument = match memo {
                    Some(memo) => row.materialize_only(&memo.slots),
                    None => row.materialize(),
                };
                let value = match self.suspension {
                    Some(suspension) => self.scoped_subquery(suspension, plan, kind, argument)?,
                    None => self.subquery(plan, kind, &argument)?,
                };
                if let (Some(key), Some(memo)) = (key, memo) {
                    self.q.memo.insert(memo.id, key, &value);
                }
                Ok(value)
            }
            CExpr::Path(steps) => self.path(steps, row),
        }
    }

    /// Runs an expression subquery on `argument` (the row's values it reads).
    fn subquery(&self, plan: &Arc<CNode>, kind: &CSubquery, argument: &[Value]) -> Result<Value> {
        let limit = match kind {
            CSubquery::Exists => InlineLimit::FirstRow,
            _ => InlineLimit::All,
        };
        let chunks = self
            .q
            .run_inline(plan, Chunk::single_row(argument), limit)?;
        self.answer(kind, &chunks)
    }

    /// Runs an expression subquery on `argument` (the row's values it
    /// reads) as a branch-scope instance that pauses at the task's quantum ([`Suspension`]), or resumes the
    /// row's paused one, or takes the answer it ended with.
    fn scoped_subquery(
        &self,
        suspension: &Suspension<'_>,
        plan: &Arc<CNode>,
        kind: &CSubquery,
        argument: Vec<Value>,
    ) -> Result<Value> {
        suspension.ran.set(true);
        let id = Arc::as_ptr(plan) as usize;
        let resume = {
            let mut state = suspension.row.borrow_mut();
            if let Some((_, _, v)) = state
                .done
                .iter()
                .find(|(p, a, _)| *p == id && *a == argument)
            {
                return Ok(v.clone());
            }
            // A paused instance of another subquery (one the memo has
            // answered meanwhile) is dropped.
            match state.paused.take() {
                Some((p, a, paused)) if p == id && a == argument => Some(paused),
                _ => None,
            }
        };
        let input = Chunk::single_row(&argument);
        let limit = match kind {
            CSubquery::Exists => InlineLimit::FirstRow,
            _ => InlineLimit::All,
        };
        let suspension: &Suspension<'_> = suspension;
        let mut one = OneInstance {
            suspension,
            output: Vec::new(),
        };
        let run = ScopeRun {
            plan,
            input: &input,
            rows: 0..1,
            limit,
            scope: LoopScope {
                policy: ScopePolicy::Dfs,
                max_si: 1,
                prune_ends: PruneEnds::Off,
            },
            in_order: false,
            stats: suspension.stats,
        };
        match self.q.run_scope(run, &mut one, resume)? {
            ScopeEnd::Paused(paused) => {
                suspension.row.borrow_mut().paused = Some((id, argument, paused));
                Err(paused_error())
            }
            ScopeEnd::Rows(_) => {
                let value = self.answer(kind, &one.output)?;
                suspension
                    .row
                    .borrow_mut()
                    .done
                    .push((id, argument, value.clone()));
                Ok(value)
            }
        }
    }

    /// A subquery's value from its inner run's rows.
    fn answer(&self, kind: &CSubquery, chunks: &[Chunk]) -> Result<Value> {
        match kind {
            CSubquery::Exists => Ok(Value::Bool(chunks.iter().any(|c| !c.is_empty()))),
            CSubquery::Count => Ok(Value::Int(chunks.iter().map(|c| c.len() as i64).sum())),
            CSubquery::Collect(e) => {
                let mut out = Vec::new();
                for c in chunks {
                    for r in 0..c.len() {
                        out.push(self.eval(e, &Row::new(c, r))?);
                    }
                }
                Ok(Value::List(out))
            }
        }
    }

    fn binary(&self, op: BinaryOp, a: &CExpr, b: &CExpr, row: &Row<'_>) -> Result<Value> {
        match op {
            BinaryOp::And => {
                let x = self.eval(a, row)?;
                if x == Value::Bool(false) {
                    return Ok(Value::Bool(false));
                }
                let y = self.eval(b, row)?;
                ops::and(&x, &y)
            }
            BinaryOp::Or => {
                let x = self.eval(a, row)?;
                if x == Value::Bool(true) {
                    return Ok(Value::Bool(true));
                }
                let y = self.eval(b, row)?;
                ops::or(&x, &y)
            }
            _ => {
                let x = self.eval(a, row)?;
                let y = self.eval(b, row)?;
                binary_op(op, &x, &y)
            }
        }
    }

    fn path(&self, steps: &[PathStep], row: &Row<'_>) -> Result<Value> {
        let mut path = PathValue::default();
        let snap = &self.q.snapshot;
        for step in steps {
            match *step {
                PathStep::Node(s) => match row.get(s) {
                    Value::Node(n) => path.nodes.push(n),
                    _ => return Ok(Value::Null),
                },
                PathStep::Rel(r, n) => match (row.get(r), row.get(n)) {
                    (Value::Relationship(r), Value::Node(n)) => {
                        path.rels.push(r);
                        path.nodes.push(n);
                    }
                    _ => return Ok(Value::Null),
                },
                PathStep::Rels(list, end) => {
                    let rels = match row.get(list) {
                        Value::List(items) => items,
                        _ => return Ok(Value::Null),
                    };
                    for rel in rels {
                        let Value::Relationship(r) = rel else {
                            return Ok(Value::Null);
                        };
                        let Some(info) = snap.relationship(r) else {
                            return Ok(Value::Null);
                        };
                        let current = *path.nodes.last().unwrap_or(&NULL_ID);
                        let next = if info.start == current {
                            info.end
                        } else {
                            info.start
                        };
                        path.rels.push(r);
                        path.nodes.push(next);
                    }
                    if !matches!(row.get(end), Value::Node(_)) {
                        return Ok(Value::Null);
                    }
                }
            }
        }
        Ok(Value::Path(path))
    }
}
/// Evaluates a constant count (SKIP / LIMIT / Top) expression. A value that
/// is not a non-negative integer is a `SyntaxError` even at run time (as the
/// openCypher TCK classifies it), with the detail code saying why.
pub fn constant_count(q: &QueryContext, expr: &CExpr, what: &str) -> Result<u64> {
    let empty = Chunk::new(0, 1);
    let value = Evaluator::new(q).eval(expr, &Row::new(&empty, 0))?;
    match value {
        Value::Int(n) if n >= 0 => Ok(n as u64),
        Value::Int(n) => Err(Error::new(
            ErrorKind::SyntaxError,
            format!("{what} must be a non-negative integer, got {n}"),
        )
        .with_code("NegativeIntegerArgument")),
        other => Err(Error::new(
            ErrorKind::SyntaxError,
            format!("{what} must be a non-negative integer, got {other}"),
        )
        .with_code("InvalidArgumentType")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subquery_argument_keeps_only_the_slots_it_reads() {
        let list = Value::List(vec![Value::Int(1), Value::Int(2)]);
        let chunk = Chunk::single_row(&[Value::Int(7), list.clone(), Value::from("x")]);
        let locals = [(4, Value::Int(9)), (2, Value::from("y"))];
        let row = Row {
            chunk: &chunk,
            row: 0,
            locals: &locals,
        };
        // Every slot, locals applied.
        assert_eq!(
            row.materialize(),
            vec![
                Value::Int(7),
                list,
                Value::from("y"),
                Value::Null,
                Value::Int(9)
            ]
        );
        // Only the slots named (a local among them), as wide as the row.
        assert_eq!(
            row.materialize_only(&[0, 2]),
            vec![
                Value::Int(7),
                Value::Null,
                Value::from("y"),
                Value::Null,
                Value::Null
            ]
        );
        // A slot past the row's width stays out.
        assert_eq!(row.materialize_only(&[9]), vec![Value::Null; 5]);
    }
}
