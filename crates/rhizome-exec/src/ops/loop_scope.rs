//! A loop scope's pending work: the frontier of every active instance of a
//! variable-length expansion (one instance per input row), ordered by the
//! scope's [`ScopePolicy`] (docs/scheduling.md, "Scopes").
//!
//! Each pending item is a path prefix: its last relationship and node,
//! its depth and its parent item, so a path is the chain of parents (no
//! list per prefix). Items live in one arena with a free list and are
//! released as soon as they and every item under them are done, so memory
//! stays proportional to the pending work plus its ancestors. The order:
//!
//! * FIFO: items in the order they were created, over all instances;
//! * BFS: the lowest depth first (level by level), oldest first within one;
//! * DFS: the newest item first (a stack), children in adjacency order.
//!
//! FIFO and BFS hold a whole level of trails, which can be millions: past
//! [`PENDING_CAP`] pending items the newest is taken instead (depth first)
//! until the queue is below the cap again, so memory stays bounded.

use rhizome_common::{NodeId, RelId};
use rhizome_plan::ScopePolicy;
use std::collections::VecDeque;

/// Most pending items a FIFO or BFS scope keeps before it works depth
/// first to bound its memory.
pub const PENDING_CAP: usize = 1 << 16;

const NONE: u32 = u32::MAX;

/// One path prefix.
#[derive(Debug, Clone, Copy)]
pub struct Item {
    /// The active instance (slot) the prefix belongs to.
    pub instance: u32,
    /// The item this one extends ([`u32::MAX`] for an instance's start).
    parent: u32,
    /// The last relationship (unused at depth 0).
    pub rel: RelId,
    /// The last node.
    pub node: NodeId,
    /// Relationships in the path.
    pub depth: u32,
    /// Items created under this one that are not released yet.
    children: u32,
}

/// The pending work of one loop scope's active instances.
pub struct Frontier {
    policy: ScopePolicy,
    items: Vec<Item>,
    free: Vec<u32>,
    /// FIFO and DFS: items in creation order.
    queue: VecDeque<u32>,
    /// BFS: items by depth.
    levels: Vec<VecDeque<u32>>,
    pending: usize,
    /// Live items per instance slot.
    live: Vec<u32>,
}

impl Frontier {
    /// An empty frontier for `policy` (not `Off`) and `slots` instance slots.
    pub fn new(policy: ScopePolicy, slots: usize) -> Frontier {
        Frontier {
            policy,
            items: Vec::new(),
            free: Vec::new(),
            queue: VecDeque::new(),
            levels: Vec::new(),
            pending: 0,
            live: vec![0; slots],
        }
    }

    /// Items of instance slot `instance` not yet released (0: it is done).
    pub fn live(&self, instance: u32) -> u32 {
        self.live[instance as usize]
    }

    /// Pending items.
    pub fn pending(&self) -> usize {
        self.pending
    }

