//! Duration arithmetic, construction from maps and ISO 8601 strings, and
//! normalisation.
//!
//! A [`Duration`] keeps months, days and seconds apart. Sub-second parts are
//! normalised so that `|nanos| < 10^9` with the sign of `seconds`; months
//! and days are never folded into each other or into seconds, except that
//! fractional months and days cascade into smaller units when a duration is
//! built or scaled by a fraction (a month averages 30.436875 days).

use crate::errors::{argument, invalid_type, overflow};
use rhizome_common::{Duration, Result, Value};
use std::collections::BTreeMap;

const NANOS: i128 = 1_000_000_000;
/// Average seconds in a month (365.2425 / 12 days).
pub(crate) const SECONDS_PER_MONTH: f64 = 2_629_746.0;
const SECONDS_PER_DAY: f64 = 86_400.0;

/// Builds a normalised duration from components; errors on overflow.
pub fn normalized(months: i128, days: i128, seconds: i128, nanos: i128) -> Result<Duration> {
    let total = seconds
        .checked_mul(NANOS)
        .and_then(|s| s.checked_add(nanos))
        .ok_or_else(|| overflow("duration"))?;
    let (secs, ns) = (total / NANOS, total % NANOS);
    let fit = |x: i128| i64::try_from(x).map_err(|_| overflow("duration"));
    Ok(Duration {
        months: fit(months)?,
        days: fit(days)?,
        seconds: fit(secs)?,
        nanos: ns as i32,
    })
}

/// Total nanoseconds of the seconds part.
pub(crate) fn total_nanos(d: &Duration) -> i128 {
    d.seconds as i128 * NANOS + d.nanos as i128
}

/// `a + b`, component-wise.
pub fn add(a: &Duration, b: &Duration) -> Result<Duration> {
    normalized(
        a.months as i128 + b.months as i128,
        a.days as i128 + b.days as i128,
        0,
        total_nanos(a) + total_nanos(b),
    )
}

/// `-d`.
pub fn negate(d: &Duration) -> Result<Duration> {
    normalized(-(d.months as i128), -(d.days as i128), 0, -total_nanos(d))
}

/// `d * factor` for an integer factor (exact).
pub fn mul_int(d: &Duration, factor: i64) -> Result<Duration> {
    let f = factor as i128;
    normalized(
        d.months as i128 * f,
        d.days as i128 * f,
        0,
        total_nanos(d)
            .checked_mul(f)
            .ok_or_else(|| overflow("duration"))?,
    )
}

/// `d * factor` for a float factor: fractional months cascade into days,
/// fractional days into seconds (Neo4j's approximation).
pub fn mul_float(d: &Duration, factor: f64) -> Result<Duration> {
    approximate(
        d.months as f64 * factor,
        d.days as f64 * factor,
        d.seconds as f64 * factor,
        d.nanos as f64 * factor,
    )
}

/// `d / divisor`: each component divided (not multiplied by the inverse,
/// which rounds differently), fractions cascading down as for
/// [`mul_float`]. The caller rejects a zero divisor.
pub fn div_float(d: &Duration, divisor: f64) -> Result<Duration> {
    approximate(
        d.months as f64 / divisor,
        d.days as f64 / divisor,
        d.seconds as f64 / divisor,
        d.nanos as f64 / divisor,
    )
}

/// `d / n` for a count (used by `avg`).
pub fn div_count(d: &Duration, n: i64) -> Result<Duration> {
    div_float(d, n as f64)
}

fn checked_f64_to_i128(x: f64) -> Result<i128> {
    if !x.is_finite() || x.abs() > 9.2e18 {
        return Err(overflow("duration"));
    }
    Ok(x as i128)
}

