//! Native graph storage for Rhizome.
//!
//! A database is a directory: a `manifest.json` and an immutable segment
//! file of aligned arrays, opened by memory mapping. Inside:
//! - dense node ids; each imported label group is a contiguous id range and
//!   label membership is a set of id ranges ([`labels`]);
//! - per relationship type, outgoing and incoming adjacency in CSR form with
//!   relationship properties in outgoing order ([`csr`]);
//! - typed property columns with validity bitmaps, sparse where rare ([`column`]);
//! - property indexes sorted by value ([`index`]) and planner [`stats`].
//!
//! New databases are written by [`builder::GraphBuilder`]; reading goes
//! through [`Database::snapshot`], a [`GraphRead`] handle shared by all
//! threads of a query.

pub mod builder;
pub mod catalog;
mod check;
pub mod codec;
pub mod column;
pub mod csr;
pub mod database;
pub mod index;
pub mod labels;
pub mod manifest;
pub mod segment;
pub mod snapshot;
pub mod stats;

pub use builder::{GraphBuilder, NodeGroupInput, RelGroupInput, RowLabels, WriteSummary};
pub use catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
pub use database::Database;
pub use snapshot::{Adjacency, Direction, GraphRead, NeighbourBatch, RelInfo, Snapshot};
pub use stats::Statistics;
