//! Temporal value + duration.

use super::calendar::plus_months;
use super::duration::total_nanos;
use super::{make_date, make_local_datetime, make_local_time, make_time, Parts, Zone};
use super::{NANOS_PER_DAY, NANOS_PER_SECOND, SECONDS_PER_DAY};
use crate::errors::{overflow, wrong_type};
use rhizome_common::{Duration, Result, Value};

/// `t + d` for a temporal instant `t` (use a negated duration for `t - d`).
///
/// Months are added first (clamping the day to the month's end), then days,
/// then seconds and nanoseconds. Dates ignore the time part except for whole
/// days of its seconds; times ignore months and days and wrap around
/// midnight. Zoned date-times add months and days on the wall clock (then
/// re-resolve the zone) and seconds on the time line.
pub fn plus(t: &Value, d: &Duration) -> Result<Value> {
    let parts = Parts::of(t).ok_or_else(|| wrong_type("temporal arithmetic", t))?;
    let nanos = total_nanos(d);
    match t {
        Value::Date(_) => {
            let day = plus_months(parts.date.unwrap_or(0), d.months)
                + d.days
                + d.seconds / SECONDS_PER_DAY;
            make_date(day)
        }
        Value::LocalTime(_) => Ok(make_local_time(
            (parts.time.unwrap_or(0) as i128 + nanos).rem_euclid(NANOS_PER_DAY as i128) as i64,
        )),
        Value::Time(tm) => Ok(make_time(
            (parts.time.unwrap_or(0) as i128 + nanos).rem_euclid(NANOS_PER_DAY as i128) as i64,
            tm.offset_seconds,
        )),
        Value::LocalDateTime(_) => {
            let day = plus_months(parts.date.unwrap_or(0), d.months)
                .checked_add(d.days)
                .ok_or_else(|| overflow("date arithmetic"))?;
            let total = parts.time.unwrap_or(0) as i128 + nanos;
            let carry = total.div_euclid(NANOS_PER_DAY as i128) as i64;
            make_local_datetime(day + carry, total.rem_euclid(NANOS_PER_DAY as i128) as i64)
        }
        Value::DateTime(dt) => {
            let zone = Zone::of(dt);
            let day = plus_months(parts.date.unwrap_or(0), d.months)
                .checked_add(d.days)
                .ok_or_else(|| overflow("date arithmetic"))?;
            let time = parts.time.unwrap_or(0);
            let local = day * SECONDS_PER_DAY + time / NANOS_PER_SECOND;
            let base = zone.resolve_local(local, (time % NANOS_PER_SECOND) as u32);
            let instant =
                base.seconds as i128 * NANOS_PER_SECOND as i128 + base.nanos as i128 + nanos;
            let secs = i64::try_from(instant.div_euclid(NANOS_PER_SECOND as i128))
                .map_err(|_| overflow("date arithmetic"))?;
            let ns = instant.rem_euclid(NANOS_PER_SECOND as i128) as u32;
            Ok(Value::DateTime(zone.at_utc(secs, ns)))
        }
        _ => Err(wrong_type("temporal arithmetic", t)),
    }
}
