//! Cypher's temporal values in a compact, comparable representation.
//!
//! Each type stores plain integers so storage can keep them in typed columns:
//! a [`Date`] is days since 1970-01-01, times are nanoseconds since midnight,
//! date-times are seconds since the epoch plus nanoseconds. Parsing and
//! printing use the ISO 8601 forms that Cypher and the TCK use.

use std::fmt;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;

/// The earliest year a Cypher date may have.
pub const MIN_YEAR: i64 = -999_999_999;
/// The latest year a Cypher date may have.
pub const MAX_YEAR: i64 = 999_999_999;

/// A calendar date (proleptic Gregorian), as days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Days since 1970-01-01 (negative before); years ±999,999,999 fit.
    pub days: i64,
}

/// A time of day without time zone, as nanoseconds since midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalTime {
    /// Nanoseconds since midnight, in `0..86_400 * 10^9`.
    pub nanos: i64,
}

/// A time of day with a UTC offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    /// Local nanoseconds since midnight.
    pub nanos: i64,
    /// Offset from UTC in seconds.
    pub offset_seconds: i32,
}

/// A date and time without time zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalDateTime {
    /// Seconds since 1970-01-01T00:00:00 (local wall clock).
    pub seconds: i64,
    /// Nanoseconds within the second, `0..10^9`.
    pub nanos: u32,
}

/// A date and time at a UTC offset, optionally in a named zone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// Seconds since the Unix epoch (UTC).
    pub seconds: i64,
    /// Nanoseconds within the second, `0..10^9`.
    pub nanos: u32,
    /// Offset from UTC in seconds at this instant.
    pub offset_seconds: i32,
    /// Named time zone (e.g. `Europe/Stockholm`) if one was given.
    pub zone: Option<std::sync::Arc<str>>,
}

/// A Cypher duration: months, days and seconds are kept apart because their
/// lengths vary with the calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Duration {
    /// Whole months.
    pub months: i64,
    /// Whole days.
    pub days: i64,
    /// Whole seconds.
    pub seconds: i64,
    /// Nanoseconds, `-10^9 < nanos < 10^9`, same sign as `seconds` when both are non-zero.
    pub nanos: i32,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) of a count of days since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

fn parse_fixed(s: &str, what: &str) -> Result<i64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected digits for {what}, found `{s}`"));
    }
    s.parse::<i64>().map_err(|e| format!("{what}: {e}"))
}

impl Date {
    /// A date from its calendar fields; `None` if the fields name no real day.
    pub fn from_ymd(year: i64, month: u32, day: u32) -> Option<Date> {
        if !(1..=12).contains(&month)
            || day == 0
            || day > days_in_month(year, month)
            || !(MIN_YEAR..=MAX_YEAR).contains(&year)
        {
            return None;
        }
        Some(Date {
            days: days_from_civil(year, month, day),
        })
    }

    /// The calendar fields (year, month, day).
    pub fn ymd(self) -> (i64, u32, u32) {
        civil_from_days(self.days)
    }

    /// Parses `YYYY-MM-DD` (the extended ISO 8601 form).
    pub fn parse_iso(text: &str) -> Result<Date, String> {
        let mut parts = text.splitn(3, '-');
        let (y, m, d) = match (parts.next(), parts.next(), parts.next()) {
            (Some(y), Some(m), Some(d)) if y.len() == 4 && m.len() == 2 && d.len() == 2 => {
                (y, m, d)
            }
            _ => return Err(format!("`{text}` is not a date of the form YYYY-MM-DD")),
        };
        let year = parse_fixed(y, "year")?;
        let month = parse_fixed(m, "month")? as u32;
        let day = parse_fixed(d, "day")? as u32;
        Date::from_ymd(year, month, day)
            .ok_or_else(|| format!("`{text}` is not a valid calendar date"))
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        if (0..=9999).contains(&y) {
            write!(f, "{y:04}-{m:02}-{d:02}")
        } else {
            write!(f, "{y:+}-{m:02}-{d:02}")
        }
    }
}

fn write_time_of_day(f: &mut fmt::Formatter<'_>, nanos: i64) -> fmt::Result {
    let secs = nanos / NANOS_PER_SECOND;
    let frac = nanos % NANOS_PER_SECOND;
    write!(f, "{:02}:{:02}", secs / 3600, (secs / 60) % 60)?;
    let s = secs % 60;
    if s != 0 || frac != 0 {
        write!(f, ":{s:02}")?;
    }
    if frac != 0 {
        let digits = format!("{frac:09}");
        write!(f, ".{}", digits.trim_end_matches('0'))?;
    }
    Ok(())
}

fn write_offset(f: &mut fmt::Formatter<'_>, offset_seconds: i32) -> fmt::Result {
    if offset_seconds == 0 {
        return f.write_str("Z");
    }
    let sign = if offset_seconds < 0 { '-' } else { '+' };
    let abs = offset_seconds.unsigned_abs();
    write!(f, "{sign}{:02}:{:02}", abs / 3600, (abs / 60) % 60)?;
    if !abs.is_multiple_of(60) {
        write!(f, ":{:02}", abs % 60)?;
    }
    Ok(())
}

impl fmt::Display for LocalTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_time_of_day(f, self.nanos)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_time_of_day(f, self.nanos)?;
        write_offset(f, self.offset_seconds)
    }
}

impl fmt::Display for LocalDateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.seconds.div_euclid(SECONDS_PER_DAY);
        let secs = self.seconds.rem_euclid(SECONDS_PER_DAY);
        write!(f, "{}T", Date { days })?;
        write_time_of_day(f, secs * NANOS_PER_SECOND + self.nanos as i64)
    }
}

