//! What the planner may know about the data: [`PlannerContext`], its
//! implementation for the native [`Snapshot`], and [`EmptyContext`].
//!
//! Every method is a pure lookup; unknown names answer "nothing" (zero
//! counts, no index) rather than errors, so planning never fails because of
//! statistics.

use rhizome_storage::{GraphRead, Snapshot};

/// Direction of a relationship relative to the node it is looked at from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Relationships leaving the node.
    Outgoing,
    /// Relationships entering the node.
    Incoming,
    /// Either.
    Both,
}

/// A procedure's declared signature, when the context knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcedureInfo {
    /// Input parameter names, in order (used for implicit arguments).
    pub inputs: Vec<String>,
    /// Output field names, in order (yielded by a standalone call).
    pub outputs: Vec<String>,
}

/// Statistics and schema facts the cost model and the rules read.
///
/// Contract: answers are estimates except where a method says otherwise;
/// methods never panic and are cheap enough to be called many times per
/// planned query. Contexts are shared with the planner's thread (`Sync`).
pub trait PlannerContext: Sync {
    /// Number of nodes carrying `label` (`None` if the label is unknown).
    fn label_count(&self, label: &str) -> Option<u64>;
    /// Number of nodes.
    fn node_count(&self) -> u64;
    /// Number of relationships of `rel_type` (all relationships for `None`).
    fn rel_count(&self, rel_type: Option<&str>) -> u64;
    /// Relationships of type `t` (any for `None`) from a node with label `src`
    /// to a node with label `dst` (`None`: any label, or none).
    fn triple_count(&self, src: Option<&str>, t: Option<&str>, dst: Option<&str>) -> u64;
    /// Mean number of relationships of `rel_type` in `dir` per node carrying
    /// `label` (per node of the graph for `None`).
    fn avg_degree(&self, label: Option<&str>, rel_type: Option<&str>, dir: Dir) -> f64 {
        let rels = match dir {
            Dir::Outgoing => self.triple_count(label, rel_type, None),
            Dir::Incoming => self.triple_count(None, rel_type, label),
            Dir::Both => {
                self.triple_count(label, rel_type, None) + self.triple_count(None, rel_type, label)
            }
        } as f64;
        let nodes = match label {
            Some(l) => self.label_count(l).unwrap_or(0),
            None => self.node_count(),
        };
        if nodes == 0 {
            0.0
        } else {
            rels / nodes as f64
        }
    }
    /// Whether a property index on (`label`, `key`) exists.
    fn has_index(&self, label: &str, key: &str) -> bool;
    /// Distinct values of the indexed key, if known.
    fn distinct_values(&self, label: &str, key: &str) -> Option<u64>;
    /// Exact: every relationship of `rel_type` ends, seen from its start
    /// (`Outgoing`: at its target; `Incoming`: at its source), at a node
    /// carrying `label`. Used to drop redundant neighbour label checks, so
    /// it must never answer `true` when unsure.
    fn label_implied(&self, rel_type: &str, dir: Dir, label: &str) -> bool {
        let total = self.rel_count(Some(rel_type));
        let ending = match dir {
            Dir::Outgoing => self.triple_count(None, Some(rel_type), Some(label)),
            Dir::Incoming => self.triple_count(Some(label), Some(rel_type), None),
            Dir::Both => return false,
        };
        total > 0 && ending == total
    }
    /// The signature of a procedure, if known (for implicit arguments and
    /// standalone calls without `YIELD`).
    fn procedure(&self, name: &str) -> Option<ProcedureInfo> {
        let _ = name;
        None
    }
}

/// A context that knows nothing: every count is zero, no index exists.
/// Plans made with it are valid but not cost-optimised.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyContext;

impl PlannerContext for EmptyContext {
    fn label_count(&self, _label: &str) -> Option<u64> {
        None
    }
    fn node_count(&self) -> u64 {
        0
    }
    fn rel_count(&self, _rel_type: Option<&str>) -> u64 {
        0
    }
    fn triple_count(&self, _src: Option<&str>, _t: Option<&str>, _dst: Option<&str>) -> u64 {
        0
    }
    fn has_index(&self, _label: &str, _key: &str) -> bool {
        false
    }
    fn distinct_values(&self, _label: &str, _key: &str) -> Option<u64> {
        None
    }
}

impl PlannerContext for Snapshot {
    fn label_count(&self, label: &str) -> Option<u64> {
        let id = self.catalog().label_id(label)?;
        Some(
            self.statistics()
                .label_counts
                .get(id as usize)
                .copied()
                .unwrap_or(0),
        )
    }

    fn node_count(&self) -> u64 {
        self.statistics().node_count
    }

