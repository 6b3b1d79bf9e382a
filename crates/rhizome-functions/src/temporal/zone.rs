//! Time zones: fixed offsets and named IANA zones (through `chrono-tz`).

use crate::errors::argument;
use chrono::{NaiveDate, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;
use rhizome_common::{DateTime, Result};
use std::sync::Arc;

/// A time zone as Cypher knows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Zone {
    /// A fixed offset from UTC, in seconds.
    Offset(i32),
    /// A named zone such as `Europe/Stockholm`.
    Named(Tz),
}

const SECONDS_PER_DAY: i64 = 86_400;

fn naive(local_seconds: i64) -> Option<NaiveDateTime> {
    let days = local_seconds.div_euclid(SECONDS_PER_DAY);
    let secs = local_seconds.rem_euclid(SECONDS_PER_DAY);
    let date = NaiveDate::from_ymd_opt(1970, 1, 1)?
        .checked_add_signed(chrono::Duration::try_days(days)?)?;
    date.and_hms_opt(0, 0, 0)?
        .checked_add_signed(chrono::Duration::try_seconds(secs)?)
}

/// Parses an offset: `Z`, `±HH`, `±HHMM`, `±HH:MM`, `±HH:MM:SS`, `±HHMMSS`.
pub fn parse_offset(text: &str) -> Option<i32> {
    if text == "Z" || text == "z" {
        return Some(0);
    }
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = &text[1..];
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || ![2, 4, 6].contains(&digits.len()) {
        return None;
    }
    if rest.contains(':') && rest.len() != digits.len() + digits.len() / 2 - 1 {
        return None;
    }
    let h: i32 = digits[..2].parse().ok()?;
    let m: i32 = digits.get(2..4).map_or(Some(0), |s| s.parse().ok())?;
    let s: i32 = digits.get(4..6).map_or(Some(0), |s| s.parse().ok())?;
    (h <= 18 && m < 60 && s < 60).then_some(sign * (h * 3600 + m * 60 + s))
}

impl Zone {
    /// Parses an offset or an IANA zone name; `ArgumentError` otherwise.
    pub fn parse(text: &str) -> Result<Zone> {
        if let Some(offset) = parse_offset(text) {
            return Ok(Zone::Offset(offset));
        }
        text.parse::<Tz>().map(Zone::Named).map_err(|_| {
            argument(
                "InvalidArgumentValue",
                format!("unknown time zone `{text}`"),
            )
        })
    }

    /// The zone of a stored date-time (its name if it has one).
    pub fn of(dt: &DateTime) -> Zone {
        match dt.zone.as_deref().and_then(|z| z.parse::<Tz>().ok()) {
            Some(tz) => Zone::Named(tz),
            None => Zone::Offset(dt.offset_seconds),
        }
    }

    /// The offset in force at a UTC instant.
    pub fn offset_at_utc(&self, utc_seconds: i64) -> i32 {
        match self {
            Zone::Offset(o) => *o,
            Zone::Named(tz) => naive(utc_seconds)
                .map(|n| tz.offset_from_utc_datetime(&n).fix().local_minus_utc())
                .unwrap_or(0),
        }
    }

    /// The offset for a local wall-clock time: in an overlap the earlier
    /// offset; in a gap the offset before it (so the time moves forward by
    /// the gap's length, as Java's `ZonedDateTime.ofLocal` does).
    pub fn offset_for_local(&self, local_seconds: i64) -> i32 {
        match self {
            Zone::Offset(o) => *o,
            Zone::Named(tz) => {
                let Some(n) = naive(local_seconds) else {
                    return 0;
                };
                match tz.offset_from_local_datetime(&n) {
                    chrono::LocalResult::Single(o) => o.fix().local_minus_utc(),
                    chrono::LocalResult::Ambiguous(a, b) => {
                        a.fix().local_minus_utc().max(b.fix().local_minus_utc())
                    }
                    chrono::LocalResult::None => {
                        self.offset_at_utc(local_seconds - SECONDS_PER_DAY / 2)
                    }
                }
            }
        }
    }

    /// The zone's name for a stored date-time (`None` for fixed offsets).
    pub fn name(&self) -> Option<Arc<str>> {
        match self {
            Zone::Offset(_) => None,
            Zone::Named(tz) => Some(Arc::from(tz.name())),
        }
    }

    /// A date-time from local wall-clock seconds and nanos in this zone.
    pub fn resolve_local(&self, local_seconds: i64, nanos: u32) -> DateTime {
        let offset = self.offset_for_local(local_seconds);
        self.at_utc(local_seconds - offset as i64, nanos)
    }

    /// A date-time at a UTC instant in this zone.
    pub fn at_utc(&self, utc_seconds: i64, nanos: u32) -> DateTime {
        DateTime {
            seconds: utc_seconds,
            nanos,
            offset_seconds: self.offset_at_utc(utc_seconds),
            zone: self.name(),
        }
    }
}

/// Formats an offset as Cypher's `timezone`/`offset` accessors do:
/// `Z` for UTC in `timezone`, `+01:00`, `+02:05:59`.
pub fn format_offset(offset_seconds: i32, z_for_zero: bool) -> String {
    if offset_seconds == 0 && z_for_zero {
        return "Z".to_string();
    }
    let sign = if offset_seconds < 0 { '-' } else { '+' };
    let abs = offset_seconds.unsigned_abs();
    let mut s = format!("{sign}{:02}:{:02}", abs / 3600, (abs / 60) % 60);
    if !abs.is_multiple_of(60) {
        s.push_str(&format!(":{:02}", abs % 60));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_parse() {
        assert_eq!(parse_offset("+01:00"), Some(3600));
        assert_eq!(parse_offset("+0100"), Some(3600));
        assert_eq!(parse_offset("-02:05:07"), Some(-(2 * 3600 + 5 * 60 + 7)));
        assert_eq!(parse_offset("Z"), Some(0));
        assert_eq!(parse_offset("+1:00"), None);
    }

    #[test]
    fn named_zone_resolution() {
        let z = Zone::parse("Europe/Stockholm").unwrap();
        // 1984-10-11T12:00 local: CET (+01:00).
        let local = rhizome_common::temporal::days_from_civil(1984, 10, 11) * 86_400 + 12 * 3600;
        assert_eq!(z.offset_for_local(local), 3600);
        let summer = rhizome_common::temporal::days_from_civil(1984, 7, 20) * 86_400;
        assert_eq!(z.offset_for_local(summer), 7200);
        assert!(Zone::parse("Mars/Olympus").is_err());
    }
}
