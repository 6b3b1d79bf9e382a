//! Where the database is written: a temporary directory beside the
//! destination, renamed into place only when complete.
//!
//! Guarantees: a failed import leaves no directory behind (the temporary one
//! is removed when [`Staging`] is dropped uncommitted) and never touches an
//! existing database; with `overwrite`, the old database is moved aside only
//! after the new one is fully written and fsynced, then deleted.

use rhizome_common::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};

/// A database being written.
#[derive(Debug)]
pub(crate) struct Staging {
    destination: PathBuf,
    temp: PathBuf,
    committed: bool,
}

fn io(path: &Path, err: std::io::Error) -> Error {
    Error::io(path.display(), err)
}

fn non_empty_dir(path: &Path) -> Result<bool> {
    if !path.exists() {
        return Ok(false);
    }
    if !path.is_dir() {
        return Err(Error::new(
            ErrorKind::ArgumentError,
            format!(
                "destination {} exists and is not a directory",
                path.display()
            ),
        ));
    }
    Ok(std::fs::read_dir(path)
        .map_err(|e| io(path, e))?
        .next()
        .is_some())
}

impl Staging {
    /// Checks the destination and picks the temporary directory (not created:
    /// storage creates it). Errors if `destination` is a non-empty directory
    /// and `overwrite` is false, or is a file.
    pub(crate) fn prepare(destination: &Path, overwrite: bool) -> Result<Staging> {
        if non_empty_dir(destination)? && !overwrite {
            return Err(Error::new(
                ErrorKind::ArgumentError,
                format!(
                    "destination {} exists and is not empty; use --overwrite-destination to replace it",
                    destination.display()
                ),
            ));
        }
        let name = destination
            .file_name()
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::ArgumentError,
                    format!("invalid destination {}", destination.display()),
                )
            })?
            .to_string_lossy()
            .into_owned();
        let parent = match destination.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = parent.join(format!(".{name}.importing-{}-{nanos}", std::process::id()));
        Ok(Staging {
            destination: destination.to_path_buf(),
            temp,
            committed: false,
        })
    }

    /// The directory to write the new database into. Creates the
    /// destination's parent directories (only now, so that a failed import
    /// creates nothing).
    pub(crate) fn temp_dir(&self) -> Result<&Path> {
        if let Some(parent) = self.temp.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        Ok(&self.temp)
    }

    /// Moves the finished database into place, replacing an existing one
    /// (checked again: it may have appeared meanwhile).
    pub(crate) fn commit(mut self, overwrite: bool) -> Result<()> {
        let dest = self.destination.clone();
        let mut old = None;
        if dest.exists() {
            if non_empty_dir(&dest)? {
                if !overwrite {
                    return Err(Error::new(
                        ErrorKind::ArgumentError,
                        format!("destination {} exists and is not empty; use --overwrite-destination to replace it", dest.display()),
                    ));
                }
                let aside = self.temp.with_file_name(
                    self.temp
                        .file_name()
                        .map(|n| n.to_string_lossy().replace(".importing-", ".replaced-"))
                        .unwrap_or_default(),
                );
                std::fs::rename(&dest, &aside).map_err(|e| io(&dest, e))?;
                old = Some(aside);
            } else {
                std::fs::remove_dir(&dest).map_err(|e| io(&dest, e))?;
            }
        }
        if let Err(e) = std::fs::rename(&self.temp, &dest) {
            // Put the old database back before reporting.
            if let Some(aside) = &old {
                let _ = std::fs::rename(aside, &dest);
            }
            return Err(io(&dest, e));
        }
        self.committed = true;
        if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
            if let Ok(dir) = std::fs::File::open(parent) {
                let _ = dir.sync_all();
            }
        }
        if let Some(aside) = old {
            std::fs::remove_dir_all(&aside).map_err(|e| io(&aside, e))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed && self.temp.exists() {
            let _ = std::fs::remove_dir_all(&self.temp);
        }
    }
}
