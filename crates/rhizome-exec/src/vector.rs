//! Column-at-a-time evaluation of the expressions filters, projections and
//! aggregations spend their time in: property reads, literals and
//! parameters, operators (arithmetic, comparisons, boolean logic, string
//! predicates, `IN`), null tests and label predicates.
//!
//! Each expression node is dispatched once per chunk instead of once per
//! row. Integer, float and boolean columns are computed as plain typed
//! vectors with a null mask, and string properties as views borrowed from
//! the storage column's bytes (or the snapshot's changes) without building
//! a value per row; comparisons, `STARTS WITH`, `ENDS WITH` and `CONTAINS`
//! over them and `IN` over a statement-constant list ([`crate::in_set`])
//! run on the typed vectors. Values of any other type (and mixed-type
//! columns) go, element by element, through the same `rhizome_functions`
//! operations the row evaluator uses, so both give the same results.
//!
//! This evaluator never raises an error. When any row would (integer
//! overflow, division by zero, a type error, a property of a deleted
//! entity, a missing parameter), it gives up on the chunk and the operator
//! evaluates that chunk row by row ([`crate::expr`]), which raises exactly
//! the error Cypher prescribes at the row where it occurs, or none where
//! `AND`/`OR` short-circuit past it (an `AND`/`OR` first retries just its
//! right side row by row where its left side does not decide). Expressions
//! with other node kinds (functions, `CASE`, subqueries, comprehensions)
//! are left to the row evaluator entirely ([`supports`]), so nothing
//! expensive is evaluated that short-circuiting would skip.

use crate::chunk::{Chunk, NULL_ID};
use crate::compile::{CExpr, Key};
use crate::context::QueryContext;
use crate::expr::{binary_op, unary_op, Evaluator, Row};
use crate::in_set::InSet;
use crate::int_kernels::{self, IntOp};
use rhizome_common::NodeId;
use rhizome_common::Value;
use rhizome_plan::{BinaryOp, Slot, UnaryOp};
use rhizome_storage::column::ColumnView;
use rhizome_storage::{GraphRead, PropertyKeyId, Snapshot};
use std::borrow::Cow;

/// Per row: is it null? `None` when no row is.
type Nulls = Option<Vec<bool>>;

/// One expression's values for every row of a chunk; `'a` is how long the
/// snapshot and chunk it reads stay borrowed (string views point into them).
#[derive(Debug, Clone, PartialEq)]
pub enum Vector<'a> {
    /// The same value on every row.
    Const(Value),
    /// Integers (a null row holds 0); borrowed from a storage column
    /// where a scan's chunk reads one in place.
    Ints(Cow<'a, [i64]>, Nulls),
    /// Floats (a null row holds 0.0), borrowed like [`Vector::Ints`].
    Floats(Cow<'a, [f64]>, Nulls),
    /// Booleans (a null row holds false).
    Bools(Vec<bool>, Nulls),
    /// Strings borrowed from storage (a null row holds "").
    Strs(Vec<&'a str>, Nulls),
    /// Values of any type.
    Values(Vec<Value>),
}

/// True if every node of `e` is one this module evaluates: literals,
/// parameters, slots, properties of slots, unary and binary operators, null
/// tests and label predicates.
pub fn supports(e: &CExpr) -> bool {
    match e {
        CExpr::Literal(_) | CExpr::Parameter(_) | CExpr::Slot(_) => true,
        CExpr::Property(base, _) => matches!(**base, CExpr::Slot(_)),
        CExpr::Unary(_, a) | CExpr::IsNull(a, _) | CExpr::HasLabels(a, _) | CExpr::InList(a, _) => {
            supports(a)
        }
        CExpr::Binary(_, a, b) => supports(a) && supports(b),
        _ => false,
    }
}

/// `e` over every row of `chunk`; `None` if some row needs the row
/// evaluator (see the module documentation). `e` must be [`supports`]ed.
pub fn eval<'a>(q: &'a QueryContext, e: &CExpr, chunk: &'a Chunk) -> Option<Vector<'a>> {
    let n = chunk.len();
    match e {
        CExpr::Literal(v) => Some(Vector::Const(v.clone())),
        CExpr::Parameter(name) => q.params.get(&**name).cloned().map(Vector::Const),
        CExpr::Slot(s) => Some(slot(chunk, *s)),
        CExpr::Property(base, key) => match **base {
            CExpr::Slot(s) => property(q, chunk, s, key),
            _ => None,
        },
        CExpr::IsNull(a, negated) => {
            let a = eval(q, a, chunk)?;
            Some(Vector::Bools(
                (0..n).map(|i| a.is_null(i) != *negated).collect(),
                None,
            ))
        }
        CExpr::Unary(op, a) => unary(*op, eval(q, a, chunk)?, n),
        CExpr::InList(x, list) => in_list(&eval(q, x, chunk)?, list.set(&q.params)?, n),
        CExpr::HasLabels(a, labels) => {
            let entities = eval(q, a, chunk)?;
            let eval = Evaluator::new(q);
            let values = (0..n)
                .map(|i| eval.has_labels(entities.value(i), labels).ok())
                .collect::<Option<Vec<_>>>()?;
            Some(typed(values.into_iter(), n))
        }
        CExpr::Binary(op @ (BinaryOp::And | BinaryOp::Or), a, b) => {
            let x = eval(q, a, chunk)?;
            match eval(q, b, chunk) {
                Some(y) => logic(*op, &x, &y, n),
                // Some row of `b` fails (`x <> 0 AND y / x > 2`): evaluate
                // `b` only on the rows `x` does not decide, as the row
                // evaluator would.
                None => short_circuit(q, *op, &x, b, chunk),
            }
        }
        CExpr::Binary(op, a, b) => {
            let (x, y) = (eval(q, a, chunk)?, eval(q, b, chunk)?);
            match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
                    arithmetic(*op, &x, &y, n)
                }
                BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Gt
                | BinaryOp::Le
                | BinaryOp::Ge => comparison(*op, &x, &y, n),
                BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => logic(*op, &x, &y, n),
                BinaryOp::StartsWith | BinaryOp::EndsWith | BinaryOp::Contains => {
                    string_predicate(*op, &x, &y, n)
                }
                _ => by_element(*op, &x, &y, n),
            }
        }
        _ => None,
    }
}

/// Per expression of `exprs`: its values on every row of `chunk` if it is
/// [`supports`]ed and evaluates without an error, else `None` (evaluate it
/// row by row, see [`value_at`]).
pub fn columns<'a>(
    q: &'a QueryContext,
    exprs: &[CExpr],
    chunk: &'a Chunk,
) -> Vec<Option<Vector<'a>>> {
    exprs.iter().map(|e| column(q, e, chunk)).collect()
}

