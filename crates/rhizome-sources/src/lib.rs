//! Graphs that live in PostgreSQL or Redis, read through a JSON mapping
//! (the Crackle approach): fetched lazily in batches over a pool of async
//! connections, kept in a bounded cache shared by every query on the
//! source, and prefetched by graph-aware prefetchers.
//!
//! Modules: [`bench`](mod@bench) (`rhizome bench roads`), [`mapping`] (the mapping file and its checks), [`fetch`] (what
//! one round trip asks for), [`postgres`] and [`redis_backend`] (the
//! backends), [`cache`] (the shared cache and its freshness rule), [`region`]
//! (the `ellipse` prefetcher's geometry),
//! [`counters`] (round trips, rows, bytes, hits, prefetch use, waiting),
//! [`row_keys`] (stable keys of relationships without a key column),
//! [`source`] (a connected [`Source`]), [`source_graph`] ([`SourceGraph`],
//! the route searches' view of it, and its allocation-free hot path),
//! [`query_graph`], [`query_options`] (a statement's `CYPHER prefetch=…`)
//! and [`cypher`] (Cypher over a source), [`entities`] (the rows of a
//! result's nodes fetched a block of rows at a time). The user guide is
//! `docs/sources.md`.
//!
//! Cypher runs over a source through [`SourceEngine`] ([`cypher`]): a
//! [`QueryGraph`] ([`query_graph`]) answers the storage read interface
//! (`rhizome_storage::ExternalGraph` behind a `Snapshot`), so the planner
//! and runtime are those of native storage; route searches run through
//! [`SourceGraph`].

pub mod bench;
pub mod cache;
pub mod counters;
pub mod cypher;
pub mod entities;
pub mod fetch;
pub mod mapping;
pub mod postgres;
pub mod query_graph;
pub mod query_options;
pub mod redis_backend;
pub mod region;
pub mod route_arena;
pub mod row_keys;
pub mod source;
pub mod source_graph;

pub use counters::CounterSnapshot;
pub use cypher::{SourceEngine, SourceStatement};
pub use mapping::{Backend, Mapping, Prefetch, RegionShape};
pub use query_graph::QueryGraph;
pub use source::{Source, SourceGraph};