/// Builds a duration from fractional components, cascading fractions down;
/// what is left below a nanosecond is dropped (truncated toward zero, as
/// every larger unit is), so `duration * 0.5` of one nanosecond is zero.
pub fn approximate(months: f64, days: f64, seconds: f64, nanos: f64) -> Result<Duration> {
    let whole_months = checked_f64_to_i128(months.trunc())?;
    let days = days + (months - months.trunc()) * SECONDS_PER_MONTH / SECONDS_PER_DAY;
    let whole_days = checked_f64_to_i128(days.trunc())?;
    let seconds = seconds + (days - days.trunc()) * SECONDS_PER_DAY;
    let whole_seconds = checked_f64_to_i128(seconds.trunc())?;
    let nanos = nanos + (seconds - seconds.trunc()) * 1e9;
    let whole_nanos = checked_f64_to_i128(nanos.trunc())?;
    normalized(whole_months, whole_days, whole_seconds, whole_nanos)
}

/// A numeric component as an exact integer part plus a float fraction.
enum Amount {
    Int(i128),
    Float(f64),
}

fn amount(key: &str, v: &Value) -> Result<Option<Amount>> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(Amount::Int(*i as i128))),
        Value::Float(x) => Ok(Some(Amount::Float(*x))),
        _ => Err(invalid_type(format!(
            "duration component `{key}` must be a number, not {}",
            v.type_name()
        ))),
    }
}

/// Accumulates components in integer units with float remainders.
#[derive(Default)]
struct Builder {
    months: i128,
    days: i128,
    nanos: i128,
    frac_months: f64,
    frac_days: f64,
    frac_seconds: f64,
}

impl Builder {
    fn months(&mut self, a: Amount, per: i128) {
        match a {
            Amount::Int(i) => self.months += i * per,
            Amount::Float(x) => {
                let t = x * per as f64;
                self.months += t.trunc() as i128;
                self.frac_months += t - t.trunc();
            }
        }
    }
    fn days(&mut self, a: Amount, per: i128) {
        match a {
            Amount::Int(i) => self.days += i * per,
            Amount::Float(x) => {
                let t = x * per as f64;
                self.days += t.trunc() as i128;
                self.frac_days += t - t.trunc();
            }
        }
    }
    fn nanos(&mut self, a: Amount, per: i128) {
        match a {
            Amount::Int(i) => self.nanos += i * per,
            Amount::Float(x) => {
                let seconds = x * per as f64 / 1e9;
                self.nanos += seconds.trunc() as i128 * NANOS;
                self.frac_seconds += seconds - seconds.trunc();
            }
        }
    }
    fn build(self) -> Result<Duration> {
        let frac_days = self.frac_days + self.frac_months * SECONDS_PER_MONTH / SECONDS_PER_DAY;
        let days = self.days + frac_days.trunc() as i128;
        let frac_seconds = self.frac_seconds + (frac_days - frac_days.trunc()) * SECONDS_PER_DAY;
        let nanos = self.nanos + (frac_seconds * 1e9).round() as i128;
        normalized(self.months, days, 0, nanos)
    }
}

/// `duration({years, quarters, months, weeks, days, hours, minutes,
/// seconds, milliseconds, microseconds, nanoseconds})`: any subset, integers
/// or floats, possibly negative. Unknown keys are an `ArgumentError`.
pub fn from_map(map: &BTreeMap<String, Value>) -> Result<Duration> {
    let mut b = Builder::default();
    for (key, v) in map {
        let Some(a) = amount(key, v)? else { continue };
        match key.to_ascii_lowercase().as_str() {
            "years" => b.months(a, 12),
            "quarters" => b.months(a, 3),
            "months" => b.months(a, 1),
            "weeks" => b.days(a, 7),
            "days" => b.days(a, 1),
            "hours" => b.nanos(a, 3600 * NANOS),
            "minutes" => b.nanos(a, 60 * NANOS),
            "seconds" => b.nanos(a, NANOS),
            "milliseconds" => b.nanos(a, 1_000_000),
            "microseconds" => b.nanos(a, 1_000),
            "nanoseconds" => b.nanos(a, 1),
            _ => {
                return Err(argument(
                    "InvalidArgumentValue",
                    format!("`{key}` is not a duration component"),
                ))
            }
        }
    }
    b.build()
}

fn bad_duration(text: &str) -> rhizome_common::Error {
    argument(
        "InvalidArgumentValue",
        format!("`{text}` is not an ISO 8601 duration"),
    )
}

