//! Label membership as id ranges.
//!
//! Bulk import orders the rows of a node group by label set, so the nodes
//! carrying any one label form a few contiguous id ranges. A group records
//! its *runs*: `(first node id, label set)` pairs, each run lasting until the
//! next. The labels of a node are found by binary search over the runs; the
//! nodes of a label are the union of the runs whose set contains it.

use crate::catalog::LabelId;
use rhizome_common::NodeId;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// A run of nodes sharing one label set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelRun {
    /// First node id of the run.
    pub start: NodeId,
    /// Index into the database's label-set table.
    pub label_set: u32,
}

/// All label runs of a database plus the label-set table, with per-label ranges.
#[derive(Debug, Clone, Default)]
pub struct LabelIndex {
    runs: Vec<LabelRun>,
    end: NodeId,
    sets: Vec<Vec<LabelId>>,
    ranges: Vec<Vec<Range<NodeId>>>,
}

impl LabelIndex {
    /// Builds the index from runs sorted by start, the end of the id space and
    /// the label-set table (each set sorted). `label_count` is the number of labels.
    pub fn new(
        runs: Vec<LabelRun>,
        end: NodeId,
        sets: Vec<Vec<LabelId>>,
        label_count: usize,
    ) -> LabelIndex {
        let mut ranges: Vec<Vec<Range<NodeId>>> = vec![Vec::new(); label_count];
        for (i, run) in runs.iter().enumerate() {
            let run_end = runs.get(i + 1).map_or(end, |r| r.start);
            if run_end <= run.start {
                continue;
            }
            for &label in sets.get(run.label_set as usize).into_iter().flatten() {
                if let Some(list) = ranges.get_mut(label as usize) {
                    match list.last_mut() {
                        Some(last) if last.end == run.start => last.end = run_end,
                        _ => list.push(run.start..run_end),
                    }
                }
            }
        }
        LabelIndex {
            runs,
            end,
            sets,
            ranges,
        }
    }

    /// The label set (sorted label ids) of `node`; empty for unknown nodes.
    pub fn labels_of(&self, node: NodeId) -> &[LabelId] {
        if node >= self.end {
            return &[];
        }
        let i = self.runs.partition_point(|r| r.start <= node);
        if i == 0 {
            return &[];
        }
        self.sets
            .get(self.runs[i - 1].label_set as usize)
            .map_or(&[], |s| s.as_slice())
    }

    /// True if `node` carries `label`.
    pub fn has_label(&self, node: NodeId, label: LabelId) -> bool {
        self.labels_of(node).binary_search(&label).is_ok()
    }

    /// The id ranges of the nodes carrying `label`, sorted and disjoint.
    pub fn ranges(&self, label: LabelId) -> &[Range<NodeId>] {
        self.ranges
            .get(label as usize)
            .map_or(&[], |r| r.as_slice())
    }

    /// Number of nodes carrying `label`.
    pub fn count(&self, label: LabelId) -> u64 {
        self.ranges(label).iter().map(|r| r.end - r.start).sum()
    }

    /// The label-set table.
    pub fn sets(&self) -> &[Vec<LabelId>] {
        &self.sets
    }

    /// The runs.
    pub fn runs(&self) -> &[LabelRun] {
        &self.runs
    }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    #[test]
    fn runs_become_ranges() {
        // ids 0..3 {0}, 3..5 {0,1}, 5..9 {2}, 9..10 {0}
        let runs = vec![
            LabelRun {
                start: 0,
                label_set: 0,
            },
            LabelRun {
                start: 3,
                label_set: 1,
            },
            LabelRun {
                start: 5,
                label_set: 2,
            },
            LabelRun {
                start: 9,
                label_set: 0,
            },
        ];
        let idx = LabelIndex::new(runs, 10, vec![vec![0], vec![0, 1], vec![2]], 3);
        assert_eq!(idx.ranges(0), &[0..5, 9..10]);
        assert_eq!(idx.ranges(1), &[3..5]);
        assert_eq!(idx.count(2), 4);
        assert_eq!(idx.labels_of(4), &[0, 1]);
        assert!(idx.has_label(9, 0));
        assert!(!idx.has_label(9, 2));
        assert_eq!(idx.labels_of(10), &[] as &[LabelId]);
    }
}
