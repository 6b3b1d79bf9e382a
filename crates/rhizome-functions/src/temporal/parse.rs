//! ISO 8601 parsing of temporal strings, in every form Cypher accepts.
//!
//! Dates: `2015-07-21`, `20150721`, `2015-07`, `2015`, week dates
//! `2015-W30-2` / `2015W302` / `2015-W30`, ordinal dates `2015-202` /
//! `2015202`, quarter dates `2015-Q3-21`; years beyond four digits carry a
//! sign (`+999999999-12-31`). Times: `21`, `21:40`, `2140`, `21:40:32`,
//! `214032`, fractions `.142` / `,142` up to nanoseconds, optionally followed
//! by an offset (`Z`, `+01`, `+0100`, `+01:00`, `+01:00:30`) and/or a zone
//! name in brackets (`[Europe/Stockholm]`). Date-times join the two with `T`.

use super::calendar::{
    days, days_in_month, days_in_quarter, days_in_year, week_one_monday, weeks_in_year, MAX_YEAR,
};
use super::zone::{parse_offset, Zone};
use super::{NANOS_PER_SECOND, SECONDS_PER_DAY};
use crate::errors::argument;
use rhizome_common::Result;

fn bad(what: &str, text: &str) -> rhizome_common::Error {
    argument(
        "InvalidArgumentValue",
        format!("`{text}` cannot be parsed as a {what}"),
    )
}

fn digits(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Parses a date string into an epoch day.
pub fn parse_date(text: &str) -> Result<i64> {
    date_of(text).ok_or_else(|| bad("date", text))
}

fn date_of(text: &str) -> Option<i64> {
    let (year, rest) = match text.as_bytes().first()? {
        b'+' | b'-' => {
            let end = text[1..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(text.len(), |i| i + 1);
            let y = digits(&text[1..end])?;
            if end - 1 > 9 {
                return None;
            }
            (if text.starts_with('-') { -y } else { y }, &text[end..])
        }
        _ => (digits(text.get(..4)?)?, &text[4..]),
    };
    if year.abs() > MAX_YEAR {
        return None;
    }
    let hyphen = rest.starts_with('-');
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    if rest.is_empty() {
        return (!hyphen).then(|| days(year, 1, 1));
    }
    if let Some(w) = rest.strip_prefix('W') {
        let week = digits(w.get(..2)?)?;
        let tail = &w[2..];
        let dow = if tail.is_empty() {
            1
        } else {
            let t = if hyphen {
                tail.strip_prefix('-')?
            } else {
                tail
            };
            if t.len() != 1 {
                return None;
            }
            digits(t)?
        };
        if !(1..=weeks_in_year(year)).contains(&week) || !(1..=7).contains(&dow) {
            return None;
        }
        return Some(week_one_monday(year) + (week - 1) * 7 + dow - 1);
    }
    if let Some(q) = rest.strip_prefix('Q') {
        let quarter = digits(q.get(..1)?)?;
        let tail = &q[1..];
        let doq = if tail.is_empty() {
            1
        } else {
            let t = if hyphen {
                tail.strip_prefix('-')?
            } else {
                tail
            };
            if t.len() != 2 {
                return None;
            }
            digits(t)?
        };
        if !(1..=4).contains(&quarter) {
            return None;
        }
        let q = quarter as u32;
        if !(1..=days_in_quarter(year, q)).contains(&doq) {
            return None;
        }
        return Some(super::calendar::quarter_start(year, q) + doq - 1);
    }
    let (month, day) = match (rest.len(), hyphen) {
        (2, _) => (digits(rest)?, 1),
        (3, _) => {
            let ordinal = digits(rest)?;
            if !(1..=days_in_year(year)).contains(&ordinal) {
                return None;
            }
            return Some(days(year, 1, 1) + ordinal - 1);
        }
        (4, false) => (digits(&rest[..2])?, digits(&rest[2..])?),
        (5, true) if &rest[2..3] == "-" => (digits(&rest[..2])?, digits(&rest[3..])?),
        _ => return None,
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month as u32) as i64 {
        return None;
    }
    Some(days(year, month as u32, day as u32))
}

/// A parsed time of day with its optional zone.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedTime {
    /// Nanoseconds of the day.
    pub nanos: i64,
    /// An explicit offset, if one was written.
    pub offset: Option<i32>,
    /// A zone name in brackets, if one was written.
    pub zone_name: Option<Zone>,
}

/// Parses a time string (an optional leading `T` is allowed).
pub fn parse_time(text: &str) -> Result<ParsedTime> {
    let t = text.strip_prefix(['T', 't']).unwrap_or(text);
    time_of(t).ok_or_else(|| bad("time", text))
}

fn time_of(text: &str) -> Option<ParsedTime> {
    let (text, zone_name) = match text.find('[') {
        Some(i) => {
            let name = text[i + 1..].strip_suffix(']')?;
            (&text[..i], Some(Zone::parse(name).ok()?))
        }
        None => (text, None),
    };
    let (clock, offset) = match text.find(['Z', 'z', '+', '-']) {
        Some(i) => (&text[..i], Some(parse_offset(&text[i..])?)),
        None => (text, None),
    };
    let (hms, frac) = match clock.find(['.', ',']) {
        Some(i) => (&clock[..i], Some(&clock[i + 1..])),
        None => (clock, None),
    };
    let fields: Vec<&str> = if hms.contains(':') {
        hms.split(':').collect()
    } else {
        if hms.len() % 2 != 0 || hms.len() > 6 {
            return None;
        }
        (0..hms.len()).step_by(2).map(|i| &hms[i..i + 2]).collect()
    };
    if fields.is_empty() || fields.len() > 3 || fields.iter().any(|f| f.len() != 2) {
        return None;
    }
    let h = digits(fields[0])?;
    let m = fields.get(1).map_or(Some(0), |f| digits(f))?;
    let s = fields.get(2).map_or(Some(0), |f| digits(f))?;
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let mut nanos = ((h * 60 + m) * 60 + s) * NANOS_PER_SECOND;
    if let Some(frac) = frac {
        if fields.len() != 3 || frac.is_empty() || frac.len() > 9 {
            return None;
        }
        nanos += digits(frac)? * 10i64.pow(9 - frac.len() as u32);
    }
    Some(ParsedTime {
        nanos,
        offset,
        zone_name,
    })
}

/// A parsed date-time: local date and time, and the zone written (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedDateTime {
    /// Epoch day of the local date.
    pub date: i64,
    /// The local time (midnight when only a date was written).
    pub time: ParsedTime,
}

