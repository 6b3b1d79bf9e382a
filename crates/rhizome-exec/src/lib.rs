//! Rhizome's query runtime: runs a [`rhizome_plan::Plan`] over a storage
//! snapshot on the process-wide worker pool.
//!
//! The path of a query through this crate:
//! 1. [`compile`] resolves the plan's names against the snapshot once;
//! 2. [`pipeline::build`] cuts it into pipelines at breakers, mapping each
//!    plan node to a physical operator of [`ops`] (one per file);
//! 3. [`pipeline::drive`] runs the pipelines one after another on the
//!    [`scheduler`]'s pool, each source chunk a task, operators splitting
//!    work when workers are idle;
//! 4. the result sink turns the last pipeline's chunks into rows, on the
//!    workers that produce them, and collects them or streams them to a
//!    [`RowReceiver`].
//!
//! Every worker reads the same immutable snapshot. Cancellation (timeout,
//! caller, `LIMIT`) flows down the scope tree and stops queued and running
//! work within one chunk. A memory budget bounds what breakers hold.

//!
//! Layers, bottom up (no module imports one above it; `tests/module_graph.rs`
//! checks there is no import cycle): [`chunk`], [`rows`], [`stream`],
//! [`scheduler`], [`per_worker`], [`in_set`], [`compile`]; [`context`] (what a query
//! shares, including the [`context::SubqueryRunner`] handle through which
//! expressions run subqueries); [`operator`] (the source / operator / sink
//! roles and the task context); [`expr`] and [`vector`] (expression
//! evaluation); [`ops`] (the physical operators); [`pipeline`] (building and
//! driving); [`query`] and [`mod@write`] (entry points).

pub mod chunk;
pub mod compile;
pub mod context;
pub mod expr;
pub mod in_set;
mod int_kernels;
pub mod memo;
pub mod operator;
pub mod ops;
pub mod per_worker;
pub mod pipeline;
pub mod procedures;
pub mod query;
pub mod rows;
pub mod scheduler;
pub mod stream;
pub mod vector;
pub mod write;

pub use context::MemoryPool;
pub use query::{
    execute, execute_streaming, start_streaming, OnEnd, OperatorProfile, ProfileReport,
    QueryOptions, QueryResult, StatementSettings,
};
pub use rows::Rows;
pub use stream::{RowBlock, RowReceiver};
