//! Aggregate functions as mergeable accumulators for a parallel runtime.
//!
//! An [`Accumulator`] is a plain enum-backed value: updating it never
//! allocates for count/sum/avg/min/max/stDev and never goes through dynamic
//! dispatch. Each worker keeps its own accumulator per group and the runtime
//! [`merge`](Accumulator::merge)s them at the end; `finish` produces the
//! Cypher result.
//!
//! Null inputs are ignored by every aggregate except `count(*)`. With
//! `DISTINCT`, inputs are de-duplicated under [`GroupKey`] equivalence before
//! they reach the aggregate (so `count(DISTINCT x)` counts `1` and `1.0`
//! once).

use crate::errors::{invalid_type, out_of_range, overflow};
use crate::ops::{order, GroupKey, KeySet};
use crate::temporal::duration as dur;
use rhizome_common::{Duration, Result, Value};
use std::cmp::Ordering;

pub use rhizome_common::AggregateKind;

/// A running sum: integer until a float arrives, or a duration. Integers
/// add up in 128 bits, so the order the parts arrive in (which parallel
/// workers change) cannot make an overflow: only a total outside the 64-bit
/// range is one, raised when the sum is read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sum {
    Empty,
    Int(i128),
    Float(f64),
    Duration(Duration),
}

impl Sum {
    fn add(&mut self, v: &Value) -> Result<()> {
        *self = match (*self, v) {
            (Sum::Empty, Value::Int(i)) => Sum::Int(i128::from(*i)),
            (Sum::Empty, Value::Float(x)) => Sum::Float(*x),
            (Sum::Empty, Value::Duration(d)) => Sum::Duration(*d),
            (Sum::Int(a), Value::Int(b)) => Sum::Int(a + i128::from(*b)),
            (Sum::Int(a), Value::Float(b)) => Sum::Float(a as f64 + b),
            (Sum::Float(a), Value::Int(b)) => Sum::Float(a + *b as f64),
            (Sum::Float(a), Value::Float(b)) => Sum::Float(a + b),
            (Sum::Duration(a), Value::Duration(b)) => Sum::Duration(dur::add(&a, b)?),
            (_, other) => {
                return Err(invalid_type(format!(
                    "sum/avg cannot combine {} with the values seen so far",
                    other.type_name()
                )))
            }
        };
        Ok(())
    }

    fn merge(&mut self, other: Sum) -> Result<()> {
        match other {
            Sum::Empty => Ok(()),
            Sum::Int(i) => {
                *self = match *self {
                    Sum::Empty => Sum::Int(i),
                    Sum::Int(a) => Sum::Int(a + i),
                    Sum::Float(a) => Sum::Float(a + i as f64),
                    // The type error of adding an integer to durations.
                    Sum::Duration(_) => return self.add(&Value::Int(0)),
                };
                Ok(())
            }
            Sum::Float(x) => self.add(&Value::Float(x)),
            Sum::Duration(d) => self.add(&Value::Duration(d)),
        }
    }
}

/// Rows of `len` that `nulls` does not mark null.
fn non_null(len: usize, nulls: Option<&[bool]>) -> u64 {
    match nulls {
        None => len as u64,
        Some(m) => m[..len].iter().filter(|&&null| !null).count() as u64,
    }
}

/// `f` on each value of `xs` that `nulls` does not mark null, in order;
/// stops at the first error.
#[inline]
fn each<T: Copy>(
    xs: &[T],
    nulls: Option<&[bool]>,
    mut f: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    match nulls {
        None => xs.iter().try_for_each(|&x| f(x)),
        Some(m) => xs
            .iter()
            .zip(m)
            .filter(|(_, &null)| !null)
            .try_for_each(|(&x, _)| f(x)),
    }
}

/// [`order`] of two floats: NaN above everything, else numeric (so -0.0
/// and 0.0 are equal).
#[inline]
fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Welford's running mean and squared deviations (mergeable).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    fn merge(&mut self, o: Moments) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = o;
            return;
        }
        let n = self.n + o.n;
        let delta = o.mean - self.mean;
        self.mean += delta * o.n as f64 / n as f64;
        self.m2 += o.m2 + delta * delta * (self.n as f64 * o.n as f64) / n as f64;
        self.n = n;
    }
}

/// The values `collect()` keeps: plain integers or floats while every
/// value so far had that type (8 bytes each instead of a boxed value),
/// values otherwise. Lists grow by a quarter (at least 4 slots), not
/// double, so a list's capacity stays within 1.25x its length plus 4.
///
/// [`Accumulator::finish_typed`] hands the list over as it is, so that an
/// executor can keep it typed until a consumer needs the boxed
/// [`Value::List`] ([`Collected::to_value`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Collected {
    /// Integers only.
    Ints(Vec<i64>),
    /// Floats only.
    Floats(Vec<f64>),
    /// Values of any type (also the empty list).
    Values(Vec<Value>),
}

/// Appends `x`, growing `xs` by a quarter when full.
#[inline]
fn push_grown<T>(xs: &mut Vec<T>, x: T) {
    if xs.len() == xs.capacity() {
        xs.reserve_exact((xs.len() / 4).max(4));
    }
    xs.push(x);
}

/// Appends `more` to `xs`, growing it by exactly what is missing (a
/// merge of workers' lists does not double the capacity).
fn extend_exact<T: Copy>(xs: &mut Vec<T>, more: &[T]) {
    if xs.capacity() - xs.len() < more.len() {
        xs.reserve_exact(more.len());
    }
    xs.extend_from_slice(more);
}