    fn rel_count(&self, rel_type: Option<&str>) -> u64 {
        let stats = self.statistics();
        match rel_type {
            None => stats.relationship_count,
            Some(t) => self
                .catalog()
                .rel_type_id(t)
                .and_then(|id| stats.rel_types.get(id as usize))
                .map_or(0, |s| s.count),
        }
    }

    fn triple_count(&self, src: Option<&str>, t: Option<&str>, dst: Option<&str>) -> u64 {
        let catalog = self.catalog();
        let stats = self.statistics();
        let src_id = match src {
            Some(l) => match catalog.label_id(l) {
                Some(id) => Some(id),
                None => return 0,
            },
            None => None,
        };
        let dst_id = match dst {
            Some(l) => match catalog.label_id(l) {
                Some(id) => Some(id),
                None => return 0,
            },
            None => None,
        };
        let type_id = match t {
            Some(name) => match catalog.rel_type_id(name) {
                Some(id) => Some(id),
                None => return 0,
            },
            None => None,
        };
        if src_id.is_none() && dst_id.is_none() {
            return self.rel_count(t);
        }
        // Triples count a relationship once per (source label, target label)
        // pair, so summing over a free side over-counts multi-labelled nodes;
        // fine for an estimate.
        stats
            .triples
            .iter()
            .filter(|x| src_id.is_none_or(|s| x.source == s))
            .filter(|x| dst_id.is_none_or(|d| x.target == d))
            .filter(|x| type_id.is_none_or(|id| x.rel_type == id))
            .map(|x| x.count)
            .sum()
    }

    fn avg_degree(&self, label: Option<&str>, rel_type: Option<&str>, dir: Dir) -> f64 {
        let stats = self.statistics();
        if label.is_none() {
            let per_type = |id: usize| {
                stats.rel_types.get(id).map_or(0.0, |s| match dir {
                    Dir::Outgoing | Dir::Incoming => s.count as f64,
                    Dir::Both => 2.0 * s.count as f64,
                })
            };
            let rels = match rel_type {
                Some(t) => match self.catalog().rel_type_id(t) {
                    Some(id) => per_type(id as usize),
                    None => 0.0,
                },
                None => (0..stats.rel_types.len()).map(per_type).sum(),
            };
            return if stats.node_count == 0 {
                0.0
            } else {
                rels / stats.node_count as f64
            };
        }
        let rels = match dir {
            Dir::Outgoing => self.triple_count(label, rel_type, None),
            Dir::Incoming => self.triple_count(None, rel_type, label),
            Dir::Both => {
                self.triple_count(label, rel_type, None) + self.triple_count(None, rel_type, label)
            }
        } as f64;
        match label.and_then(|l| self.label_count(l)) {
            Some(n) if n > 0 => rels / n as f64,
            _ => 0.0,
        }
    }

    fn has_index(&self, label: &str, key: &str) -> bool {
        let catalog = self.catalog();
        match (catalog.label_id(label), catalog.property_key_id(key)) {
            // The schema knows indexes created since the last checkpoint too.
            (Some(l), Some(k)) => Snapshot::has_index(self, l, k),
            _ => false,
        }
    }

    fn distinct_values(&self, label: &str, key: &str) -> Option<u64> {
        let catalog = self.catalog();
        let l = catalog.label_id(label)?;
        let k = catalog.property_key_id(key)?;
        self.statistics()
            .indexes
            .iter()
            .find(|i| i.label == l && i.key == k)
            .map(|i| i.distinct)
    }

    fn label_implied(&self, rel_type: &str, dir: Dir, label: &str) -> bool {
        // Exact: a single (source, type, target) triple holding every
        // relationship of the type proves each one ends at `label`.
        let catalog = self.catalog();
        let stats = self.statistics();
        let (Some(t), Some(l)) = (catalog.rel_type_id(rel_type), catalog.label_id(label)) else {
            return false;
        };
        let total = stats.rel_types.get(t as usize).map_or(0, |s| s.count);
        if total == 0 {
            return false;
        }
        stats.triples.iter().any(|x| {
            x.rel_type == t
                && x.count == total
                && match dir {
                    Dir::Outgoing => x.target == l,
                    Dir::Incoming => x.source == l,
                    Dir::Both => false,
                }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_context_knows_nothing() {
        let c = EmptyContext;
        assert_eq!(c.label_count("A"), None);
        assert_eq!(c.avg_degree(Some("A"), None, Dir::Outgoing), 0.0);
        assert!(!c.label_implied("T", Dir::Outgoing, "A"));
        assert!(!c.has_index("A", "k"));
        assert!(c.procedure("db.labels").is_none());
    }
}
