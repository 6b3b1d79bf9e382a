//! Temporal constructors: `date(...)`, `localtime(...)`, `time(...)`,
//! `localdatetime(...)`, `datetime(...)` from nothing (the current clock),
//! a string, a map of components, or another temporal value; and
//! `datetime.fromepoch` / `datetime.fromepochmillis`.
//!
//! Map rules (as Neo4j): a base value under `date`, `time` or `datetime`
//! supplies every component not given explicitly. Date components are
//! resolved in one of four calendars chosen by the keys present: week
//! (`week`, `dayOfWeek`), ordinal (`ordinalDay`), quarter (`quarter`,
//! `dayOfQuarter`) or calendar (`month`, `day`). A `timezone` next to a
//! zoned base converts the instant into that zone; next to a local base or
//! none it just attaches the zone. Without any zone, UTC is used.

use super::calendar::{
    days, days_in_month, days_in_quarter, days_in_year, quarter_of, quarter_start, week_date,
    week_one_monday, weeks_in_year, ymd, MAX_YEAR,
};
use super::parse::{parse_date, parse_datetime, parse_time};
use super::{
    make_date, make_datetime, make_local_datetime, make_local_time, make_time, Parts, Zone,
    NANOS_PER_DAY, NANOS_PER_SECOND, SECONDS_PER_DAY,
};
use crate::errors::{argument, invalid_type};
use rhizome_common::{Result, Value};
use std::collections::BTreeMap;

/// The five temporal types a constructor can build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `DATE`.
    Date,
    /// `LOCAL TIME`.
    LocalTime,
    /// `ZONED TIME`.
    Time,
    /// `LOCAL DATETIME`.
    LocalDateTime,
    /// `ZONED DATETIME`.
    DateTime,
}

impl Kind {
    /// The kind named by a function name (`date`, `localtime`, ...).
    pub fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "date" => Kind::Date,
            "localtime" => Kind::LocalTime,
            "time" => Kind::Time,
            "localdatetime" => Kind::LocalDateTime,
            "datetime" => Kind::DateTime,
            _ => return None,
        })
    }

    pub(crate) fn has_date(self) -> bool {
        matches!(self, Kind::Date | Kind::LocalDateTime | Kind::DateTime)
    }

    pub(crate) fn has_time(self) -> bool {
        !matches!(self, Kind::Date)
    }

    pub(crate) fn is_zoned(self) -> bool {
        matches!(self, Kind::Time | Kind::DateTime)
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::LocalTime => "localtime",
            Kind::Time => "time",
            Kind::LocalDateTime => "localdatetime",
            Kind::DateTime => "datetime",
        }
    }
}

pub(crate) fn invalid(message: impl Into<String>) -> rhizome_common::Error {
    argument("InvalidArgumentValue", message)
}

/// Explicit components of a temporal map.
#[derive(Debug, Default, Clone)]
pub(crate) struct Fields {
    pub year: Option<i64>,
    pub month: Option<i64>,
    pub day: Option<i64>,
    pub week: Option<i64>,
    pub day_of_week: Option<i64>,
    pub quarter: Option<i64>,
    pub day_of_quarter: Option<i64>,
    pub ordinal_day: Option<i64>,
    pub hour: Option<i64>,
    pub minute: Option<i64>,
    pub second: Option<i64>,
    pub millisecond: Option<i64>,
    pub microsecond: Option<i64>,
    pub nanosecond: Option<i64>,
    pub timezone: Option<Zone>,
    pub date: Option<Value>,
    pub time: Option<Value>,
    pub datetime: Option<Value>,
    pub epoch_seconds: Option<i64>,
    pub epoch_millis: Option<i64>,
}

fn int_field(key: &str, v: &Value) -> Result<Option<i64>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i)),
        _ => Err(invalid_type(format!(
            "temporal component `{key}` must be an integer, not {}",
            v.type_name()
        ))),
    }
}