/// Makes room for `extra` more items in `xs`, growing by at least a quarter.
fn reserve_grown<T>(xs: &mut Vec<T>, extra: usize) {
    if xs.capacity() - xs.len() < extra {
        xs.reserve_exact(extra.max(xs.len() / 4).max(4));
    }
}

impl Collected {
    /// Number of items.
    pub fn len(&self) -> usize {
        match self {
            Collected::Ints(xs) => xs.len(),
            Collected::Floats(xs) => xs.len(),
            Collected::Values(xs) => xs.len(),
        }
    }

    /// True if no item was collected.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The list as a boxed value (a copy; the typed list stays).
    pub fn to_value(&self) -> Value {
        Value::List(match self {
            Collected::Ints(xs) => xs.iter().map(|&x| Value::Int(x)).collect(),
            Collected::Floats(xs) => xs.iter().map(|&x| Value::Float(x)).collect(),
            Collected::Values(xs) => xs.clone(),
        })
    }

    /// Bytes held (the typed lists' capacity, `value_bytes` for each
    /// boxed value).
    pub fn bytes(&self, value_bytes: usize) -> usize {
        match self {
            Collected::Ints(xs) => xs.capacity() * 8,
            Collected::Floats(xs) => xs.capacity() * 8,
            Collected::Values(xs) => xs.len() * value_bytes,
        }
    }

    /// The values as boxed values from here on (`self` becomes
    /// [`Collected::Values`]).
    fn values(&mut self) -> &mut Vec<Value> {
        let values = match self {
            Collected::Values(xs) => return xs,
            Collected::Ints(xs) => xs.iter().map(|&x| Value::Int(x)).collect(),
            Collected::Floats(xs) => xs.iter().map(|&x| Value::Float(x)).collect(),
        };
        *self = Collected::Values(values);
        match self {
            Collected::Values(xs) => xs,
            _ => unreachable!("just made values"),
        }
    }

    fn push(&mut self, v: &Value) {
        match (&mut *self, v) {
            (Collected::Ints(xs), Value::Int(x)) => push_grown(xs, *x),
            (Collected::Floats(xs), Value::Float(x)) => push_grown(xs, *x),
            (Collected::Values(xs), Value::Int(x)) if xs.is_empty() => {
                *self = Collected::Ints(vec![*x])
            }
            (Collected::Values(xs), Value::Float(x)) if xs.is_empty() => {
                *self = Collected::Floats(vec![*x])
            }
            _ => push_grown(self.values(), v.clone()),
        }
    }

    fn push_ints(&mut self, xs: &[i64], nulls: Option<&[bool]>) {
        self.push_typed(xs, nulls, Collected::Ints, Value::Int, |c| match c {
            Collected::Ints(items) => Some(items),
            _ => None,
        });
    }

    fn push_floats(&mut self, xs: &[f64], nulls: Option<&[bool]>) {
        self.push_typed(xs, nulls, Collected::Floats, Value::Float, |c| match c {
            Collected::Floats(items) => Some(items),
            _ => None,
        });
    }

    /// Appends a typed column's non-null values: into the typed list
    /// `typed` finds (an empty list of values first becomes one, made by
    /// `list`), else one value at a time as `boxed` values.
    fn push_typed<T: Copy>(
        &mut self,
        xs: &[T],
        nulls: Option<&[bool]>,
        list: fn(Vec<T>) -> Collected,
        boxed: fn(T) -> Value,
        typed: fn(&mut Collected) -> Option<&mut Vec<T>>,
    ) {
        if let Collected::Values(v) = self {
            if v.is_empty() {
                *self = list(Vec::new());
            }
        }
        match typed(self) {
            Some(items) => {
                reserve_grown(items, non_null(xs.len(), nulls) as usize);
                let _ = each(xs, nulls, |x| {
                    items.push(x);
                    Ok(())
                });
            }
            None => {
                let _ = each(xs, nulls, |x| {
                    self.push(&boxed(x));
                    Ok(())
                });
            }
        }
    }

    /// Appends `other`'s values after these.
    fn append(&mut self, other: Collected) {
        match (&mut *self, other) {
            (_, o) if o.is_empty() => {}
            (me, o) if me.is_empty() => *me = o,
            (Collected::Ints(a), Collected::Ints(b)) => extend_exact(a, &b),
            (Collected::Floats(a), Collected::Floats(b)) => extend_exact(a, &b),
            (me, mut o) => {
                let b = std::mem::take(o.values());
                me.values().extend(b);
            }
        }
    }

    /// The items as boxed values.
    pub fn into_values(self) -> Vec<Value> {
        match self {
            Collected::Ints(xs) => xs.into_iter().map(Value::Int).collect(),
            Collected::Floats(xs) => xs.into_iter().map(Value::Float).collect(),
            Collected::Values(xs) => xs,
        }
    }
}

#[derive(Debug, Clone)]
enum State {
    Count(u64),
    Sum(Sum),
    Avg(Sum, u64),
    Min(Option<Value>),
    Max(Option<Value>),
    Collect(Collected),
    StDev(Moments, bool),
    Percentile {
        values: Vec<Value>,
        p: Option<f64>,
        continuous: bool,
    },
}

/// One aggregate's running state (see the module docs).
#[derive(Debug, Clone)]
pub struct Accumulator {
    kind: AggregateKind,
    state: State,
    /// For DISTINCT: the values seen, in first-seen order, their keys,
    /// and the integers among them as plain numbers (a typed set that
    /// answers a repeated integer without hashing a value; a miss still
    /// goes through the keys, so `1` after `1.0` is no new value).
    distinct: Option<(Vec<Value>, KeySet<GroupKey>, KeySet<i64>)>,
}

