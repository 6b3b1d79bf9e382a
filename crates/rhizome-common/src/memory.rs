//! Memory sizes as people write them (`512MiB`, `2GB`, `1.5g`) and the
//! memory this machine (or its container) has, for the memory limits of
//! queries.

/// Parses a size: a number with an optional unit. `KiB`, `MiB`, `GiB`,
/// `TiB` and the bare `K`, `M`, `G`, `T` are powers of 1024 (as Neo4j's
/// `2g`); `KB`, `MB`, `GB`, `TB` are powers of 1000; no unit or `B` is
/// bytes. Units are case-insensitive, a space before them is allowed.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || {
        format!(
            "`{text}` is not a size: write a number of bytes with an optional unit, \
             such as 512MiB, 2GB or 4G"
        )
    };
    let number: f64 = number.parse().map_err(|_| bad())?;
    let factor: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return Err(bad()),
    };
    let bytes = number * factor;
    if !bytes.is_finite() || bytes < 1.0 || bytes >= usize::MAX as f64 {
        return Err(format!("`{text}` is not a usable size (at least 1 byte)"));
    }
    Ok(bytes as usize)
}

/// `bytes` for people: `512.0 MiB`, `2.0 GiB`.
pub fn format_size(bytes: usize) -> String {
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

/// The memory this process may use: the machine's (`MemTotal` of
/// `/proc/meminfo`), or its cgroup's limit if that is lower. `None` where
/// neither can be read (then callers set no default limit).
pub fn available_memory() -> Option<usize> {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        });
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|path| {
        std::fs::read_to_string(path)
            .ok()?
            .trim()
            .parse::<usize>()
            .ok()
    });
    match (machine, cgroup) {
        (Some(m), Some(c)) => Some(m.min(c)),
        (m, c) => m.or(c),
    }
}

/// The share of the memory one query may hold unless told otherwise
/// (the command line and the server).
pub const DEFAULT_QUERY_SHARE: f64 = 0.5;

/// `share` of [`available_memory`] (`None` if that cannot be read).
pub fn share_of_memory(share: f64) -> Option<usize> {
    available_memory().map(|m| (m as f64 * share) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_binary_and_decimal_units() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("4g"), Ok(4 << 30));
        assert_eq!(parse_size("1.5 GiB"), Ok(3 << 29));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("64kb"), Ok(64_000));
        for bad in ["", "MiB", "12 parsecs", "-1G", "0", "1e400", "1..2M"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formatting_and_the_machine() {
        assert_eq!(format_size(512 << 20), "512.0 MiB");
        assert_eq!(format_size(100), "100 B");
        if cfg!(target_os = "linux") {
            assert!(available_memory().is_some_and(|m| m > 1 << 20));
        }
    }
}
