//! Compressed sparse row adjacency, one per relationship type and direction.
//!
//! The outgoing CSR of a type owns its relationships: the relationship at
//! outgoing position `p` has id `type_base + p`, and its property columns are
//! stored in that order, so "traverse and check a property" reads two arrays
//! side by side. The incoming CSR does not store relationship ids: each entry
//! keeps its *rank* in the source's outgoing list (one to eight bytes, the
//! width the largest out-degree needs), so the outgoing position is
//! `out.offsets[source] + rank` — the offset a traversal from the source
//! reads anyway. Each CSR covers the node id range
//! `lo..hi` of the nodes that have such relationships at all, so its offsets
//! are sized by that range rather than by the whole graph. Neighbour lists are
//! sorted by neighbour id.

use crate::segment::ArrayRef;
use rhizome_common::{Error, ErrorKind, NodeId, Result};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The largest node id a segment stores (ids are 32-bit in the CSR).
pub const MAX_NODE_ID: NodeId = u32::MAX as NodeId;

/// The error for a graph whose node ids do not fit a segment.
pub fn too_many_nodes(id: NodeId) -> Error {
    Error::new(
        ErrorKind::ArgumentError,
        format!(
            "node id {id} does not fit a segment: a segment holds at most {} nodes \
             (node ids are stored in 32 bits)",
            MAX_NODE_ID + 1
        ),
    )
}

/// Where a CSR lies in the segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsrMeta {
    /// First node id covered.
    pub lo: NodeId,
    /// One past the last node id covered.
    pub hi: NodeId,
    /// `hi - lo + 1` offsets (`u64`) into `neighbours`.
    pub offsets: ArrayRef,
    /// Neighbour node ids (`u32`: a segment holds at most 2^32 nodes).
    pub neighbours: ArrayRef,
    /// For incoming CSRs: each entry's rank in its source's outgoing list.
    pub ranks: Option<RankMeta>,
}

/// Where the ranks of an incoming CSR lie, and their width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankMeta {
    /// The rank array.
    pub array: ArrayRef,
    /// Bytes per rank: 1, 2, 4 or 8.
    pub width: u8,
}

/// Ranks in memory, at the narrowest width that holds the largest.
#[derive(Debug, Clone, PartialEq)]
pub enum RankData {
    /// Every out-degree is at most 256.
    U8(Vec<u8>),
    /// Every out-degree is at most 65,536.
    U16(Vec<u16>),
    /// Every out-degree fits 32 bits.
    U32(Vec<u32>),
    /// Wider.
    U64(Vec<u64>),
}

impl RankData {
    /// The ranks at the narrowest width that holds the largest.
    pub(crate) fn narrowest(ranks: Vec<u64>) -> RankData {
        let max = ranks.iter().copied().max().unwrap_or(0);
        if max <= u8::MAX as u64 {
            RankData::U8(ranks.into_iter().map(|r| r as u8).collect())
        } else if max <= u16::MAX as u64 {
            RankData::U16(ranks.into_iter().map(|r| r as u16).collect())
        } else if max <= u32::MAX as u64 {
            RankData::U32(ranks.into_iter().map(|r| r as u32).collect())
        } else {
            RankData::U64(ranks)
        }
    }

    /// A view of the ranks.
    pub fn view(&self) -> Ranks<'_> {
        match self {
            RankData::U8(r) => Ranks::U8(r),
            RankData::U16(r) => Ranks::U16(r),
            RankData::U32(r) => Ranks::U32(r),
            RankData::U64(r) => Ranks::U64(r),
        }
    }
}

/// The ranks of an incoming CSR, read in place at their stored width.
#[derive(Debug, Clone, Copy)]
pub enum Ranks<'a> {
    /// One byte each.
    U8(&'a [u8]),
    /// Two bytes each.
    U16(&'a [u16]),
    /// Four bytes each.
    U32(&'a [u32]),
    /// Eight bytes each.
    U64(&'a [u64]),
}

impl<'a> Ranks<'a> {
    /// Number of ranks.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Ranks::U8(r) => r.len(),
            Ranks::U16(r) => r.len(),
            Ranks::U32(r) => r.len(),
            Ranks::U64(r) => r.len(),
        }
    }

    /// True if there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `q`-th rank; `u64::MAX` past the end.
    #[inline(always)]
    pub fn get(&self, q: usize) -> u64 {
        match self {
            Ranks::U8(r) => r.get(q).map_or(u64::MAX, |&x| x as u64),
            Ranks::U16(r) => r.get(q).map_or(u64::MAX, |&x| x as u64),
            Ranks::U32(r) => r.get(q).map_or(u64::MAX, |&x| x as u64),
            Ranks::U64(r) => r.get(q).copied().unwrap_or(u64::MAX),
        }
    }

    /// Ranks `range` (empty if it lies outside).
    #[inline]
    pub fn slice(&self, range: Range<usize>) -> Ranks<'a> {
        match self {
            Ranks::U8(r) => Ranks::U8(r.get(range).unwrap_or(&[])),
            Ranks::U16(r) => Ranks::U16(r.get(range).unwrap_or(&[])),
            Ranks::U32(r) => Ranks::U32(r.get(range).unwrap_or(&[])),
            Ranks::U64(r) => Ranks::U64(r.get(range).unwrap_or(&[])),
        }
    }
}

