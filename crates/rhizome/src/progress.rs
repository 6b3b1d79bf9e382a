//! The import progress bar: bytes read with rows and rows per second, drawn on
//! standard error only when it is a terminal (scripts and logs get nothing).

use indicatif::{HumanCount, ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// One bar per import stage; safe to advance from many threads.
pub struct ProgressDisplay {
    enabled: bool,
    stage: Mutex<Option<(ProgressBar, Instant)>>,
    rows: AtomicU64,
}

impl ProgressDisplay {
    /// A display that draws only if standard error is a terminal.
    pub fn for_stderr() -> ProgressDisplay {
        ProgressDisplay::new(std::io::stderr().is_terminal())
    }

    /// A display that draws if `enabled`.
    pub fn new(enabled: bool) -> ProgressDisplay {
        ProgressDisplay {
            enabled,
            stage: Mutex::new(None),
            rows: AtomicU64::new(0),
        }
    }

    fn current(&self) -> Option<(ProgressBar, Instant)> {
        self.stage.lock().ok()?.clone()
    }

    /// Starts a stage of `total_bytes` (0 when unknown: a spinner).
    pub fn begin_stage(&self, stage: &str, total_bytes: u64) {
        if !self.enabled {
            return;
        }
        self.end_stage();
        let bar = if total_bytes > 0 {
            ProgressBar::new(total_bytes).with_style(
                ProgressStyle::with_template(
                    "{prefix:>14} [{bar:30}] {bytes:>10}/{total_bytes:<10} {msg} ({eta})",
                )
                .expect("valid template")
                .progress_chars("=> "),
            )
        } else {
            ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{prefix:>14} {spinner} {msg} {elapsed}")
                    .expect("valid template"),
            )
        };
        bar.set_prefix(stage.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        self.rows.store(0, Ordering::Relaxed);
        if let Ok(mut slot) = self.stage.lock() {
            *slot = Some((bar, Instant::now()));
        }
    }

    /// Records `bytes` more read and `rows` more processed.
    pub fn advance_stage(&self, bytes: u64, rows: u64) {
        if !self.enabled {
            return;
        }
        let total = self.rows.fetch_add(rows, Ordering::Relaxed) + rows;
        if let Some((bar, started)) = self.current() {
            bar.inc(bytes);
            let secs = started.elapsed().as_secs_f64().max(1e-3);
            let rate = (total as f64 / secs) as u64;
            bar.set_message(format!(
                "{} rows, {} rows/s",
                HumanCount(total),
                HumanCount(rate)
            ));
        }
    }

    /// Ends the current stage, leaving its final line on screen.
    pub fn end_stage(&self) {
        let taken = self.stage.lock().ok().and_then(|mut slot| slot.take());
        if let Some((bar, _)) = taken {
            bar.finish();
        }
    }
}

impl rhizome_import::ImportProgress for ProgressDisplay {
    fn begin(&self, stage: &str, total_bytes: u64) {
        self.begin_stage(stage, total_bytes);
    }

    fn advance(&self, bytes: u64, rows: u64) {
        self.advance_stage(bytes, rows);
    }

    fn end(&self) {
        self.end_stage();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_display_ignores_everything() {
        let p = ProgressDisplay::new(false);
        p.begin_stage("nodes", 100);
        p.advance_stage(10, 5);
        p.end_stage();
        assert!(p.current().is_none());
    }

    #[test]
    fn enabled_display_tracks_one_stage_at_a_time() {
        let p = ProgressDisplay::new(true);
        p.begin_stage("nodes", 100);
        p.advance_stage(40, 7);
        let (bar, _) = p.current().unwrap();
        assert_eq!(bar.position(), 40);
        assert_eq!(p.rows.load(Ordering::Relaxed), 7);
        p.begin_stage("relationships", 0);
        assert_eq!(p.rows.load(Ordering::Relaxed), 0);
        p.end_stage();
        assert!(p.current().is_none());
    }
}
