//! Compressed sparse row adjacency, one per relationship type and direction.
//!
//! The outgoing CSR of a type owns its relationships: the relationship at
//! outgoing position `p` has id `type_base + p`, and its property columns are
//! stored in that order, so "traverse and check a property" reads two arrays
//! side by side. The incoming CSR keeps a permutation `perm[q] = p` from its
//! positions to outgoing positions. Each CSR covers the node id range
//! `lo..hi` of the nodes that have such relationships at all, so its offsets
//! are sized by that range rather than by the whole graph. Neighbour lists are
//! sorted by neighbour id.

use crate::segment::ArrayRef;
use rhizome_common::NodeId;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Where a CSR lies in the segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsrMeta {
    /// First node id covered.
    pub lo: NodeId,
    /// One past the last node id covered.
    pub hi: NodeId,
    /// `hi - lo + 1` offsets (`u64`) into `neighbours`.
    pub offsets: ArrayRef,
    /// Neighbour node ids (`u64`).
    pub neighbours: ArrayRef,
    /// For incoming CSRs: outgoing position of each entry (`u64`).
    pub perm: Option<ArrayRef>,
}

/// A CSR built in memory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CsrData {
    /// First node id covered.
    pub lo: NodeId,
    /// One past the last node id covered.
    pub hi: NodeId,
    /// `hi - lo + 1` offsets.
    pub offsets: Vec<u64>,
    /// Neighbour ids.
    pub neighbours: Vec<NodeId>,
    /// Outgoing position per entry (incoming CSRs only).
    pub perm: Option<Vec<u64>>,
}

impl CsrData {
    /// Builds the outgoing CSR of relationships `sources[i] -> targets[i]`.
    /// Returns it with `order`, where `order[p]` is the input index of the
    /// relationship placed at outgoing position `p` (so property columns can
    /// be permuted the same way). Ties keep input order.
    pub fn build_outgoing(sources: &[NodeId], targets: &[NodeId]) -> (CsrData, Vec<u64>) {
        if sources.is_empty() {
            return (
                CsrData {
                    offsets: vec![0],
                    ..CsrData::default()
                },
                Vec::new(),
            );
        }
        let lo = *sources.iter().min().expect("non-empty");
        let hi = *sources.iter().max().expect("non-empty") + 1;
        let mut offsets = vec![0u64; (hi - lo + 1) as usize];
        for &s in sources {
            offsets[(s - lo + 1) as usize] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut cursor = offsets.clone();
        let mut order = vec![0u64; sources.len()];
        for (i, &s) in sources.iter().enumerate() {
            let slot = &mut cursor[(s - lo) as usize];
            order[*slot as usize] = i as u64;
            *slot += 1;
        }
        for w in offsets.windows(2) {
            order[w[0] as usize..w[1] as usize].sort_by_key(|&i| (targets[i as usize], i));
        }
        let neighbours = order.iter().map(|&i| targets[i as usize]).collect();
        (
            CsrData {
                lo,
                hi,
                offsets,
                neighbours,
                perm: None,
            },
            order,
        )
    }

    /// Builds the incoming CSR of an outgoing one.
    pub fn build_incoming(out: &CsrData) -> CsrData {
        if out.neighbours.is_empty() {
            return CsrData {
                offsets: vec![0],
                perm: Some(Vec::new()),
                ..CsrData::default()
            };
        }
        let lo = *out.neighbours.iter().min().expect("non-empty");
        let hi = *out.neighbours.iter().max().expect("non-empty") + 1;
        let mut offsets = vec![0u64; (hi - lo + 1) as usize];
        for &t in &out.neighbours {
            offsets[(t - lo + 1) as usize] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut cursor = offsets.clone();
        let mut neighbours = vec![0; out.neighbours.len()];
        let mut perm = vec![0u64; out.neighbours.len()];
        // Walking sources in id order keeps every incoming list sorted.
        for (k, w) in out.offsets.windows(2).enumerate() {
            let source = out.lo + k as u64;
            for p in w[0]..w[1] {
                let t = out.neighbours[p as usize];
                let slot = &mut cursor[(t - lo) as usize];
                neighbours[*slot as usize] = source;
                perm[*slot as usize] = p;
                *slot += 1;
            }
        }
        CsrData {
            lo,
            hi,
            offsets,
            neighbours,
            perm: Some(perm),
        }
    }
}

/// A CSR read from a segment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Csr<'a> {
    lo: NodeId,
    hi: NodeId,
    offsets: &'a [u64],
    neighbours: &'a [NodeId],
    perm: Option<&'a [u64]>,
}

impl<'a> Csr<'a> {
    /// A CSR over mapped arrays; `offsets.len()` must be `hi - lo + 1` (checked by the caller).
    pub(crate) fn new(
        lo: NodeId,
        hi: NodeId,
        offsets: &'a [u64],
        neighbours: &'a [NodeId],
        perm: Option<&'a [u64]>,
    ) -> Csr<'a> {
        Csr {
            lo,
            hi,
            offsets,
            neighbours,
            perm,
        }
    }

    /// The positions of `node`'s entries; empty for nodes outside the range.
    #[inline]
    pub fn positions(&self, node: NodeId) -> Range<usize> {
        if node < self.lo || node >= self.hi {
            return 0..0;
        }
        let k = (node - self.lo) as usize;
        match (self.offsets.get(k), self.offsets.get(k + 1)) {
            (Some(&a), Some(&b)) if a <= b && b as usize <= self.neighbours.len() => {
                a as usize..b as usize
            }
            _ => 0..0,
        }
    }