/// What an incoming CSR needs to find the outgoing position of an entry:
/// its ranks and the outgoing CSR's offsets.
#[derive(Debug, Clone, Copy)]
pub struct BackLinks<'a> {
    ranks: Ranks<'a>,
    out_lo: NodeId,
    out_offsets: &'a [u64],
}

impl<'a> BackLinks<'a> {
    /// Links over `ranks` into the outgoing CSR whose offsets start at node `out_lo`.
    pub(crate) fn new(ranks: Ranks<'a>, out_lo: NodeId, out_offsets: &'a [u64]) -> BackLinks<'a> {
        BackLinks {
            ranks,
            out_lo,
            out_offsets,
        }
    }

    /// The same links restricted to entries `range` (positions then count from its start).
    #[inline]
    pub fn slice(&self, range: Range<usize>) -> BackLinks<'a> {
        BackLinks {
            ranks: self.ranks.slice(range),
            ..*self
        }
    }

    /// The outgoing position of entry `q`, whose source is `source`;
    /// `u64::MAX` if the stored data do not lead anywhere (a damaged file).
    #[inline(always)]
    pub fn position(&self, q: usize, source: NodeId) -> u64 {
        self.source_offset(source).saturating_add(self.ranks.get(q))
    }

    /// Where `source`'s outgoing list starts (its first outgoing position);
    /// `u64::MAX` for a node without one (a damaged file). An entry's
    /// outgoing position is this plus its rank: loops that read ranks at
    /// one width ([`Ranks`]) add the two themselves.
    #[inline(always)]
    pub fn source_offset(&self, source: NodeId) -> u64 {
        self.out_offsets
            .get(source.wrapping_sub(self.out_lo) as usize)
            .copied()
            .unwrap_or(u64::MAX)
    }

    /// Asks the CPU to start loading `source`'s outgoing offset, for a loop
    /// that will call [`BackLinks::source_offset`] on it a few iterations
    /// later (only a hint).
    #[inline(always)]
    pub fn prefetch_source(&self, source: NodeId) {
        if let Some(entry) = self
            .out_offsets
            .get(source.wrapping_sub(self.out_lo) as usize)
        {
            rhizome_common::prefetch(entry);
        }
    }

    /// The outgoing offsets the links add ranks to (of nodes from the
    /// outgoing CSR's first node on).
    pub fn source_offsets(&self) -> &'a [u64] {
        self.out_offsets
    }

    /// The ranks.
    pub fn ranks(&self) -> Ranks<'a> {
        self.ranks
    }
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
    /// Neighbour ids, 32 bits each.
    pub neighbours: Vec<u32>,
    /// Rank of each entry in its source's outgoing list (incoming CSRs only).
    pub ranks: Option<RankData>,
}

