//! `rhizome demo`.
use crate::cli::DemoArgs;
use crate::Failure;

/// Runs `rhizome demo`.
pub fn run(_args: DemoArgs) -> Result<(), Failure> {
    Err(rhizome_common::Error::internal("TODO").into())
}
