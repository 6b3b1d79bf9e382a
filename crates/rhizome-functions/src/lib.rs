//! Cypher's value semantics and function library, as pure functions over
//! [`rhizome_common::Value`].
//!
//! The query runtime evaluates expressions by calling into this crate:
//!
//! - [`ops`]: operators (arithmetic, three-valued logic, equality,
//!   comparability, the total *orderability* of ORDER BY, the
//!   [`ops::GroupKey`] equivalence of DISTINCT and grouping, string predicates,
//!   regular expressions, indexing, slicing and property access).
//! - [`functions`]: the scalar function library behind
//!   [`functions::call`], including every temporal constructor and the
//!   runtime [`functions::function_signature`] registry.
//! - [`aggregate`]: aggregate functions as mergeable accumulators for a
//!   parallel runtime.
//! - [`temporal`]: calendar and time-zone arithmetic and ISO 8601 parsing
//!   used by the functions and operators.
//! - [`display`]: printing values exactly in the openCypher TCK's
//!   expected-result syntax.
//!
//! Graph entities are reached only through the [`EntityAccess`] trait, so
//! every function here is usable over native storage, external sources, or no
//! graph at all ([`NoGraph`]).
//!
//! Errors follow the TCK vocabulary: `TypeError`, `ArgumentError` and
//! `ArithmeticError` kinds with detail codes such as `InvalidArgumentType`,
//! `InvalidArgumentValue` and `NumberOutOfRange`.

pub mod aggregate;
pub mod display;
mod entity;
mod errors;
pub mod functions;
pub mod ops;
pub mod temporal;

pub use entity::{EntityAccess, NoGraph};