impl DateTime {
    /// The wall-clock date and time at this value's offset.
    pub fn local(&self) -> LocalDateTime {
        LocalDateTime {
            seconds: self.seconds + self.offset_seconds as i64,
            nanos: self.nanos,
        }
    }

    /// Parses an ISO 8601 date-time: `YYYY-MM-DD`, optionally followed by
    /// `THH:MM[:SS[.fffffffff]]` and an offset (`Z`, `+HH:MM`, `-HHMM`).
    /// A value without an offset is taken as UTC, as `neo4j-admin import` does
    /// with its default time zone.
    pub fn parse_iso(text: &str) -> Result<DateTime, String> {
        let bad = || format!("`{text}` is not an ISO 8601 date-time");
        let (date_part, rest) = match text.find('T') {
            Some(i) => (&text[..i], &text[i + 1..]),
            None => (text, ""),
        };
        let date = Date::parse_iso(date_part)?;
        let (time_part, offset_seconds) = match rest.find(['Z', '+', '-']) {
            Some(i) => (&rest[..i], parse_offset(&rest[i..]).ok_or_else(bad)?),
            None => (rest, 0),
        };
        let mut nanos_of_day = 0i64;
        if !time_part.is_empty() {
            let (hms, frac) = match time_part.find('.') {
                Some(i) => (&time_part[..i], &time_part[i + 1..]),
                None => (time_part, ""),
            };
            let fields: Vec<&str> = hms.split(':').collect();
            if fields.len() < 2 || fields.len() > 3 || fields.iter().any(|f| f.len() != 2) {
                return Err(bad());
            }
            let h = parse_fixed(fields[0], "hour")?;
            let m = parse_fixed(fields[1], "minute")?;
            let s = if fields.len() == 3 {
                parse_fixed(fields[2], "second")?
            } else {
                0
            };
            if h > 23 || m > 59 || s > 59 || frac.len() > 9 {
                return Err(bad());
            }
            let mut frac_nanos = 0i64;
            if !frac.is_empty() {
                frac_nanos = parse_fixed(frac, "fraction")? * 10i64.pow(9 - frac.len() as u32);
            }
            nanos_of_day = ((h * 60 + m) * 60 + s) * NANOS_PER_SECOND + frac_nanos;
        }
        let local_seconds = date.days * SECONDS_PER_DAY + nanos_of_day / NANOS_PER_SECOND;
        Ok(DateTime {
            seconds: local_seconds - offset_seconds as i64,
            nanos: (nanos_of_day % NANOS_PER_SECOND) as u32,
            offset_seconds,
            zone: None,
        })
    }
}

fn parse_offset(text: &str) -> Option<i32> {
    if text == "Z" {
        return Some(0);
    }
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = text[1..].chars().filter(|c| *c != ':').collect();
    if !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let h: i32 = digits[..2].parse().ok()?;
    let m: i32 = if digits.len() == 4 {
        digits[2..].parse().ok()?
    } else {
        0
    };
    (h <= 18 && m < 60).then_some(sign * (h * 3600 + m * 60))
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.local())?;
        write_offset(f, self.offset_seconds)?;
        if let Some(zone) = &self.zone {
            write!(f, "[{zone}]")?;
        }
        Ok(())
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("P")?;
        let (years, months) = (self.months / 12, self.months % 12);
        if years != 0 {
            write!(f, "{years}Y")?;
        }
        if months != 0 {
            write!(f, "{months}M")?;
        }
        if self.days != 0 {
            write!(f, "{}D", self.days)?;
        }
        let (hours, rem) = (self.seconds / 3600, self.seconds % 3600);
        let (minutes, seconds) = (rem / 60, rem % 60);
        if hours != 0 || minutes != 0 || seconds != 0 || self.nanos != 0 {
            f.write_str("T")?;
            if hours != 0 {
                write!(f, "{hours}H")?;
            }
            if minutes != 0 {
                write!(f, "{minutes}M")?;
            }
            if seconds != 0 || self.nanos != 0 {
                if self.nanos == 0 {
                    write!(f, "{seconds}S")?;
                } else {
                    let negative = seconds < 0 || self.nanos < 0;
                    let digits = format!("{:09}", self.nanos.unsigned_abs());
                    let sign = if negative && seconds == 0 { "-" } else { "" };
                    write!(f, "{sign}{seconds}.{}S", digits.trim_end_matches('0'))?;
                }
            }
        } else if years == 0 && months == 0 && self.days == 0 {
            f.write_str("T0S")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for days in [-800_000i64, -1, 0, 1, 10_957, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(2000, 1, 1), 10_957);
    }

    #[test]
    fn date_parse_and_print() {
        let date = Date::parse_iso("1984-10-11").unwrap();
        assert_eq!(date.to_string(), "1984-10-11");
        assert!(Date::parse_iso("1984-02-30").is_err());
        assert!(Date::parse_iso("1984-1-1").is_err());
    }

    #[test]
    fn datetime_parse_and_print() {
        let dt = DateTime::parse_iso("2015-07-21T21:40:32.142+01:00").unwrap();
        assert_eq!(dt.to_string(), "2015-07-21T21:40:32.142+01:00");
        let utc = DateTime::parse_iso("2010-01-01T00:00:00Z").unwrap();
        assert_eq!(utc.seconds, 1_262_304_000);
        assert_eq!(utc.to_string(), "2010-01-01T00:00Z");
        assert!(DateTime::parse_iso("2010-01-01T25:00").is_err());
    }

    #[test]
    fn duration_prints_iso() {
        let d = Duration {
            months: 14,
            days: 3,
            seconds: 3_723,
            nanos: 500_000_000,
        };
        assert_eq!(d.to_string(), "P1Y2M3DT1H2M3.5S");
        assert_eq!(Duration::default().to_string(), "PT0S");
    }
}
