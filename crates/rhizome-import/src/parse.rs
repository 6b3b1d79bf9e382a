//! Field values: parsing typed fields from bytes into column chunks.
//!
//! Rules (as `neo4j-admin database import`): an empty field sets no property,
//! except in a string column without `--ignore-empty-strings`, where it is the
//! empty string. Numbers, booleans and temporal values may be surrounded by
//! spaces. Array fields split on the array delimiter; empty elements are kept
//! in string arrays (unless empty strings are ignored) and skipped in others.

use crate::header::{PropertyType, ScalarKind};
use rhizome_common::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time, Value};
use rhizome_storage::column::ColumnBuilder;

/// Settings that affect how a field is read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldRules {
    /// Separator of array elements.
    pub array_delimiter: u8,
    /// Empty fields set no property in string columns too.
    pub ignore_empty_strings: bool,
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// Shows a field in an error message (shortened, lossy UTF-8).
pub(crate) fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() > 40 {
        format!("{}...", text.chars().take(40).collect::<String>())
    } else {
        text.into_owned()
    }
}

/// Parses a decimal 64-bit integer (optional sign, optional surrounding spaces).
#[inline]
pub(crate) fn parse_i64(bytes: &[u8]) -> Option<i64> {
    let bytes = match bytes {
        [b' ' | b'\t', ..] | [.., b' ' | b'\t'] => trim(bytes),
        _ => bytes,
    };
    let (negative, digits) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut value: u64 = 0;
    if digits.len() <= 18 {
        // At most 18 digits cannot overflow a u64.
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            value = value * 10 + d as u64;
        }
    } else {
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            value = value.checked_mul(10)?.checked_add(d as u64)?;
        }
    }
    if negative {
        if value > i64::MAX as u64 + 1 {
            None
        } else {
            Some((value as i64).wrapping_neg())
        }
    } else {
        i64::try_from(value).ok()
    }
}

/// Parses a float. Plain decimals with at most 15 significant digits
/// (`-12.345`) take an exact fast path: the digits as an integer and a power
/// of ten are both exact doubles, so one IEEE division is correctly rounded
/// (Clinger's fast path). Everything else goes to the standard library.
#[inline]
pub(crate) fn parse_float(bytes: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (negative, digits) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    if !digits.is_empty() && digits.len() <= 16 {
        let mut mantissa: u64 = 0;
        let mut count = 0usize;
        let mut fraction_digits = None;
        let mut plain = true;
        for (i, &b) in digits.iter().enumerate() {
            match b {
                b'0'..=b'9' => {
                    mantissa = mantissa * 10 + (b - b'0') as u64;
                    count += 1;
                }
                b'.' if fraction_digits.is_none() && i + 1 < digits.len() && i > 0 => {
                    fraction_digits = Some(digits.len() - i - 1)
                }
                _ => {
                    plain = false;
                    break;
                }
            }
        }
        if plain && count <= 15 {
            let value = mantissa as f64 / POW10[fraction_digits.unwrap_or(0)];
            return Some(if negative { -value } else { value });
        }
    }
    std::str::from_utf8(trim(bytes)).ok()?.parse::<f64>().ok()
}

fn parse_bool(bytes: &[u8]) -> Option<bool> {
    let t = trim(bytes);
    if t.eq_ignore_ascii_case(b"true") {
        Some(true)
    } else if t.eq_ignore_ascii_case(b"false") {
        Some(false)
    } else {
        None
    }
}

fn utf8(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|_| format!("`{}` is not valid UTF-8", show(bytes)))
}