    /// Asks the CPU to start loading `node`'s offsets, for a loop that will
    /// call [`Csr::positions`] on it a few iterations later. Only a hint: it
    /// reads nothing and does nothing for nodes outside the range.
    #[inline(always)]
    pub fn prefetch(&self, node: NodeId) {
        if let Some(entry) = self.offsets.get(node.wrapping_sub(self.lo) as usize) {
            rhizome_common::prefetch(entry);
        }
    }

    /// The neighbours of `node`, sorted by id.
    #[inline]
    pub fn neighbours(&self, node: NodeId) -> &'a [NodeId] {
        &self.neighbours[self.positions(node)]
    }

    /// The degree of `node` in this CSR.
    #[inline]
    pub fn degree(&self, node: NodeId) -> u64 {
        self.positions(node).len() as u64
    }

    /// All neighbour ids, in position order.
    pub fn all_neighbours(&self) -> &'a [NodeId] {
        self.neighbours
    }

    /// All offsets (`hi - lo + 1` of them).
    pub fn offsets(&self) -> &'a [u64] {
        self.offsets
    }

    /// The covered node range.
    pub fn node_range(&self) -> Range<NodeId> {
        self.lo..self.hi
    }

    /// For incoming CSRs: the outgoing position of each entry.
    pub fn perm(&self) -> Option<&'a [u64]> {
        self.perm
    }

    /// Number of entries (relationships).
    pub fn len(&self) -> usize {
        self.neighbours.len()
    }

    /// True if the CSR holds no relationships.
    pub fn is_empty(&self) -> bool {
        self.neighbours.is_empty()
    }

    /// The node whose list contains position `p` (binary search over offsets).
    pub fn owner_of(&self, p: usize) -> Option<NodeId> {
        if p >= self.neighbours.len() {
            return None;
        }
        let k = self.offsets.partition_point(|&o| o as usize <= p);
        Some(self.lo + k as u64 - 1)
    }

    /// Checks offsets, neighbour bounds and the permutation; returns the first problem.
    pub fn validate(&self, node_bound: NodeId, out_len: usize) -> Result<(), String> {
        if self.offsets.len() as u64 != self.hi - self.lo + 1
            && !(self.hi == self.lo && self.offsets.len() == 1)
        {
            return Err("offset count does not match the node range".into());
        }
        if self.offsets.windows(2).any(|w| w[0] > w[1])
            || self.offsets.last().copied() != Some(self.neighbours.len() as u64)
        {
            return Err("offsets are not monotonic or do not end at the entry count".into());
        }
        if self.neighbours.iter().any(|&n| n >= node_bound) {
            return Err("a neighbour id lies outside the node id space".into());
        }
        if let Some(perm) = self.perm {
            if perm.len() != self.neighbours.len() || perm.iter().any(|&p| p as usize >= out_len) {
                return Err("permutation length or targets are wrong".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outgoing_and_incoming_agree() {
        let sources = [5, 3, 5, 4, 3];
        let targets = [1, 9, 0, 9, 2];
        let (out, order) = CsrData::build_outgoing(&sources, &targets);
        assert_eq!((out.lo, out.hi), (3, 6));
        assert_eq!(out.offsets, vec![0, 2, 3, 5]);
        assert_eq!(out.neighbours, vec![2, 9, 9, 0, 1]);
        assert_eq!(order, vec![4, 1, 3, 2, 0]);
        let inc = CsrData::build_incoming(&out);
        assert_eq!((inc.lo, inc.hi), (0, 10));
        let csr_in = Csr::new(
            inc.lo,
            inc.hi,
            &inc.offsets,
            &inc.neighbours,
            inc.perm.as_deref(),
        );
        let csr_out = Csr::new(out.lo, out.hi, &out.offsets, &out.neighbours, None);
        assert_eq!(csr_in.neighbours(9), &[3, 4]);
        assert_eq!(csr_in.neighbours(0), &[5]);
        assert_eq!(csr_in.neighbours(7), &[] as &[u64]);
        // Every incoming entry points back at an outgoing entry with swapped ends.
        for t in csr_in.node_range() {
            for q in csr_in.positions(t) {
                let p = csr_in.perm().unwrap()[q] as usize;
                assert_eq!(csr_out.all_neighbours()[p], t);
                assert_eq!(csr_out.owner_of(p), Some(csr_in.all_neighbours()[q]));
            }
        }
        csr_in.validate(10, out.neighbours.len()).unwrap();
        csr_out.validate(10, out.neighbours.len()).unwrap();
        assert_eq!(csr_out.degree(100), 0);
    }

    #[test]
    fn empty_csr() {
        let (out, order) = CsrData::build_outgoing(&[], &[]);
        assert!(order.is_empty());
        let inc = CsrData::build_incoming(&out);
        let csr = Csr::new(
            inc.lo,
            inc.hi,
            &inc.offsets,
            &inc.neighbours,
            inc.perm.as_deref(),
        );
        assert_eq!(csr.neighbours(0), &[] as &[u64]);
        csr.validate(0, 0).unwrap();
    }
}