/// `e` on every row of `chunk` if it is [`supports`]ed and evaluates
/// without an error, else `None` (evaluate it row by row).
pub fn column<'a>(q: &'a QueryContext, e: &CExpr, chunk: &'a Chunk) -> Option<Vector<'a>> {
    if supports(e) {
        eval(q, e, chunk)
    } else {
        None
    }
}

/// The value of `e` in `row`: read from `column` if [`columns`] computed
/// it, else evaluated by `eval`.
#[inline]
pub fn value_at(
    eval: &Evaluator<'_>,
    e: &CExpr,
    column: &Option<Vector<'_>>,
    row: &Row<'_>,
) -> rhizome_common::Result<Value> {
    match column {
        Some(v) => Ok(v.value(row.row)),
        None => eval.eval(e, row),
    }
}

/// The rows of `chunk` for which `predicate` is true; `None` if the
/// predicate is not [`supports`]ed or some row needs the row evaluator
/// (also when a row's value is not a boolean or null: the row evaluator
/// reports that type error).
pub fn select(q: &QueryContext, predicate: &CExpr, chunk: &Chunk) -> Option<Vec<u32>> {
    let n = chunk.len();
    if !supports(predicate) {
        return None;
    }
    if let CExpr::Binary(
        op @ (BinaryOp::Eq
        | BinaryOp::Ne
        | BinaryOp::Lt
        | BinaryOp::Gt
        | BinaryOp::Le
        | BinaryOp::Ge),
        a,
        b,
    ) = predicate
    {
        // A comparison of integers selects its rows straight from the
        // operands, without a boolean vector in between.
        let (x, y) = (eval(q, a, chunk)?, eval(q, b, chunk)?);
        if let (Some(p), Some(r)) = (x.ints(), y.ints()) {
            if !p.has_nulls() && !r.has_nulls() {
                return Some(select_ints(*op, &p, &r, n));
            }
        }
        return selection(comparison(*op, &x, &y, n)?, n);
    }
    selection(eval(q, predicate, chunk)?, n)
}

/// The rows where `a op b` holds, for integer operands without nulls.
fn select_ints(op: BinaryOp, a: &Operand<'_, i64>, b: &Operand<'_, i64>, n: usize) -> Vec<u32> {
    match op {
        BinaryOp::Eq => select_where(a, b, n, |p, q| p == q),
        BinaryOp::Ne => select_where(a, b, n, |p, q| p != q),
        BinaryOp::Lt => select_where(a, b, n, |p, q| p < q),
        BinaryOp::Gt => select_where(a, b, n, |p, q| p > q),
        BinaryOp::Le => select_where(a, b, n, |p, q| p <= q),
        _ => select_where(a, b, n, |p, q| p >= q),
    }
}

/// The rows `i` where `f(a[i], b[i])`, appended without a branch per row.
#[inline(always)]
fn select_where(
    a: &Operand<'_, i64>,
    b: &Operand<'_, i64>,
    n: usize,
    f: impl Fn(i64, i64) -> bool,
) -> Vec<u32> {
    let mut out = vec![0u32; n];
    let mut kept = 0;
    let mut keep = |i: usize, yes: bool| {
        out[kept] = i as u32;
        kept += usize::from(yes);
    };
    match (a, b) {
        (Operand::Column(p, _), Operand::Const(q)) => {
            let q = q.unwrap_or_default();
            for (i, &p) in p[..n].iter().enumerate() {
                keep(i, f(p, q));
            }
        }
        (Operand::Const(p), Operand::Column(q, _)) => {
            let p = p.unwrap_or_default();
            for (i, &q) in q[..n].iter().enumerate() {
                keep(i, f(p, q));
            }
        }
        (Operand::Column(p, _), Operand::Column(q, _)) => {
            for (i, (&p, &q)) in p[..n].iter().zip(&q[..n]).enumerate() {
                keep(i, f(p, q));
            }
        }
        _ => {
            for i in 0..n {
                keep(i, f(a.raw(i), b.raw(i)));
            }
        }
    }
    out.truncate(kept);
    out
}

/// The rows where `v` is true; `None` if a row holds a value that is not
/// a boolean or null (the row evaluator reports that type error).
fn selection(v: Vector<'_>, n: usize) -> Option<Vec<u32>> {
    let keep = |test: &dyn Fn(usize) -> bool| (0..n as u32).filter(|&i| test(i as usize)).collect();
    match v {
        Vector::Const(Value::Bool(true)) => Some((0..n as u32).collect()),
        Vector::Const(Value::Bool(false) | Value::Null) => Some(Vec::new()),
        Vector::Bools(values, None) => Some(
            (0..n as u32)
                .zip(&values)
                .filter_map(|(i, &keep)| keep.then_some(i))
                .collect(),
        ),
        Vector::Bools(values, nulls) => Some(keep(&|i| values[i] && !is_null(&nulls, i))),
        Vector::Values(values) => {
            if values
                .iter()
                .any(|v| !matches!(v, Value::Bool(_) | Value::Null))
            {
                return None;
            }
            Some(keep(&|i| values[i] == Value::Bool(true)))
        }
        _ => None,
    }
}

impl<'a> Vector<'a> {
    /// True if row `i` is null.
    #[inline]
    pub fn is_null(&self, i: usize) -> bool {
        match self {
            Vector::Const(v) => v.is_null(),
            Vector::Ints(_, nulls)
            | Vector::Floats(_, nulls)
            | Vector::Bools(_, nulls)
            | Vector::Strs(_, nulls) => is_null(nulls, i),
            Vector::Values(values) => values[i].is_null(),
        }
    }

    /// The value at row `i`.
    pub fn value(&self, i: usize) -> Value {
        if self.is_null(i) {
            return Value::Null;
        }
        match self {
            Vector::Const(v) => v.clone(),
            Vector::Ints(xs, _) => Value::Int(xs[i]),
            Vector::Floats(xs, _) => Value::Float(xs[i]),
            Vector::Bools(xs, _) => Value::Bool(xs[i]),
            Vector::Strs(xs, _) => Value::String(xs[i].to_owned()),
            Vector::Values(values) => values[i].clone(),
        }
    }

    /// The values of the first `n` rows.
    pub fn into_values(self, n: usize) -> Vec<Value> {
        match self {
            Vector::Values(values) => values,
            other => (0..n).map(|i| other.value(i)).collect(),
        }
    }