impl CsrData {
    /// Builds the outgoing CSR of relationships `sources[i] -> targets[i]`.
    /// Returns it with `order`, where `order[p]` is the input index of the
    /// relationship placed at outgoing position `p` (so property columns can
    /// be permuted the same way). Ties keep input order. Fails if a node id
    /// does not fit the 32 bits a segment stores.
    pub fn build_outgoing(sources: &[NodeId], targets: &[NodeId]) -> Result<(CsrData, Vec<u64>)> {
        if sources.is_empty() {
            return Ok((
                CsrData {
                    offsets: vec![0],
                    ..CsrData::default()
                },
                Vec::new(),
            ));
        }
        let widest = sources.iter().chain(targets).copied().max().unwrap_or(0);
        if widest > MAX_NODE_ID {
            return Err(too_many_nodes(widest));
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
        // Every id was checked to fit 32 bits above.
        let neighbours = order.iter().map(|&i| targets[i as usize] as u32).collect();
        Ok((
            CsrData {
                lo,
                hi,
                offsets,
                neighbours,
                ranks: None,
            },
            order,
        ))
    }

    /// Builds the incoming CSR of an outgoing one.
    pub fn build_incoming(out: &CsrData) -> CsrData {
        if out.neighbours.is_empty() {
            return CsrData {
                offsets: vec![0],
                ranks: Some(RankData::U8(Vec::new())),
                ..CsrData::default()
            };
        }
        let lo = *out.neighbours.iter().min().expect("non-empty") as NodeId;
        let hi = *out.neighbours.iter().max().expect("non-empty") as NodeId + 1;
        let mut offsets = vec![0u64; (hi - lo + 1) as usize];
        for &t in &out.neighbours {
            offsets[(t as NodeId - lo + 1) as usize] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut cursor = offsets.clone();
        let mut neighbours = vec![0; out.neighbours.len()];
        let mut ranks = vec![0u64; out.neighbours.len()];
        // Walking sources in id order keeps every incoming list sorted.
        for (k, w) in out.offsets.windows(2).enumerate() {
            let source = out.lo + k as u64;
            for p in w[0]..w[1] {
                let t = out.neighbours[p as usize] as NodeId;
                let slot = &mut cursor[(t - lo) as usize];
                // Sources are at most the largest id build_outgoing checked.
                neighbours[*slot as usize] = source as u32;
                ranks[*slot as usize] = p - w[0];
                *slot += 1;
            }
        }
        CsrData {
            lo,
            hi,
            offsets,
            neighbours,
            ranks: Some(RankData::narrowest(ranks)),
        }
    }
}

/// A CSR read from a segment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Csr<'a> {
    lo: NodeId,
    hi: NodeId,
    offsets: &'a [u64],
    neighbours: &'a [u32],
    back: Option<BackLinks<'a>>,
}

impl<'a> Csr<'a> {
    /// A CSR over mapped arrays; `offsets.len()` must be `hi - lo + 1`
    /// (checked by the caller). `back` is `Some` for incoming CSRs.
    pub(crate) fn new(
        lo: NodeId,
        hi: NodeId,
        offsets: &'a [u64],
        neighbours: &'a [u32],
        back: Option<BackLinks<'a>>,
    ) -> Csr<'a> {
        Csr {
            lo,
            hi,
            offsets,
            neighbours,
            back,
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
    pub fn neighbours(&self, node: NodeId) -> &'a [u32] {
        &self.neighbours[self.positions(node)]
    }

    /// The degree of `node` in this CSR.
    #[inline]
    pub fn degree(&self, node: NodeId) -> u64 {
        // Two neighbouring offsets, one bounds check (counting loops call
        // this per entry); as in `positions`, damaged offsets give 0.
        let k = node.wrapping_sub(self.lo) as usize;
        match self.offsets.get(k..k.saturating_add(2)) {
            Some(&[a, b]) if a <= b && b <= self.neighbours.len() as u64 => b - a,
            _ => 0,
        }
    }

    /// All neighbour ids, in position order.
    pub fn all_neighbours(&self) -> &'a [u32] {
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

    /// For incoming CSRs: how entries lead to outgoing positions.
    #[inline]
    pub fn back_links(&self) -> Option<BackLinks<'a>> {
        self.back
    }

    /// True for an incoming CSR (its entries lead to outgoing positions).
    #[inline]
    pub fn is_incoming(&self) -> bool {
        self.back.is_some()
    }