impl Fields {
    pub(crate) fn parse(map: &BTreeMap<String, Value>) -> Result<Fields> {
        let mut f = Fields::default();
        for (key, v) in map {
            let slot = match key.to_ascii_lowercase().as_str() {
                "year" => &mut f.year,
                "month" => &mut f.month,
                "day" => &mut f.day,
                "week" => &mut f.week,
                "dayofweek" | "weekday" => &mut f.day_of_week,
                "quarter" => &mut f.quarter,
                "dayofquarter" => &mut f.day_of_quarter,
                "ordinalday" => &mut f.ordinal_day,
                "hour" => &mut f.hour,
                "minute" => &mut f.minute,
                "second" => &mut f.second,
                "millisecond" => &mut f.millisecond,
                "microsecond" => &mut f.microsecond,
                "nanosecond" => &mut f.nanosecond,
                "epochseconds" => &mut f.epoch_seconds,
                "epochmillis" => &mut f.epoch_millis,
                "timezone" => {
                    f.timezone = match v {
                        Value::Null => None,
                        Value::String(s) => Some(Zone::parse(s)?),
                        other => {
                            return Err(invalid_type(format!(
                                "timezone must be a string, not {}",
                                other.type_name()
                            )))
                        }
                    };
                    continue;
                }
                "date" => {
                    f.date = (!v.is_null()).then(|| v.clone());
                    continue;
                }
                "time" => {
                    f.time = (!v.is_null()).then(|| v.clone());
                    continue;
                }
                "datetime" => {
                    f.datetime = (!v.is_null()).then(|| v.clone());
                    continue;
                }
                _ => return Err(invalid(format!("`{key}` is not a temporal component"))),
            };
            *slot = int_field(key, v)?;
        }
        Ok(f)
    }

    fn has_date_fields(&self) -> bool {
        self.year.is_some()
            || self.month.is_some()
            || self.day.is_some()
            || self.week.is_some()
            || self.day_of_week.is_some()
            || self.quarter.is_some()
            || self.day_of_quarter.is_some()
            || self.ordinal_day.is_some()
    }

    fn has_time_fields(&self) -> bool {
        self.hour.is_some()
            || self.minute.is_some()
            || self.second.is_some()
            || self.millisecond.is_some()
            || self.microsecond.is_some()
            || self.nanosecond.is_some()
    }

