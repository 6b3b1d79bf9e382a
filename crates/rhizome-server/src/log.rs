//! One line per event on standard error, with a UTC timestamp.

use std::time::{SystemTime, UNIX_EPOCH};

/// Writes one log line.
pub fn log(message: std::fmt::Arguments<'_>) {
    eprintln!("{} {message}", utc_timestamp(SystemTime::now()));
}

/// `time` as ISO 8601 in UTC with milliseconds: `2026-11-25T21:09:12.909Z`.
pub(crate) fn utc_timestamp(time: SystemTime) -> String {
    let now = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (y, m, d) = rhizome_common::temporal::civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s / 60 % 60,
        s % 60,
        now.subsec_millis()
    )
}