fn number(v: &Value, what: &str) -> Result<f64> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(x) => Ok(*x),
        _ => Err(invalid_type(format!(
            "{what} expects numbers, got {}",
            v.type_name()
        ))),
    }
}

fn percentile_arg(p: &Value) -> Result<f64> {
    let p = number(p, "the percentile")?;
    if !(0.0..=1.0).contains(&p) {
        return Err(out_of_range(format!(
            "the percentile must be between 0.0 and 1.0, got {p}"
        )));
    }
    Ok(p)
}

impl Accumulator {
    /// A fresh accumulator; `distinct` for `f(DISTINCT x)`.
    pub fn new(kind: AggregateKind, distinct: bool) -> Accumulator {
        let state = match kind {
            AggregateKind::CountStar | AggregateKind::Count => State::Count(0),
            AggregateKind::Sum => State::Sum(Sum::Empty),
            AggregateKind::Avg => State::Avg(Sum::Empty, 0),
            AggregateKind::Min => State::Min(None),
            AggregateKind::Max => State::Max(None),
            AggregateKind::Collect => State::Collect(Collected::Values(Vec::new())),
            AggregateKind::StDev => State::StDev(Moments::default(), true),
            AggregateKind::StDevP => State::StDev(Moments::default(), false),
            AggregateKind::PercentileCont | AggregateKind::PercentileDisc => State::Percentile {
                values: Vec::new(),
                p: None,
                continuous: kind == AggregateKind::PercentileCont,
            },
        };
        let distinct = (distinct && kind != AggregateKind::CountStar)
            .then(|| (Vec::new(), KeySet::default(), KeySet::default()));
        Accumulator {
            kind,
            state,
            distinct,
        }
    }

    /// The aggregate this accumulator computes.
    pub fn kind(&self) -> AggregateKind {
        self.kind
    }

    /// The bytes it holds (collected, kept for a percentile or seen by
    /// DISTINCT), estimating `value_bytes` for each boxed value and the
    /// capacity of typed lists: what a memory budget charges as it grows.
    /// O(1).
    pub fn held_bytes(&self, value_bytes: usize) -> usize {
        let kept = match &self.state {
            State::Collect(items) => items.bytes(value_bytes),
            State::Percentile { values, .. } => values.len() * value_bytes,
            _ => 0,
        };
        kept + self
            .distinct
            .as_ref()
            .map_or(0, |(_, seen, ints)| (seen.len() + ints.len()) * value_bytes)
    }

    /// True for `f(DISTINCT x)`.
    pub fn is_distinct(&self) -> bool {
        self.distinct.is_some()
    }

    /// Counts one row for `count(*)` (no argument).
    pub fn update_row(&mut self) {
        if let State::Count(n) = &mut self.state {
            *n += 1;
        }
    }

    /// Feeds one value of a one-argument aggregate. Nulls are ignored;
    /// `count(*)` counts the row whatever the value.
    pub fn update(&mut self, value: &Value) -> Result<()> {
        self.update_args(std::slice::from_ref(value))
    }

    /// Feeds one row's arguments: `[x]`, or `[x, p]` for the percentiles
    /// (`p` must be a number in `0.0..=1.0`, else `ArgumentError:
    /// NumberOutOfRange`).
    pub fn update_args(&mut self, args: &[Value]) -> Result<()> {
        if self.kind == AggregateKind::CountStar {
            self.update_row();
            return Ok(());
        }
        if let State::Percentile { p, .. } = &mut self.state {
            if let Some(arg) = args.get(1) {
                if !arg.is_null() {
                    *p = Some(percentile_arg(arg)?);
                }
            }
        }
        let Some(v) = args.first() else {
            return Ok(());
        };
        if v.is_null() {
            return Ok(());
        }
        if let Some((seen, keys, _)) = &mut self.distinct {
            if keys.insert(GroupKey(v.clone())) {
                seen.push(v.clone());
            }
            return Ok(());
        }
        Self::apply(&mut self.state, v)
    }

    /// Counts `rows` rows for `count(*)`, or `rows` non-null values for a
    /// plain `count(x)` whose nulls the caller left out; false (nothing
    /// counted) for any other aggregate, which must be fed its values.
    pub fn add_count(&mut self, rows: u64) -> bool {
        match (&mut self.state, &self.distinct) {
            (State::Count(n), None) => {
                *n += rows;
                true
            }
            _ => false,
        }
    }