    /// The epoch day from the date components over an optional base date.
    pub(crate) fn resolve_date(&self, base: Option<i64>) -> Result<i64> {
        let check = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(invalid(format!("invalid value for {what}")))
            }
        };
        if self.week.is_some() || self.day_of_week.is_some() {
            let b = base.map(week_date);
            let wy = self
                .year
                .or(b.map(|b| b.0))
                .ok_or_else(|| invalid("a week date needs a year"))?;
            check(wy.abs() <= MAX_YEAR, "year")?;
            let week = self.week.or(b.map(|b| b.1)).unwrap_or(1);
            let dow = self.day_of_week.or(b.map(|b| b.2)).unwrap_or(1);
            check((1..=weeks_in_year(wy)).contains(&week), "week")?;
            check((1..=7).contains(&dow), "dayOfWeek")?;
            return Ok(week_one_monday(wy) + (week - 1) * 7 + dow - 1);
        }
        let by = base.map(ymd);
        let year = self
            .year
            .or(by.map(|b| b.0))
            .ok_or_else(|| invalid("a date needs a year"))?;
        check(year.abs() <= MAX_YEAR, "year")?;
        if let Some(ordinal) = self.ordinal_day {
            check((1..=days_in_year(year)).contains(&ordinal), "ordinalDay")?;
            return Ok(days(year, 1, 1) + ordinal - 1);
        }
        if self.quarter.is_some() || self.day_of_quarter.is_some() {
            let bq = base.map(|d| {
                let (y, m, _) = ymd(d);
                let q = quarter_of(m);
                (q as i64, d - quarter_start(y, q) + 1)
            });
            let q = self.quarter.or(bq.map(|b| b.0)).unwrap_or(1);
            check((1..=4).contains(&q), "quarter")?;
            let doq = self.day_of_quarter.or(bq.map(|b| b.1)).unwrap_or(1);
            check(
                (1..=days_in_quarter(year, q as u32)).contains(&doq),
                "dayOfQuarter",
            )?;
            return Ok(quarter_start(year, q as u32) + doq - 1);
        }
        let month = self.month.or(by.map(|b| b.1 as i64)).unwrap_or(1);
        check((1..=12).contains(&month), "month")?;
        let day = self.day.or(by.map(|b| b.2 as i64)).unwrap_or(1);
        check(
            day >= 1 && day <= days_in_month(year, month as u32) as i64,
            "day",
        )?;
        Ok(days(year, month as u32, day as u32))
    }

    /// The time of day from the time components over an optional base time.
    pub(crate) fn resolve_time(&self, base: Option<i64>) -> Result<i64> {
        let base = base.unwrap_or(0);
        let (bs, bf) = (base / NANOS_PER_SECOND, base % NANOS_PER_SECOND);
        let check = |v: i64, max: i64, what: &str| {
            if (0..=max).contains(&v) {
                Ok(v)
            } else {
                Err(invalid(format!("invalid value {v} for {what}")))
            }
        };
        let hour = check(self.hour.unwrap_or(bs / 3600), 23, "hour")?;
        let minute = check(self.minute.unwrap_or(bs / 60 % 60), 59, "minute")?;
        let second = check(self.second.unwrap_or(bs % 60), 59, "second")?;
        let frac = match (self.millisecond, self.microsecond, self.nanosecond) {
            (None, None, None) => bf,
            (None, None, Some(ns)) if ns >= 1000 || bf == 0 => {
                check(ns, NANOS_PER_SECOND - 1, "nanosecond")?
            }
            (ms, us, ns) => {
                let ms = check(ms.unwrap_or(bf / 1_000_000), 999, "millisecond")?;
                let us_max = if self.millisecond.is_some() {
                    999
                } else {
                    999_999
                };
                let us = check(us.unwrap_or(bf / 1000 % 1000), us_max, "microsecond")?;
                let ns_max = if self.millisecond.is_some() || self.microsecond.is_some() {
                    999
                } else {
                    999_999_999
                };
                let ns = check(ns.unwrap_or(bf % 1000), ns_max, "nanosecond")?;
                ms * 1_000_000 + us * 1000 + ns
            }
        };
        Ok(((hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + frac)
    }
}

/// The current instant as UTC (seconds, nanos).
pub fn now_utc() -> (i64, u32) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (now.as_secs() as i64, now.subsec_nanos())
}

/// A value of `kind` at a UTC instant in `zone`.
pub fn at_instant(kind: Kind, utc: i64, nanos: u32, zone: &Zone) -> Result<Value> {
    let offset = zone.offset_at_utc(utc);
    let local = utc + offset as i64;
    let date = local.div_euclid(SECONDS_PER_DAY);
    let time = local.rem_euclid(SECONDS_PER_DAY) * NANOS_PER_SECOND + nanos as i64;
    Ok(match kind {
        Kind::Date => make_date(date)?,
        Kind::LocalTime => make_local_time(time),
        Kind::Time => make_time(time, offset),
        Kind::LocalDateTime => make_local_datetime(date, time)?,
        Kind::DateTime => Value::DateTime(zone.at_utc(utc, nanos)),
    })
}

/// Builds `kind` from a local date, time and zone (default UTC).
pub(crate) fn assemble(
    kind: Kind,
    date: Option<i64>,
    time: i64,
    zone: Option<&Zone>,
) -> Result<Value> {
    let utc = Zone::Offset(0);
    let zone = zone.unwrap_or(&utc);
    Ok(match kind {
        Kind::Date => make_date(date.unwrap_or(0))?,
        Kind::LocalTime => make_local_time(time),
        Kind::Time => {
            let offset = match zone {
                Zone::Offset(o) => *o,
                Zone::Named(_) => match date {
                    Some(d) => zone.offset_for_local(d * SECONDS_PER_DAY + time / NANOS_PER_SECOND),
                    None => zone.offset_at_utc(now_utc().0),
                },
            };
            make_time(time, offset)
        }
        Kind::LocalDateTime => make_local_datetime(date.unwrap_or(0), time)?,
        Kind::DateTime => make_datetime(date.unwrap_or(0), time, zone)?,
    })
}

