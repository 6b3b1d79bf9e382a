//! Readers for the hot loops of traversals, resolved once per operator so
//! that reading over base + delta costs one page lookup on top of the base
//! path: [`TypeLists`] (one relationship type's lists in one direction) and
//! [`RelFloats`] (one numeric relationship property).

use crate::catalog::{PropertyKeyId, RelTypeId};
use crate::column::ColumnView;
use crate::csr::Csr;
use crate::delta::AdjMap;
use crate::numbers::{NumberPages, Written};
use crate::snapshot::{Direction, Snapshot};
use rhizome_common::{NodeId, RelId, Value};
use std::ops::Range;

/// The lists of one relationship type in one direction over base + delta.
///
/// A node whose relationships of the type changed since the last checkpoint
/// has its complete list in the delta ([`TypeLists::changed_list`]); every
/// other node's list is its slice of the base CSR ([`TypeLists::csr`]), all
/// of whose relationships are live and unchanged in their endpoints.
#[derive(Debug, Clone, Copy)]
pub struct TypeLists<'a> {
    csr: Csr<'a>,
    first: RelId,
    count: u64,
    changed: Option<&'a AdjMap>,
}

impl<'a> TypeLists<'a> {
    /// The base CSR of the type in this direction.
    #[inline]
    pub fn csr(&self) -> &Csr<'a> {
        &self.csr
    }

    /// First base relationship id of the type: the relationship at outgoing
    /// position `p` of the base CSR is `first + p`, and `p` is its property row.
    #[inline]
    pub fn first(&self) -> RelId {
        self.first
    }

    /// The base relationship ids of the type.
    #[inline]
    pub fn base_ids(&self) -> Range<RelId> {
        self.first..self.first + self.count
    }

    /// True if no list of the type changed since the last checkpoint, so
    /// every list is a base CSR slice.
    #[inline]
    pub fn all_base(&self) -> bool {
        self.changed.is_none()
    }

    /// The node's complete list (neighbours, relationship ids; sorted by
    /// neighbour) if its relationships of the type changed since the last
    /// checkpoint; `None` means the base CSR slice is the list.
    #[inline]
    pub fn changed_list(&self, node: NodeId) -> Option<(&'a [NodeId], &'a [RelId])> {
        self.changed?.get(node)
    }

    /// Calls `f(node, length)` for every node whose list changed since the
    /// last checkpoint (the nodes [`TypeLists::changed_list`] answers for),
    /// in node order; every other node's list is its base CSR slice. Costs
    /// the changed lists' number plus a pass over the delta's pages, not a
    /// lookup per node.
    pub fn for_each_changed_len(&self, f: impl FnMut(NodeId, usize)) {
        if let Some(changed) = self.changed {
            changed.for_each_len(f);
        }
    }

    /// Calls `f(node, list)` for every node whose list changed since the
    /// last checkpoint, in node order, as [`TypeLists::changed`] gives it:
    /// one pass over the delta's pages, not a lookup per node.
    pub fn for_each_changed(&self, mut f: impl FnMut(NodeId, ChangedList<'a>)) {
        if let Some(changed) = self.changed {
            changed.for_each_changed(|node, c| f(node, c.into()));
        }
    }

    /// [`TypeLists::changed_list`] with the list's entries created since
    /// the checkpoint apart (see [`ChangedList`]).
    #[inline(always)]
    pub fn changed(&self, node: NodeId) -> Option<ChangedList<'a>> {
        Some(self.changed?.get_changed(node)?.into())
    }
}

/// A node's complete list of one type and direction in the delta (its
/// relationships of the type changed since the last checkpoint), from
/// [`TypeLists::changed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangedList<'a> {
    /// Neighbours, sorted (ties by relationship id).
    pub neighbours: &'a [NodeId],
    /// Relationship ids, entry by entry.
    pub rels: &'a [RelId],
    /// The ids of the entries created since the checkpoint, ascending
    /// (`None` while a write transaction is changing the list's page: then
    /// only the list tells them apart). Relationships created together
    /// have consecutive ids.
    pub created: Option<&'a [RelId]>,
}

impl<'a> From<crate::delta::ChangedList<'a>> for ChangedList<'a> {
    #[inline(always)]
    fn from(c: crate::delta::ChangedList<'a>) -> ChangedList<'a> {
        ChangedList {
            neighbours: c.neighbours,
            rels: c.rels,
            created: c.created,
        }
    }
}

