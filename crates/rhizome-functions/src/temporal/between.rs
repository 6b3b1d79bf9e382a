//! `duration.between`, `duration.inMonths`, `duration.inDays`,
//! `duration.inSeconds`.
//!
//! Both operands are brought to a common frame first: a side without a date
//! borrows the other side's date (two times use 1970-01-01), a missing time
//! is midnight, and a local side is read in the other side's zone. Months
//! and days are counted on the wall clock of the first operand's zone (a
//! unit is only counted when it is complete, as Java's `until`), the rest is
//! measured on the time line. With a time-only operand, only the time-line
//! difference is returned (no months or days; `inMonths`/`inDays` give
//! `PT0S`).

use super::calendar::{plus_months, ymd};
use super::duration::normalized;
use super::{Parts, Zone, NANOS_PER_SECOND, SECONDS_PER_DAY};
use crate::errors::wrong_type;
use rhizome_common::{Result, Value};

/// The unit of a between function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// `duration.between`: months, days, then seconds.
    All,
    /// `duration.inMonths`.
    Months,
    /// `duration.inDays`.
    Days,
    /// `duration.inSeconds`.
    Seconds,
}

/// Local (epoch day, nanos of day) in a frame, plus the instant in nanos.
#[derive(Debug, Clone, Copy)]
struct Point {
    date: i64,
    time: i64,
}

impl Point {
    fn local_nanos(&self) -> i128 {
        self.date as i128 * SECONDS_PER_DAY as i128 * NANOS_PER_SECOND as i128 + self.time as i128
    }
}

fn instant_nanos(p: Point, zone: Option<&Zone>) -> i128 {
    let offset = match zone {
        None => 0,
        Some(z) => z.offset_for_local(p.date * SECONDS_PER_DAY + p.time / NANOS_PER_SECOND),
    };
    p.local_nanos() - offset as i128 * NANOS_PER_SECOND as i128
}

/// Java's `until` for date-based units: a day only counts once the end's
/// time of day has been reached.
fn adjusted_end(from: Point, to: Point) -> i64 {
    if to.date > from.date && to.time < from.time {
        to.date - 1
    } else if to.date < from.date && to.time > from.time {
        to.date + 1
    } else {
        to.date
    }
}

fn months_until(from: Point, to: Point) -> i64 {
    let end = adjusted_end(from, to);
    let packed = |d: i64| {
        let (y, m, day) = ymd(d);
        (y * 12 + m as i64 - 1) * 32 + day as i64
    };
    (packed(end) - packed(from.date)) / 32
}

fn days_until(from: Point, to: Point) -> i64 {
    adjusted_end(from, to) - from.date
}

/// Computes the duration from `a` to `b` in `unit`; null if either is null.
pub fn between(unit: Unit, a: &Value, b: &Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let pa = Parts::of(a).ok_or_else(|| wrong_type("duration.between", a))?;
    let pb = Parts::of(b).ok_or_else(|| wrong_type("duration.between", b))?;
    let time_only = pa.date.is_none() || pb.date.is_none();
    let da = pa.date.or(pb.date).unwrap_or(0);
    let db = pb.date.or(pa.date).unwrap_or(0);
    let za = pa.zone.clone().or(pb.zone.clone());
    let zb = pb.zone.clone().or(pa.zone.clone());
    let from = Point {
        date: da,
        time: pa.time.unwrap_or(0),
    };
    let to_own = Point {
        date: db,
        time: pb.time.unwrap_or(0),
    };
    let ia = instant_nanos(from, za.as_ref());
    let ib = instant_nanos(to_own, zb.as_ref());
    if time_only && matches!(unit, Unit::Months | Unit::Days) {
        return Ok(Value::Duration(normalized(0, 0, 0, 0)?));
    }
    if time_only || unit == Unit::Seconds {
        return Ok(Value::Duration(normalized(0, 0, 0, ib - ia)?));
    }
    // `b` seen on the wall clock of `a`'s zone.
    let to = match &za {
        None => to_own,
        Some(zone) => {
            let secs = ib.div_euclid(NANOS_PER_SECOND as i128) as i64;
            let offset = zone.offset_at_utc(secs) as i128 * NANOS_PER_SECOND as i128;
            let local = ib + offset;
            let day = (SECONDS_PER_DAY as i128) * (NANOS_PER_SECOND as i128);
            Point {
                date: local.div_euclid(day) as i64,
                time: local.rem_euclid(day) as i64,
            }
        }
    };
    match unit {
        Unit::Months => Ok(Value::Duration(normalized(
            months_until(from, to) as i128,
            0,
            0,
            0,
        )?)),
        Unit::Days => Ok(Value::Duration(normalized(
            0,
            days_until(from, to) as i128,
            0,
            0,
        )?)),
        _ => {
            let months = months_until(from, to);
            let mid = Point {
                date: plus_months(from.date, months),
                time: from.time,
            };
            let days = days_until(mid, to);
            let mid = Point {
                date: mid.date + days,
                time: from.time,
            };
            let rest = ib - instant_nanos(mid, za.as_ref());
            Ok(Value::Duration(normalized(
                months as i128,
                days as i128,
                0,
                rest,
            )?))
        }
    }
}
