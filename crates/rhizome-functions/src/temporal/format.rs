//! ISO 8601 printing of temporal instants as Cypher (and the TCK) shows
//! them: `1984-10-11`, `12:31`, `12:31:14.645876123`, `+01:00`, `Z`,
//! `2015-07-21T21:40:32.142+02:00[Europe/Stockholm]`.
//!
//! Seconds are omitted when they and the fraction are zero; fractions drop
//! trailing zeros. Years outside 0000..=9999 carry a sign (`+10000`,
//! `-0001`), and every year up to ±999,999,999 prints correctly (the
//! `Display` of `rhizome_common` date-times goes through a 32-bit day count).

use super::calendar::ymd;
use super::zone::format_offset;
use super::{Parts, NANOS_PER_SECOND};
use rhizome_common::Value;
use std::fmt::Write;

fn write_date(out: &mut String, days: i64) {
    let (y, m, d) = ymd(days);
    if (0..=9999).contains(&y) {
        let _ = write!(out, "{y:04}-{m:02}-{d:02}");
    } else if y < 0 {
        let _ = write!(out, "-{:04}-{m:02}-{d:02}", -y);
    } else {
        let _ = write!(out, "+{y}-{m:02}-{d:02}");
    }
}

fn write_time(out: &mut String, nanos: i64) {
    let secs = nanos / NANOS_PER_SECOND;
    let frac = nanos % NANOS_PER_SECOND;
    let _ = write!(out, "{:02}:{:02}", secs / 3600, secs / 60 % 60);
    if secs % 60 != 0 || frac != 0 {
        let _ = write!(out, ":{:02}", secs % 60);
    }
    if frac != 0 {
        let digits = format!("{frac:09}");
        let _ = write!(out, ".{}", digits.trim_end_matches('0'));
    }
}

/// The ISO form of a date, time or date-time; `None` for other values.
pub fn format_temporal(v: &Value) -> Option<String> {
    let parts = Parts::of(v)?;
    let mut out = String::new();
    if let Some(date) = parts.date {
        write_date(&mut out, date);
    }
    if let Some(time) = parts.time {
        if parts.date.is_some() {
            out.push('T');
        }
        write_time(&mut out, time);
    }
    match v {
        Value::Time(t) => out.push_str(&format_offset(t.offset_seconds, true)),
        Value::DateTime(dt) => {
            out.push_str(&format_offset(dt.offset_seconds, true));
            if let Some(zone) = &dt.zone {
                let _ = write!(out, "[{zone}]");
            }
        }
        _ => {}
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_common::{Date, LocalDateTime};

    #[test]
    fn years_beyond_four_digits() {
        let days = super::super::calendar::days(-1, 1, 1);
        assert_eq!(
            format_temporal(&Value::Date(Date { days })).unwrap(),
            "-0001-01-01"
        );
        let days = super::super::calendar::days(10_000, 1, 1);
        assert_eq!(
            format_temporal(&Value::Date(Date { days })).unwrap(),
            "+10000-01-01"
        );
        let ldt = super::super::make_local_datetime(
            super::super::calendar::days(999_999_999, 12, 31),
            (23 * 3600 + 59 * 60 + 59) * NANOS_PER_SECOND,
        )
        .unwrap();
        assert_eq!(format_temporal(&ldt).unwrap(), "+999999999-12-31T23:59:59");
        let midnight = Value::LocalDateTime(LocalDateTime {
            seconds: 0,
            nanos: 0,
        });
        assert_eq!(format_temporal(&midnight).unwrap(), "1970-01-01T00:00");
    }
}