/// Parses an ISO 8601 duration `[-]P[nY][nM][nW][nD][T[nH][nM][n[.f]S]]`.
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let body = text.strip_prefix('P').or_else(|| text.strip_prefix('p'))?;
    let (date_part, time_part) = match body.find(['T', 't']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (mut months, mut days, mut seconds, mut nanos) = (0i64, 0i64, 0i64, 0i64);
    let mut any = false;
    let mut number = String::new();
    for c in date_part.chars() {
        if c.is_ascii_digit() || c == '-' {
            number.push(c);
            continue;
        }
        let n: i64 = number.parse().ok()?;
        number.clear();
        any = true;
        match c.to_ascii_uppercase() {
            'Y' => months = months.checked_add(n.checked_mul(12)?)?,
            'M' => months = months.checked_add(n)?,
            'W' => days = days.checked_add(n.checked_mul(7)?)?,
            'D' => days = days.checked_add(n)?,
            _ => return None,
        }
    }
    if !number.is_empty() {
        return None;
    }
    if let Some(time) = time_part {
        if time.is_empty() {
            return None;
        }
        for c in time.chars() {
            if c.is_ascii_digit() || c == '-' || c == '.' {
                number.push(c);
                continue;
            }
            any = true;
            match c.to_ascii_uppercase() {
                'H' => {
                    seconds = seconds.checked_add(number.parse::<i64>().ok()?.checked_mul(3600)?)?
                }
                'M' => {
                    seconds = seconds.checked_add(number.parse::<i64>().ok()?.checked_mul(60)?)?
                }
                'S' => {
                    let (whole, frac) = match number.find('.') {
                        Some(i) => (&number[..i], &number[i + 1..]),
                        None => (number.as_str(), ""),
                    };
                    let s: i64 = whole.parse().ok()?;
                    seconds = seconds.checked_add(s)?;
                    if !frac.is_empty() {
                        if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                            return None;
                        }
                        let f: i64 = frac.parse().ok()?;
                        let f = f * 10i64.pow(9 - frac.len() as u32);
                        nanos = if whole.starts_with('-') { -f } else { f };
                    }
                }
                _ => return None,
            }
            number.clear();
        }
        if !number.is_empty() {
            return None;
        }
    }
    if !any {
        return None;
    }
    let sign = if negative { -1 } else { 1 };
    Some(Duration {
        months: months * sign,
        days: days * sign,
        seconds: seconds * sign,
        nanos: (nanos * sign) as i32,
    })
}

/// Parses a non-empty scalar field; `Err` holds the reason.
pub(crate) fn parse_scalar(kind: ScalarKind, bytes: &[u8]) -> Result<Value, String> {
    let bad = |what: &str| format!("`{}` is not {what}", show(bytes));
    let int_in = |min: i64, max: i64, what: &str| -> Result<Value, String> {
        let v = parse_i64(bytes).ok_or_else(|| bad(what))?;
        if v < min || v > max {
            return Err(format!("{v} is out of range for {what}"));
        }
        Ok(Value::Int(v))
    };
    Ok(match kind {
        ScalarKind::Long => int_in(i64::MIN, i64::MAX, "a long (64-bit integer)")?,
        ScalarKind::Int => int_in(i32::MIN as i64, i32::MAX as i64, "an int (32-bit integer)")?,
        ScalarKind::Short => int_in(i16::MIN as i64, i16::MAX as i64, "a short (16-bit integer)")?,
        ScalarKind::Byte => int_in(i8::MIN as i64, i8::MAX as i64, "a byte (8-bit integer)")?,
        ScalarKind::Float => Value::Float(parse_float(bytes).ok_or_else(|| bad("a number"))?),
        ScalarKind::Boolean => {
            Value::Bool(parse_bool(bytes).ok_or_else(|| bad("a boolean (true or false)"))?)
        }
        ScalarKind::String => Value::String(utf8(bytes)?.to_string()),
        ScalarKind::Date => Value::Date(Date::parse_iso(utf8(trim(bytes))?)?),
        ScalarKind::DateTime => Value::DateTime(DateTime::parse_iso(utf8(trim(bytes))?)?),
        ScalarKind::LocalDateTime => {
            let text = utf8(trim(bytes))?;
            let time = text.split_once('T').map_or("", |(_, t)| t);
            if time.contains(['Z', '+', '-']) {
                return Err(bad("a local date-time (it has an offset)"));
            }
            let dt = DateTime::parse_iso(text)?;
            Value::LocalDateTime(LocalDateTime {
                seconds: dt.seconds,
                nanos: dt.nanos,
            })
        }
        ScalarKind::LocalTime | ScalarKind::Time => {
            let text = utf8(trim(bytes))?;
            if !text.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
                return Err(bad("a time"));
            }
            let dt = DateTime::parse_iso(&format!("1970-01-01T{text}"))
                .map_err(|_| bad("a time of the form HH:MM[:SS[.f]]"))?;
            let local = dt.local();
            let nanos = local.seconds.rem_euclid(86_400) * 1_000_000_000 + local.nanos as i64;
            if kind == ScalarKind::LocalTime {
                if dt.offset_seconds != 0 || text.contains(['Z', '+', '-']) {
                    return Err(bad("a local time (it has an offset)"));
                }
                Value::LocalTime(LocalTime { nanos })
            } else {
                Value::Time(Time {
                    nanos,
                    offset_seconds: dt.offset_seconds,
                })
            }
        }
        ScalarKind::Duration => Value::Duration(
            parse_duration(utf8(trim(bytes))?)
                .ok_or_else(|| bad("an ISO 8601 duration such as P1DT2H"))?,
        ),
    })
}

