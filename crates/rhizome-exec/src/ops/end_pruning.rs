//! What a loop scope that prunes ends ([`rhizome_plan::LoopScope::prune_ends`])
//! knows: the end nodes it produced, and per number of hops left the
//! nodes from which every reachable end is among them ("saturated").
//!
//! The rows of such a scope only feed a `DISTINCT` of the end node, so a
//! row whose end was produced before changes nothing, and neither does a
//! prefix whose every reachable end was produced: the scope skips the one
//! and cancels the other. Saturation is judged over a superset of the
//! walks the expansion can make — relationship uniqueness, relationships
//! bound outside the path and the relationship predicate are ignored;
//! the per-hop node predicate counts only where it reads nothing but the
//! node (then its answer is the same on every path) — so a saturated
//! node's prefixes cannot reach a new end. Once saturated, a node stays
//! saturated: the produced set only grows.
//!
//! Both sets are bitsets over node ids shared by the scope's tasks (atomic
//! words, no lock); saturation is tracked for expansions of at most
//! [`EndPruning::MAX_LEVELS`] hops.

use crate::context::MemoryBudget;
use rhizome_common::{NodeId, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// One bit per node id.
struct NodeBits(Box<[AtomicU64]>);

impl NodeBits {
    fn new(bound: NodeId) -> NodeBits {
        // Zeroed by the allocator (fresh pages are not written): a walk
        // that touches few nodes pays for few pages.
        let zeroed = vec![0u64; (bound as usize).div_ceil(64)].into_boxed_slice();
        // SAFETY: `AtomicU64` has the size, alignment and bit validity of
        // `u64`, so a boxed slice of one is a boxed slice of the other.
        NodeBits(unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [AtomicU64]) })
    }

    fn bytes(bound: NodeId) -> usize {
        (bound as usize).div_ceil(64) * 8
    }

    /// Sets `node`'s bit; true if it was clear (ids past the bound: always
    /// true, so they are never skipped).
    #[inline]
    fn set(&self, node: NodeId) -> bool {
        let Some(word) = self.0.get((node / 64) as usize) else {
            return true;
        };
        let bit = 1u64 << (node % 64);
        word.fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    #[inline]
    fn get(&self, node: NodeId) -> bool {
        self.0
            .get((node / 64) as usize)
            .is_some_and(|w| w.load(Ordering::Relaxed) & (1u64 << (node % 64)) != 0)
    }
}

/// The produced ends and saturated nodes of one run of a pruning scope.
pub struct EndPruning {
    produced: NodeBits,
    /// `saturated[k - 1]`: nodes saturated with `k` hops left.
    saturated: Vec<NodeBits>,
}

impl EndPruning {
    /// The longest expansion (in hops) whose prefixes are tracked for
    /// saturation; a longer or unbounded one only skips produced ends.
    pub const MAX_LEVELS: u64 = 32;

    /// Empty sets for node ids below `bound` and an expansion of at most
    /// `max` hops. They fail as a charge to the query's `memory` would,
    /// but stay uncharged: they live only while one run of the expansion
    /// does, and a subquery run per row must not add them up.
    pub fn new(bound: NodeId, max: Option<u64>, memory: &MemoryBudget) -> Result<EndPruning> {
        let levels = max.filter(|&m| m <= Self::MAX_LEVELS).unwrap_or(0) as usize;
        memory.check_room(NodeBits::bytes(bound) * (1 + levels))?;
        Ok(EndPruning {
            produced: NodeBits::new(bound),
            saturated: (0..levels).map(|_| NodeBits::new(bound)).collect(),
        })
    }

    /// Records `node` as produced; true the first time (the row goes out).
    #[inline]
    pub fn produce(&self, node: NodeId) -> bool {
        self.produced.set(node)
    }

    /// True if `node` was produced.
    #[inline]
    pub fn produced(&self, node: NodeId) -> bool {
        self.produced.get(node)
    }

    /// True if saturation is tracked for prefixes with `left` hops left.
    #[inline]
    pub fn tracks(&self, left: u64) -> bool {
        left >= 1 && left <= self.saturated.len() as u64
    }

    /// True if every end reachable from `node` in the last `left` hops was
    /// produced (false where untracked).
    #[inline]
    pub fn saturated(&self, left: u64, node: NodeId) -> bool {
        self.tracks(left) && self.saturated[(left - 1) as usize].get(node)
    }

    /// Records `node` as saturated with `left` hops left (a tracked level).
    pub fn saturate(&self, left: u64, node: NodeId) {
        if self.tracks(left) {
            self.saturated[(left - 1) as usize].set(node);
        }
    }

