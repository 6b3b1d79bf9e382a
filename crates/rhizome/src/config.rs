//! Where the command keeps its files and which environment variables it reads.
//!
//! * `RHIZOME_THREADS`: default worker threads when `--threads` is not given
//!   (otherwise one per core).
//! * `XDG_DATA_HOME` (else `~/.local/share`): the per-user data directory
//!   `rhizome/` holding the demo database and the shell history.
//! * `RHIZOME_HISTORY`: the shell history file (empty: no history).

use rhizome_common::{Error, ErrorKind, Result};
use std::path::PathBuf;

/// Default worker threads: `RHIZOME_THREADS` if set to a positive number,
/// else one per core.
pub fn default_threads() -> usize {
    std::env::var("RHIZOME_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `$XDG_DATA_HOME/rhizome`, or `$HOME/.local/share/rhizome`.
pub fn data_dir() -> Result<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = match xdg {
        Some(dir) => dir,
        None => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(home) => PathBuf::from(home).join(".local").join("share"),
            None => {
                return Err(Error::new(
                    ErrorKind::ArgumentError,
                    "cannot find a per-user data directory: set XDG_DATA_HOME or HOME, \
                     or pass a directory explicitly",
                ))
            }
        },
    };
    Ok(base.join("rhizome"))
}

/// The demo database's default directory.
pub fn default_demo_dir() -> Result<PathBuf> {
    Ok(data_dir()?.join("demo"))
}

/// The shell history file, `None` when history is disabled or there is no
/// data directory.
pub fn history_file() -> Option<PathBuf> {
    match std::env::var_os("RHIZOME_HISTORY") {
        Some(path) if path.is_empty() => None,
        Some(path) => Some(PathBuf::from(path)),
        None => data_dir().ok().map(|d| d.join("shell_history")),
    }
}