/// The values of one property column for the rows of one block.
#[derive(Debug)]
pub(crate) enum ChunkValues {
    /// Integers (every integer type).
    Int(Vec<i64>),
    /// Floats.
    Float(Vec<f64>),
    /// Strings: row `i` is `text[ends[i-1]..ends[i]]`.
    Str {
        /// Concatenated strings.
        text: String,
        /// End offset of each row.
        ends: Vec<usize>,
    },
    /// Anything else (booleans, temporal values, arrays).
    Values(Vec<Value>),
}

/// A property column for the rows of one block: values plus presence.
#[derive(Debug)]
pub(crate) struct ColumnChunk {
    ty: PropertyType,
    present: Vec<bool>,
    values: ChunkValues,
}

impl ColumnChunk {
    /// An empty chunk for a column of type `ty`.
    pub(crate) fn new(ty: PropertyType) -> ColumnChunk {
        let values = match (ty.array, ty.scalar) {
            (false, ScalarKind::Long | ScalarKind::Int | ScalarKind::Short | ScalarKind::Byte) => {
                ChunkValues::Int(Vec::new())
            }
            (false, ScalarKind::Float) => ChunkValues::Float(Vec::new()),
            (false, ScalarKind::String) => ChunkValues::Str {
                text: String::new(),
                ends: Vec::new(),
            },
            _ => ChunkValues::Values(Vec::new()),
        };
        ColumnChunk {
            ty,
            present: Vec::new(),
            values,
        }
    }

    fn push_absent(&mut self) {
        self.present.push(false);
        match &mut self.values {
            ChunkValues::Int(v) => v.push(0),
            ChunkValues::Float(v) => v.push(0.0),
            ChunkValues::Str { text, ends } => ends.push(text.len()),
            ChunkValues::Values(v) => v.push(Value::Null),
        }
    }

    /// Parses `field` and appends it; `Err` holds the reason (the caller adds the position).
    #[inline]
    pub(crate) fn push_field(&mut self, field: &[u8], rules: FieldRules) -> Result<(), String> {
        if field.is_empty() {
            if self.ty.scalar == ScalarKind::String && !self.ty.array && !rules.ignore_empty_strings
            {
                if let ChunkValues::Str { text, ends } = &mut self.values {
                    ends.push(text.len());
                    self.present.push(true);
                    return Ok(());
                }
            }
            self.push_absent();
            return Ok(());
        }
        match &mut self.values {
            ChunkValues::Int(v) => {
                let value = match self.ty.scalar {
                    ScalarKind::Long => parse_i64(field).ok_or_else(|| {
                        format!("`{}` is not a long (64-bit integer)", show(field))
                    })?,
                    kind => match parse_scalar(kind, field)? {
                        Value::Int(i) => i,
                        _ => unreachable!("integer kinds parse to integers"),
                    },
                };
                v.push(value);
            }
            ChunkValues::Float(v) => {
                v.push(
                    parse_float(field)
                        .ok_or_else(|| format!("`{}` is not a number", show(field)))?,
                );
            }
            ChunkValues::Str { text, ends } => {
                text.push_str(utf8(field)?);
                ends.push(text.len());
            }
            ChunkValues::Values(v) => {
                let value = if self.ty.array {
                    let mut items = Vec::new();
                    for element in field.split(|&b| b == rules.array_delimiter) {
                        if element.is_empty()
                            && (self.ty.scalar != ScalarKind::String || rules.ignore_empty_strings)
                        {
                            continue;
                        }
                        items.push(parse_scalar(self.ty.scalar, element)?);
                    }
                    Value::List(items)
                } else {
                    parse_scalar(self.ty.scalar, field)?
                };
                v.push(value);
            }
        }
        self.present.push(true);
        Ok(())
    }

    /// Number of rows held.
    pub(crate) fn len(&self) -> usize {
        self.present.len()
    }

