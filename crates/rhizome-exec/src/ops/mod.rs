//! Physical operators, one per file, named by what they do. Each implements
//! a role of [`crate::operator`]; which plan node becomes which operator is
//! decided in [`crate::pipeline::build`].
//!
//! | file | operator | role |
//! |---|---|---|
//! | [`scan`] | `Scan`: all nodes, a label, an index seek, ids | operator |
//! | [`expand`] | `Expand`: one hop over the adjacency | operator |
//! | [`expand_into`] | `ExpandInto`: relationships between two bound nodes | operator |
//! | [`expand_count`] | `ExpandCount`: counts the last hops without rows | operator |
//! | [`varexpand`] | `VarExpand`: variable-length paths | operator |
//! | [`shortest`] | `ShortestPath`: `shortestPath` / `allShortestPaths` | operator |
//! | [`filter`] | `Filter`: `WHERE` | operator |
//! | [`project`] | `Project`: computed values into slots | operator |
//! | [`unwind`] | `Unwind`: one row per list element | operator |
//! | [`skip`] | `Skip`: `SKIP` | operator |
//! | [`distinct`] | `Distinct`: `DISTINCT`, `UNION` | operator |
//! | [`procedure_call`] | `ProcedureCall`: `CALL … YIELD` | operator |
//! | [`apply`] | `Apply`: `OPTIONAL MATCH`, `CALL { }`, semi-applies | operator |
//! | [`cartesian`] | `Cartesian`: cartesian product (probe side) | operator |
//! | [`hash_join`] | `HashJoin`: hash join (probe side) | operator |
//! | [`aggregate`] | `AggregateSink`: hash aggregation | sink |
//! | [`sort`] | `SortSink`: `ORDER BY`, top-k | sink |
//! | [`distinct_endpoints`] | `DistinctEndpointsSink`: nodes a walk reaches, one frontier per hop | sink |
//! | [`limit`] | `LimitSink`: `LIMIT` | sink |
//! | [`collect`] | `CollectSink`: inner runs, join build sides | sink |
//! | [`result`] | `RowsSink`: a query's result rows | sink |
//!
//! [`adjacency`] and [`materialized`] hold what several operators share;
//! [`end_pruning`] is what a loop scope under a `DISTINCT` of its end knows;
//! [`in_list_filter`] is `Filter`'s path for `x IN list` over a list slot;
//! `resumable` is the row-at-a-time evaluation whose subqueries pause,
//! which `Filter` and `Project` share;
//! [`typed_keys`] encodes composite group keys read from typed columns.

pub mod adjacency;
pub mod aggregate;
pub mod apply;
pub mod cartesian;
pub mod collect;
pub mod distinct;
pub mod distinct_endpoints;
pub mod end_pruning;
pub mod expand;
pub mod expand_count;
pub mod expand_into;
pub mod filter;
pub mod hash_join;
pub mod in_list_filter;
pub mod limit;
pub mod loop_scope;
pub mod materialized;
pub mod procedure_call;
pub mod project;
pub mod result;
pub(crate) mod resumable;
pub mod scan;
pub mod shortest;
pub mod skip;
pub mod sort;
pub mod typed_keys;
pub mod unwind;
pub mod varexpand;