    /// For incoming CSRs: the outgoing position of entry `q` (`u64::MAX`
    /// for an outgoing CSR or a position out of range).
    #[inline(always)]
    pub fn out_position(&self, q: usize) -> u64 {
        match (&self.back, self.neighbours.get(q)) {
            (Some(back), Some(&source)) => back.position(q, source as NodeId),
            _ => u64::MAX,
        }
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

    /// Checks offsets, neighbour bounds and the ranks; returns the first problem.
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
        if self.neighbours.iter().any(|&n| n as NodeId >= node_bound) {
            return Err("a neighbour id lies outside the node id space".into());
        }
        if let Some(back) = &self.back {
            if back.ranks.len() != self.neighbours.len() {
                return Err("rank count differs from the entry count".into());
            }
            for (q, &source) in self.neighbours.iter().enumerate() {
                let k = (source as NodeId).wrapping_sub(back.out_lo) as usize;
                let (Some(&a), Some(&b)) = (back.out_offsets.get(k), back.out_offsets.get(k + 1))
                else {
                    return Err(format!("entry {q}: source {source} has no outgoing list"));
                };
                let rank = back.ranks.get(q);
                if rank >= b.saturating_sub(a) || (a + rank) as usize >= out_len {
                    return Err(format!(
                        "entry {q}: rank {rank} lies outside the source's outgoing list"
                    ));
                }
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
        let (out, order) = CsrData::build_outgoing(&sources, &targets).unwrap();
        assert_eq!((out.lo, out.hi), (3, 6));
        assert_eq!(out.offsets, vec![0, 2, 3, 5]);
        assert_eq!(out.neighbours, vec![2, 9, 9, 0, 1]);
        assert_eq!(order, vec![4, 1, 3, 2, 0]);
        let inc = CsrData::build_incoming(&out);
        assert_eq!((inc.lo, inc.hi), (0, 10));
        assert_eq!(inc.ranks, Some(RankData::U8(vec![0, 1, 0, 1, 0])));
        let ranks = inc.ranks.as_ref().unwrap();
        let back = BackLinks::new(ranks.view(), out.lo, &out.offsets);
        let csr_in = Csr::new(inc.lo, inc.hi, &inc.offsets, &inc.neighbours, Some(back));
        let csr_out = Csr::new(out.lo, out.hi, &out.offsets, &out.neighbours, None);
        assert_eq!(csr_in.neighbours(9), &[3, 4]);
        assert_eq!(csr_in.neighbours(0), &[5]);
        assert_eq!(csr_in.neighbours(7), &[] as &[u32]);
        // Every incoming entry points back at an outgoing entry with swapped ends.
        for t in csr_in.node_range() {
            for q in csr_in.positions(t) {
                let p = csr_in.out_position(q) as usize;
                assert_eq!(csr_out.all_neighbours()[p] as NodeId, t);
                assert_eq!(
                    csr_out.owner_of(p),
                    Some(csr_in.all_neighbours()[q] as NodeId)
                );
            }
        }
        csr_in.validate(10, out.neighbours.len()).unwrap();
        csr_out.validate(10, out.neighbours.len()).unwrap();
        assert_eq!(csr_out.degree(100), 0);
    }

    #[test]
    fn empty_csr() {
        let (out, order) = CsrData::build_outgoing(&[], &[]).unwrap();
        assert!(order.is_empty());
        let inc = CsrData::build_incoming(&out);
        let ranks = inc.ranks.as_ref().unwrap();
        let back = BackLinks::new(ranks.view(), out.lo, &out.offsets);
        let csr = Csr::new(inc.lo, inc.hi, &inc.offsets, &inc.neighbours, Some(back));
        assert_eq!(csr.neighbours(0), &[] as &[u32]);
        csr.validate(0, 0).unwrap();
    }

    #[test]
    fn ranks_take_the_narrowest_width_and_damage_is_reported() {
        assert!(matches!(RankData::narrowest(vec![255]), RankData::U8(_)));
        assert!(matches!(RankData::narrowest(vec![256]), RankData::U16(_)));
        assert!(matches!(
            RankData::narrowest(vec![70_000]),
            RankData::U32(_)
        ));
        assert!(matches!(
            RankData::narrowest(vec![1 << 40]),
            RankData::U64(_)
        ));
        // A hub with 300 relationships needs two-byte ranks.
        let sources = vec![0u64; 300];
        let targets: Vec<u64> = (1..=300).collect();
        let (out, _) = CsrData::build_outgoing(&sources, &targets).unwrap();
        let inc = CsrData::build_incoming(&out);
        let ranks = inc.ranks.as_ref().unwrap();
        assert!(matches!(ranks, RankData::U16(_)));
        let back = BackLinks::new(ranks.view(), out.lo, &out.offsets);
        let csr_in = Csr::new(inc.lo, inc.hi, &inc.offsets, &inc.neighbours, Some(back));
        for q in 0..300 {
            assert_eq!(csr_in.out_position(q), q as u64);
        }
        csr_in.validate(301, 300).unwrap();
        // A rank past its source's list is caught, and reads give no position.
        let bad: Vec<u16> = (0..299).chain([300]).collect();
        let back = BackLinks::new(Ranks::U16(&bad), out.lo, &out.offsets);
        let damaged = Csr::new(inc.lo, inc.hi, &inc.offsets, &inc.neighbours, Some(back));
        assert!(damaged.validate(301, 300).is_err());
        let back = BackLinks::new(Ranks::U8(&[0]), 5, &out.offsets);
        let damaged = Csr::new(inc.lo, inc.hi, &inc.offsets, &inc.neighbours, Some(back));
        assert!(damaged.validate(301, 300).is_err());
        assert_eq!(damaged.out_position(0), u64::MAX);
        assert_eq!(damaged.out_position(1000), u64::MAX);
    }

    #[test]
    fn node_ids_past_32_bits_are_refused() {
        let err = CsrData::build_outgoing(&[0], &[MAX_NODE_ID + 1]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::ArgumentError);
        assert!(err.message.contains("32 bits"), "{}", err.message);
        assert!(CsrData::build_outgoing(&[MAX_NODE_ID + 1], &[0]).is_err());
        let (out, _) = CsrData::build_outgoing(&[MAX_NODE_ID], &[0]).unwrap();
        assert_eq!(out.neighbours, vec![0]);
        let inc = CsrData::build_incoming(&out);
        assert_eq!(inc.neighbours, vec![u32::MAX]);
    }
}
