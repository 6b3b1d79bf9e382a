//! Native graph storage for Rhizome.
//!
//! A database is a directory: a `manifest.json` and an immutable segment
//! file of aligned arrays, opened by memory mapping. Inside:
//! - dense node ids; each imported label group is a contiguous id range and
//!   label membership is a set of id ranges ([`labels`]);
//! - per relationship type, outgoing and incoming adjacency in CSR form with
//!   relationship properties in outgoing order ([`csr`]);
//! - typed property columns with validity bitmaps, sparse where rare ([`column`](mod@column));
//! - property indexes sorted by value ([`index`]) and planner [`stats`].
//!
//! New databases are written by [`builder::GraphBuilder`]; reading goes
//! through [`Database::snapshot`], a [`GraphRead`] handle shared by all
//! threads of a query.
//!
//! Writes: [`Database::begin_write`] starts the single [`WriteTxn`]; its
//! changes go to the [`delta`] layer over the immutable base and become
//! visible atomically at commit, after their record in the write-ahead log
//! ([`wal`]) is durable. A checkpoint saves the delta as a delta file
//! ([`deltafile`], ids kept) or, when it has grown large, merges base +
//! delta into a new segment ([`checkpoint`]). See `txn` for the lock protocol and `wal` for the durability
//! guarantees.
//!
//! A database of an older on-disk format is refused when opened and
//! converted on request by [`upgrade()`] (`rhizome upgrade`).
//!
//! Many processes may open one directory: writers of all of them take turns
//! through an OS file lock ([`lock`]), and every snapshot first replays what
//! other processes committed (`follow`).

mod autocheckpoint;
mod backup;
pub mod builder;
pub mod catalog;
mod check;
pub mod checkpoint;
pub mod codec;
pub mod column;
pub mod csr;
pub mod database;
pub mod delta;
pub mod deltafile;
pub mod external;
mod follow;
pub mod index;
pub mod io;
pub mod labels;
pub mod lock;
pub mod manifest;
pub mod nodelist;
mod numbers;
mod relog;
pub mod schema;
pub mod segment;
pub mod snapshot;
pub mod stats;
pub mod traverse;
pub mod txn;
pub mod upgrade;
pub mod wal;

pub use builder::{GraphBuilder, NodeGroupInput, RelGroupInput, RowLabels, WriteSummary};
pub use catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
pub use database::{CheckpointHook, CheckpointStatus, CheckpointStep, Database, DatabaseOptions};
pub use external::ExternalGraph;
pub use io::{FaultyIo, StdIo, StorageIo, WalFile, WalSync};
pub use nodelist::NodeList;
pub use schema::{IndexDef, Schema, SchemaName, SchemaObjectKind};
pub use snapshot::{Adjacency, Direction, GraphRead, NeighbourBatch, RelInfo, Snapshot};
pub use stats::Statistics;
pub use traverse::{ChangedList, RelFloats, TypeLists};
pub use txn::{CommitInfo, WriteCounters, WriteTxn};
pub use upgrade::{upgrade, UpgradeOptions, UpgradeReport, UpgradeStep};
