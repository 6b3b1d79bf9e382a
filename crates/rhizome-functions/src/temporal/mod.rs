//! Calendar, clock and time-zone semantics of Cypher's temporal values.
//!
//! Internally a temporal value is taken apart into [`Parts`]: an optional
//! local date (epoch day), an optional local time of day (nanoseconds) and an
//! optional [`Zone`]. Constructors, selection, truncation, `duration.between`
//! and arithmetic all work on parts and build the target type at the end,
//! which keeps their rules in one place.

pub mod arith;
pub mod between;
pub(crate) mod calendar;
pub mod construct;
pub mod duration;
pub mod fields;
pub mod format;
pub mod parse;
pub mod truncate;
pub mod zone;

use crate::errors::argument;
use rhizome_common::{Date, LocalDateTime, LocalTime, Result, Time, Value};
pub use zone::Zone;

pub(crate) const NANOS_PER_SECOND: i64 = 1_000_000_000;
pub(crate) const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SECOND;
pub(crate) const SECONDS_PER_DAY: i64 = 86_400;

/// A temporal value taken apart (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    /// Local date as days since 1970-01-01.
    pub date: Option<i64>,
    /// Local time of day in nanoseconds.
    pub time: Option<i64>,
    /// Zone (offset or named) of zoned values.
    pub zone: Option<Zone>,
}

impl Parts {
    /// The parts of a temporal value; `None` for any other value (durations
    /// included).
    pub fn of(v: &Value) -> Option<Parts> {
        Some(match v {
            Value::Date(d) => Parts {
                date: Some(d.days),
                time: None,
                zone: None,
            },
            Value::LocalTime(t) => Parts {
                date: None,
                time: Some(t.nanos),
                zone: None,
            },
            Value::Time(t) => Parts {
                date: None,
                time: Some(t.nanos),
                zone: Some(Zone::Offset(t.offset_seconds)),
            },
            Value::LocalDateTime(t) => Parts {
                date: Some(t.seconds.div_euclid(SECONDS_PER_DAY)),
                time: Some(
                    t.seconds.rem_euclid(SECONDS_PER_DAY) * NANOS_PER_SECOND + t.nanos as i64,
                ),
                zone: None,
            },
            Value::DateTime(t) => {
                let local = t.seconds + t.offset_seconds as i64;
                Parts {
                    date: Some(local.div_euclid(SECONDS_PER_DAY)),
                    time: Some(
                        local.rem_euclid(SECONDS_PER_DAY) * NANOS_PER_SECOND + t.nanos as i64,
                    ),
                    zone: Some(Zone::of(t)),
                }
            }
            _ => return None,
        })
    }

    /// The offset in force for these parts (date defaults to 1970-01-01,
    /// time to midnight); `None` without a zone.
    pub fn offset(&self) -> Option<i32> {
        let zone = self.zone.as_ref()?;
        let local = self.date.unwrap_or(0) * SECONDS_PER_DAY
            + self.time.unwrap_or(0).div_euclid(NANOS_PER_SECOND);
        Some(zone.offset_for_local(local))
    }
}

fn out_of_range(what: &str) -> rhizome_common::Error {
    argument(
        "InvalidArgumentValue",
        format!("{what} is out of the supported range"),
    )
}

/// A `DATE` value from an epoch day.
pub fn make_date(days: i64) -> Result<Value> {
    let first = rhizome_common::temporal::days_from_civil(rhizome_common::temporal::MIN_YEAR, 1, 1);
    let last =
        rhizome_common::temporal::days_from_civil(rhizome_common::temporal::MAX_YEAR, 12, 31);
    if !(first..=last).contains(&days) {
        return Err(out_of_range("the date"));
    }
    Ok(Value::Date(Date { days }))
}

/// A `LOCAL TIME` value from nanoseconds of the day (wrapped into a day).
pub fn make_local_time(nanos: i64) -> Value {
    Value::LocalTime(LocalTime {
        nanos: nanos.rem_euclid(NANOS_PER_DAY),
    })
}

/// A `ZONED TIME` value.
pub fn make_time(nanos: i64, offset_seconds: i32) -> Value {
    Value::Time(Time {
        nanos: nanos.rem_euclid(NANOS_PER_DAY),
        offset_seconds,
    })
}

/// Local seconds since the epoch and the nanos of the second, for a date and
/// a time of day (which may leave `0..1 day`).
pub(crate) fn local_seconds(date: i64, time: i64) -> Result<(i64, u32)> {
    let secs = date
        .checked_mul(SECONDS_PER_DAY)
        .and_then(|s| s.checked_add(time.div_euclid(NANOS_PER_SECOND)))
        .ok_or_else(|| out_of_range("the date-time"))?;
    Ok((secs, time.rem_euclid(NANOS_PER_SECOND) as u32))
}

/// A `LOCAL DATETIME` value.
pub fn make_local_datetime(date: i64, time: i64) -> Result<Value> {
    let (seconds, nanos) = local_seconds(date, time)?;
    Ok(Value::LocalDateTime(LocalDateTime { seconds, nanos }))
}

/// A `ZONED DATETIME` value from local date and time in a zone.
pub fn make_datetime(date: i64, time: i64, zone: &Zone) -> Result<Value> {
    let (seconds, nanos) = local_seconds(date, time)?;
    Ok(Value::DateTime(zone.resolve_local(seconds, nanos)))
}

/// True for the five temporal instant types (not durations).
pub fn is_temporal(v: &Value) -> bool {
    matches!(
        v,
        Value::Date(_)
            | Value::LocalTime(_)
            | Value::Time(_)
            | Value::LocalDateTime(_)
            | Value::DateTime(_)
    )
}