    /// Appends row `row` to `builder`.
    #[inline]
    pub(crate) fn append_row(&self, row: usize, builder: &mut ColumnBuilder) {
        if !self.present[row] {
            builder.push_null();
            return;
        }
        match &self.values {
            ChunkValues::Int(v) => builder.push_i64(v[row]),
            ChunkValues::Float(v) => builder.push_f64(v[row]),
            ChunkValues::Str { text, ends } => {
                let start = if row == 0 { 0 } else { ends[row - 1] };
                builder.push_str(&text[start..ends[row]]);
            }
            ChunkValues::Values(v) => builder.push(&v[row]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_storage::column::ColumnData;

    const RULES: FieldRules = FieldRules {
        array_delimiter: b';',
        ignore_empty_strings: false,
    };

    fn ty(scalar: ScalarKind, array: bool) -> PropertyType {
        PropertyType { scalar, array }
    }

    fn column(t: PropertyType, fields: &[&str], rules: FieldRules) -> Result<ColumnData, String> {
        let mut chunk = ColumnChunk::new(t);
        for f in fields {
            chunk.push_field(f.as_bytes(), rules)?;
        }
        let mut builder = ColumnBuilder::new();
        for row in 0..chunk.len() {
            chunk.append_row(row, &mut builder);
        }
        Ok(builder.finish())
    }

    fn values(t: PropertyType, fields: &[&str], rules: FieldRules) -> Vec<Value> {
        let data = column(t, fields, rules).unwrap();
        (0..data.rows()).map(|r| data.get(r)).collect()
    }

    #[test]
    fn integers() {
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b" 42 "), Some(42));
        assert_eq!(
            parse_i64(b"999999999999999999"),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(parse_i64(b"-000000000000000001"), Some(-1));
        assert_eq!(parse_i64(b"99999999999999999999"), None);
        assert_eq!(parse_i64(b"+7"), Some(7));
        assert_eq!(parse_i64(b"4x"), None);
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(
            values(ty(ScalarKind::Long, false), &["1", "", "-3"], RULES),
            vec![Value::Int(1), Value::Null, Value::Int(-3)]
        );
        assert!(column(ty(ScalarKind::Int, false), &["3000000000"], RULES)
            .unwrap_err()
            .contains("out of range"));
        assert!(column(ty(ScalarKind::Byte, false), &["128"], RULES).is_err());
        assert_eq!(
            values(ty(ScalarKind::Short, false), &["-32768"], RULES),
            vec![Value::Int(-32768)]
        );
        let err = column(ty(ScalarKind::Long, false), &["12a"], RULES).unwrap_err();
        assert_eq!(err, "`12a` is not a long (64-bit integer)");
    }

    #[test]
    fn float_fast_path_matches_the_standard_library() {
        let mut rng = crate::generate::SplitMix64::new(3);
        for _ in 0..20_000 {
            let whole = rng.below(1_000_000_000);
            let frac = rng.below(1_000_000);
            let places = rng.below(7) as usize;
            let text = match places {
                0 => format!("{whole}"),
                p => format!("{whole}.{:0width$}", frac % 10u64.pow(p as u32), width = p),
            };
            for t in [text.clone(), format!("-{text}")] {
                assert_eq!(
                    parse_float(t.as_bytes()).map(f64::to_bits),
                    Some(t.parse::<f64>().unwrap().to_bits()),
                    "{t}"
                );
            }
        }
        for t in [
            "0.1",
            "9.999",
            "1e5",
            "-0",
            "1234567890123456.5",
            ".5",
            "5.",
            "NaN",
            " 2.5 ",
            "1.2.3",
        ] {
            let bits = |x: Option<f64>| x.map(f64::to_bits);
            assert_eq!(
                bits(parse_float(t.as_bytes())),
                bits(t.trim().parse::<f64>().ok()),
                "{t}"
            );
        }
    }

    #[test]
    fn floats_booleans_strings() {
        assert_eq!(
            values(ty(ScalarKind::Float, false), &["1.5", "-2e3", ""], RULES),
            vec![Value::Float(1.5), Value::Float(-2000.0), Value::Null]
        );
        assert!(column(ty(ScalarKind::Float, false), &["1.2.3"], RULES).is_err());
        assert_eq!(
            values(
                ty(ScalarKind::Boolean, false),
                &["TRUE", "false", ""],
                RULES
            ),
            vec![Value::Bool(true), Value::Bool(false), Value::Null]
        );
        assert!(column(ty(ScalarKind::Boolean, false), &["yes"], RULES)
            .unwrap_err()
            .contains("boolean"));
        assert_eq!(
            values(ty(ScalarKind::String, false), &["a", "", "ä"], RULES),
            vec![
                Value::String("a".into()),
                Value::String(String::new()),
                Value::String("ä".into())
            ]
        );
        let ignore = FieldRules {
            ignore_empty_strings: true,
            ..RULES
        };
        assert_eq!(
            values(ty(ScalarKind::String, false), &["a", ""], ignore),
            vec![Value::String("a".into()), Value::Null]
        );
    }

    #[test]
    fn temporal_values() {
        assert_eq!(
            values(ty(ScalarKind::Date, false), &["2020-02-29"], RULES),
            vec![Value::Date(Date::from_ymd(2020, 2, 29).unwrap())]
        );
        assert!(column(ty(ScalarKind::Date, false), &["2021-02-29"], RULES).is_err());
        let dt = values(
            ty(ScalarKind::DateTime, false),
            &["2010-01-01T10:00:00.500+01:00"],
            RULES,
        );
        assert_eq!(
            dt,
            vec![Value::DateTime(
                DateTime::parse_iso("2010-01-01T10:00:00.500+01:00").unwrap()
            )]
        );
        assert_eq!(
            values(
                ty(ScalarKind::LocalDateTime, false),
                &["1970-01-02T00:00:01"],
                RULES
            ),
            vec![Value::LocalDateTime(LocalDateTime {
                seconds: 86_401,
                nanos: 0
            })]
        );
        assert!(column(
            ty(ScalarKind::LocalDateTime, false),
            &["1970-01-02T00:00:01Z"],
            RULES
        )
        .is_err());
        assert_eq!(
            values(ty(ScalarKind::LocalTime, false), &["01:02:03.5"], RULES),
            vec![Value::LocalTime(LocalTime {
                nanos: 3_723_500_000_000
            })]
        );
        assert_eq!(
            values(ty(ScalarKind::Time, false), &["01:00+02:00"], RULES),
            vec![Value::Time(Time {
                nanos: 3_600_000_000_000,
                offset_seconds: 7200
            })]
        );
        assert_eq!(
            values(
                ty(ScalarKind::Duration, false),
                &["P1Y2M3DT4H5M6.5S"],
                RULES
            ),
            vec![Value::Duration(Duration {
                months: 14,
                days: 3,
                seconds: 4 * 3600 + 5 * 60 + 6,
                nanos: 500_000_000
            })]
        );
        assert_eq!(
            parse_duration("P2W"),
            Some(Duration {
                months: 0,
                days: 14,
                seconds: 0,
                nanos: 0
            })
        );
        assert_eq!(parse_duration("P"), None);
        assert_eq!(parse_duration("PT"), None);
        assert!(column(ty(ScalarKind::Duration, false), &["1 day"], RULES).is_err());
    }

    #[test]
    fn arrays() {
        let list = |items: Vec<Value>| Value::List(items);
        let s = |x: &str| Value::String(x.to_string());
        assert_eq!(
            values(ty(ScalarKind::String, true), &["a;b", "", "x;;y"], RULES),
            vec![
                list(vec![s("a"), s("b")]),
                Value::Null,
                list(vec![s("x"), s(""), s("y")])
            ]
        );
        let ignore = FieldRules {
            ignore_empty_strings: true,
            ..RULES
        };
        assert_eq!(
            values(ty(ScalarKind::String, true), &["x;;y"], ignore),
            vec![list(vec![s("x"), s("y")])]
        );
        assert_eq!(
            values(ty(ScalarKind::Long, true), &["1;2;;3"], RULES),
            vec![list(vec![Value::Int(1), Value::Int(2), Value::Int(3)])]
        );
        assert_eq!(
            values(ty(ScalarKind::Float, true), &["1.5"], RULES),
            vec![list(vec![Value::Float(1.5)])]
        );
        assert_eq!(
            values(ty(ScalarKind::Boolean, true), &["true;false"], RULES),
            vec![list(vec![Value::Bool(true), Value::Bool(false)])]
        );
        assert!(column(ty(ScalarKind::Int, true), &["1;x"], RULES)
            .unwrap_err()
            .contains("`x`"));
        let pipe = FieldRules {
            array_delimiter: b'|',
            ..RULES
        };
        assert_eq!(
            values(ty(ScalarKind::Long, true), &["1|2"], pipe),
            vec![list(vec![Value::Int(1), Value::Int(2)])]
        );
    }
}
