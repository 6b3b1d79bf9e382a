//! Types shared by every layer of Rhizome: property [`Value`]s and their
//! temporal members, entity ids, and the positioned, classified [`Error`].
//!
//! Nothing here depends on storage, the query language or the runtime, so every
//! other crate can depend on this one without cycles.

pub mod error;
pub mod hash;
pub mod ids;
pub mod memory;
pub mod prefetch;
pub mod temporal;
pub mod value;
pub mod vocabulary;

pub use error::{Error, ErrorKind, Position, Result};
pub use hash::{IdBuildHasher, IdHasher};
pub use ids::{NodeId, RelId};
pub use prefetch::prefetch;
pub use temporal::{Date, DateTime, Duration, LocalDateTime, LocalTime, Time};
pub use value::{PathValue, Value};
pub use vocabulary::{AggregateKind, Quantifier, ShortestPathKind, UnaryOp};
