//! `rhizome import`.
use crate::cli::ImportArgs;
use crate::Failure;

/// Runs `rhizome import`.
pub fn run(_args: ImportArgs) -> Result<(), Failure> {
    Err(rhizome_common::Error::internal("TODO").into())
}
