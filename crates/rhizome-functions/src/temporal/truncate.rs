//! `date.truncate`, `localtime.truncate`, `time.truncate`,
//! `localdatetime.truncate`, `datetime.truncate`.
//!
//! The input is cut down to the start of the unit (`millennium, century,
//! decade, year, weekYear, quarter, month, week, day, hour, minute, second,
//! millisecond, microsecond`), then the optional map sets components on the
//! result (`{day: 2}`, `{nanosecond: 2}`, `{timezone: 'Europe/Stockholm'}`).
//! Unlike the constructors, a `timezone` here replaces the zone and keeps
//! the wall-clock time.

use super::calendar::{days, quarter_of, quarter_start, week_date, week_one_monday, weekday, ymd};
use super::construct::{assemble, invalid, Fields, Kind};
use super::{Parts, NANOS_PER_SECOND};
use crate::errors::{invalid_type, wrong_type};
use rhizome_common::{Result, Value};
use std::collections::BTreeMap;

fn truncate_date(unit: &str, d: i64) -> Option<i64> {
    let (y, m, _) = ymd(d);
    Some(match unit {
        "millennium" => days(y.div_euclid(1000) * 1000, 1, 1),
        "century" => days(y.div_euclid(100) * 100, 1, 1),
        "decade" => days(y.div_euclid(10) * 10, 1, 1),
        "year" => days(y, 1, 1),
        "weekyear" => week_one_monday(week_date(d).0),
        "quarter" => quarter_start(y, quarter_of(m)),
        "month" => days(y, m, 1),
        "week" => d - (weekday(d) - 1),
        _ => return None,
    })
}

fn time_unit_nanos(unit: &str) -> Option<i64> {
    Some(match unit {
        "day" => 86_400 * NANOS_PER_SECOND,
        "hour" => 3_600 * NANOS_PER_SECOND,
        "minute" => 60 * NANOS_PER_SECOND,
        "second" => NANOS_PER_SECOND,
        "millisecond" => 1_000_000,
        "microsecond" => 1_000,
        _ => return None,
    })
}

/// `<kind>.truncate(unit, value[, overrides])`. Null value gives null.
pub fn truncate(
    kind: Kind,
    unit: &Value,
    value: &Value,
    overrides: Option<&Value>,
) -> Result<Value> {
    if value.is_null() || unit.is_null() {
        return Ok(Value::Null);
    }
    let Value::String(unit_name) = unit else {
        return Err(wrong_type("truncate unit", unit));
    };
    let unit_lc = unit_name.to_ascii_lowercase();
    let parts = Parts::of(value).ok_or_else(|| wrong_type("truncate", value))?;
    let empty = BTreeMap::new();
    let map = match overrides {
        None | Some(Value::Null) => &empty,
        Some(Value::Map(m)) => m,
        Some(other) => return Err(wrong_type("truncate overrides", other)),
    };
    let fields = Fields::parse(map)?;

    let is_date_unit = truncate_date(&unit_lc, 0).is_some();
    let unit_nanos = time_unit_nanos(&unit_lc);
    if !is_date_unit && unit_nanos.is_none() {
        return Err(invalid(format!("unknown truncation unit `{unit_name}`")));
    }
    if kind == Kind::Date && !is_date_unit && unit_lc != "day" {
        return Err(invalid(format!(
            "a date cannot be truncated to `{unit_name}`"
        )));
    }
    if !kind.has_date() && is_date_unit {
        return Err(invalid(format!(
            "a time cannot be truncated to `{unit_name}`"
        )));
    }

    let date = if kind.has_date() {
        let d = parts.date.ok_or_else(|| {
            invalid_type(format!("{} has no date to truncate", value.type_name()))
        })?;
        let d = if is_date_unit {
            truncate_date(&unit_lc, d).unwrap_or(d)
        } else {
            d
        };
        Some(fields.resolve_date(Some(d))?)
    } else {
        None
    };
    let time = if kind.has_time() {
        let t = parts.time.unwrap_or(0);
        let t = match unit_nanos {
            Some(n) if !is_date_unit => t - t % n,
            _ => 0,
        };
        fields.resolve_time(Some(t))?
    } else {
        0
    };
    let zone = fields.timezone.clone().or(parts.zone);
    assemble(kind, date, time, zone.as_ref())
}