    /// Integers, if this vector holds only integers and nulls.
    fn ints(&self) -> Option<Operand<'_, i64>> {
        match self {
            Vector::Ints(xs, nulls) => Some(Operand::Column(xs, nulls.as_deref())),
            Vector::Const(Value::Int(x)) => Some(Operand::Const(Some(*x))),
            _ => None,
        }
    }

    /// Numbers as floats, if this vector holds only numbers and nulls.
    fn floats(&self) -> Option<Floats<'_>> {
        match self {
            Vector::Floats(xs, nulls) => Some(Floats::Column(xs, nulls.as_deref())),
            Vector::Ints(xs, nulls) => Some(Floats::Ints(xs, nulls.as_deref())),
            Vector::Const(Value::Float(x)) => Some(Floats::Const(*x)),
            Vector::Const(Value::Int(x)) => Some(Floats::Const(*x as f64)),
            _ => None,
        }
    }

    /// Strings, if this vector holds only strings and nulls.
    fn strs(&self) -> Option<Operand<'_, &'_ str>> {
        match self {
            Vector::Strs(xs, nulls) => Some(Operand::Column(xs, nulls.as_deref())),
            Vector::Const(Value::String(s)) => Some(Operand::Const(Some(s.as_str()))),
            Vector::Const(Value::Null) => Some(Operand::Const(None)),
            _ => None,
        }
    }

    /// Booleans, if this vector holds only booleans and nulls.
    fn bools(&self) -> Option<Operand<'_, bool>> {
        match self {
            Vector::Bools(xs, nulls) => Some(Operand::Column(xs, nulls.as_deref())),
            Vector::Const(Value::Bool(b)) => Some(Operand::Const(Some(*b))),
            Vector::Const(Value::Null) => Some(Operand::Const(None)),
            _ => None,
        }
    }
}

#[inline]
fn is_null(nulls: &Nulls, i: usize) -> bool {
    nulls.as_ref().is_some_and(|n| n[i])
}

/// Row `i` of a typed column with null mask `nulls` (`None`: null).
#[inline]
fn at<T: Copy>(xs: &[T], nulls: Option<&[bool]>, i: usize) -> Option<T> {
    match nulls {
        Some(n) if n[i] => None,
        _ => Some(xs[i]),
    }
}

/// Operands of one type: a typed column with its null mask, or one
/// constant (`None`: null).
enum Operand<'a, T> {
    Column(&'a [T], Option<&'a [bool]>),
    Const(Option<T>),
}

impl<T: Copy + Default> Operand<'_, T> {
    #[inline]
    fn has_nulls(&self) -> bool {
        matches!(self, Operand::Column(_, Some(_)) | Operand::Const(None))
    }

    /// The value at row `i`, whether or not the row is null.
    #[inline]
    fn raw(&self, i: usize) -> T {
        match self {
            Operand::Column(xs, _) => xs[i],
            Operand::Const(x) => x.unwrap_or_default(),
        }
    }

    #[inline]
    fn get(&self, i: usize) -> Option<T> {
        match self {
            Operand::Column(xs, nulls) => at(xs, *nulls, i),
            Operand::Const(x) => *x,
        }
    }
}

/// Numeric operands read as floats: a float column, an integer column, or
/// one constant.
enum Floats<'a> {
    Column(&'a [f64], Option<&'a [bool]>),
    Ints(&'a [i64], Option<&'a [bool]>),
    Const(f64),
}

impl Floats<'_> {
    #[inline]
    fn get(&self, i: usize) -> Option<f64> {
        match self {
            Floats::Column(xs, nulls) => at(xs, *nulls, i),
            Floats::Ints(xs, nulls) => at(xs, *nulls, i).map(|x| x as f64),
            Floats::Const(x) => Some(*x),
        }
    }
}

/// Collects `n` optional results (`None`: null) into a typed column.
fn collect<T: Default>(n: usize, mut f: impl FnMut(usize) -> Option<T>) -> (Vec<T>, Nulls) {
    let mut values = Vec::with_capacity(n);
    let mut nulls: Nulls = None;
    for i in 0..n {
        match f(i) {
            Some(v) => {
                values.push(v);
                if let Some(m) = &mut nulls {
                    m.push(false);
                }
            }
            None => {
                nulls.get_or_insert_with(|| vec![false; i]).push(true);
                values.push(T::default());
            }
        }
    }
    (values, nulls)
}

/// Like [`collect`] for results that may also fail (the outer `None`).
fn try_collect<T: Default>(
    n: usize,
    mut f: impl FnMut(usize) -> Option<Option<T>>,
) -> Option<(Vec<T>, Nulls)> {
    let mut failed = false;
    let out = collect(n, |i| match f(i) {
        Some(v) => v,
        None => {
            failed = true;
            None
        }
    });
    (!failed).then_some(out)
}

/// A slot's column as a vector (integers, floats and booleans typed,
/// strings viewed in place).
fn slot(chunk: &Chunk, s: Slot) -> Vector<'_> {
    let n = chunk.len();
    match chunk.column(s) {
        None => Vector::Const(Value::Null),
        Some(column) => match string_slot(column, n) {
            Some(strings) => strings,
            None => typed((0..n).map(|i| column.value(i)), n),
        },
    }
}

/// A column of strings and nulls (and at least one string) as views of
/// its values; `None` for any other column.
fn string_slot(column: &crate::chunk::Column, n: usize) -> Option<Vector<'_>> {
    let mut xs = Vec::with_capacity(n);
    let mut nulls: Nulls = None;
    let mut any = false;
    for i in 0..n {
        match column.value_ref(i) {
            Cow::Borrowed(Value::String(s)) => {
                any = true;
                push(&mut xs, &mut nulls, Some(s.as_str()));
            }
            Cow::Borrowed(Value::Null) => push(&mut xs, &mut nulls, None),
            _ => return None,
        }
    }
    any.then_some(Vector::Strs(xs, nulls))
}

/// Property `key` of the node or relationship in slot `s` on every row.
fn property<'a>(q: &'a QueryContext, chunk: &Chunk, s: Slot, key: &Key) -> Option<Vector<'a>> {
    let n = chunk.len();
    let Some(column) = chunk.column(s) else {
        return Some(Vector::Const(Value::Null));
    };
    if q.snapshot.external().is_some() {
        prefetch_column(&q.snapshot, column, n);
    }
    if let Some(k) = key.id {
        // Typed reads, tried in turn: each gives up at the first value of
        // another type (cheaply, as a column holds one type).
        if let Some(v) = typed_property::<i64>(q, column, k, n) {
            return v;
        }
        if let Some(v) = typed_property::<f64>(q, column, k, n) {
            return v;
        }
        if let Some(v) = typed_property::<&str>(q, column, k, n) {
            return v;
        }
    }
    // A key the graph never had (`key.id` is `None`) reads null.
    let snapshot = &q.snapshot;
    let mut failed = false;
    let values = (0..n).map(|i| {
        let (value, exists) = match (column.node(i), column.rel(i)) {
            (Some(NULL_ID), _) | (_, Some(NULL_ID)) => return Value::Null,
            (Some(node), _) => {
                let v = key
                    .id
                    .map_or(Value::Null, |k| snapshot.node_property(node, k));
                let exists = !v.is_null() || snapshot.node_exists(node);
                (v, exists)
            }
            (_, Some(rel)) => {
                let v = key
                    .id
                    .map_or(Value::Null, |k| snapshot.rel_property(rel, k));
                let exists = !v.is_null() || snapshot.relationship(rel).is_some();
                (v, exists)
            }
            // Not an entity (a map, say): the row evaluator's case.
            (None, None) => (Value::Null, false),
        };
        failed |= !exists;
        value
    });
    let out = typed(values, n);
    (!failed).then_some(out)
}