fn parse_number(s: &str) -> Option<Amount> {
    if s.is_empty() {
        return None;
    }
    let s2 = s.replace(',', ".");
    if s2.contains('.') {
        let (int, frac) = s2.split_once('.')?;
        if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = int.trim_start_matches(['-', '+']);
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s2.parse::<f64>().ok().map(Amount::Float)
    } else {
        s2.parse::<i128>().ok().map(Amount::Int)
    }
}

/// Parses `P[nY][nM][nW][nD][T[nH][nM][n[.f]S]]` (components may be
/// negative or fractional), an optional leading `-` negating everything,
/// and the alternative form `PYYYY-MM-DDThh:mm:ss[.f]`.
pub fn parse(text: &str) -> Result<Duration> {
    let bad = || bad_duration(text);
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let body = body.strip_prefix(['P', 'p']).ok_or_else(bad)?;
    if body.is_empty() {
        return Err(bad());
    }
    let d = if body.len() >= 4
        && body.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && body.as_bytes().get(4).is_some_and(|b| *b == b'-')
    {
        parse_alternative(body).ok_or_else(bad)?
    } else {
        parse_designators(body).ok_or_else(bad)?
    };
    if negative {
        negate(&d)
    } else {
        Ok(d)
    }
}

fn parse_designators(body: &str) -> Option<Duration> {
    let mut b = Builder::default();
    let (date_part, time_part) = match body.find(['T', 't']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mut seen_any = false;
    let mut num = String::new();
    for c in date_part.chars() {
        match c.to_ascii_uppercase() {
            'Y' | 'M' | 'W' | 'D' => {
                let a = parse_number(&num)?;
                num.clear();
                seen_any = true;
                match c.to_ascii_uppercase() {
                    'Y' => b.months(a, 12),
                    'M' => b.months(a, 1),
                    'W' => b.days(a, 7),
                    _ => b.days(a, 1),
                }
            }
            _ => num.push(c),
        }
    }
    if !num.is_empty() {
        return None;
    }
    if let Some(time_part) = time_part {
        if time_part.is_empty() {
            return None;
        }
        for c in time_part.chars() {
            match c.to_ascii_uppercase() {
                'H' | 'M' | 'S' => {
                    let a = parse_number(&num)?;
                    num.clear();
                    seen_any = true;
                    match c.to_ascii_uppercase() {
                        'H' => b.nanos(a, 3600 * NANOS),
                        'M' => b.nanos(a, 60 * NANOS),
                        _ => b.nanos(a, NANOS),
                    }
                }
                _ => num.push(c),
            }
        }
        if !num.is_empty() {
            return None;
        }
    }
    if !seen_any {
        return None;
    }
    b.build().ok()
}

/// `YYYY-MM-DDThh:mm:ss[.f]` as years, months, days, hours, minutes, seconds.
fn parse_alternative(body: &str) -> Option<Duration> {
    let (date, time) = match body.split_once(['T', 't']) {
        Some((d, t)) => (d, Some(t)),
        None => (body, None),
    };
    let mut parts = date.split('-');
    let y: i128 = parts.next()?.parse().ok()?;
    let m: i128 = parts.next()?.parse().ok()?;
    let d: i128 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || m > 12 || d > 31 {
        return None;
    }
    let mut nanos = 0i128;
    if let Some(time) = time {
        let (hms, frac) = match time.split_once('.') {
            Some((a, f)) => (a, f),
            None => (time, ""),
        };
        let mut fields = hms.split(':');
        let h: i128 = fields.next()?.parse().ok()?;
        let mi: i128 = fields.next().map_or(Some(0), |s| s.parse().ok())?;
        let s: i128 = fields.next().map_or(Some(0), |s| s.parse().ok())?;
        if h > 23 || mi > 59 || s > 59 || frac.len() > 9 {
            return None;
        }
        let f: i128 = if frac.is_empty() {
            0
        } else {
            frac.parse::<i128>().ok()? * 10i128.pow(9 - frac.len() as u32)
        };
        nanos = ((h * 60 + mi) * 60 + s) * NANOS + f;
    }
    normalized(y * 12 + m, d, 0, nanos).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn tck_construct_duration() {
        let cases: &[(&[(&str, Value)], &str)] = &[
            (
                &[
                    ("days", 14.into()),
                    ("hours", 16.into()),
                    ("minutes", 12.into()),
                ],
                "P14DT16H12M",
            ),
            (&[("months", 5.into()), ("days", 1.5.into())], "P5M1DT12H"),
            (&[("months", 0.75.into())], "P22DT19H51M49.5S"),
            (&[("weeks", 2.5.into())], "P17DT12H"),
            (
                &[
                    ("years", 12.into()),
                    ("months", 5.into()),
                    ("days", 14.into()),
                    ("hours", 16.into()),
                    ("minutes", 12.into()),
                    ("seconds", 70.into()),
                ],
                "P12Y5M14DT16H13M10S",
            ),
            (
                &[
                    ("days", 14.into()),
                    ("seconds", 70.into()),
                    ("milliseconds", 1.into()),
                ],
                "P14DT1M10.001S",
            ),
            (
                &[
                    ("days", 14.into()),
                    ("seconds", 70.into()),
                    ("nanoseconds", 1.into()),
                ],
                "P14DT1M10.000000001S",
            ),
            (&[("minutes", 1.5.into()), ("seconds", 1.into())], "PT1M31S"),
            (
                &[("seconds", 2.into()), ("milliseconds", (-1).into())],
                "PT1.999S",
            ),
            (
                &[("seconds", (-2).into()), ("milliseconds", 1.into())],
                "PT-1.999S",
            ),
            (
                &[("seconds", (-2).into()), ("milliseconds", (-1).into())],
                "PT-2.001S",
            ),
            (
                &[("days", 1.into()), ("milliseconds", (-1).into())],
                "P1DT-0.001S",
            ),
            (
                &[("seconds", (-60).into()), ("milliseconds", (-1).into())],
                "PT-1M-0.001S",
            ),
            (
                &[
                    ("years", 12.into()),
                    ("months", 5.into()),
                    ("days", (-14).into()),
                    ("hours", 16.into()),
                ],
                "P12Y5M-14DT16H",
            ),
            (
                &[("minutes", 12.into()), ("seconds", (-60).into())],
                "PT11M",
            ),
        ];
        for (m, expected) in cases {
            let d = from_map(&map(m)).unwrap();
            assert_eq!(d.to_string(), *expected, "{m:?}");
            assert_eq!(parse(expected).unwrap(), d, "round trip of {expected}");
        }
    }

    #[test]
    fn parses_iso_forms() {
        assert_eq!(
            parse("P1Y2M10DT12H45M30.5S").unwrap().to_string(),
            "P1Y2M10DT12H45M30.5S"
        );
        assert_eq!(
            parse("P2012-02-02T14:37:21.545").unwrap().to_string(),
            "P2012Y2M2DT14H37M21.545S"
        );
        assert_eq!(parse("PT0.5S").unwrap().to_string(), "PT0.5S");
        assert_eq!(parse("-PT1S").unwrap().to_string(), "PT-1S");
        assert_eq!(parse("P3W").unwrap().to_string(), "P21D");
        assert!(parse("P").is_err());
        assert!(parse("PT").is_err());
        assert!(parse("1Y").is_err());
    }

    #[test]
    fn arithmetic() {
        let d = from_map(&map(&[
            ("seconds", 1.into()),
            ("nanoseconds", 500_000_000.into()),
        ]))
        .unwrap();
        assert_eq!(mul_int(&d, -1).unwrap().to_string(), "PT-1.5S");
        assert_eq!(mul_float(&d, 0.5).unwrap().to_string(), "PT0.75S");
        let month = from_map(&map(&[("months", 1.into())])).unwrap();
        assert_eq!(mul_float(&month, 0.5).unwrap().to_string(), "P15DT5H14M33S");
        assert!(mul_int(
            &Duration {
                months: i64::MAX,
                ..Duration::default()
            },
            2
        )
        .is_err());
    }
}
