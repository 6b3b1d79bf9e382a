//! The rows of a result's nodes, fetched in batches before they are
//! rendered.
//!
//! A statement that returns nodes (`RETURN k`, a path from
//! `apoc.algo.aStar`) usually never read their properties, yet whoever
//! renders the result (the command line's table, a Bolt or HTTP session)
//! asks for each node's properties one at a time: over a source, one round
//! trip per node. So a [`SourceEngine`](crate::SourceEngine) fetches the
//! rows of every node in a block of result rows (nested in lists, maps and
//! paths too) with one `prefetch_nodes` call — one round trip per block,
//! for what the cache lacks — before the block is handed on or the result
//! returned; rendering then reads what the statement pinned.

use rhizome_common::{NodeId, Result, Value};
use rhizome_exec::rows::Rows;
use rhizome_exec::stream::{RowBlock, RowReceiver};
use rhizome_storage::Snapshot;
use std::sync::Arc;

/// Rows of a collected result whose nodes are fetched together.
pub const BATCH_ROWS: usize = 1024;

/// At most this many node keys go into one fetch (a batch of rows holding
/// long paths is fetched in several).
const BATCH_NODES: usize = 8192;

/// Appends the nodes `value` holds, at any depth, to `out`.
fn collect_nodes(value: &Value, out: &mut Vec<NodeId>) {
    match value {
        Value::Node(id) => out.push(*id),
        Value::Path(path) => out.extend_from_slice(&path.nodes),
        Value::List(items) => items.iter().for_each(|v| collect_nodes(v, out)),
        Value::Map(entries) => entries.values().for_each(|v| collect_nodes(v, out)),
        _ => {}
    }
}

/// Fetches the rows of the nodes in `values` (row-major) through
/// `snapshot`, in as few fetches as [`BATCH_NODES`] allows.
fn prefetch_values<'a>(
    snapshot: &Snapshot,
    values: impl Iterator<Item = &'a Value>,
    ids: &mut Vec<NodeId>,
) {
    ids.clear();
    for value in values {
        collect_nodes(value, ids);
        if ids.len() >= BATCH_NODES {
            flush(snapshot, ids);
        }
    }
    flush(snapshot, ids);
}

fn flush(snapshot: &Snapshot, ids: &mut Vec<NodeId>) {
    if !ids.is_empty() {
        ids.sort_unstable();
        ids.dedup();
        snapshot.prefetch_nodes(ids);
        ids.clear();
    }
}

/// Fetches the rows of the nodes of a collected result, one fetch per
/// [`BATCH_ROWS`] rows.
pub fn prefetch_result(snapshot: &Snapshot, rows: &Rows) {
    let mut ids = Vec::new();
    let all: Vec<&[Value]> = rows.iter().collect();
    for batch in all.chunks(BATCH_ROWS) {
        prefetch_values(snapshot, batch.iter().flat_map(|row| row.iter()), &mut ids);
    }
}

/// A receiver that fetches the rows of each block's nodes, then hands the
/// block on.
pub struct PrefetchingReceiver {
    inner: Arc<dyn RowReceiver>,
    snapshot: Snapshot,
}

impl PrefetchingReceiver {
    /// Wraps `inner`; the nodes are fetched through `snapshot` (the
    /// statement's, which rendering reads).
    pub fn new(inner: Arc<dyn RowReceiver>, snapshot: Snapshot) -> PrefetchingReceiver {
        PrefetchingReceiver { inner, snapshot }
    }
}

impl RowReceiver for PrefetchingReceiver {
    fn receive(&self, block: &mut RowBlock) -> Result<()> {
        let mut ids = Vec::new();
        prefetch_values(&self.snapshot, block.rows().flatten(), &mut ids);
        self.inner.receive(block)
    }

    fn keeps_rows(&self) -> bool {
        self.inner.keeps_rows()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_common::PathValue;
    use std::collections::BTreeMap;

    #[test]
    fn nodes_are_found_at_any_depth() {
        let value = Value::List(vec![
            Value::Node(1),
            Value::Map(BTreeMap::from([("a".to_string(), Value::Node(2))])),
            Value::Path(PathValue {
                nodes: vec![3, 4],
                rels: vec![9],
            }),
            Value::Relationship(5),
            Value::Int(6),
        ]);
        let mut out = Vec::new();
        collect_nodes(&value, &mut out);
        assert_eq!(out, vec![1, 2, 3, 4]);
    }
}
