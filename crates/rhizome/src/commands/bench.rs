//! `rhizome bench`.
use crate::cli::BenchCommand;
use crate::Failure;

/// Runs `rhizome bench`.
pub fn run(_args: BenchCommand) -> Result<(), Failure> {
    Err(rhizome_common::Error::internal("TODO").into())
}