impl ChangedList<'_> {
    /// True if the list is the node's whole base list plus its created
    /// entries, given the node's base degree: the other entries are
    /// relationships of the node's base list, so that holds exactly when
    /// they number the base degree. Then the list can be read as the
    /// base CSR slice and [`ChangedList::created`]. False if the created
    /// entries are not known apart.
    #[inline]
    pub fn keeps_base(&self, base_degree: u64) -> bool {
        self.created
            .is_some_and(|c| (self.rels.len() - c.len()) as u64 == base_degree)
    }
}

/// A numeric relationship property of one type read as floats without
/// building values: the base column, with the values written since the last
/// checkpoint in front of it. From [`Snapshot::rel_floats`].
#[derive(Debug, Clone, Copy)]
pub struct RelFloats<'a> {
    /// The base column as plain floats, when it is one.
    dense: Option<&'a [f64]>,
    column: Option<&'a ColumnView<'a>>,
    first: RelId,
    count: u64,
    written: Option<&'a NumberPages>,
    /// The lowest relationship id written since the checkpoint
    /// (`RelId::MAX` if none): a read of a lower id is one comparison away
    /// from the base column.
    low: RelId,
}

impl<'a> RelFloats<'a> {
    /// The value of live relationship `rel` of the type as a float; `None`
    /// if absent or not a number.
    #[inline(always)]
    pub fn get(&self, rel: RelId) -> Option<f64> {
        if rel >= self.low {
            if let Some(written) = self.written {
                match written.get(rel) {
                    Written::Number(x) => return Some(x),
                    Written::Absent => return None,
                    Written::Unset => {}
                }
            }
        }
        let row = rel.wrapping_sub(self.first);
        if row >= self.count {
            return None;
        }
        if let Some(values) = self.dense {
            return values.get(row as usize).copied();
        }
        self.column_value(row)
    }

    /// Starts loading the value of `rel` into the cache (its slot of the
    /// values written since the checkpoint, or its base value), for a loop
    /// that will [`RelFloats::get`] it a few iterations later.
    #[inline(always)]
    pub fn prefetch(&self, rel: RelId) {
        if rel >= self.low {
            if let Some(written) = self.written {
                written.prefetch(rel);
            }
        }
        if let Some(value) = self
            .dense
            .and_then(|values| values.get(rel.wrapping_sub(self.first) as usize))
        {
            rhizome_common::prefetch(value);
        }
    }

    /// For the complete list `rels` of a node whose relationships of the
    /// type changed since the checkpoint: how many of its entries are base
    /// relationships, and how many of the others (created since the
    /// checkpoint, so their values are all among the written ones) have a
    /// number passing `test`.
    ///
    /// A base relationship of the type in a node's list is one of the
    /// node's base list, so when the first figure equals the node's base
    /// degree, the list is its base list plus the created entries, and
    /// its passing count is the base list's (a column slice) plus the
    /// second figure. The loop does not branch on an entry's kind, since
    /// a changed list holds both kinds in neighbour order.
    #[inline]
    pub fn count_created(&self, rels: &[RelId], test: impl Fn(f64) -> bool) -> (u64, u64) {
        let split = self.first.saturating_add(self.count);
        let (mut base, mut passing) = (0u64, 0u64);
        match self.written {
            None => base = rels.iter().filter(|&&r| r < split).count() as u64,
            Some(written) => {
                for (i, &r) in rels.iter().enumerate() {
                    // Created ids of one list are mostly consecutive, in
                    // neighbour order: request the slots a few entries on.
                    if let Some(&ahead) = rels.get(i + 8) {
                        written.prefetch(ahead);
                    }
                    let created = r >= split;
                    // A base entry reads the slot at `split` instead (its
                    // own might be a base value written since), and the
                    // result is masked out.
                    let (number, bits) = written.number_bits(r.max(split));
                    base += u64::from(!created);
                    passing += u64::from(created & number & test(f64::from_bits(bits)));
                }
            }
        }
        (base, passing)
    }

    /// How many of `created` — relationships of the type created since the
    /// checkpoint, ascending (see [`ChangedList::created`]) — have a
    /// number passing `test`. Relationships created together have
    /// consecutive ids, so this mostly reads slices of the written values.
    #[inline]
    pub fn count_written(&self, created: &[RelId], test: impl Fn(f64) -> bool) -> u64 {
        match self.written {
            Some(written) if !created.is_empty() => written.count_passing(created, test),
            _ => 0,
        }
    }