    /// Feeds a column of integers (`nulls[i]`: row `i` is null and holds
    /// nothing): the same result as [`Accumulator::update`] on each value
    /// in order, without building a value per row for count, sum, avg, min
    /// and max.
    pub fn update_ints(&mut self, xs: &[i64], nulls: Option<&[bool]>) -> Result<()> {
        if let Some((seen, keys, ints)) = &mut self.distinct {
            return each(xs, nulls, |x| {
                if ints.insert(x) && keys.insert(GroupKey(Value::Int(x))) {
                    seen.push(Value::Int(x));
                }
                Ok(())
            });
        }
        match &mut self.state {
            State::Count(n) => *n += non_null(xs.len(), nulls),
            State::Sum(sum @ (Sum::Empty | Sum::Int(_))) => {
                let mut total: i128 = 0;
                let mut any = false;
                each(xs, nulls, |x| {
                    total += i128::from(x);
                    any = true;
                    Ok(())
                })?;
                if any {
                    *sum = match *sum {
                        Sum::Int(a) => Sum::Int(a + total),
                        _ => Sum::Int(total),
                    };
                }
            }
            State::Collect(items) => items.push_ints(xs, nulls),
            State::Avg(sum @ (Sum::Empty | Sum::Float(_)), n) => {
                // In row order, each integer as a float, as one update per
                // value adds (averages of integers are summed in floats).
                let mut total = match *sum {
                    Sum::Float(a) => Some(a),
                    _ => None,
                };
                let mut count = 0;
                each(xs, nulls, |x| {
                    let x = x as f64;
                    total = Some(total.map_or(x, |t| t + x));
                    count += 1;
                    Ok(())
                })?;
                if let Some(t) = total {
                    *sum = Sum::Float(t);
                }
                *n += count;
            }
            state @ (State::Min(_) | State::Max(_)) => {
                let min = matches!(state, State::Min(_));
                let mut best: Option<i64> = None;
                each(xs, nulls, |x| {
                    best = Some(match best {
                        Some(b) if (min && b <= x) || (!min && b >= x) => b,
                        _ => x,
                    });
                    Ok(())
                })?;
                // The slice's extreme decides against the running one as
                // each of its values would have, one at a time.
                if let Some(b) = best {
                    Self::apply(state, &Value::Int(b))?;
                }
            }
            state => each(xs, nulls, |x| Self::apply(state, &Value::Int(x)))?,
        }
        Ok(())
    }

    /// Feeds a column of strings, like [`Accumulator::update_ints`]:
    /// `count`, `min` and `max` without building a value per row (an
    /// extreme builds one string per slice, and only when it replaces the
    /// running one); other aggregates take each value in order.
    pub fn update_strs(&mut self, xs: &[&str], nulls: Option<&[bool]>) -> Result<()> {
        if self.distinct.is_some() {
            return each(xs, nulls, |x| self.update(&Value::String(x.to_owned())));
        }
        match &mut self.state {
            State::Count(n) => *n += non_null(xs.len(), nulls),
            state @ (State::Min(_) | State::Max(_)) => {
                let min = matches!(state, State::Min(_));
                let mut best: Option<&str> = None;
                each(xs, nulls, |x| {
                    if best.is_none_or(|b| if min { x < b } else { x > b }) {
                        best = Some(x);
                    }
                    Ok(())
                })?;
                // Strings order by code point (`order`); against a running
                // extreme of another type the general rule decides.
                let kept = match (&*state, best) {
                    (State::Min(Some(Value::String(c))), Some(b)) => b >= c.as_str(),
                    (State::Max(Some(Value::String(c))), Some(b)) => b <= c.as_str(),
                    (_, b) => b.is_none(),
                };
                if let (false, Some(b)) = (kept, best) {
                    Self::apply(state, &Value::String(b.to_owned()))?;
                }
            }
            state => each(xs, nulls, |x| {
                Self::apply(state, &Value::String(x.to_owned()))
            })?,
        }
        Ok(())
    }

    /// Feeds a column of floats, like [`Accumulator::update_ints`]: sums
    /// and averages add in row order, as row-at-a-time updates would.
    pub fn update_floats(&mut self, xs: &[f64], nulls: Option<&[bool]>) -> Result<()> {
        if self.distinct.is_some() {
            return each(xs, nulls, |x| self.update(&Value::Float(x)));
        }
        match &mut self.state {
            State::Count(n) => *n += non_null(xs.len(), nulls),
            State::Collect(items) => items.push_floats(xs, nulls),
            State::Sum(sum) | State::Avg(sum, _) if !matches!(sum, Sum::Duration(_)) => {
                // In row order, from the running sum, as one update per
                // value adds (the first value of an empty sum is taken as
                // it is, so a lone -0.0 stays -0.0).
                let mut total = match *sum {
                    Sum::Empty => None,
                    Sum::Int(a) => Some(a as f64),
                    Sum::Float(a) => Some(a),
                    Sum::Duration(_) => unreachable!("excluded by the guard"),
                };
                let mut count = 0;
                each(xs, nulls, |x| {
                    total = Some(total.map_or(x, |t| t + x));
                    count += 1;
                    Ok(())
                })?;
                if let Some(t) = total {
                    *sum = Sum::Float(t);
                }
                if let State::Avg(_, n) = &mut self.state {
                    *n += count;
                }
            }
            state @ (State::Min(_) | State::Max(_)) => {
                let min = matches!(state, State::Min(_));
                let mut best: Option<f64> = None;
                each(xs, nulls, |x| {
                    let replace = best.is_none_or(|b| {
                        let o = float_order(x, b);
                        (min && o == Ordering::Less) || (!min && o == Ordering::Greater)
                    });
                    if replace {
                        best = Some(x);
                    }
                    Ok(())
                })?;
                // The slice's extreme (its first, among equals) decides
                // against the running one as each value would have.
                if let Some(b) = best {
                    Self::apply(state, &Value::Float(b))?;
                }
            }
            state => each(xs, nulls, |x| Self::apply(state, &Value::Float(x)))?,
        }
        Ok(())
    }

