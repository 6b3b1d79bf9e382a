//! Component accessors of temporal values and durations (`d.year`,
//! `t.timezone`, `dur.minutesOfHour`, ...).

use super::calendar::{days, quarter_of, quarter_start, week_date, ymd};
use super::zone::format_offset;
use super::{Parts, Zone, NANOS_PER_SECOND};
use crate::errors::invalid_value;
use rhizome_common::{Duration, Result, Value};

fn unknown(v: &Value, key: &str) -> rhizome_common::Error {
    invalid_value(format!("{} has no component `{key}`", v.type_name()))
}

/// The component `key` (case-insensitive) of a temporal value or duration.
///
/// Dates: `year, quarter, month, week, weekYear, day, ordinalDay, weekDay`
/// (`dayOfWeek`), `dayOfQuarter`. Times: `hour, minute, second, millisecond,
/// microsecond, nanosecond`. Zoned values: `timezone, offset,
/// offsetMinutes, offsetSeconds`; zoned date-times also `epochSeconds,
/// epochMillis`. Durations: `years, quarters, months, weeks, days, hours,
/// minutes, seconds, milliseconds, microseconds, nanoseconds,
/// quartersOfYear, monthsOfQuarter, monthsOfYear, daysOfWeek,
/// minutesOfHour, secondsOfMinute, millisecondsOfSecond,
/// microsecondsOfSecond, nanosecondsOfSecond`. An unknown component is a
/// `TypeError`.
pub fn component(v: &Value, key: &str) -> Result<Value> {
    if let Value::Duration(d) = v {
        return duration_component(d, key).ok_or_else(|| unknown(v, key));
    }
    let parts = Parts::of(v).ok_or_else(|| unknown(v, key))?;
    let k = key.to_ascii_lowercase();
    if let Some(date) = parts.date {
        let (y, m, d) = ymd(date);
        let int = |i: i64| Some(Value::Int(i));
        let found = match k.as_str() {
            "year" => int(y),
            "quarter" => int(quarter_of(m) as i64),
            "month" => int(m as i64),
            "week" => int(week_date(date).1),
            "weekyear" => int(week_date(date).0),
            "day" => int(d as i64),
            "ordinalday" => int(date - days(y, 1, 1) + 1),
            "weekday" | "dayofweek" => int(week_date(date).2),
            "dayofquarter" => int(date - quarter_start(y, quarter_of(m)) + 1),
            _ => None,
        };
        if let Some(found) = found {
            return Ok(found);
        }
    }
    if let Some(time) = parts.time {
        let secs = time / NANOS_PER_SECOND;
        let frac = time % NANOS_PER_SECOND;
        let found = match k.as_str() {
            "hour" => Some(secs / 3600),
            "minute" => Some(secs / 60 % 60),
            "second" => Some(secs % 60),
            "millisecond" => Some(frac / 1_000_000),
            "microsecond" => Some(frac / 1_000),
            "nanosecond" => Some(frac),
            _ => None,
        };
        if let Some(found) = found {
            return Ok(Value::Int(found));
        }
    }
    if let Some(zone) = &parts.zone {
        let offset = match v {
            Value::DateTime(dt) => dt.offset_seconds,
            _ => parts.offset().unwrap_or(0),
        };
        let found = match k.as_str() {
            "timezone" => Some(Value::String(match zone {
                Zone::Named(tz) => tz.name().to_string(),
                Zone::Offset(o) => format_offset(*o, true),
            })),
            "offset" => Some(Value::String(format_offset(offset, true))),
            "offsetminutes" => Some(Value::Int(offset as i64 / 60)),
            "offsetseconds" => Some(Value::Int(offset as i64)),
            _ => None,
        };
        if let Some(found) = found {
            return Ok(found);
        }
        if let Value::DateTime(dt) = v {
            match k.as_str() {
                "epochseconds" => return Ok(Value::Int(dt.seconds)),
                "epochmillis" => {
                    return Ok(Value::Int(dt.seconds * 1000 + dt.nanos as i64 / 1_000_000))
                }
                _ => {}
            }
        }
    }
    Err(unknown(v, key))
}

fn duration_component(d: &Duration, key: &str) -> Option<Value> {
    // Neo4j's view: whole seconds rounded down, nanoseconds in 0..10^9.
    let total = super::duration::total_nanos(d);
    let secs = total.div_euclid(NANOS_PER_SECOND as i128) as i64;
    let nanos = total.rem_euclid(NANOS_PER_SECOND as i128) as i64;
    let v = match key.to_ascii_lowercase().as_str() {
        "years" => d.months / 12,
        "quarters" => d.months / 3,
        "months" => d.months,
        "weeks" => d.days / 7,
        "days" => d.days,
        "hours" => secs / 3600,
        "minutes" => secs / 60,
        "seconds" => secs,
        "milliseconds" => secs * 1000 + nanos / 1_000_000,
        "microseconds" => secs * 1_000_000 + nanos / 1000,
        "nanoseconds" => secs * NANOS_PER_SECOND + nanos,
        "quartersofyear" => d.months / 3 % 4,
        "monthsofquarter" => d.months % 3,
        "monthsofyear" => d.months % 12,
        "daysofweek" => d.days % 7,
        "minutesofhour" => secs / 60 % 60,
        "secondsofminute" => secs % 60,
        "millisecondsofsecond" => nanos / 1_000_000,
        "microsecondsofsecond" => nanos / 1000,
        "nanosecondsofsecond" => nanos,
        _ => return None,
    };
    Some(Value::Int(v))
}