impl ParsedDateTime {
    /// The zone to use: the named zone if written (checking a written offset
    /// against it), else the written offset.
    pub fn zone(&self) -> Option<Zone> {
        match (&self.time.zone_name, self.time.offset) {
            (Some(z), _) => Some(z.clone()),
            (None, Some(o)) => Some(Zone::Offset(o)),
            (None, None) => None,
        }
    }

    /// UTC seconds and nanos if the string pins an instant (an offset was
    /// written, consistent with the named zone if any).
    pub fn instant(&self) -> Option<(i64, u32)> {
        let offset = self.time.offset?;
        let local = self.date * SECONDS_PER_DAY + self.time.nanos / NANOS_PER_SECOND;
        let utc = local - offset as i64;
        if let Some(zone) = &self.time.zone_name {
            if zone.offset_at_utc(utc) != offset {
                return None;
            }
        }
        Some((utc, (self.time.nanos % NANOS_PER_SECOND) as u32))
    }
}

/// Parses a date-time string (`<date>[T<time>]`).
pub fn parse_datetime(text: &str) -> Result<ParsedDateTime> {
    let (date_part, time_part) = match text.find(['T', 't']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let date = date_of(date_part).ok_or_else(|| bad("date-time", text))?;
    let time = match time_part {
        Some(t) => time_of(t).ok_or_else(|| bad("date-time", text))?,
        None => ParsedTime {
            nanos: 0,
            offset: None,
            zone_name: None,
        },
    };
    Ok(ParsedDateTime { date, time })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::calendar::ymd;

    #[test]
    fn date_forms() {
        let ok = |s: &str| ymd(parse_date(s).unwrap());
        assert_eq!(ok("2015-07-21"), (2015, 7, 21));
        assert_eq!(ok("20150721"), (2015, 7, 21));
        assert_eq!(ok("2015-07"), (2015, 7, 1));
        assert_eq!(ok("201507"), (2015, 7, 1));
        assert_eq!(ok("2015-W30-2"), (2015, 7, 21));
        assert_eq!(ok("2015W302"), (2015, 7, 21));
        assert_eq!(ok("2015-W30"), (2015, 7, 20));
        assert_eq!(ok("2015-202"), (2015, 7, 21));
        assert_eq!(ok("2015202"), (2015, 7, 21));
        assert_eq!(ok("2015-Q3-21"), (2015, 7, 21));
        assert_eq!(ok("2015"), (2015, 1, 1));
        assert_eq!(ok("+999999999-12-31"), (999_999_999, 12, 31));
        assert_eq!(ok("-0001-01-01"), (-1, 1, 1));
        for bad in [
            "2015-13-01",
            "2015-02-29",
            "2015-W54",
            "15-07-21",
            "2015-07-2",
            "x",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn time_forms() {
        let t = parse_time("21:40:32.142+0100").unwrap();
        assert_eq!(
            t.nanos,
            ((21 * 60 + 40) * 60 + 32) * NANOS_PER_SECOND + 142_000_000
        );
        assert_eq!(t.offset, Some(3600));
        assert_eq!(
            parse_time("214032").unwrap().nanos,
            ((21 * 60 + 40) * 60 + 32) * NANOS_PER_SECOND
        );
        assert_eq!(parse_time("16:30").unwrap().offset, None);
        assert_eq!(parse_time("12:00Z").unwrap().offset, Some(0));
        assert!(parse_time("24:00").is_err());
        assert!(parse_time("12:00:00.1234567890").is_err());
    }

    #[test]
    fn datetime_forms() {
        let dt = parse_datetime("2015-07-21T21:40:32.142+01:00[Europe/Stockholm]").unwrap();
        assert!(
            dt.instant().is_none(),
            "+01:00 is not Stockholm's summer offset"
        );
        let dt = parse_datetime("2017-10-29T04:00+01:00[Europe/Stockholm]").unwrap();
        assert!(dt.instant().is_some());
        let dt = parse_datetime("2015-W30-2T214032.142Z").unwrap();
        assert_eq!(ymd(dt.date), (2015, 7, 21));
        assert_eq!(dt.time.offset, Some(0));
    }
}