/// Over a graph source: fetches the node rows of a column's first `n`
/// rows in one round trip, before they are read row by row.
pub(crate) fn prefetch_column(
    snapshot: &rhizome_storage::Snapshot,
    column: &crate::chunk::Column,
    n: usize,
) {
    let nodes: Vec<rhizome_common::NodeId> = (0..n)
        .filter_map(|i| column.node(i))
        .filter(|&x| x != NULL_ID)
        .collect();
    if !nodes.is_empty() {
        snapshot.prefetch_nodes(&nodes);
    }
}

/// A property type read from storage without building values.
trait Scalar<'a>: Copy + Default + 'a {
    /// A dense, fully present column of this type as a slice.
    fn dense(column: &ColumnView<'a>) -> Option<&'a [Self]>;
    /// Row `row` of a base column: `Some(None)` if absent, `None` if the
    /// column holds another type.
    fn at(column: &ColumnView<'a>, row: u64) -> Option<Option<Self>>;
    /// `node`'s value, changes since the last checkpoint included (as
    /// [`Scalar::at`]).
    fn of_node(snapshot: &'a Snapshot, node: NodeId, k: PropertyKeyId) -> Option<Option<Self>>;
    /// The typed vector of these values.
    fn vector(xs: Vec<Self>, nulls: Nulls) -> Vector<'a>;
    /// The typed vector of values borrowed from a storage column.
    fn borrowed(xs: &'a [Self]) -> Vector<'a>;
}

impl<'a> Scalar<'a> for i64 {
    fn dense(column: &ColumnView<'a>) -> Option<&'a [i64]> {
        column.dense_i64()
    }
    #[inline]
    fn at(column: &ColumnView<'a>, row: u64) -> Option<Option<i64>> {
        column.int_at(row)
    }
    #[inline]
    fn of_node(snapshot: &'a Snapshot, node: NodeId, k: PropertyKeyId) -> Option<Option<i64>> {
        snapshot.node_property_int(node, k)
    }
    fn vector(xs: Vec<i64>, nulls: Nulls) -> Vector<'a> {
        Vector::Ints(xs.into(), nulls)
    }
    fn borrowed(xs: &'a [i64]) -> Vector<'a> {
        Vector::Ints(xs.into(), None)
    }
}

impl<'a> Scalar<'a> for f64 {
    fn dense(column: &ColumnView<'a>) -> Option<&'a [f64]> {
        column.dense_f64()
    }
    #[inline]
    fn at(column: &ColumnView<'a>, row: u64) -> Option<Option<f64>> {
        column.float_at(row)
    }
    #[inline]
    fn of_node(snapshot: &'a Snapshot, node: NodeId, k: PropertyKeyId) -> Option<Option<f64>> {
        snapshot.node_property_float(node, k)
    }
    fn vector(xs: Vec<f64>, nulls: Nulls) -> Vector<'a> {
        Vector::Floats(xs.into(), nulls)
    }
    fn borrowed(xs: &'a [f64]) -> Vector<'a> {
        Vector::Floats(xs.into(), None)
    }
}

impl<'a> Scalar<'a> for &'a str {
    fn dense(_: &ColumnView<'a>) -> Option<&'a [&'a str]> {
        None
    }
    #[inline]
    fn at(column: &ColumnView<'a>, row: u64) -> Option<Option<&'a str>> {
        column.str_view_at(row)
    }
    #[inline]
    fn of_node(snapshot: &'a Snapshot, node: NodeId, k: PropertyKeyId) -> Option<Option<&'a str>> {
        snapshot.node_property_str(node, k)
    }
    fn borrowed(xs: &'a [&'a str]) -> Vector<'a> {
        Vector::Strs(xs.to_vec(), None)
    }
    fn vector(xs: Vec<&'a str>, nulls: Nulls) -> Vector<'a> {
        Vector::Strs(xs, nulls)
    }
}

/// Property `k` of type `T` of the nodes in `column`, read without
/// building values; `None` if the column holds no nodes or a value has
/// another type (then the next type or the general path reads the chunk),
/// `Some(None)` if a row needs the row evaluator (a deleted node).
fn typed_property<'a, T: Scalar<'a>>(
    q: &'a QueryContext,
    column: &crate::chunk::Column,
    k: PropertyKeyId,
    n: usize,
) -> Option<Option<Vector<'a>>> {
    let snapshot = &q.snapshot;
    if snapshot.is_base_only() {
        match column.node_ids() {
            Some((ids, None)) => {
                if let Some(v) = consecutive_property::<T>(snapshot, &ids[..n], k) {
                    return Some(Some(v));
                }
                return base_property::<T>(snapshot, ids[..n].iter().copied(), k);
            }
            Some((ids, Some(selection))) => {
                // A filtered scan chunk: its ids are consecutive, so the
                // selected rows are read from the column's slice by index.
                if let Some(values) = consecutive_slice::<T>(snapshot, ids, k) {
                    let xs = selection[..n].iter().map(|&i| values[i as usize]);
                    return Some(Some(T::vector(xs.collect(), None)));
                }
                let nodes = selection[..n].iter().map(|&i| ids[i as usize]);
                return base_property::<T>(snapshot, nodes, k);
            }
            None => {}
        }
    }
    let mut xs = Vec::with_capacity(n);
    let mut nulls: Nulls = None;
    for i in 0..n {
        let node = column.node(i)?;
        let x = if node == NULL_ID {
            None
        } else {
            let x = T::of_node(snapshot, node, k)?;
            if x.is_none() && !snapshot.node_exists(node) {
                return Some(None);
            }
            x
        };
        push(&mut xs, &mut nulls, x);
    }
    Some(Some(T::vector(xs, nulls)))
}

/// Property `k` of type `T` of `ids` when they are consecutive node ids
/// inside one dense column of the base segment (a scan's chunk): the
/// column's slice, borrowed. `None` otherwise (read them by
/// [`base_property`]).
fn consecutive_property<'a, T: Scalar<'a>>(
    snapshot: &'a Snapshot,
    ids: &[NodeId],
    k: PropertyKeyId,
) -> Option<Vector<'a>> {
    consecutive_slice::<T>(snapshot, ids, k).map(T::borrowed)
}

/// The slice of a dense base column holding property `k` of `ids`, one
/// value per id in order, if `ids` are consecutive node ids inside one
/// such column; else `None`.
fn consecutive_slice<'a, T: Scalar<'a>>(
    snapshot: &'a Snapshot,
    ids: &[NodeId],
    k: PropertyKeyId,
) -> Option<&'a [T]> {
    let (&first, &last) = (ids.first()?, ids.last()?);
    if first == NULL_ID || last.wrapping_sub(first) != ids.len() as u64 - 1 {
        return None;
    }
    if !ids.iter().zip(first..).all(|(&id, want)| id == want) {
        return None;
    }
    let (column, row) = snapshot.node_column(first, k)?;
    let values = T::dense(column)?;
    let rows = usize::try_from(row).ok()?..usize::try_from(row).ok()? + ids.len();
    values.get(rows)
}

fn base_property<'a, T: Scalar<'a>>(
    snapshot: &'a Snapshot,
    nodes: impl ExactSizeIterator<Item = NodeId>,
    k: PropertyKeyId,
) -> Option<Option<Vector<'a>>> {
    let mut xs = Vec::with_capacity(nodes.len());
    let mut nulls: Nulls = None;
    // The dense column last found: its first node id and its values.
    let mut run: (u64, &[T]) = (0, &[]);
    for node in nodes {
        let offset = node.wrapping_sub(run.0);
        if offset < run.1.len() as u64 {
            xs.push(run.1[offset as usize]);
            if let Some(m) = &mut nulls {
                m.push(false);
            }
            continue;
        }
        let x = if node == NULL_ID {
            None
        } else {
            match snapshot.node_column(node, k) {
                Some((column, row)) => match T::dense(column) {
                    Some(values) => {
                        run = (node - row, values);
                        Some(values[row as usize])
                    }
                    None => T::at(column, row)?,
                },
                // No column for the key in the node's group: null, unless
                // the node does not exist (the row evaluator's error).
                None if snapshot.node_exists(node) => None,
                None => return Some(None),
            }
        };
        push(&mut xs, &mut nulls, x);
    }
    Some(Some(T::vector(xs, nulls)))
}

/// `n` values as a vector: typed while they are all integers, all floats
/// or all booleans (nulls allowed), else plain values.
fn typed<'v>(values: impl Iterator<Item = Value>, n: usize) -> Vector<'v> {
    let mut out = Vector::Const(Value::Null);
    for (i, v) in values.enumerate() {
        match (&mut out, v) {
            (Vector::Const(Value::Null), Value::Null) => {}
            (Vector::Const(Value::Null), v) => out = start(i, v, n),
            (Vector::Ints(xs, nulls), Value::Int(x)) => push(xs.to_mut(), nulls, Some(x)),
            (Vector::Floats(xs, nulls), Value::Float(x)) => push(xs.to_mut(), nulls, Some(x)),
            (Vector::Bools(xs, nulls), Value::Bool(x)) => push(xs, nulls, Some(x)),
            (Vector::Ints(xs, nulls), Value::Null) => push(xs.to_mut(), nulls, None),
            (Vector::Floats(xs, nulls), Value::Null) => push(xs.to_mut(), nulls, None),
            (Vector::Bools(xs, nulls), Value::Null) => push(xs, nulls, None),
            (Vector::Values(values), v) => values.push(v),
            (other, v) => {
                let mut values = Vec::with_capacity(n);
                values.extend((0..i).map(|j| other.value(j)));
                values.push(v);
                out = Vector::Values(values);
            }
        }
    }
    out
}

/// A vector whose first non-null value `v` is at row `i`.
fn start<'v>(i: usize, v: Value, n: usize) -> Vector<'v> {
    fn with<T: Default + Clone>(i: usize, x: T, n: usize) -> (Vec<T>, Nulls) {
        let mut xs = Vec::with_capacity(n);
        xs.resize(i, T::default());
        xs.push(x);
        let nulls = (i > 0).then(|| {
            let mut m = vec![true; i];
            m.push(false);
            m
        });
        (xs, nulls)
    }
    match v {
        Value::Int(x) => {
            let (xs, nulls) = with(i, x, n);
            Vector::Ints(xs.into(), nulls)
        }
        Value::Float(x) => {
            let (xs, nulls) = with(i, x, n);
            Vector::Floats(xs.into(), nulls)
        }
        Value::Bool(x) => {
            let (xs, nulls) = with(i, x, n);
            Vector::Bools(xs, nulls)
        }
        v => {
            let mut values = vec![Value::Null; i];
            values.reserve(n - i);
            values.push(v);
            Vector::Values(values)
        }
    }
}

#[inline]
fn push<T: Default>(xs: &mut Vec<T>, nulls: &mut Nulls, x: Option<T>) {
    let null = x.is_none();
    if null {
        nulls
            .get_or_insert_with(|| vec![false; xs.len()])
            .push(true);
    } else if let Some(m) = nulls {
        m.push(false);
    }
    xs.push(x.unwrap_or_default());
}

fn unary(op: UnaryOp, a: Vector, n: usize) -> Option<Vector> {
    match (op, &a) {
        (UnaryOp::Not, _) => {
            let b = a.bools()?;
            let (xs, nulls) = collect(n, |i| b.get(i).map(|x| !x));
            Some(Vector::Bools(xs, nulls))
        }
        (UnaryOp::Neg, Vector::Ints(..) | Vector::Const(Value::Int(_))) => {
            let x = a.ints()?;
            let (xs, nulls) = try_collect(n, |i| match x.get(i) {
                Some(v) => v.checked_neg().map(Some),
                None => Some(None),
            })?;
            Some(Vector::Ints(xs.into(), nulls))
        }
        _ => {
            let values = (0..n)
                .map(|i| unary_op(op, &a.value(i)).ok())
                .collect::<Option<Vec<_>>>()?;
            Some(typed(values.into_iter(), n))
        }
    }
}

fn arithmetic<'v>(op: BinaryOp, x: &Vector, y: &Vector, n: usize) -> Option<Vector<'v>> {
    if let (Some(a), Some(b)) = (x.ints(), y.ints()) {
        return zip_ints(&a, &b, n, IntOp::of(op)?);
    }
    if let (Some(a), Some(b)) = (x.floats(), y.floats()) {
        let (xs, nulls) = collect(n, |i| match (a.get(i), b.get(i)) {
            (Some(p), Some(q)) => Some(match op {
                BinaryOp::Add => p + q,
                BinaryOp::Sub => p - q,
                BinaryOp::Mul => p * q,
                BinaryOp::Div => p / q,
                _ => p % q,
            }),
            _ => None,
        });
        return Some(Vector::Floats(xs.into(), nulls));
    }
    by_element(op, x, y, n)
}

/// `op` on two integer operands row by row (null where either is null);
/// `None` if some row fails: integer operations fail exactly where
/// `rhizome_functions::ops` raises an error (overflow, division by zero).
#[inline]
fn zip_ints<'v>(
    a: &Operand<'_, i64>,
    b: &Operand<'_, i64>,
    n: usize,
    op: IntOp,
) -> Option<Vector<'v>> {
    if a.has_nulls() || b.has_nulls() {
        let (xs, nulls) = try_collect(n, |i| match (a.get(i), b.get(i)) {
            (Some(p), Some(q)) => int_kernels::checked_op(op, p, q).map(Some),
            _ => Some(None),
        })?;
        return Some(Vector::Ints(xs.into(), nulls));
    }
    // One kernel per operand shape, each a plain array loop.
    let xs = match (a, b) {
        (Operand::Column(p, _), Operand::Const(q)) => {
            int_kernels::column_const(op, &p[..n], q.unwrap_or_default())
        }
        (Operand::Const(p), Operand::Column(q, _)) => {
            int_kernels::const_column(op, p.unwrap_or_default(), &q[..n])
        }
        (Operand::Column(p, _), Operand::Column(q, _)) => {
            int_kernels::column_column(op, &p[..n], &q[..n])
        }
        _ => int_kernels::column_const(op, &vec![a.raw(0); n], b.raw(0)),
    };
    Some(Vector::Ints(xs?.into(), None))
}

/// `f` on two operands of one type row by row, null where either is null.
#[inline]
fn compare<'v, T: Copy + Default>(
    a: &Operand<'_, T>,
    b: &Operand<'_, T>,
    n: usize,
    f: impl Fn(T, T) -> bool,
) -> Vector<'v> {
    if a.has_nulls() || b.has_nulls() {
        let (xs, nulls) = collect(n, |i| Some(f(a.get(i)?, b.get(i)?)));
        return Vector::Bools(xs, nulls);
    }
    let xs = match (a, b) {
        (Operand::Column(p, _), Operand::Const(q)) => {
            let q = q.unwrap_or_default();
            p[..n].iter().map(|&p| f(p, q)).collect()
        }
        (Operand::Const(p), Operand::Column(q, _)) => {
            let p = p.unwrap_or_default();
            q[..n].iter().map(|&q| f(p, q)).collect()
        }
        (Operand::Column(p, _), Operand::Column(q, _)) => {
            p[..n].iter().zip(&q[..n]).map(|(&p, &q)| f(p, q)).collect()
        }
        _ => (0..n).map(|i| f(a.raw(i), b.raw(i))).collect(),
    };
    Vector::Bools(xs, None)
}

