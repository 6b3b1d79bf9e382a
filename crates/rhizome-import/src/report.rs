//! The summary of an import.

use std::time::Duration;

/// What an import did. Counts are exact; `rows` counts every data row read
/// (node and relationship rows, skipped ones included).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportReport {
    /// Nodes per label, in label id order (a node with two labels counts in both).
    pub label_counts: Vec<(String, u64)>,
    /// Relationships per type, in type id order.
    pub type_counts: Vec<(String, u64)>,
    /// Nodes written.
    pub nodes: u64,
    /// Relationships written.
    pub relationships: u64,
    /// Node rows left out because their id was a duplicate (`--skip-duplicate-nodes`).
    pub skipped_nodes: u64,
    /// Relationship rows left out because an endpoint was unknown (`--skip-bad-relationships`).
    pub skipped_relationships: u64,
    /// Data rows read.
    pub rows: u64,
    /// Wall-clock time of the whole import, writing included.
    pub elapsed: Duration,
    /// Peak resident memory of the process (VmHWM) at the end, in bytes; 0 where unknown.
    pub peak_memory_bytes: u64,
    /// Size of the database directory's files.
    pub bytes_on_disk: u64,
}

impl ImportReport {
    /// Rows read per second of `elapsed`.
    pub fn rows_per_second(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.rows as f64 / secs
        } else {
            0.0
        }
    }

    /// The human summary `rhizome import` prints: totals, time, rate, counts
    /// per label and type, skipped rows, peak memory and size on disk.
    pub fn render(&self) -> String {
        let mut out = format!(
            "Imported {} nodes and {} relationships in {:.2} s ({} rows/s)\n",
            group_digits(self.nodes),
            group_digits(self.relationships),
            self.elapsed.as_secs_f64(),
            group_digits(self.rows_per_second().round() as u64)
        );
        let width = self
            .label_counts
            .iter()
            .chain(&self.type_counts)
            .map(|(name, _)| name.len())
            .max()
            .unwrap_or(0);
        if !self.label_counts.is_empty() {
            out.push_str("Nodes by label:\n");
            for (name, count) in &self.label_counts {
                out.push_str(&format!("  {name:<width$}  {:>12}\n", group_digits(*count)));
            }
        }
        if !self.type_counts.is_empty() {
            out.push_str("Relationships by type:\n");
            for (name, count) in &self.type_counts {
                out.push_str(&format!("  {name:<width$}  {:>12}\n", group_digits(*count)));
            }
        }
        if self.skipped_nodes > 0 || self.skipped_relationships > 0 {
            out.push_str(&format!(
                "Skipped: {} duplicate nodes, {} relationships with unknown endpoints\n",
                group_digits(self.skipped_nodes),
                group_digits(self.skipped_relationships)
            ));
        }
        out.push_str(&format!(
            "Rows read: {}; peak memory: {}; on disk: {}",
            group_digits(self.rows),
            human_bytes(self.peak_memory_bytes),
            human_bytes(self.bytes_on_disk)
        ));
        if self.relationships > 0 {
            out.push_str(&format!(
                " ({:.1} bytes per relationship)",
                self.bytes_on_disk as f64 / self.relationships as f64
            ));
        }
        out.push('\n');
        out
    }
}

/// `1234567` as `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count with a binary unit (`12.3 MiB`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Peak resident set size of this process (`VmHWM` in `/proc/self/status`),
/// in bytes; 0 where unavailable.
pub fn peak_memory_bytes() -> u64 {
    read_status_kib("VmHWM:").map_or(0, |kib| kib * 1024)
}

fn read_status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Resets the peak resident set size of this process to its current size
/// (Linux `clear_refs` value 5), so that a following [`peak_memory_bytes`]
/// measures one phase. Returns false where unsupported.
pub fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_rates() {
        let report = ImportReport {
            label_counts: vec![("Person".into(), 1528), ("Message".into(), 286_744)],
            type_counts: vec![("KNOWS".into(), 14_073)],
            nodes: 288_272,
            relationships: 14_073,
            rows: 2_000_000,
            elapsed: Duration::from_secs(2),
            peak_memory_bytes: 3 * 1024 * 1024,
            bytes_on_disk: 2048,
            ..ImportReport::default()
        };
        assert_eq!(report.rows_per_second(), 1_000_000.0);
        let text = report.render();
        assert!(
            text.starts_with(
                "Imported 288,272 nodes and 14,073 relationships in 2.00 s (1,000,000 rows/s)"
            ),
            "{text}"
        );
        assert!(
            text.contains("  Message   286,744")
                || text.contains("Message") && text.contains("286,744"),
            "{text}"
        );
        assert!(
            text.contains("peak memory: 3.0 MiB; on disk: 2.0 KiB"),
            "{text}"
        );
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(999), "999");
    }

    #[test]
    fn reads_peak_memory() {
        if cfg!(target_os = "linux") {
            assert!(peak_memory_bytes() > 0);
        }
    }
}
