//! Proleptic Gregorian calendar arithmetic on epoch days (`i64`, days since
//! 1970-01-01), including ISO week dates, quarters and ordinal days.

pub(crate) use rhizome_common::temporal::{civil_from_days as ymd, days_from_civil as days};

/// Years Cypher accepts (as Neo4j: ±999,999,999).
pub(crate) const MAX_YEAR: i64 = 999_999_999;

/// True for leap years.
pub(crate) fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// Days in a month of a year.
pub(crate) fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// Days in a year.
pub(crate) fn days_in_year(y: i64) -> i64 {
    if is_leap(y) {
        366
    } else {
        365
    }
}

/// ISO day of week, 1 = Monday .. 7 = Sunday.
pub(crate) fn weekday(d: i64) -> i64 {
    (d + 3).rem_euclid(7) + 1
}

/// ISO week date `(week-based year, week, day of week)`.
pub(crate) fn week_date(d: i64) -> (i64, i64, i64) {
    let dow = weekday(d);
    let thursday = d - (dow - 1) + 3;
    let (wy, _, _) = ymd(thursday);
    let week = (thursday - days(wy, 1, 1)) / 7 + 1;
    (wy, week, dow)
}

/// Epoch day of the Monday of week 1 of a week-based year.
pub(crate) fn week_one_monday(wy: i64) -> i64 {
    let jan4 = days(wy, 1, 4);
    jan4 - (weekday(jan4) - 1)
}

/// Number of ISO weeks (52 or 53) in a week-based year.
pub(crate) fn weeks_in_year(wy: i64) -> i64 {
    (week_one_monday(wy + 1) - week_one_monday(wy)) / 7
}

/// Quarter (1..4) of a month.
pub(crate) fn quarter_of(m: u32) -> u32 {
    (m - 1) / 3 + 1
}

/// First epoch day of a quarter.
pub(crate) fn quarter_start(y: i64, q: u32) -> i64 {
    days(y, (q - 1) * 3 + 1, 1)
}

/// Number of days in a quarter.
pub(crate) fn days_in_quarter(y: i64, q: u32) -> i64 {
    let next = if q == 4 {
        days(y + 1, 1, 1)
    } else {
        quarter_start(y, q + 1)
    };
    next - quarter_start(y, q)
}

/// Adds months to a date, clamping the day to the end of the month (as
/// `2020-01-31 + P1M = 2020-02-29`).
pub(crate) fn plus_months(d: i64, months: i64) -> i64 {
    let (y, m, day) = ymd(d);
    let total = y * 12 + (m as i64 - 1) + months;
    let (ny, nm) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32);
    days(ny, nm, day.min(days_in_month(ny, nm)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn week_dates() {
        // 1984-01-01 is a Sunday in week 52 of 1983.
        assert_eq!(week_date(days(1984, 1, 1)), (1983, 52, 7));
        assert_eq!(week_date(days(1984, 10, 11)), (1984, 41, 4));
        assert_eq!(ymd(week_one_monday(1817)), (1816, 12, 30));
        assert_eq!(weeks_in_year(1818), 53);
        assert_eq!(weeks_in_year(1817), 52);
    }

    #[test]
    fn month_arithmetic_clamps() {
        assert_eq!(ymd(plus_months(days(2020, 1, 31), 1)), (2020, 2, 29));
        assert_eq!(ymd(plus_months(days(2020, 3, 31), -13)), (2019, 2, 28));
    }
}