    /// Starts loading the written value of `rel` (a relationship created
    /// since the checkpoint) into the cache.
    #[inline(always)]
    pub fn prefetch_written(&self, rel: RelId) {
        if let Some(written) = self.written {
            written.prefetch(rel);
        }
    }

    #[inline(never)]
    fn column_value(&self, row: u64) -> Option<f64> {
        match self.column?.get(row) {
            Value::Float(x) => Some(x),
            Value::Int(i) => Some(i as f64),
            _ => None,
        }
    }

    /// The base values of property rows `rows` as a plain float slice, if the
    /// column is one and no relationship of those rows was written since the
    /// last checkpoint.
    #[inline]
    pub fn base_slice(&self, rows: Range<usize>) -> Option<&'a [f64]> {
        let values = self.dense?.get(rows.clone())?;
        let ids = self.first + rows.start as u64..self.first + rows.end as u64;
        self.written
            .is_none_or(|w| w.untouched(ids))
            .then_some(values)
    }

    /// True if the base column is plain floats.
    #[inline]
    pub fn is_dense(&self) -> bool {
        self.dense.is_some()
    }

    /// True if `other` reads the same values (the same type's column and
    /// the same written pages), so a relationship passes a filter through
    /// one exactly when it does through the other.
    #[inline]
    pub fn same_values(&self, other: &RelFloats<'_>) -> bool {
        self.first == other.first
            && self.count == other.count
            && self.dense.map(<[f64]>::as_ptr) == other.dense.map(<[f64]>::as_ptr)
            && self.written.map(|w| w as *const NumberPages)
                == other.written.map(|w| w as *const NumberPages)
            && self.column.map(|c| c as *const ColumnView<'_>)
                == other.column.map(|c| c as *const ColumnView<'_>)
    }
}

/// Traversal readers.
impl Snapshot {
    /// The lists of `rel_type` in direction `dir`, if the type has base
    /// relationships (a type created since the last checkpoint has none:
    /// read it through [`Snapshot::adjacency`]).
    pub fn type_lists(&self, rel_type: RelTypeId, dir: Direction) -> Option<TypeLists<'_>> {
        let view = self.store().rel_view(rel_type)?;
        let changed = if self.rel_type_changed(rel_type) {
            self.delta()
                .adj
                .get(rel_type as usize)
                .map(|maps| &maps[usize::from(dir == Direction::Incoming)])
        } else {
            None
        };
        Some(TypeLists {
            csr: match dir {
                Direction::Outgoing => view.outgoing,
                Direction::Incoming => view.incoming,
            },
            first: view.base,
            count: view.count,
            changed,
        })
    }

    /// Property `key` of `rel_type`'s relationships as floats, over base +
    /// delta.
    pub fn rel_floats(&self, rel_type: RelTypeId, key: PropertyKeyId) -> RelFloats<'_> {
        let view = self.store().rel_view(rel_type);
        let column = view
            .and_then(|v| v.columns.get(key as usize))
            .and_then(|c| c.as_ref());
        let written = if self.is_base_only() {
            None
        } else {
            self.delta().rel_numbers.get(key as usize)
        };
        RelFloats {
            dense: column.and_then(|c| c.dense_f64()),
            column,
            first: view.map_or(0, |v| v.base),
            count: view.map_or(0, |v| v.count),
            written,
            low: written.map_or(RelId::MAX, NumberPages::low),
        }
    }
}

/// Membership tests.
impl Snapshot {
    /// True if relationship `rel` is in the `dir` list of `node` for
    /// `rel_type`, in constant time also when the type changed since the
    /// last checkpoint: a relationship the delta knows is checked there;
    /// any other is a live base relationship, whose endpoints the base CSR
    /// still gives.
    #[inline]
    pub fn rel_in_list(
        &self,
        rel: RelId,
        node: NodeId,
        rel_type: RelTypeId,
        dir: Direction,
    ) -> bool {
        if !self.is_base_only() {
            if let Some(r) = self.delta().rels.get(rel) {
                return !r.deleted
                    && r.rel_type == rel_type
                    && match dir {
                        Direction::Outgoing => r.start == node,
                        Direction::Incoming => r.end == node,
                    };
            }
        }
        let Some(view) = self.store().rel_view(rel_type) else {
            return false;
        };
        if rel < view.base || rel >= view.base + view.count {
            return false;
        }
        let p = (rel - view.base) as usize;
        match dir {
            Direction::Outgoing => view.outgoing.positions(node).contains(&p),
            Direction::Incoming => {
                view.outgoing.all_neighbours().get(p).map(|&n| n as NodeId) == Some(node)
            }
        }
    }
}
