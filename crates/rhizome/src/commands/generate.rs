//! `rhizome generate`.
use crate::cli::GenerateCommand;
use crate::Failure;

/// Runs `rhizome generate`.
pub fn run(_args: GenerateCommand) -> Result<(), Failure> {
    Err(rhizome_common::Error::internal("TODO").into())
}