fn comparison<'v>(op: BinaryOp, x: &Vector, y: &Vector, n: usize) -> Option<Vector<'v>> {
    if let (Some(a), Some(b)) = (x.ints(), y.ints()) {
        return Some(match op {
            BinaryOp::Eq => compare(&a, &b, n, |p, q| p == q),
            BinaryOp::Ne => compare(&a, &b, n, |p, q| p != q),
            BinaryOp::Lt => compare(&a, &b, n, |p, q| p < q),
            BinaryOp::Gt => compare(&a, &b, n, |p, q| p > q),
            BinaryOp::Le => compare(&a, &b, n, |p, q| p <= q),
            _ => compare(&a, &b, n, |p, q| p >= q),
        });
    }
    if let (Some(a), Some(b)) = (x.strs(), y.strs()) {
        // Strings equal only equal strings and order by code point (the
        // order of their UTF-8 bytes, as `rhizome_functions` compares
        // them); a null operand gives null.
        return Some(match op {
            BinaryOp::Eq => compare(&a, &b, n, |p: &str, q: &str| p == q),
            BinaryOp::Ne => compare(&a, &b, n, |p: &str, q: &str| p != q),
            BinaryOp::Lt => compare(&a, &b, n, |p: &str, q: &str| p < q),
            BinaryOp::Gt => compare(&a, &b, n, |p: &str, q: &str| p > q),
            BinaryOp::Le => compare(&a, &b, n, |p: &str, q: &str| p <= q),
            _ => compare(&a, &b, n, |p: &str, q: &str| p >= q),
        });
    }
    let float_column =
        |v: &Vector| matches!(v, Vector::Floats(..) | Vector::Const(Value::Float(_)));
    if float_column(x) && float_column(y) {
        let (a, b) = (x.floats()?, y.floats()?);
        // IEEE comparisons are Cypher's for floats: NaN equals nothing and
        // makes every inequality false.
        let (xs, nulls) = collect(n, |i| {
            let (p, q) = (a.get(i)?, b.get(i)?);
            Some(match op {
                BinaryOp::Eq => p == q,
                BinaryOp::Ne => p != q,
                BinaryOp::Lt => p < q,
                BinaryOp::Gt => p > q,
                BinaryOp::Le => p <= q,
                _ => p >= q,
            })
        });
        return Some(Vector::Bools(xs, nulls));
    }
    by_element(op, x, y, n)
}

