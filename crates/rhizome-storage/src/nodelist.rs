//! [`NodeList`]: the neighbour ids of one adjacency list as they are stored —
//! 32-bit in a segment's CSR, 64-bit in the delta layer — read in place
//! without copying.

use rhizome_common::NodeId;
use std::ops::Range;

/// The neighbour ids of one list, read in place. Segment lists store ids in
/// 32 bits (a segment holds at most 2^32 nodes); lists of the delta layer in
/// 64. Reads widen to [`NodeId`]; hot loops that want one tight loop per
/// width match on the variants.
#[derive(Debug, Clone, Copy)]
pub enum NodeList<'a> {
    /// Ids of a segment's CSR.
    Narrow(&'a [u32]),
    /// Ids of the delta layer.
    Wide(&'a [NodeId]),
}

impl<'a> NodeList<'a> {
    /// No ids.
    pub const EMPTY: NodeList<'static> = NodeList::Wide(&[]);

    /// Number of ids.
    #[inline(always)]
    pub fn len(&self) -> usize {
        match self {
            NodeList::Narrow(s) => s.len(),
            NodeList::Wide(s) => s.len(),
        }
    }

    /// True if there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th id. Panics if `i >= len()`, like indexing a slice.
    #[inline(always)]
    pub fn get(&self, i: usize) -> NodeId {
        match self {
            NodeList::Narrow(s) => s[i] as NodeId,
            NodeList::Wide(s) => s[i],
        }
    }

    /// The `i`-th id, `None` past the end.
    #[inline(always)]
    pub fn try_get(&self, i: usize) -> Option<NodeId> {
        match self {
            NodeList::Narrow(s) => s.get(i).map(|&n| n as NodeId),
            NodeList::Wide(s) => s.get(i).copied(),
        }
    }

    /// The ids in order.
    #[inline]
    pub fn iter(&self) -> NodeListIter<'a> {
        match *self {
            NodeList::Narrow(s) => NodeListIter::Narrow(s.iter()),
            NodeList::Wide(s) => NodeListIter::Wide(s.iter()),
        }
    }

    /// The ids as a vector.
    pub fn to_vec(&self) -> Vec<NodeId> {
        self.iter().collect()
    }

    /// Appends the ids to `out`.
    #[inline]
    pub fn extend_into(&self, out: &mut Vec<NodeId>) {
        match self {
            NodeList::Narrow(s) => out.extend(s.iter().map(|&n| n as NodeId)),
            NodeList::Wide(s) => out.extend_from_slice(s),
        }
    }

    /// The positions holding `target` in a list sorted by id (binary search).
    #[inline]
    pub fn equal_range(&self, target: NodeId) -> Range<usize> {
        fn range<T: Copy + Into<u64>>(s: &[T], target: u64) -> Range<usize> {
            let lo = s.partition_point(|&n| n.into() < target);
            let hi = lo + s[lo..].partition_point(|&n| n.into() == target);
            lo..hi
        }
        match self {
            NodeList::Narrow(s) => range(s, target),
            NodeList::Wide(s) => range(s, target),
        }
    }
}

impl PartialEq for NodeList<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<'a> IntoIterator for NodeList<'a> {
    type Item = NodeId;
    type IntoIter = NodeListIter<'a>;
    fn into_iter(self) -> NodeListIter<'a> {
        self.iter()
    }
}

/// Iterator over a [`NodeList`], widening each id.
#[derive(Debug, Clone)]
pub enum NodeListIter<'a> {
    /// Over 32-bit ids.
    Narrow(std::slice::Iter<'a, u32>),
    /// Over 64-bit ids.
    Wide(std::slice::Iter<'a, NodeId>),
}

impl Iterator for NodeListIter<'_> {
    type Item = NodeId;

    #[inline(always)]
    fn next(&mut self) -> Option<NodeId> {
        match self {
            NodeListIter::Narrow(it) => it.next().map(|&n| n as NodeId),
            NodeListIter::Wide(it) => it.next().copied(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            NodeListIter::Narrow(it) => it.size_hint(),
            NodeListIter::Wide(it) => it.size_hint(),
        }
    }
}

impl ExactSizeIterator for NodeListIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_widths_read_alike() {
        let narrow = [1u32, 3, 3, 7];
        let wide = [1u64, 3, 3, 7];
        for list in [NodeList::Narrow(&narrow), NodeList::Wide(&wide)] {
            assert_eq!(list.len(), 4);
            assert_eq!(list.get(3), 7);
            assert_eq!(list.try_get(4), None);
            assert_eq!(list.to_vec(), vec![1, 3, 3, 7]);
            assert_eq!(list.equal_range(3), 1..3);
            assert_eq!(list.equal_range(4), 3..3);
            assert_eq!(list.equal_range(0), 0..0);
            assert_eq!(list.equal_range(9), 4..4);
            let mut out = vec![0];
            list.extend_into(&mut out);
            assert_eq!(out, vec![0, 1, 3, 3, 7]);
            assert_eq!(list.iter().len(), 4);
        }
        assert_eq!(NodeList::Narrow(&narrow), NodeList::Wide(&wide));
        assert!(NodeList::EMPTY.is_empty());
    }
}