    fn apply(state: &mut State, v: &Value) -> Result<()> {
        match state {
            State::Count(n) => *n += 1,
            State::Sum(sum) => {
                if !matches!(v, Value::Int(_) | Value::Float(_) | Value::Duration(_)) {
                    return Err(invalid_type(format!(
                        "sum() expects numbers or durations, got {}",
                        v.type_name()
                    )));
                }
                sum.add(v)?
            }
            State::Avg(sum, n) => {
                if !matches!(v, Value::Int(_) | Value::Float(_) | Value::Duration(_)) {
                    return Err(invalid_type(format!(
                        "avg() expects numbers or durations, got {}",
                        v.type_name()
                    )));
                }
                // Average integers in floats so large sums cannot overflow.
                match v {
                    Value::Int(i) => sum.add(&Value::Float(*i as f64))?,
                    _ => sum.add(v)?,
                }
                *n += 1;
            }
            State::Min(cur) => {
                if cur.as_ref().is_none_or(|c| order(v, c) == Ordering::Less) {
                    *cur = Some(v.clone());
                }
            }
            State::Max(cur) => {
                if cur
                    .as_ref()
                    .is_none_or(|c| order(v, c) == Ordering::Greater)
                {
                    *cur = Some(v.clone());
                }
            }
            State::Collect(items) => items.push(v),
            State::StDev(m, _) => m.add(number(v, "stDev")?),
            State::Percentile { values, .. } => {
                number(v, "percentile")?;
                values.push(v.clone());
            }
        }
        Ok(())
    }

    /// Folds another worker's accumulator for the same aggregate into this
    /// one. Order-sensitive results (`collect`) keep `self`'s values first.
    pub fn merge(&mut self, other: Accumulator) -> Result<()> {
        if other.kind != self.kind {
            return Err(rhizome_common::Error::internal(format!(
                "cannot merge a {:?} accumulator into a {:?} one",
                other.kind, self.kind
            )));
        }
        if let (Some((seen, keys, _)), Some((other_seen, ..))) =
            (&mut self.distinct, other.distinct)
        {
            for v in other_seen {
                if keys.insert(GroupKey(v.clone())) {
                    seen.push(v);
                }
            }
            if let (State::Percentile { p, .. }, State::Percentile { p: op, .. }) =
                (&mut self.state, other.state)
            {
                *p = p.or(op);
            }
            return Ok(());
        }
        match (&mut self.state, other.state) {
            (State::Count(a), State::Count(b)) => *a += b,
            (State::Sum(a), State::Sum(b)) => a.merge(b)?,
            (State::Avg(a, n), State::Avg(b, m)) => {
                a.merge(b)?;
                *n += m;
            }
            (State::Min(a), State::Min(Some(b)))
                if a.as_ref().is_none_or(|c| order(&b, c) == Ordering::Less) =>
            {
                *a = Some(b);
            }
            (State::Max(a), State::Max(Some(b)))
                if a.as_ref().is_none_or(|c| order(&b, c) == Ordering::Greater) =>
            {
                *a = Some(b);
            }
            (State::Collect(a), State::Collect(b)) => a.append(b),
            (State::StDev(a, _), State::StDev(b, _)) => a.merge(b),
            (
                State::Percentile { values, p, .. },
                State::Percentile {
                    values: ov, p: op, ..
                },
            ) => {
                values.extend(ov);
                *p = p.or(op);
            }
            _ => {}
        }
        Ok(())
    }

    /// The aggregate's result: `count` of nothing is 0, `sum` of nothing is
    /// 0, `avg`/`min`/`max`/percentiles of nothing are null, `collect` of
    /// nothing is `[]`, `stDev`/`stDevP` of fewer than two/one values are 0.0.
    pub fn finish(self) -> Result<Value> {
        Ok(match self.finish_typed()? {
            Finished::Value(v) => v,
            Finished::List(items) => Value::List(items.into_values()),
        })
    }

    /// [`Accumulator::finish`], but `collect`'s list is handed over as
    /// collected (typed where it could be) rather than boxed.
    pub fn finish_typed(self) -> Result<Finished> {
        let mut state = self.state;
        if let Some((seen, ..)) = self.distinct {
            for v in &seen {
                Self::apply(&mut state, v)?;
            }
        }
        Ok(Finished::Value(match state {
            State::Count(n) => Value::Int(n as i64),
            State::Sum(sum) => match sum {
                Sum::Empty => Value::Int(0),
                Sum::Int(i) => Value::Int(i64::try_from(i).map_err(|_| overflow("sum"))?),
                Sum::Float(x) => Value::Float(x),
                Sum::Duration(d) => Value::Duration(d),
            },
            State::Avg(sum, n) => match sum {
                Sum::Empty => Value::Null,
                Sum::Int(i) => Value::Float(i as f64 / n as f64),
                Sum::Float(x) => Value::Float(x / n as f64),
                Sum::Duration(d) => Value::Duration(dur::div_count(&d, n as i64)?),
            },
            State::Min(v) | State::Max(v) => v.unwrap_or(Value::Null),
            State::Collect(items) => return Ok(Finished::List(items)),
            State::StDev(m, sample) => {
                let denom = if sample { m.n.saturating_sub(1) } else { m.n };
                if denom == 0 {
                    Value::Float(0.0)
                } else {
                    Value::Float((m.m2 / denom as f64).sqrt())
                }
            }
            State::Percentile {
                mut values,
                p,
                continuous,
            } => {
                let (Some(p), false) = (p, values.is_empty()) else {
                    return Ok(Finished::Value(Value::Null));
                };
                values.sort_by(order);
                let n = values.len();
                if continuous {
                    let pos = p * (n - 1) as f64;
                    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
                    let a = number(&values[lo], "percentileCont")?;
                    let b = number(&values[hi], "percentileCont")?;
                    Value::Float(a + (b - a) * (pos - lo as f64))
                } else {
                    let idx = ((p * n as f64).ceil() as usize)
                        .saturating_sub(1)
                        .min(n - 1);
                    values.swap_remove(idx)
                }
            }
        }))
    }
}