/// `kind(arg)`: dispatches on the argument (null, string, map or temporal);
/// `now` is the current instant (UTC seconds, nanos) for `kind()` and for
/// maps holding only a `timezone`.
pub fn construct(kind: Kind, arg: Option<&Value>, now: (i64, u32)) -> Result<Value> {
    match arg {
        None => at_instant(kind, now.0, now.1, &Zone::Offset(0)),
        Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(s)) => from_string(kind, s),
        Some(Value::Map(m)) => from_map(kind, m, now),
        Some(v) if super::is_temporal(v) => {
            let mut m = BTreeMap::new();
            let key = match kind {
                Kind::Date => "date",
                Kind::LocalTime | Kind::Time => "time",
                Kind::LocalDateTime | Kind::DateTime => "datetime",
            };
            m.insert(key.to_string(), v.clone());
            from_map(kind, &m, now)
        }
        Some(v) => Err(invalid_type(format!(
            "{}() cannot be built from {}",
            kind.name(),
            v.type_name()
        ))),
    }
}

/// `kind('...')`: parses an ISO 8601 string.
pub fn from_string(kind: Kind, text: &str) -> Result<Value> {
    match kind {
        Kind::Date => {
            let d = match text.find(['T', 't']) {
                Some(_) => parse_datetime(text)?.date,
                None => parse_date(text)?,
            };
            make_date(d)
        }
        Kind::LocalTime | Kind::Time => {
            let t = parse_time(text)?;
            if kind == Kind::LocalTime {
                return Ok(make_local_time(t.nanos));
            }
            let offset = match (t.offset, &t.zone_name) {
                (Some(o), _) => o,
                (None, Some(z)) => z.offset_at_utc(now_utc().0),
                (None, None) => 0,
            };
            Ok(make_time(t.nanos, offset))
        }
        Kind::LocalDateTime => {
            let dt = parse_datetime(text)?;
            make_local_datetime(dt.date, dt.time.nanos)
        }
        Kind::DateTime => {
            let dt = parse_datetime(text)?;
            let zone = dt.zone().unwrap_or(Zone::Offset(0));
            match dt.instant() {
                Some((utc, ns)) => Ok(Value::DateTime(zone.at_utc(utc, ns))),
                None => make_datetime(dt.date, dt.time.nanos, &zone),
            }
        }
    }
}

