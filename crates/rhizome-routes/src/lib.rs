//! Route finding over any graph: Dijkstra and A* (great-circle heuristic)
//! written once against the small [`RouteGraph`] trait, and the procedures
//! `apoc.algo.dijkstra`, `apoc.algo.dijkstraWithDefaultWeight`,
//! `apoc.algo.aStar` and `apoc.algo.aStarConfig` that run them over a
//! native snapshot.
//!
//! Modules: [`graph`] (the trait a graph implements: batches of weighted
//! neighbours and coordinates, shaped like `GraphRead::neighbours_batch`),
//! [`search`] (the algorithms), [`geo`] (great-circle distance),
//! [`expand`] (APOC's `'TYPE|<TYPE2|TYPE3>'` strings), [`native`] (the
//! trait over a storage [`rhizome_storage::Snapshot`]), [`apoc`] (the
//! procedures). External sources (`rhizome-sources`) implement
//! [`RouteGraph`] too, so the same search runs over PostgreSQL and Redis.
//! The user guide is `docs/procedures.md`.

pub mod apoc;
pub mod expand;
pub mod geo;
pub mod graph;
pub mod native;
pub mod search;

pub use apoc::{procedures, procedures_over, NativeGraphs, RouteGraphs};
pub use expand::{ExpandSpec, TypeDirection};
pub use graph::{RouteGraph, WeightedBatch};
pub use search::{k_shortest_paths, shortest_path, Goal, Route, SearchOptions, SearchStats};