    fn alloc(&mut self, item: Item) -> u32 {
        self.live[item.instance as usize] += 1;
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = item;
            i
        } else {
            self.items.push(item);
            (self.items.len() - 1) as u32
        }
    }

    fn enqueue(&mut self, i: u32, depth: u32) {
        self.pending += 1;
        match self.policy {
            ScopePolicy::Bfs => {
                let d = depth as usize;
                if self.levels.len() <= d {
                    self.levels.resize_with(d + 1, VecDeque::new);
                }
                self.levels[d].push_back(i);
            }
            _ => self.queue.push_back(i),
        }
    }

    /// Starts instance slot `instance` at `node` (depth 0).
    pub fn start(&mut self, instance: u32, node: NodeId) {
        let i = self.alloc(Item {
            instance,
            parent: NONE,
            rel: 0,
            node,
            depth: 0,
            children: 0,
        });
        self.enqueue(i, 0);
    }

    /// Adds the prefix `parent` + `(rel, node)`.
    pub fn extend(&mut self, parent: u32, rel: RelId, node: NodeId) {
        let p = self.items[parent as usize];
        self.items[parent as usize].children += 1;
        let depth = p.depth + 1;
        let i = self.alloc(Item {
            instance: p.instance,
            parent,
            rel,
            node,
            depth,
            children: 0,
        });
        self.enqueue(i, depth);
    }

    /// The next pending item by the policy (its index and value).
    pub fn pop(&mut self) -> Option<(u32, Item)> {
        let over = self.pending > PENDING_CAP;
        let i = match self.policy {
            ScopePolicy::Bfs => {
                if over {
                    self.levels.iter_mut().rev().find_map(|l| l.pop_back())
                } else {
                    self.levels.iter_mut().find_map(|l| l.pop_front())
                }
            }
            ScopePolicy::Fifo if !over => self.queue.pop_front(),
            _ => self.queue.pop_back(),
        }?;
        self.pending -= 1;
        Some((i, self.items[i as usize]))
    }

    /// Releases item `i` if nothing under it is live, and then each
    /// ancestor left without live items; `released` sees each released
    /// item (whose whole subtree is then done), with `true` for `i` itself.
    pub fn release_if_done(&mut self, mut i: u32, mut released: impl FnMut(&Item, bool)) {
        let mut own = true;
        while self.items[i as usize].children == 0 {
            let item = self.items[i as usize];
            self.live[item.instance as usize] -= 1;
            self.free.push(i);
            released(&item, own);
            own = false;
            if item.parent == NONE {
                return;
            }
            i = item.parent;
            self.items[i as usize].children -= 1;
        }
    }

    /// The relationships of item `i`'s path, first hop first, into `out`.
    pub fn path(&self, mut i: u32, out: &mut Vec<RelId>) {
        out.clear();
        loop {
            let item = &self.items[i as usize];
            if item.parent == NONE {
                break;
            }
            out.push(item.rel);
            i = item.parent;
        }
        out.reverse();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full binary tree of the given height under one start: the order
    /// of depths in which each policy takes the items.
    fn depths(policy: ScopePolicy, height: u32) -> Vec<u32> {
        let mut f = Frontier::new(policy, 1);
        f.start(0, 1);
        let mut out = Vec::new();
        let mut next_rel = 0;
        while let Some((i, item)) = f.pop() {
            out.push(item.depth);
            if item.depth < height {
                for _ in 0..2 {
                    next_rel += 1;
                    f.extend(i, next_rel, item.node * 2);
                }
            }
            f.release_if_done(i, |_, _| {});
        }
        assert_eq!(f.live(0), 0, "every item released");
        assert!(f.free.len() == f.items.len());
        out
    }

    #[test]
    fn bfs_and_fifo_go_level_by_level_and_dfs_goes_deep_first() {
        assert_eq!(depths(ScopePolicy::Bfs, 2), [0, 1, 1, 2, 2, 2, 2]);
        assert_eq!(depths(ScopePolicy::Fifo, 2), [0, 1, 1, 2, 2, 2, 2]);
        assert_eq!(depths(ScopePolicy::Dfs, 2), [0, 1, 2, 2, 1, 2, 2]);
    }

    #[test]
    fn dfs_memory_stays_proportional_to_the_depth() {
        let mut f = Frontier::new(ScopePolicy::Dfs, 1);
        f.start(0, 0);
        let mut rel = 0;
        while let Some((i, item)) = f.pop() {
            if item.depth < 12 {
                for _ in 0..2 {
                    rel += 1;
                    f.extend(i, rel, 0);
                }
            }
            f.release_if_done(i, |_, _| {});
        }
        // 2^13 - 1 items were created; live ones never exceeded ~2 per level.
        assert!(f.items.len() <= 2 * 13 + 2, "{} slots", f.items.len());
    }

    #[test]
    fn bfs_past_the_cap_works_depth_first() {
        let mut f = Frontier::new(ScopePolicy::Bfs, 1);
        f.start(0, 0);
        let (i, _) = f.pop().unwrap();
        for r in 0..(PENDING_CAP as u64 + 1) {
            f.extend(i, r, 0);
        }
        // Over the cap: the newest first.
        let (_, item) = f.pop().unwrap();
        assert_eq!(item.rel, PENDING_CAP as u64);
        let (_, item) = f.pop().unwrap();
        assert_eq!(item.rel, 0, "back under the cap: oldest first");
    }

    #[test]
    fn paths_follow_the_parents() {
        let mut f = Frontier::new(ScopePolicy::Dfs, 2);
        f.start(1, 10);
        let (a, _) = f.pop().unwrap();
        f.extend(a, 7, 11);
        let (b, _) = f.pop().unwrap();
        f.extend(b, 8, 12);
        let (c, item) = f.pop().unwrap();
        assert_eq!(item.instance, 1);
        let mut path = Vec::new();
        f.path(c, &mut path);
        assert_eq!(path, [7, 8]);
        assert_eq!(f.live(1), 3);
        // Releasing the leaf releases its ancestors, each reported once,
        // the leaf itself first and marked as such.
        let mut released = Vec::new();
        f.release_if_done(c, |item, own| released.push((item.node, item.depth, own)));
        assert_eq!(released, [(12, 2, true), (11, 1, false), (10, 0, false)]);
        assert_eq!(f.live(1), 0);
    }
}