/// `STARTS WITH`, `ENDS WITH` or `CONTAINS`: on string views where both
/// sides are strings (or null), else element by element (a non-string
/// operand gives null).
fn string_predicate<'v>(op: BinaryOp, x: &Vector, y: &Vector, n: usize) -> Option<Vector<'v>> {
    let (Some(a), Some(b)) = (x.strs(), y.strs()) else {
        return by_element(op, x, y, n);
    };
    Some(match op {
        BinaryOp::StartsWith => compare(&a, &b, n, |p: &str, q: &str| p.starts_with(q)),
        BinaryOp::EndsWith => compare(&a, &b, n, |p: &str, q: &str| p.ends_with(q)),
        _ => compare(&a, &b, n, |p: &str, q: &str| p.contains(q)),
    })
}

/// `x IN list` for a statement-constant list: integers and string views
/// searched in the list's sorted vectors, a constant answered once, other
/// values by [`InSet::contains`]; `None` if a row raises an error (the
/// list is not a list).
fn in_list<'v>(x: &Vector, set: &InSet, n: usize) -> Option<Vector<'v>> {
    let null = || set.contains_null();
    match x {
        Vector::Const(v) => set.contains(v).ok().map(|b| Vector::Const(bool_value(b))),
        Vector::Ints(xs, nulls) => {
            let answer = |i: usize| match at(xs, nulls.as_deref(), i) {
                Some(v) => set.contains_int(v),
                None => null(),
            };
            let (xs, nulls) = try_collect(n, answer)?;
            Some(Vector::Bools(xs, nulls))
        }
        Vector::Strs(xs, nulls) => {
            let answer = |i: usize| match at(xs, nulls.as_deref(), i) {
                Some(v) => set.contains_str(v),
                None => null(),
            };
            let (xs, nulls) = try_collect(n, answer)?;
            Some(Vector::Bools(xs, nulls))
        }
        _ => {
            let (xs, nulls) = try_collect(n, |i| set.contains(&x.value(i)).ok())?;
            Some(Vector::Bools(xs, nulls))
        }
    }
}