    /// True if a prefix at `node`, depth `depth`, of a `min..=max`
    /// expansion can give nothing new: its node, if it may end a path, was
    /// produced, and it is at the last depth or saturated.
    #[inline]
    pub fn spent(&self, node: NodeId, depth: u64, min: u64, max: u64) -> bool {
        (depth < min || self.produced(node)) && (depth >= max || self.saturated(max - depth, node))
    }

    /// True if a prefix at depth `depth` of a `min..=max` expansion has
    /// nothing new to reach, judged from the next hop's `children`: each
    /// child that may be on a path (`on_path`: it passes the per-hop
    /// predicate where that counts) must be produced if it may end a path
    /// there (`may_end`, at depth `min` or more) and saturated with the
    /// hops left below it if any are.
    pub fn judge(
        &self,
        depth: u64,
        min: u64,
        max: u64,
        children: impl IntoIterator<Item = NodeId>,
        mut on_path: impl FnMut(NodeId) -> bool,
        may_end: impl Fn(NodeId) -> bool,
    ) -> bool {
        let next = depth + 1;
        let left_below = max - next;
        // The bits first: the predicate (a memo lookup at best) only for
        // a child they do not settle.
        children.into_iter().all(|c| {
            ((next < min || self.produced(c) || !may_end(c))
                && (left_below == 0 || self.saturated(left_below, c)))
                || !on_path(c)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pruning(bound: NodeId, max: Option<u64>) -> EndPruning {
        EndPruning::new(bound, max, &MemoryBudget::new(1 << 20)).unwrap()
    }

    #[test]
    fn an_end_is_produced_once() {
        let p = pruning(100, Some(3));
        assert!(p.produce(7));
        assert!(!p.produce(7));
        assert!(p.produced(7) && !p.produced(8));
        // Past the bound nothing is tracked, so nothing is ever skipped.
        assert!(p.produce(1000) && p.produce(1000));
    }

    #[test]
    fn saturation_needs_every_child_on_a_path() {
        let p = pruning(100, Some(2));
        let end = |_| true;
        // One hop left (depth 1 of *2): children must be produced.
        p.produce(10);
        assert!(!p.judge(1, 2, 2, [10, 11], |_| true, end));
        assert!(
            p.judge(1, 2, 2, [10, 11], |c| c != 11, end),
            "11 is off every path"
        );
        assert!(
            p.judge(1, 2, 2, [10, 11], |_| true, |c| c != 11),
            "11 ends none"
        );
        p.produce(11);
        assert!(p.judge(1, 2, 2, [10, 11], |_| true, end));
        // Two hops left: children must also be saturated below.
        assert!(!p.judge(0, 2, 2, [5], |_| true, end));
        p.saturate(1, 5);
        assert!(
            p.judge(0, 2, 2, [5], |_| true, end),
            "depth 1 ends nothing in *2"
        );
        assert!(
            !p.judge(0, 1, 2, [5], |_| true, end),
            "in *1..2 node 5 is an end"
        );
        assert!(p.saturated(1, 5) && !p.saturated(2, 5));
        // Spent: nothing new at the prefix nor below it.
        assert!(p.spent(5, 1, 2, 2), "saturated, and depth 1 ends nothing");
        assert!(!p.spent(5, 1, 1, 2), "5 itself would be a new end");
        assert!(
            p.spent(10, 2, 2, 2) && !p.spent(12, 2, 2, 2),
            "the last depth"
        );
        assert!(!p.spent(5, 0, 2, 2), "not saturated with two hops left");
    }

    #[test]
    fn the_sets_are_checked_against_the_budget_but_not_kept_charged() {
        let budget = MemoryBudget::new(1000);
        // 6,400 node ids: 800 bytes a set.
        assert!(EndPruning::new(6400, None, &budget).is_ok());
        assert!(EndPruning::new(6400, None, &budget).is_ok(), "nothing held");
        assert_eq!(budget.used(), 0);
        let e = EndPruning::new(6400, Some(1), &budget)
            .err()
            .expect("two sets");
        assert!(e.message.contains("memory limit"), "{e}");
    }

    #[test]
    fn long_and_unbounded_expansions_only_skip_produced_ends() {
        for max in [None, Some(EndPruning::MAX_LEVELS + 1)] {
            let p = pruning(10, max);
            p.saturate(1, 3);
            assert!(!p.tracks(1) && !p.saturated(1, 3));
            assert!(p.produce(3) && !p.produce(3));
        }
    }
}
