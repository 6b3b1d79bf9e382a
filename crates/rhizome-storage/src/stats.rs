//! Statistics for the planner's cost model, computed when segments are written.

use crate::catalog::{LabelId, PropertyKeyId, RelTypeId};
use serde::{Deserialize, Serialize};

/// Summary of a degree distribution over the nodes that have at least one
/// relationship of a type in a direction.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DegreeStats {
    /// Nodes with degree > 0.
    pub nodes: u64,
    /// Largest degree.
    pub max: u64,
    /// Mean degree over `nodes`.
    pub mean: f64,
    /// Median degree over `nodes`.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
}

impl DegreeStats {
    /// Summarises a list of degrees (zeros are ignored).
    pub fn from_degrees(mut degrees: Vec<u64>) -> DegreeStats {
        degrees.retain(|&d| d > 0);
        if degrees.is_empty() {
            return DegreeStats::default();
        }
        degrees.sort_unstable();
        let n = degrees.len();
        let pct = |p: usize| degrees[((n - 1) * p) / 100];
        DegreeStats {
            nodes: n as u64,
            max: degrees[n - 1],
            mean: degrees.iter().sum::<u64>() as f64 / n as f64,
            p50: pct(50),
            p90: pct(90),
            p99: pct(99),
        }
    }
}

/// Per relationship type: count and degree summaries.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RelTypeStats {
    /// Number of relationships of the type.
    pub count: u64,
    /// Outgoing degrees.
    pub outgoing: DegreeStats,
    /// Incoming degrees.
    pub incoming: DegreeStats,
}

/// Number of relationships of a type between nodes of a source and target label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TripleCount {
    /// Label of the source node.
    pub source: LabelId,
    /// Relationship type.
    pub rel_type: RelTypeId,
    /// Label of the target node.
    pub target: LabelId,
    /// Relationships.
    pub count: u64,
}

/// Distinct-value estimate of an indexed key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// Label.
    pub label: LabelId,
    /// Key.
    pub key: PropertyKeyId,
    /// Nodes with the label that have the key.
    pub entries: u64,
    /// Distinct values among them.
    pub distinct: u64,
}

/// Everything the planner knows about the data's shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Statistics {
    /// Number of nodes.
    pub node_count: u64,
    /// Number of relationships.
    pub relationship_count: u64,
    /// Nodes per label, indexed by label id.
    pub label_counts: Vec<u64>,
    /// Per relationship type, indexed by type id.
    pub rel_types: Vec<RelTypeStats>,
    /// Relationship counts per (source label, type, target label), non-zero only.
    pub triples: Vec<TripleCount>,
    /// Distinct values per indexed key.
    pub indexes: Vec<IndexStats>,
}

impl Statistics {
    /// Relationships of `rel_type` from nodes with `source` to nodes with `target`.
    pub fn triple_count(&self, source: LabelId, rel_type: RelTypeId, target: LabelId) -> u64 {
        self.triples
            .iter()
            .find(|t| t.source == source && t.rel_type == rel_type && t.target == target)
            .map_or(0, |t| t.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degree_summary() {
        let s = DegreeStats::from_degrees(vec![0, 1, 2, 3, 4, 100, 0]);
        assert_eq!((s.nodes, s.max, s.p50, s.p99), (5, 100, 3, 4));
        assert!((s.mean - 22.0).abs() < 1e-9);
        assert_eq!(DegreeStats::from_degrees(vec![0]), DegreeStats::default());
    }
}