fn bool_value(b: Option<bool>) -> Value {
    b.map_or(Value::Null, Value::Bool)
}

fn logic<'v>(op: BinaryOp, x: &Vector, y: &Vector, n: usize) -> Option<Vector<'v>> {
    let (Some(a), Some(b)) = (x.bools(), y.bools()) else {
        return by_element(op, x, y, n);
    };
    let (xs, nulls) = collect(n, |i| match (op, a.get(i), b.get(i)) {
        (BinaryOp::And, Some(false), _) | (BinaryOp::And, _, Some(false)) => Some(false),
        (BinaryOp::Or, Some(true), _) | (BinaryOp::Or, _, Some(true)) => Some(true),
        (BinaryOp::Xor, Some(p), Some(q)) => Some(p != q),
        (BinaryOp::And | BinaryOp::Or, Some(p), Some(_)) => Some(p),
        _ => None,
    });
    Some(Vector::Bools(xs, nulls))
}

/// `x AND b` or `x OR b` with `b` evaluated row by row on the rows where
/// `x` does not decide the result; `None` if such a row raises an error.
fn short_circuit<'v>(
    q: &QueryContext,
    op: BinaryOp,
    x: &Vector,
    b: &CExpr,
    chunk: &Chunk,
) -> Option<Vector<'v>> {
    let eval = Evaluator::new(q);
    let n = chunk.len();
    let values = (0..n)
        .map(|i| apply(op, x.value(i), || eval.eval(b, &Row::new(chunk, i)).ok()))
        .collect::<Option<Vec<_>>>()?;
    Some(typed(values.into_iter(), n))
}

/// `op` row by row on values, exactly as the row evaluator applies it.
fn by_element<'v>(op: BinaryOp, x: &Vector, y: &Vector, n: usize) -> Option<Vector<'v>> {
    let values = (0..n)
        .map(|i| apply(op, x.value(i), || Some(y.value(i))))
        .collect::<Option<Vec<_>>>()?;
    Some(typed(values.into_iter(), n))
}