/// `kind({...})`: builds from components over optional base values; `now`
/// serves maps that hold only a `timezone`.
pub fn from_map(kind: Kind, map: &BTreeMap<String, Value>, now: (i64, u32)) -> Result<Value> {
    let f = Fields::parse(map)?;
    if kind == Kind::DateTime && (f.epoch_seconds.is_some() || f.epoch_millis.is_some()) {
        {
            let mut nanos = f.nanosecond.unwrap_or(0) as i128
                + f.microsecond.unwrap_or(0) as i128 * 1000
                + f.millisecond.unwrap_or(0) as i128 * 1_000_000;
            nanos += f.epoch_seconds.unwrap_or(0) as i128 * NANOS_PER_SECOND as i128;
            nanos += f.epoch_millis.unwrap_or(0) as i128 * 1_000_000;
            let zone = f.timezone.clone().unwrap_or(Zone::Offset(0));
            let secs = i64::try_from(nanos.div_euclid(NANOS_PER_SECOND as i128))
                .map_err(|_| invalid("epoch value out of range"))?;
            return at_instant(
                kind,
                secs,
                nanos.rem_euclid(NANOS_PER_SECOND as i128) as u32,
                &zone,
            );
        }
    }
    let only_timezone = f.date.is_none()
        && f.time.is_none()
        && f.datetime.is_none()
        && !f.has_date_fields()
        && !f.has_time_fields();
    if only_timezone {
        return at_instant(
            kind,
            now.0,
            now.1,
            f.timezone.as_ref().unwrap_or(&Zone::Offset(0)),
        );
    }
    let base_date = match (&f.date, &f.datetime) {
        (Some(v), _) | (None, Some(v)) => Some(
            Parts::of(v)
                .and_then(|p| p.date)
                .ok_or_else(|| invalid_type(format!("{} has no date", v.type_name())))?,
        ),
        _ => None,
    };
    // The time base and the zone it lives in (with its own date, for
    // resolving named zones).
    let base_time = match (&f.time, &f.datetime) {
        (Some(v), _) | (None, Some(v)) => {
            let p = Parts::of(v).ok_or_else(|| {
                invalid_type(format!("{} is not a temporal value", v.type_name()))
            })?;
            Some(p)
        }
        _ => None,
    };
    let date = if kind.has_date() {
        Some(f.resolve_date(base_date)?)
    } else {
        None
    };
    let time = if kind.has_time() {
        f.resolve_time(base_time.as_ref().and_then(|p| p.time))?
    } else {
        0
    };
    if !kind.is_zoned() {
        return assemble(kind, date, time, None);
    }
    let source_zone = base_time.as_ref().and_then(|p| p.zone.clone());
    match (source_zone, &f.timezone) {
        (Some(src), Some(target)) => {
            if kind == Kind::Time {
                let src_offset = match (&src, &base_time) {
                    (Zone::Offset(o), _) => *o,
                    (Zone::Named(_), Some(p)) => p.offset().unwrap_or(0),
                    _ => 0,
                };
                let target_offset = match target {
                    Zone::Offset(o) => *o,
                    Zone::Named(_) => target.offset_at_utc(now_utc().0),
                };
                let t = (time - src_offset as i64 * NANOS_PER_SECOND
                    + target_offset as i64 * NANOS_PER_SECOND)
                    .rem_euclid(NANOS_PER_DAY);
                return Ok(make_time(t, target_offset));
            }
            let d = date.unwrap_or(0);
            let local = d * SECONDS_PER_DAY + time / NANOS_PER_SECOND;
            let instant = src.resolve_local(local, (time % NANOS_PER_SECOND) as u32);
            Ok(Value::DateTime(
                target.at_utc(instant.seconds, instant.nanos),
            ))
        }
        (Some(src), None) => {
            if kind == Kind::Time {
                let offset = match (&src, &base_time) {
                    (Zone::Offset(o), _) => *o,
                    (Zone::Named(_), Some(p)) => p.offset().unwrap_or(0),
                    _ => 0,
                };
                return Ok(make_time(time, offset));
            }
            assemble(kind, date, time, Some(&src))
        }
        (None, target) => assemble(kind, date, time, target.as_ref()),
    }
}

/// `datetime.fromepoch(seconds, nanoseconds)`.
pub fn from_epoch(seconds: &Value, nanos: &Value) -> Result<Value> {
    let s = int_field("seconds", seconds)?;
    let n = int_field("nanoseconds", nanos)?;
    let (Some(s), Some(n)) = (s, n) else {
        return Ok(Value::Null);
    };
    let total = s as i128 * NANOS_PER_SECOND as i128 + n as i128;
    let secs = i64::try_from(total.div_euclid(NANOS_PER_SECOND as i128))
        .map_err(|_| invalid("epoch value out of range"))?;
    at_instant(
        Kind::DateTime,
        secs,
        total.rem_euclid(NANOS_PER_SECOND as i128) as u32,
        &Zone::Offset(0),
    )
}

/// `datetime.fromepochmillis(milliseconds)`.
pub fn from_epoch_millis(millis: &Value) -> Result<Value> {
    let Some(ms) = int_field("milliseconds", millis)? else {
        return Ok(Value::Null);
    };
    at_instant(
        Kind::DateTime,
        ms.div_euclid(1000),
        (ms.rem_euclid(1000) * 1_000_000) as u32,
        &Zone::Offset(0),
    )
}
