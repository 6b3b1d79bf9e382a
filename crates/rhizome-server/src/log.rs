//! One line per event on standard error, with a UTC timestamp.

use std::time::{SystemTime, UNIX_EPOCH};

/// Writes one log line.
pub fn log(message: std::fmt::Arguments<'_>) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (y, m, d) = rhizome_common::temporal::civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    eprintln!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z {message}",
        s / 3600,
        s / 60 % 60,
        s % 60,
        now.subsec_millis()
    );
}