/// `a op b` as the row evaluator computes it: the right side is asked for
/// only when the left side does not decide `AND`/`OR`; `None` if either
/// side or the operator raises an error.
#[inline]
fn apply(op: BinaryOp, a: Value, b: impl FnOnce() -> Option<Value>) -> Option<Value> {
    let decided = matches!(
        (op, &a),
        (BinaryOp::And, Value::Bool(false)) | (BinaryOp::Or, Value::Bool(true))
    );
    if decided {
        return Some(a);
    }
    binary_op(op, &a, &b()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(xs: &[Option<i64>]) -> Vector<'static> {
        typed(
            xs.iter().map(|x| x.map_or(Value::Null, Value::Int)),
            xs.len(),
        )
    }

    fn values(v: &Vector, n: usize) -> Vec<Value> {
        v.clone().into_values(n)
    }

    #[test]
    fn typed_builds_typed_vectors_and_falls_back_for_mixed_columns() {
        let v = ints(&[Some(1), None, Some(3)]);
        assert_eq!(
            v,
            Vector::Ints(vec![1, 0, 3].into(), Some(vec![false, true, false]))
        );
        assert_eq!(ints(&[None, None]), Vector::Const(Value::Null));
        let mixed = typed(
            [Value::Int(1), Value::Float(2.0), Value::Null].into_iter(),
            3,
        );
        assert_eq!(
            mixed,
            Vector::Values(vec![Value::Int(1), Value::Float(2.0), Value::Null])
        );
    }

    #[test]
    fn integer_arithmetic_fails_on_overflow_and_division_by_zero() {
        let n = 3;
        let x = ints(&[Some(i64::MAX), Some(1), None]);
        let one = Vector::Const(Value::Int(1));
        // Overflow on the first row: the chunk goes to the row evaluator,
        // which raises Cypher's error.
        assert_eq!(arithmetic(BinaryOp::Add, &x, &one, n), None);
        assert_eq!(
            arithmetic(BinaryOp::Mul, &x, &Vector::Const(Value::Int(2)), n),
            None
        );
        let y = ints(&[Some(i64::MIN), Some(4), Some(5)]);
        assert_eq!(arithmetic(BinaryOp::Sub, &y, &one, n), None);
        assert_eq!(
            arithmetic(BinaryOp::Div, &y, &Vector::Const(Value::Int(-1)), n),
            None
        );
        assert_eq!(unary(UnaryOp::Neg, y.clone(), n), None);
        let zero = Vector::Const(Value::Int(0));
        assert_eq!(arithmetic(BinaryOp::Div, &one, &zero, n), None);
        assert_eq!(arithmetic(BinaryOp::Mod, &y, &zero, n), None);
        // i64::MIN % -1 is 0 in Cypher, not an overflow.
        assert_eq!(
            values(
                &arithmetic(BinaryOp::Mod, &y, &Vector::Const(Value::Int(-1)), n).unwrap(),
                n
            ),
            vec![Value::Int(0); 3]
        );
        // Nulls propagate; every operand shape gives the same values.
        let z = ints(&[Some(7), None, Some(-7)]);
        let three = Vector::Const(Value::Int(3));
        assert_eq!(
            values(&arithmetic(BinaryOp::Mod, &z, &three, n).unwrap(), n),
            vec![Value::Int(1), Value::Null, Value::Int(-1)]
        );
        let dense = ints(&[Some(7), Some(8), Some(-7)]);
        let threes = ints(&[Some(3), Some(3), Some(3)]);
        for (a, b) in [(&dense, &three), (&dense, &threes)] {
            assert_eq!(
                values(&arithmetic(BinaryOp::Div, a, b, n).unwrap(), n),
                vec![Value::Int(2), Value::Int(2), Value::Int(-2)]
            );
        }
        assert_eq!(
            values(&arithmetic(BinaryOp::Sub, &three, &dense, n).unwrap(), n),
            vec![Value::Int(-4), Value::Int(-5), Value::Int(10)]
        );
        // Integers with floats compute in floats.
        let half = Vector::Const(Value::Float(0.5));
        assert_eq!(
            values(&arithmetic(BinaryOp::Add, &z, &half, n).unwrap(), n),
            vec![Value::Float(7.5), Value::Null, Value::Float(-6.5)]
        );
    }

    #[test]
    fn comparisons_and_mixed_types() {
        let n = 3;
        let x = ints(&[Some(1), None, Some(3)]);
        let two = Vector::Const(Value::Int(2));
        assert_eq!(
            values(&comparison(BinaryOp::Lt, &x, &two, n).unwrap(), n),
            vec![Value::Bool(true), Value::Null, Value::Bool(false)]
        );
        let nan = Vector::Floats(vec![f64::NAN, 1.0, 2.0].into(), None);
        assert_eq!(
            values(&comparison(BinaryOp::Eq, &nan, &nan, n).unwrap(), n),
            vec![Value::Bool(false), Value::Bool(true), Value::Bool(true)]
        );
        // A mixed column (string and integer) falls back to the element-wise
        // operations: a string equals no integer, and orders with none.
        let mixed = Vector::Values(vec![Value::String("a".into()), Value::Int(2), Value::Null]);
        assert_eq!(
            values(&comparison(BinaryOp::Eq, &mixed, &two, n).unwrap(), n),
            vec![Value::Bool(false), Value::Bool(true), Value::Null]
        );
        assert_eq!(
            values(&comparison(BinaryOp::Lt, &mixed, &two, n).unwrap(), n),
            vec![Value::Null, Value::Bool(false), Value::Null]
        );
        // Strings: STARTS WITH / CONTAINS element-wise.
        let s = Vector::Values(vec![
            Value::String("abc".into()),
            Value::Null,
            Value::String("xbc".into()),
        ]);
        let prefix = Vector::Const(Value::String("ab".into()));
        assert_eq!(
            values(
                &by_element(BinaryOp::StartsWith, &s, &prefix, n).unwrap(),
                n
            ),
            vec![Value::Bool(true), Value::Null, Value::Bool(false)]
        );
        // A type error (a string plus a boolean) sends the chunk to the row
        // evaluator.
        assert_eq!(
            by_element(BinaryOp::Sub, &s, &Vector::Const(Value::Bool(true)), n),
            None
        );
    }

    #[test]
    fn string_views_and_constant_lists() {
        let n = 4;
        let s = Vector::Strs(
            vec!["abc", "", "xbc", "é"],
            Some(vec![false, true, false, false]),
        );
        let text = |x: &str| Vector::Const(Value::String(x.into()));
        let b = |x: Option<bool>| x.map_or(Value::Null, Value::Bool);
        let t = Some(true);
        let f = Some(false);
        let get = |v: Option<Vector>| values(&v.unwrap(), n);
        assert_eq!(
            get(string_predicate(BinaryOp::StartsWith, &s, &text("ab"), n)),
            vec![b(t), b(None), b(f), b(f)]
        );
        assert_eq!(
            get(string_predicate(BinaryOp::EndsWith, &s, &text("bc"), n)),
            vec![b(t), b(None), b(t), b(f)]
        );
        assert_eq!(
            get(string_predicate(BinaryOp::Contains, &text("xbcé"), &s, n)),
            vec![b(f), b(None), b(t), b(t)]
        );
        // A non-string operand gives null on every row.
        assert_eq!(
            get(string_predicate(
                BinaryOp::Contains,
                &s,
                &Vector::Const(Value::Int(1)),
                n
            )),
            vec![Value::Null; 4]
        );
        assert_eq!(
            get(comparison(BinaryOp::Ne, &s, &text("xbc"), n)),
            vec![b(t), b(None), b(f), b(t)]
        );
        // Ordering by code point, as the row evaluator orders strings.
        assert_eq!(
            get(comparison(BinaryOp::Lt, &s, &text("b"), n)),
            vec![b(t), b(None), b(f), b(f)]
        );
        assert_eq!(
            get(comparison(BinaryOp::Ge, &text("xbc"), &s, n)),
            vec![b(t), b(None), b(t), b(f)]
        );
        let other = Vector::Strs(vec!["abd", "a", "xbc", "e"], None);
        for op in [BinaryOp::Lt, BinaryOp::Gt, BinaryOp::Le, BinaryOp::Ge] {
            let row_wise = (0..n)
                .map(|i| binary_op(op, &s.value(i), &other.value(i)).unwrap())
                .collect::<Vec<_>>();
            assert_eq!(get(comparison(op, &s, &other, n)), row_wise, "{op:?}");
            assert!(matches!(
                comparison(op, &s, &other, n),
                Some(Vector::Bools(..))
            ));
        }
        // A string orders with no integer: null, element by element.
        assert_eq!(
            get(comparison(
                BinaryOp::Lt,
                &s,
                &Vector::Const(Value::Int(1)),
                n
            )),
            vec![Value::Null; 4]
        );
        // An integer equals no string: element by element, false.
        assert_eq!(
            get(comparison(
                BinaryOp::Eq,
                &s,
                &Vector::Const(Value::Int(1)),
                n
            )),
            vec![b(f), b(None), b(f), b(f)]
        );
        let list = |items: Vec<Value>| InSet::new(Value::List(items));
        let set = list(vec![text_value("xbc"), Value::Int(4), Value::Null]);
        assert_eq!(
            get(in_list(&s, &set, n)),
            vec![b(None), b(None), b(t), b(None)]
        );
        let x = ints(&[Some(4), None, Some(5), Some(-1)]);
        let set = list(vec![Value::Int(4), Value::Int(-1)]);
        assert_eq!(get(in_list(&x, &set, n)), vec![b(t), b(None), b(f), b(t)]);
        assert_eq!(
            get(in_list(&x, &list(vec![]), n)),
            vec![b(f), b(f), b(f), b(f)]
        );
        // Not a list: the row evaluator raises the error.
        assert_eq!(in_list(&x, &InSet::new(Value::Int(1)), n), None);
    }

    fn text_value(x: &str) -> Value {
        Value::String(x.into())
    }

    #[test]
    fn boolean_logic_is_three_valued() {
        let t = Some(true);
        let f = Some(false);
        let a = Vector::Bools(
            vec![true, true, true, false, false, false, false, false, false],
            Some(vec![
                false, false, false, false, false, false, true, true, true,
            ]),
        );
        let b = Vector::Bools(
            vec![true, false, false, true, false, false, true, false, false],
            Some(vec![
                false, false, true, false, false, true, false, false, true,
            ]),
        );
        let n = 9;
        let get = |v: Vector| -> Vec<Option<bool>> {
            values(&v, n)
                .into_iter()
                .map(|v| match v {
                    Value::Bool(b) => Some(b),
                    _ => None,
                })
                .collect()
        };
        // Rows: (T,T) (T,F) (T,N) (F,T) (F,F) (F,N) (N,T) (N,F) (N,N).
        assert_eq!(
            get(logic(BinaryOp::And, &a, &b, n).unwrap()),
            vec![t, f, None, f, f, f, None, f, None]
        );
        assert_eq!(
            get(logic(BinaryOp::Or, &a, &b, n).unwrap()),
            vec![t, t, t, t, f, None, t, None, None]
        );
        assert_eq!(
            get(logic(BinaryOp::Xor, &a, &b, n).unwrap()),
            vec![f, t, None, t, f, None, None, None, None]
        );
        assert_eq!(
            get(unary(UnaryOp::Not, a, n).unwrap()),
            vec![f, f, f, t, t, t, None, None, None]
        );
    }
}