/// An aggregate's result from [`Accumulator::finish_typed`].
#[derive(Debug, Clone, PartialEq)]
pub enum Finished {
    /// Any aggregate but `collect`.
    Value(Value),
    /// `collect`'s list, as collected.
    List(Collected),
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_common::ErrorKind;

    fn run(kind: AggregateKind, distinct: bool, values: &[Value]) -> Result<Value> {
        let mut acc = Accumulator::new(kind, distinct);
        for v in values {
            acc.update(v)?;
        }
        acc.finish()
    }

    /// Splits `values` over two accumulators and merges them, as two
    /// workers would.
    fn run_split(kind: AggregateKind, distinct: bool, values: &[Value]) -> Result<Value> {
        let (a, b) = values.split_at(values.len() / 2);
        let mut left = Accumulator::new(kind, distinct);
        let mut right = Accumulator::new(kind, distinct);
        for v in a {
            left.update(v)?;
        }
        for v in b {
            right.update(v)?;
        }
        left.merge(right)?;
        left.finish()
    }

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|i| Value::Int(*i)).collect()
    }

    #[test]
    fn counts_ignore_nulls_except_count_star() {
        let vals = vec![Value::Int(1), Value::Null, Value::Int(1)];
        assert_eq!(
            run(AggregateKind::Count, false, &vals).unwrap(),
            Value::Int(2)
        );
        assert_eq!(
            run(AggregateKind::CountStar, false, &vals).unwrap(),
            Value::Int(3)
        );
        assert_eq!(
            run(AggregateKind::Count, true, &vals).unwrap(),
            Value::Int(1)
        );
        let mixed = vec![Value::Int(1), Value::Float(1.0), Value::Null];
        assert_eq!(
            run(AggregateKind::Count, true, &mixed).unwrap(),
            Value::Int(1)
        );
        assert_eq!(
            run(AggregateKind::Count, false, &[]).unwrap(),
            Value::Int(0)
        );
    }

    #[test]
    fn sums_and_averages() {
        assert_eq!(
            run(AggregateKind::Sum, false, &ints(&[1, 2, 3])).unwrap(),
            Value::Int(6)
        );
        assert_eq!(run(AggregateKind::Sum, false, &[]).unwrap(), Value::Int(0));
        assert_eq!(
            run(
                AggregateKind::Sum,
                false,
                &[Value::Int(1), Value::Float(0.5)]
            )
            .unwrap(),
            Value::Float(1.5)
        );
        let e = run(AggregateKind::Sum, false, &ints(&[i64::MAX, 1])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ArithmeticError);
        // Only the total must fit: parts added in any order (as parallel
        // workers add them) give the same answer.
        for order in [[i64::MAX, 1, -2], [1, i64::MAX, -2], [-2, 1, i64::MAX]] {
            assert_eq!(
                run(AggregateKind::Sum, false, &ints(&order)).unwrap(),
                Value::Int(i64::MAX - 1)
            );
            assert_eq!(
                run_split(AggregateKind::Sum, false, &ints(&order)).unwrap(),
                Value::Int(i64::MAX - 1)
            );
        }
        assert_eq!(
            run_split(AggregateKind::Sum, false, &ints(&[i64::MIN, -1, 1])).unwrap(),
            Value::Int(i64::MIN)
        );
        assert!(run(AggregateKind::Sum, false, &["a".into()]).is_err());
        assert_eq!(
            run(AggregateKind::Avg, false, &ints(&[1, 2])).unwrap(),
            Value::Float(1.5)
        );
        assert_eq!(run(AggregateKind::Avg, false, &[]).unwrap(), Value::Null);
        assert_eq!(
            run_split(AggregateKind::Avg, false, &ints(&[1, 2, 3, 4])).unwrap(),
            Value::Float(2.5)
        );
        let day = Value::Duration(Duration {
            days: 1,
            ..Duration::default()
        });
        let hour = Value::Duration(Duration {
            seconds: 3600,
            ..Duration::default()
        });
        assert_eq!(
            run(AggregateKind::Sum, false, &[day.clone(), hour.clone()]).unwrap(),
            Value::Duration(Duration {
                days: 1,
                seconds: 3600,
                ..Duration::default()
            })
        );
        assert_eq!(
            run(AggregateKind::Avg, false, &[day, hour])
                .unwrap()
                .to_string(),
            "'PT12H30M'"
        );
        assert!(run(
            AggregateKind::Sum,
            false,
            &[Value::Int(1), Value::Duration(Duration::default())]
        )
        .is_err());
        assert_eq!(
            run(AggregateKind::Sum, true, &ints(&[2, 2, 3])).unwrap(),
            Value::Int(5)
        );
    }

    #[test]
    fn min_max_use_orderability() {
        let vals = vec![
            Value::Int(1),
            "a".into(),
            Value::Null,
            Value::List(ints(&[1, 2])),
            Value::Float(0.2),
            "b".into(),
        ];
        assert_eq!(
            run(AggregateKind::Max, false, &vals).unwrap(),
            Value::Int(1)
        );
        assert_eq!(
            run(AggregateKind::Min, false, &vals).unwrap(),
            Value::List(ints(&[1, 2]))
        );
        assert_eq!(
            run_split(AggregateKind::Min, false, &vals).unwrap(),
            Value::List(ints(&[1, 2]))
        );
        let nums = vec![
            Value::Int(1),
            Value::Float(2.0),
            Value::Int(5),
            Value::Null,
            Value::Float(3.2),
            Value::Float(0.1),
        ];
        assert_eq!(
            run(AggregateKind::Max, false, &nums).unwrap(),
            Value::Int(5)
        );
        assert_eq!(
            run(AggregateKind::Min, false, &nums).unwrap(),
            Value::Float(0.1)
        );
        assert_eq!(run(AggregateKind::Max, false, &[]).unwrap(), Value::Null);
    }

    #[test]
    fn collect_keeps_order_and_drops_nulls() {
        let vals = vec![
            Value::Null,
            Value::Int(1),
            Value::Null,
            Value::Int(2),
            Value::Int(1),
        ];
        assert_eq!(
            run(AggregateKind::Collect, false, &vals).unwrap(),
            Value::List(ints(&[1, 2, 1]))
        );
        assert_eq!(
            run(AggregateKind::Collect, true, &vals).unwrap(),
            Value::List(ints(&[1, 2]))
        );
        assert_eq!(
            run_split(AggregateKind::Collect, true, &vals).unwrap(),
            Value::List(ints(&[1, 2]))
        );
        assert_eq!(
            run(AggregateKind::Collect, true, &[Value::Null, Value::Null]).unwrap(),
            Value::List(vec![])
        );
    }

    #[test]
    fn standard_deviation() {
        let vals = ints(&[2, 4, 4, 4, 5, 5, 7, 9]);
        assert_eq!(
            run(AggregateKind::StDevP, false, &vals).unwrap(),
            Value::Float(2.0)
        );
        let Value::Float(s) = run_split(AggregateKind::StDev, false, &vals).unwrap() else {
            panic!()
        };
        assert!((s - 2.138_089_935_299_395).abs() < 1e-12);
        assert_eq!(
            run(AggregateKind::StDev, false, &ints(&[1])).unwrap(),
            Value::Float(0.0)
        );
        assert_eq!(
            run(AggregateKind::StDevP, false, &[]).unwrap(),
            Value::Float(0.0)
        );
    }

    #[test]
    fn percentiles() {
        let pct = |kind, p: f64, vals: &[i64]| {
            let mut acc = Accumulator::new(kind, false);
            for v in vals {
                acc.update_args(&[Value::Int(*v), Value::Float(p)])?;
            }
            acc.finish()
        };
        let vals = [10, 20, 30, 40];
        assert_eq!(
            pct(AggregateKind::PercentileCont, 0.5, &vals).unwrap(),
            Value::Float(25.0)
        );
        assert_eq!(
            pct(AggregateKind::PercentileDisc, 0.5, &vals).unwrap(),
            Value::Int(20)
        );
        assert_eq!(
            pct(AggregateKind::PercentileDisc, 0.0, &vals).unwrap(),
            Value::Int(10)
        );
        assert_eq!(
            pct(AggregateKind::PercentileDisc, 1.0, &vals).unwrap(),
            Value::Int(40)
        );
        assert_eq!(
            pct(AggregateKind::PercentileCont, 1.0, &vals).unwrap(),
            Value::Float(40.0)
        );
        assert_eq!(
            pct(AggregateKind::PercentileCont, 0.5, &[]).unwrap(),
            Value::Null
        );
        let e = pct(AggregateKind::PercentileCont, 1.5, &vals).unwrap_err();
        assert_eq!(
            (e.kind, e.code),
            (ErrorKind::ArgumentError, Some("NumberOutOfRange"))
        );
    }

    /// Every kind, plain and DISTINCT, fed a typed column after `prefix`:
    /// the same result (or error) as feeding the values one at a time.
    #[test]
    fn typed_columns_agree_with_values() {
        let kinds = [
            AggregateKind::Count,
            AggregateKind::Sum,
            AggregateKind::Avg,
            AggregateKind::Min,
            AggregateKind::Max,
            AggregateKind::Collect,
            AggregateKind::StDev,
            AggregateKind::StDevP,
        ];
        let ints = [3, -7, i64::MAX, 3, 0, i64::MIN, 12];
        let floats = [2.5, -0.0, f64::NAN, 2.5, 1e300, -4.0, 7.0];
        let strs = ["b", "", "é", "b", "zz", "B", "a"];
        let nulls = [false, true, false, false, true, false, false];
        let prefixes = [
            vec![Value::String("c".into())],
            vec![Value::String("A".into()), Value::String("zzz".into())],
            vec![],
            vec![Value::Float(1.5)],
            vec![Value::Float(3.0), Value::Float(-0.0)],
            vec![Value::Int(-100), Value::Int(100)],
            vec![Value::String("a".into())],
            vec![Value::Duration(Duration::default())],
        ];
        let show = |r: Result<Value>| match r {
            Ok(v) => format!("{v:?}"),
            Err(e) => format!("error {:?} {:?}", e.kind, e.code),
        };
        for kind in kinds {
            for distinct in [false, true] {
                for prefix in &prefixes {
                    for mask in [None, Some(&nulls[..])] {
                        let expect = |values: Vec<Value>| {
                            let mut acc = Accumulator::new(kind, distinct);
                            for v in prefix.iter().chain(&values) {
                                acc.update(v)?;
                            }
                            acc.finish()
                        };
                        let masked = |i: usize| mask.is_some_and(|m| m[i]);
                        let int_values = (0..ints.len())
                            .map(|i| {
                                if masked(i) {
                                    Value::Null
                                } else {
                                    Value::Int(ints[i])
                                }
                            })
                            .collect();
                        let mut acc = Accumulator::new(kind, distinct);
                        let got = prefix
                            .iter()
                            .try_for_each(|v| acc.update(v))
                            .and_then(|_| acc.update_ints(&ints, mask))
                            .and_then(|_| acc.finish());
                        let context = format!("{kind:?} distinct={distinct} {prefix:?} {mask:?}");
                        assert_eq!(show(got), show(expect(int_values)), "ints {context}");
                        let float_values = (0..floats.len())
                            .map(|i| {
                                if masked(i) {
                                    Value::Null
                                } else {
                                    Value::Float(floats[i])
                                }
                            })
                            .collect();
                        let mut acc = Accumulator::new(kind, distinct);
                        let got = prefix
                            .iter()
                            .try_for_each(|v| acc.update(v))
                            .and_then(|_| acc.update_floats(&floats, mask))
                            .and_then(|_| acc.finish());
                        assert_eq!(show(got), show(expect(float_values)), "floats {context}");
                        let str_values = (0..strs.len())
                            .map(|i| {
                                if masked(i) {
                                    Value::Null
                                } else {
                                    Value::String(strs[i].into())
                                }
                            })
                            .collect();
                        let mut acc = Accumulator::new(kind, distinct);
                        let got = prefix
                            .iter()
                            .try_for_each(|v| acc.update(v))
                            .and_then(|_| acc.update_strs(&strs, mask))
                            .and_then(|_| acc.finish());
                        assert_eq!(show(got), show(expect(str_values)), "strs {context}");
                    }
                }
            }
        }
    }

    #[test]
    fn collected_lists_stay_typed_and_small() {
        let mut a = Accumulator::new(AggregateKind::Collect, false);
        let xs: Vec<i64> = (0..10_000).collect();
        for chunk in xs.chunks(100) {
            a.update_ints(chunk, None).unwrap();
        }
        // Typed: 8 bytes an element, capacity within 1.25x plus 4 slots.
        let held = a.held_bytes(48);
        assert!((80_000..=100_032).contains(&held), "{held}");
        // Growing one at a time keeps the bound too.
        let mut one = Accumulator::new(AggregateKind::Collect, false);
        for &x in &xs {
            one.update_ints(&[x], None).unwrap();
        }
        assert!(one.held_bytes(48) <= 100_032, "{}", one.held_bytes(48));
        // Merging keeps self's values first; another type turns the list
        // into values in arrival order.
        let mut b = Accumulator::new(AggregateKind::Collect, false);
        b.update_floats(&[0.5, -0.0], Some(&[false, false]))
            .unwrap();
        b.update(&Value::String("s".into())).unwrap();
        b.update_ints(&[7], None).unwrap();
        let mut c = Accumulator::new(AggregateKind::Collect, false);
        c.update_ints(&[1, 2], Some(&[false, true])).unwrap();
        c.merge(b).unwrap();
        c.merge(Accumulator::new(AggregateKind::Collect, false))
            .unwrap();
        assert_eq!(
            c.finish().unwrap(),
            Value::List(vec![
                Value::Int(1),
                Value::Float(0.5),
                Value::Float(-0.0),
                Value::String("s".into()),
                Value::Int(7),
            ])
        );
        let mut empty = Accumulator::new(AggregateKind::Collect, false);
        let mut d = Accumulator::new(AggregateKind::Collect, false);
        d.update_ints(&[3], None).unwrap();
        empty.merge(d).unwrap();
        assert_eq!(empty.finish().unwrap(), Value::List(vec![Value::Int(3)]));
        a.merge(one).unwrap();
        let Value::List(all) = a.finish().unwrap() else {
            panic!("collect gives a list");
        };
        assert_eq!(all.len(), 20_000);
        assert_eq!(all[10_000], Value::Int(0));
    }

    #[test]
    fn counts_are_added_only_to_plain_counts() {
        let mut count = Accumulator::new(AggregateKind::CountStar, false);
        assert!(count.add_count(2048));
        count.update_row();
        assert_eq!(count.finish().unwrap(), Value::Int(2049));
        assert!(!Accumulator::new(AggregateKind::Count, true).add_count(3));
        assert!(!Accumulator::new(AggregateKind::Sum, false).add_count(3));
        // The sum of a column overflows only when the total does.
        let mut sum = Accumulator::new(AggregateKind::Sum, false);
        sum.update_ints(&[i64::MAX, i64::MAX], None).unwrap();
        let e = sum.finish().unwrap_err();
        assert_eq!(e.code, Some("IntegerOverflow"), "{e:?}");
        let mut sum = Accumulator::new(AggregateKind::Sum, false);
        sum.update_ints(&[i64::MAX, 1], None).unwrap();
        sum.update_ints(&[-2], None).unwrap();
        assert_eq!(sum.finish().unwrap(), Value::Int(i64::MAX - 1));
    }

    #[test]
    fn accumulators_move_between_workers() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Accumulator>();
    }

    #[test]
    fn merge_rejects_other_kinds() {
        let mut a = Accumulator::new(AggregateKind::Sum, false);
        assert!(a
            .merge(Accumulator::new(AggregateKind::Count, false))
            .is_err());
        assert_eq!(
            AggregateKind::from_name("stDevP"),
            Some(AggregateKind::StDevP)
        );
        assert_eq!(AggregateKind::from_name("size"), None);
    }
}
