//! Entity ids.
//!
//! Node ids are dense integers assigned by storage: bulk import gives each
//! label group a contiguous range. Relationship ids are dense as well: each
//! relationship type owns a contiguous range, and inside it the id is the
//! position of the relationship in the type's outgoing adjacency array.

/// Dense id of a node inside one database.
pub type NodeId = u64;

/// Dense id of a relationship inside one database.
pub type RelId = u64;
