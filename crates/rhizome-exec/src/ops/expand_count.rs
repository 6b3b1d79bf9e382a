//! `ExpandCount`: counts what an `Expand` of a pattern's last hop would
//! produce, walking the hops before it without producing rows.
//!
//! Relationship uniqueness is kept by subtracting, from each counted list,
//! the relationships the row and the walk already used. The walk knows the
//! endpoints of the relationships it walked, so testing those against a
//! list is a comparison; relationships bound by the input row are tested
//! with [`ListMembership`].
//!
//! A hop that is one relationship type in one direction, with no label test
//! and at most a numeric filter, is a [`PlainHop`]: read as array loops over
//! the base CSR, or over the node's list in the delta when its relationships
//! changed since the last checkpoint, so counting over a large delta stays
//! close to counting after a checkpoint.

use super::adjacency::{
    excluded_rels, has_labels, maybe_split, prefetch_levels, skip_entry, walks, LevelHop,
};
use crate::chunk::{Chunk, Column, ColumnData, NULL_ID};
use crate::compile::{CExpr, CNode, Types};
use crate::expr::{Evaluator, Row};
use crate::operator::{Operator, OperatorResult, TaskCtx, NEED_MORE};
use rhizome_common::{NodeId, RelId, Result, Value};
use rhizome_plan::{BinaryOp, ExpandDirection, OpKind, Slot};
use rhizome_storage::csr::{BackLinks, Ranks};
use rhizome_storage::{
    ChangedList, Direction, GraphRead, LabelId, RelFloats, RelTypeId, Snapshot, TypeLists,
};
use std::cell::Cell;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Answers "is relationship `r` in the `d`-list of `node` for type `t`" in
/// constant time from the type's outgoing CSR: an outgoing list is a
/// contiguous id range, an incoming entry's relationship ends at the node.
struct ListMembership<'a> {
    snap: &'a Snapshot,
    rel_type: RelTypeId,
    base: u64,
    count: u64,
    out: Option<rhizome_storage::csr::Csr<'a>>,
}

impl<'a> ListMembership<'a> {
    fn new(snap: &'a Snapshot, t: RelTypeId) -> ListMembership<'a> {
        let (base, count) = snap
            .rel_type_ranges()
            .find(|(id, _, _)| *id == t)
            .map_or((0, 0), |(_, base, count)| (base, count));
        ListMembership {
            snap,
            rel_type: t,
            base,
            count,
            out: snap.csr(t, Direction::Outgoing),
        }
    }

    #[inline]
    fn contains(&self, r: RelId, node: NodeId, d: Direction) -> bool {
        let Some(out) = &self.out else {
            // The type changed since the last checkpoint: ask the snapshot.
            return self.snap.rel_in_list(r, node, self.rel_type, d);
        };
        if r < self.base || r >= self.base + self.count {
            return false;
        }
        let p = (r - self.base) as usize;
        match d {
            Direction::Outgoing => out.positions(node).contains(&p),
            Direction::Incoming => out.all_neighbours().get(p).map(|&n| n as NodeId) == Some(node),
        }
    }
}

/// A relationship the walk must not use again.
#[derive(Debug, Clone, Copy)]
enum Used {
    /// Bound by the input row, endpoints not looked up.
    Bound(RelId),
    /// Walked by this operator (or bound by the input row and looked up),
    /// so its type and endpoints are known.
    Walked {
        rel: RelId,
        rel_type: RelTypeId,
        start: NodeId,
        end: NodeId,
    },
}

impl Used {
    /// The relationship `rel` of type `t`, walked in direction `d` from `from` to `to`.
    #[inline(always)]
    fn walked(rel: RelId, t: RelTypeId, d: Direction, from: NodeId, to: NodeId) -> Used {
        let (start, end) = match d {
            Direction::Outgoing => (from, to),
            Direction::Incoming => (to, from),
        };
        Used::Walked {
            rel,
            rel_type: t,
            start,
            end,
        }
    }

    #[inline(always)]
    fn rel(&self) -> RelId {
        match *self {
            Used::Bound(rel) | Used::Walked { rel, .. } => rel,
        }
    }

    /// True if it is a self-loop (both ends the same node).
    #[inline]
    fn is_loop(&self, snap: &Snapshot) -> bool {
        match *self {
            Used::Bound(rel) => snap.relationship(rel).is_some_and(|i| i.start == i.end),
            Used::Walked { start, end, .. } => start == end,
        }
    }

    /// True if it is in `node`'s `d`-list of type `t` (`members` answers for bound ones).
    #[inline(always)]
    fn in_list(&self, node: NodeId, t: RelTypeId, d: Direction, members: &ListMembership) -> bool {
        match *self {
            Used::Bound(rel) => members.contains(rel, node, d),
            Used::Walked {
                rel_type,
                start,
                end,
                ..
            } => {
                rel_type == t
                    && match d {
                        Direction::Outgoing => start == node,
                        Direction::Incoming => end == node,
                    }
            }
        }
    }
}

/// True if `path` holds relationship `r`.
#[inline(always)]
fn uses(path: &[Used], r: RelId) -> bool {
    path.iter().any(|u| u.rel() == r)
}

/// A relationship predicate `rel.key <op> number` evaluated on the property
/// values directly, without building values.
#[derive(Clone, Copy)]
struct NumericRelFilter {
    key: Option<u32>,
    op: BinaryOp,
    value: f64,
}

impl NumericRelFilter {
    fn recognise(rel_slot: Slot, e: &CExpr) -> Option<NumericRelFilter> {
        let CExpr::Binary(op, a, b) = e else {
            return None;
        };
        let number = |e: &CExpr| match e {
            CExpr::Literal(Value::Int(i)) => Some(*i as f64),
            CExpr::Literal(Value::Float(x)) => Some(*x),
            _ => None,
        };
        let property = |e: &CExpr| match e {
            CExpr::Property(base, key) if matches!(**base, CExpr::Slot(s) if s == rel_slot) => {
                Some(key.id)
            }
            _ => None,
        };
        let flip = |op: BinaryOp| match op {
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::Le => BinaryOp::Ge,
            BinaryOp::Ge => BinaryOp::Le,
            other => other,
        };
        if !matches!(
            op,
            BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        ) {
            return None;
        }
        match (property(a), number(b), property(b), number(a)) {
            (Some(key), Some(value), _, _) => Some(NumericRelFilter {
                key,
                op: *op,
                value,
            }),
            (_, _, Some(key), Some(value)) => Some(NumericRelFilter {
                key,
                op: flip(*op),
                value,
            }),
            _ => None,
        }
    }

    #[inline]
    fn test(&self, x: f64) -> bool {
        match self.op {
            BinaryOp::Lt => x < self.value,
            BinaryOp::Gt => x > self.value,
            BinaryOp::Le => x <= self.value,
            BinaryOp::Ge => x >= self.value,
            BinaryOp::Eq => x == self.value,
            _ => x != self.value,
        }
    }
}

/// Runs `$body` with `$test` bound to `$filter`'s comparison as a closure
/// of its own operator, so a loop in `$body` is compiled once per operator
/// and does not branch on it per value.
macro_rules! with_test {
    ($filter:expr, |$test:ident| $body:expr) => {{
        let value = $filter.value;
        match $filter.op {
            BinaryOp::Lt => {
                let $test = |x: f64| x < value;
                $body
            }
            BinaryOp::Gt => {
                let $test = |x: f64| x > value;
                $body
            }
            BinaryOp::Le => {
                let $test = |x: f64| x <= value;
                $body
            }
            BinaryOp::Ge => {
                let $test = |x: f64| x >= value;
                $body
            }
            BinaryOp::Eq => {
                let $test = |x: f64| x == value;
                $body
            }
            _ => {
                let $test = |x: f64| x != value;
                $body
            }
        }
    }};
}

/// One walk step of an `ExpandCount`: a hop's (type, direction) pairs,
/// labels, relationship predicate, and the list-membership helpers.
struct Step<'a> {
    walks: Vec<(RelTypeId, Direction)>,
    members: Vec<ListMembership<'a>>,
    direction: ExpandDirection,
    labels: &'a [Option<LabelId>],
    predicate: Option<(Slot, &'a CExpr)>,
    numeric: Option<NumericRelFilter>,
    /// Per walk: the numeric filter's property as floats (`None` if the
    /// property key does not exist, so nothing passes).
    floats: Vec<Option<RelFloats<'a>>>,
}

impl<'a> Step<'a> {
    fn new(
        snap: &'a Snapshot,
        types: &Types,
        direction: ExpandDirection,
        labels: &'a [Option<LabelId>],
        predicate: Option<(Slot, &'a CExpr)>,
    ) -> Step<'a> {
        let walks = walks(snap, types, direction);
        let numeric = predicate.and_then(|(slot, e)| NumericRelFilter::recognise(slot, e));
        let floats = walks
            .iter()
            .map(|&(t, _)| Some(snap.rel_floats(t, numeric.as_ref()?.key?)))
            .collect();
        Step {
            members: walks
                .iter()
                .map(|&(t, _)| ListMembership::new(snap, t))
                .collect(),
            walks,
            direction,
            labels,
            numeric,
            floats,
            predicate,
        }
    }

    /// True if relationship `r` of walk `w` passes the numeric filter.
    #[inline]
    fn passes_numeric(&self, f: &NumericRelFilter, w: usize, r: RelId) -> bool {
        self.floats[w]
            .as_ref()
            .and_then(|v| v.get(r))
            .is_some_and(|x| f.test(x))
    }

    /// Whether relationship `r` of walk `w` passes the predicate.
    #[inline]
    fn passes(
        &self,
        eval: &Evaluator<'_>,
        input: &Chunk,
        row: usize,
        w: usize,
        r: RelId,
    ) -> Result<bool> {
        let Some((slot, e)) = self.predicate else {
            return Ok(true);
        };
        if let Some(f) = &self.numeric {
            return Ok(self.passes_numeric(f, w, r));
        }
        let locals = [(slot, Value::Relationship(r))];
        eval.predicate(
            e,
            &Row {
                chunk: input,
                row,
                locals: &locals,
            },
        )
    }
}

/// Counts what an `Expand` of the last hop would have produced, after
/// walking the hops of its prefix without producing rows.
pub struct ExpandCount {
    node: Arc<CNode>,
    /// Filtered counts of the counted hop's lists, shared by the tasks of
    /// this run (see [`CountMemo`]); made when a task has walked enough
    /// entries to pay for it ([`MemoSource`]).
    memo: OnceLock<Option<CountMemo>>,
}

impl ExpandCount {
    /// The operator for an `ExpandCount` node.
    pub fn new(node: Arc<CNode>) -> ExpandCount {
        ExpandCount {
            node,
            memo: OnceLock::new(),
        }
    }
}

/// Where a filtered counted hop gets its [`CountMemo`]: the operator's,
/// made once this task has walked as many entries as one sixteenth of the
/// node ids, so that a short walk (an inner run per outer row) never pays
/// for zeroing a memo the size of the graph.
struct MemoSource<'a> {
    cell: &'a OnceLock<Option<CountMemo>>,
    node_bound: NodeId,
    walked: Cell<u64>,
}

/// How many passing relationships each node's counted list holds, filled in
/// as the walk reaches the nodes and shared by all tasks of one run of the
/// operator. A counted hop with a filter reads a column slice per list, and
/// one over a delta finds each list in the delta's map, while a walk
/// reaches the same node once per path through it (A3/A4: five times on
/// average), so each list is counted once instead. Slots hold count + 1, 0
/// for not yet known; racing tasks store the same value, so relaxed atomics
/// suffice. Dense by node id, and so only made for graphs of at most
/// [`CountMemo::MAX_NODES`] nodes; untouched pages of it are never mapped.
struct CountMemo {
    slots: Box<[AtomicU32]>,
    /// For a filtered hop over a changed type: after how many changed
    /// lists counted as the walks reached them the others are counted in
    /// one pass ([`CountMemo::fill_changed`]); `u64::MAX` for never.
    eager_after: u64,
    /// Changed lists counted as the walks reached them (by every task of
    /// the run: one task walks one morsel, too few to decide alone). The
    /// one task whose count reaches `eager_after` makes the pass.
    counted_changed: AtomicU64,
}

impl CountMemo {
    const MAX_NODES: u64 = 1 << 26;

    /// A memo for node ids `0..node_bound`, if that is not too many.
    fn new(node_bound: NodeId) -> Option<CountMemo> {
        if node_bound > Self::MAX_NODES {
            return None;
        }
        let zeroed = vec![0u32; node_bound as usize].into_boxed_slice();
        // SAFETY: `AtomicU32` has the size, alignment and bit validity of
        // `u32`, so a boxed slice of one is a boxed slice of the other.
        let slots = unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [AtomicU32]) };
        Some(CountMemo {
            slots,
            eager_after: u64::MAX,
            counted_changed: AtomicU64::new(0),
        })
    }

    /// The share of a filtered hop's changed lists (one in
    /// `EAGER_SHARE`) counted as the walks reach them before the rest are
    /// counted in one pass. Reached one by one, a changed list
    /// costs a lookup in the delta's pages and a few cache misses that the
    /// walk cannot hide (its created ids, their values); in one pass the
    /// lists are read in the order they are stored. A walk that reached an
    /// eighth of them (A4 over a 15% delta reaches most) will likely reach
    /// many more, and the pass costs at most a few times what the lazy
    /// counting already spent.
    const EAGER_SHARE: u64 = 8;

    /// Arms [`CountMemo::fill_changed`] for `hop`, a filtered hop over a
    /// changed type: counts its changed lists (one pass over the delta's
    /// presence words).
    fn arm_eager_fill(&mut self, hop: &PlainHop<'_>) {
        if hop.filter.is_none() || hop.lists.all_base() {
            return;
        }
        let mut lists = 0u64;
        hop.lists.for_each_changed_len(|_, _| lists += 1);
        self.eager_after = (lists / Self::EAGER_SHARE).max(64);
    }

    /// Notes that a task counted a changed list as its walk reached it;
    /// the one whose note reaches `eager_after` counts the rest in one pass.
    #[inline(always)]
    fn note_changed(&self, hop: &PlainHop<'_>) {
        // No pass to make: no shared counter to touch per list either.
        if self.eager_after == u64::MAX {
            return;
        }
        if self.counted_changed.fetch_add(1, Ordering::Relaxed) + 1 == self.eager_after {
            self.fill_changed(hop);
        }
    }

    /// Counts every changed list of `hop` not counted yet, in one pass
    /// over the delta's pages (once per memo: see
    /// [`CountMemo::note_changed`]).
    #[inline(never)]
    fn fill_changed(&self, hop: &PlainHop<'_>) {
        let Some((f, v)) = &hop.filter else {
            return;
        };
        // The lists not counted yet, in the order they are stored. A list's
        // values lie apart from the one before it (its created ids are
        // where its commit put them), so each is requested when it enters
        // a window of `AHEAD` lists and counted when it leaves it.
        const AHEAD: usize = 8;
        let mut window: [Option<(NodeId, ChangedList<'_>)>; AHEAD] = [None; AHEAD];
        let count = |node: NodeId, list: ChangedList<'_>| {
            let n = hop.count_changed(node, list, f, v);
            if let (Some(slot), true) = (self.slots.get(node as usize), n < u64::from(u32::MAX)) {
                slot.store(n as u32 + 1, Ordering::Relaxed);
            }
        };
        let mut entered = 0usize;
        hop.lists.for_each_changed(|node, list| {
            if !self.unknown(node) {
                return;
            }
            hop.prefetch_changed(node, &list);
            if let Some((node, list)) = window[entered % AHEAD].replace((node, list)) {
                count(node, list);
            }
            entered += 1;
        });
        for (node, list) in window.into_iter().flatten() {
            count(node, list);
        }
    }

    /// Fills every slot with the length of the node's list in `lists` (the
    /// count of an unfiltered hop): the base degrees in one pass over the
    /// CSR offsets, then the lists that changed since the last checkpoint
    /// in one pass over the delta's pages. A walk over a delta then never
    /// counts a list itself: without this, the first visit of each node
    /// looked it up in the delta's map (most of them to find no list)
    /// behind a branch that mispredicts once per node.
    fn fill_lengths(&self, lists: &TypeLists<'_>) {
        let csr = lists.csr();
        let lo = csr.node_range().start as usize;
        let slot = |n: u64| {
            if n < u64::from(u32::MAX) {
                n as u32 + 1
            } else {
                0 // counted when reached
            }
        };
        for s in self.slots.iter().take(lo) {
            s.store(1, Ordering::Relaxed);
        }
        let offsets = csr.offsets();
        let mut next = lo;
        let entries = csr.all_neighbours().len() as u64;
        for (s, w) in self.slots.iter().skip(lo).zip(offsets.windows(2)) {
            // As `Csr::degree`: damaged offsets give an empty list.
            let degree = if w[0] <= w[1] && w[1] <= entries {
                w[1] - w[0]
            } else {
                0
            };
            s.store(slot(degree), Ordering::Relaxed);
            next += 1;
        }
        for s in self.slots.iter().skip(next) {
            s.store(1, Ordering::Relaxed);
        }
        lists.for_each_changed_len(|node, len| {
            if let Some(s) = self.slots.get(node as usize) {
                s.store(slot(len as u64), Ordering::Relaxed);
            }
        });
    }

    /// Starts loading `node`'s slot into the cache.
    #[inline(always)]
    fn prefetch(&self, node: NodeId) {
        if let Some(slot) = self.slots.get(node as usize) {
            rhizome_common::prefetch(slot);
        }
    }

    /// True if `node`'s count is not known yet (so reaching it will read
    /// its list).
    #[inline(always)]
    fn unknown(&self, node: NodeId) -> bool {
        self.slots
            .get(node as usize)
            .is_some_and(|slot| slot.load(Ordering::Relaxed) == 0)
    }

    /// The count for `node`, computed by `count` the first time.
    #[inline(always)]
    fn get_or_count(&self, node: NodeId, count: impl FnOnce() -> u64) -> u64 {
        let Some(slot) = self.slots.get(node as usize) else {
            return count();
        };
        match slot.load(Ordering::Relaxed) {
            0 => {
                let n = count();
                if n < u64::from(u32::MAX) {
                    slot.store(n as u32 + 1, Ordering::Relaxed);
                }
                n
            }
            known => u64::from(known - 1),
        }
    }
}

/// Starts loading the written values of the first two cache lines' worth
/// of `list`'s created entries; for a list whose page a transaction is
/// writing (created entries not known apart), its ids, which are read
/// first (`RelFloats::count_created` requests the values).
#[inline(always)]
fn prefetch_created_values(values: &RelFloats<'_>, list: &ChangedList<'_>) {
    match list.created {
        Some(created) => {
            for &r in created.iter().step_by(8).take(2) {
                values.prefetch_written(r);
            }
        }
        None => {
            for r in list.rels.iter().step_by(8).take(2) {
                rhizome_common::prefetch(r);
            }
        }
    }
}

/// A hop that is one relationship type in one direction, with no label test
/// and at most a numeric filter on a property stored as plain floats: the
/// counted walk reads it as array loops over the base CSR, or over the
/// node's list in the delta when its relationships changed.
struct PlainHop<'a> {
    rel_type: RelTypeId,
    dir: Direction,
    lists: TypeLists<'a>,
    filter: Option<(NumericRelFilter, RelFloats<'a>)>,
    members: &'a ListMembership<'a>,
    /// List counts already known, when the hop is filtered or its type
    /// changed since the last checkpoint, and it is counted after a walk
    /// (from `memo_source`, once it pays).
    memo: Cell<Option<&'a CountMemo>>,
    memo_source: Option<MemoSource<'a>>,
}

impl<'a> PlainHop<'a> {
    /// The step as a plain hop, if it is one.
    fn of(snap: &'a Snapshot, step: &'a Step<'a>) -> Option<PlainHop<'a>> {
        let [(t, d)] = step.walks.as_slice() else {
            return None;
        };
        if !step.labels.is_empty() || step.direction == ExpandDirection::Both {
            return None;
        }
        let filter = match (step.predicate, step.numeric) {
            (None, _) => None,
            (Some(_), Some(f)) => Some((f, step.floats[0].filter(RelFloats::is_dense)?)),
            (Some(_), None) => return None,
        };
        let lists = snap.type_lists(*t, *d)?;
        Some(PlainHop {
            rel_type: *t,
            dir: *d,
            lists,
            filter,
            members: &step.members[0],
            memo: Cell::new(None),
            memo_source: None,
        })
    }

    /// True if relationship `r` passes the filter.
    #[inline(always)]
    fn passes(&self, r: RelId) -> bool {
        match &self.filter {
            None => true,
            Some((f, v)) => match v.get(r) {
                Some(x) => f.test(x),
                None => false,
            },
        }
    }

    /// True if a relationship passes this hop's filter exactly when it
    /// passes `other`'s (both unfiltered, or the same comparison of the
    /// same values).
    fn same_filter(&self, other: &PlainHop<'_>) -> bool {
        match (&self.filter, &other.filter) {
            (None, None) => true,
            (Some((f, v)), Some((g, w))) => {
                f.key == g.key
                    && f.op == g.op
                    && f.value.to_bits() == g.value.to_bits()
                    && v.same_values(w)
            }
            _ => false,
        }
    }

    /// The counted hop from `source`: the passing entries of its list, less
    /// the relationships of `used` and `extra` that are in it and pass.
    #[inline(always)]
    fn count_from(&self, source: NodeId, used: &[Used], extra: Option<Used>) -> u64 {
        let mut count = self.passing(source);
        for u in used.iter().chain(extra.as_ref()) {
            if u.in_list(source, self.rel_type, self.dir, self.members) && self.passes(u.rel()) {
                count = count.saturating_sub(1);
            }
        }
        count
    }

    /// Notes that a walk reached `entries` lists of this hop, and takes the
    /// memo once the walks have reached enough of them.
    #[inline]
    fn note_walk(&self, entries: usize) {
        let Some(source) = &self.memo_source else {
            return;
        };
        if self.memo.get().is_some() {
            return;
        }
        let walked = source.walked.get() + entries as u64;
        source.walked.set(walked);
        if walked >= source.node_bound / 16 {
            let memo = source.cell.get_or_init(|| {
                let mut memo = CountMemo::new(source.node_bound);
                if let Some(memo) = &mut memo {
                    match &self.filter {
                        None => memo.fill_lengths(&self.lists),
                        Some(_) => memo.arm_eager_fill(self),
                    }
                }
                memo
            });
            self.memo.set(memo.as_ref());
        }
    }

    /// How many entries of `source`'s list pass the filter (from the memo
    /// when there is one).
    #[inline(always)]
    fn passing(&self, source: NodeId) -> u64 {
        match self.memo.get() {
            Some(memo) => memo.get_or_count(source, || self.count_list(source, Some(memo))),
            None => self.count_list(source, None),
        }
    }

    /// Starts loading the filter values of `source`'s base list, up to
    /// [`PlainHop::PREFETCHED_LINES`] cache lines (the hardware prefetcher
    /// carries a longer list on), for a count that will read them.
    #[inline(always)]
    fn prefetch_list(&self, source: NodeId) {
        let Some((_, values)) = &self.filter else {
            return;
        };
        if !self.lists.all_base() {
            // The created entries' values (the base ones are requested
            // below).
            if let Some(list) = self.lists.changed(source) {
                prefetch_created_values(values, &list);
            }
        }
        let csr = self.lists.csr();
        if csr.is_incoming() {
            return;
        }
        let first = self.lists.first();
        let range = csr.positions(source);
        for p in range.step_by(8).take(Self::PREFETCHED_LINES) {
            values.prefetch(first + p as u64);
        }
    }

    /// Starts loading what counting `source`'s changed list `list` reads
    /// first: the values of its created entries (or its ids, when they are
    /// not known apart) and of its base list.
    #[inline(always)]
    fn prefetch_changed(&self, source: NodeId, list: &ChangedList<'_>) {
        let Some((_, values)) = &self.filter else {
            return;
        };
        prefetch_created_values(values, list);
        let csr = self.lists.csr();
        if !csr.is_incoming() {
            let first = self.lists.first();
            for p in csr.positions(source).step_by(8).take(2) {
                values.prefetch(first + p as u64);
            }
        }
    }

    /// Starts loading the ids of `source`'s created entries (the cache
    /// lines read first) if its list changed since the last checkpoint
    /// (read by
    /// [`PlainHop::prefetch_list`] a few entries later).
    #[inline(always)]
    fn prefetch_created(&self, source: NodeId) {
        if self.lists.all_base() {
            return;
        }
        if let Some(ChangedList {
            created: Some(created),
            ..
        }) = self.lists.changed(source)
        {
            // The lines `prefetch_list` reads ids from (the first and the
            // ninth id), and the last: counting reads the first and the
            // last to find the ids' pages (`NumberPages::count_passing`).
            for id in [created.first(), created.get(8), created.last()]
                .into_iter()
                .flatten()
            {
                rhizome_common::prefetch(id);
            }
        }
    }

    /// How many cache lines of a list's filter values
    /// [`PlainHop::prefetch_list`] requests at most (128 floats).
    const PREFETCHED_LINES: usize = 16;

    /// The passing entries of `source`'s list, counted. With `memo` (the
    /// count goes into its empty slot), a changed list counted here is
    /// noted there ([`CountMemo::note_changed`]).
    #[inline(always)]
    fn count_list(&self, source: NodeId, memo: Option<&CountMemo>) -> u64 {
        let Some((f, v)) = &self.filter else {
            return match self.lists.changed_list(source) {
                Some((_, rels)) => rels.len() as u64,
                None => self.count_base(source),
            };
        };
        match self.lists.changed(source) {
            Some(list) => {
                if let Some(memo) = memo {
                    memo.note_changed(self);
                }
                self.count_changed(source, list, f, v)
            }
            None => self.count_base(source),
        }
    }

    /// The passing entries of `source`'s list `rels` in the delta (its
    /// relationships changed since the last checkpoint). When the list
    /// still holds every relationship of the node's base list, those are
    /// counted from the base column slice, and only the entries created
    /// since are read from the values written since; otherwise (a base
    /// relationship was deleted) every entry is looked up.
    ///
    /// The created entries apart (a packed page) save looking at the base
    /// entries one by one ([`ChangedList::keeps_base`]), and their values
    /// are mostly slices of the written pages.
    #[inline(never)]
    fn count_changed(
        &self,
        source: NodeId,
        list: ChangedList<'_>,
        f: &NumericRelFilter,
        v: &RelFloats<'_>,
    ) -> u64 {
        let degree = self.lists.csr().degree(source);
        let rels = list.rels;
        match list.created {
            Some(created) if list.keeps_base(degree) => {
                let created = with_test!(f, |test| v.count_written(created, test));
                return self.count_base(source) + created;
            }
            Some(_) => {}
            None => {
                let (base, created) = with_test!(f, |test| v.count_created(rels, test));
                if base == degree {
                    return self.count_base(source) + created;
                }
            }
        }
        with_test!(
            f,
            |test| rels.iter().filter(|&&r| v.get(r).is_some_and(test)).count() as u64
        )
    }

    /// The passing entries of `source`'s base list (its relationships did
    /// not change since the last checkpoint).
    #[inline(always)]
    fn count_base(&self, source: NodeId) -> u64 {
        let csr = self.lists.csr();
        let range = csr.positions(source);
        let Some((f, v)) = &self.filter else {
            return range.len() as u64;
        };
        let first = self.lists.first();
        if csr.is_incoming() {
            return range
                .filter(|&q| {
                    v.get(first.wrapping_add(csr.out_position(q)))
                        .is_some_and(|x| f.test(x))
                })
                .count() as u64;
        }
        match v.base_slice(range.clone()) {
            Some(values) => values.iter().filter(|&&x| f.test(x)).count() as u64,
            None => range
                .filter(|&p| v.get(first + p as u64).is_some_and(|x| f.test(x)))
                .count() as u64,
        }
    }

    /// The walked hop from `node` followed by the counted hop `last`: the sum
    /// over the passing relationships `r` not in `path` of `last` counted
    /// from `r`'s other end, without `path` and `r`.
    fn walk_then_count(&self, last: &PlainHop<'_>, node: NodeId, path: &[Used]) -> u64 {
        let sums = CountSums::of(self, last, node, path);
        if let Some((neighbours, rels)) = self.lists.changed_list(node) {
            last.note_walk(neighbours.len());
            if let Some(sums) = &sums {
                return sums.sum(neighbours, Listed(rels));
            }
            return neighbours
                .iter()
                .zip(rels)
                .map(|(&other, &r)| self.visit(last, r, node, other, path))
                .sum();
        }
        let csr = self.lists.csr();
        let range = csr.positions(node);
        let neighbours = &csr.all_neighbours()[range.clone()];
        let first = self.lists.first();
        last.note_walk(neighbours.len());
        if let Some(sums) = &sums {
            // One loop compiled per way of finding the ids (and per rank
            // width), so no entry branches on how its list is stored.
            return match csr.back_links() {
                None => sums.sum(neighbours, Consecutive(first + range.start as u64)),
                Some(back) => {
                    let back = back.slice(range);
                    match back.ranks() {
                        Ranks::U8(ranks) => sums.sum(neighbours, Ranked { first, back, ranks }),
                        Ranks::U16(ranks) => sums.sum(neighbours, Ranked { first, back, ranks }),
                        Ranks::U32(ranks) => sums.sum(neighbours, Ranked { first, back, ranks }),
                        Ranks::U64(ranks) => sums.sum(neighbours, Ranked { first, back, ranks }),
                    }
                }
            };
        }
        neighbours
            .iter()
            .zip(range)
            .map(|(&other, q)| {
                let r = match csr.back_links() {
                    None => first + q as u64,
                    Some(_) => first.wrapping_add(csr.out_position(q)),
                };
                self.visit(last, r, node, other as NodeId, path)
            })
            .sum()
    }

    /// One entry of [`PlainHop::walk_then_count`]: relationship `r` from
    /// `node` to `other`.
    #[inline(always)]
    fn visit(
        &self,
        last: &PlainHop<'_>,
        r: RelId,
        node: NodeId,
        other: NodeId,
        path: &[Used],
    ) -> u64 {
        if !self.passes(r) || uses(path, r) {
            return 0;
        }
        let walked = Used::walked(r, self.rel_type, self.dir, node, other);
        last.count_from(other, path, Some(walked))
    }
}

/// [`PlainHop::walk_then_count`] as one tight loop, for a path whose
/// relationships have known endpoints (the usual case): each walked entry
/// that passes the walked hop's filter counts the other end's passing list
/// entries, less the path relationships anchored at that end and the walked
/// relationship itself when they lie in the counted list and pass its
/// filter. The other ends are scattered over the graph, so their offsets
/// (and memo slots) are prefetched a few entries ahead.
struct CountSums<'h, 'w, 'l> {
    walked: &'h PlainHop<'w>,
    last: &'h PlainHop<'l>,
    node: NodeId,
    /// Relationships the walk must not use: those of the path.
    path_rels: [RelId; MAX_PATH],
    /// One bit per `node % 64` of the nodes an entry's other end must be
    /// for the entry to need more than its other end's count: `node`, the
    /// path relationships' endpoints and the anchors. An entry whose bit is
    /// clear is no path relationship and no anchor's, so its count is its
    /// other end's, less the walked relationship where that always lies in
    /// the counted list.
    special: u64,
    /// Nodes whose counted list holds a passing path relationship, once per
    /// relationship (`NULL_ID` for the others).
    anchors: [NodeId; MAX_PATH],
    len: usize,
    /// The walked relationship lies in the counted list of its other end
    /// always (`walked_always`) or only when it is a self-loop (`walked_on_loop`).
    walked_always: bool,
    walked_on_loop: bool,
}

/// The longest path [`CountSums`] takes.
const MAX_PATH: usize = 4;

/// [`CountSums::AHEAD`], for array lengths.
const SUM_AHEAD: usize = 16;

/// `node`'s bit in [`CountSums`]'s `special` mask.
#[inline(always)]
fn special_bit(node: NodeId) -> u64 {
    1 << (node % 64)
}

impl<'h, 'w, 'l> CountSums<'h, 'w, 'l> {
    /// How many entries ahead what an entry's relationship id is read from
    /// is prefetched (an incoming entry's id needs its source's outgoing
    /// offset, and the filter value at that id is prefetched
    /// `FAR - AHEAD` entries later).
    const FAR: usize = 24;
    /// How many entries ahead the counted offsets are prefetched, the
    /// walked ids read and what they lead to (filter values, memo slots)
    /// requested. Sixteen, not eight: an incoming entry's id waits for its
    /// source's offset before its value can be requested, and at eight the
    /// value came too late (A4 measured 5-8% slower).
    const AHEAD: usize = SUM_AHEAD;
    /// How many entries ahead what the offsets point at is prefetched (they
    /// were requested `AHEAD - NEAR` entries before, so are likely cached).
    const NEAR: usize = 4;

    fn of(
        walked: &'h PlainHop<'w>,
        last: &'h PlainHop<'l>,
        node: NodeId,
        path: &[Used],
    ) -> Option<CountSums<'h, 'w, 'l>> {
        if path.len() > MAX_PATH {
            return None;
        }
        let same_type = walked.rel_type == last.rel_type;
        let mut sums = CountSums {
            walked,
            last,
            node,
            path_rels: [NULL_ID; MAX_PATH],
            special: special_bit(node),
            anchors: [NULL_ID; MAX_PATH],
            len: path.len(),
            walked_always: same_type && walked.dir != last.dir,
            walked_on_loop: same_type && walked.dir == last.dir,
        };
        for (i, u) in path.iter().enumerate() {
            let Used::Walked {
                rel,
                rel_type,
                start,
                end,
            } = *u
            else {
                return None;
            };
            sums.path_rels[i] = rel;
            sums.special |= special_bit(start) | special_bit(end);
            if rel_type == last.rel_type && last.passes(rel) {
                sums.anchors[i] = match last.dir {
                    Direction::Outgoing => start,
                    Direction::Incoming => end,
                };
                sums.special |= special_bit(sums.anchors[i]);
            }
        }
        Some(sums)
    }

    /// The sum over the walked entries: `others[i]` reached by relationship
    /// `ids.at(i, others[i])`; the loop is specialised for the unfiltered
    /// case and for a memo. `others` are 32-bit ids of a base list or 64-bit
    /// ids of a delta list, and `ids` one of the ways a list gives its
    /// relationship ids (one loop compiled per combination).
    fn sum<T: Copy + Into<NodeId>>(&self, others: &[T], ids: impl WalkedIds) -> u64 {
        let (walked, last) = (self.walked, self.last);
        if walked.filter.is_none() && last.filter.is_none() {
            if last.lists.all_base() {
                let counted = *last.lists.csr();
                return self.sum_unfiltered(
                    others,
                    ids,
                    |o| counted.degree(o),
                    |o| counted.prefetch(o),
                );
            }
            // An unfiltered hop's memo holds every list's length from the
            // start (`CountMemo::fill_lengths`).
            if let Some(memo) = last.memo.get() {
                return self.sum_unfiltered(
                    others,
                    ids,
                    |o| memo.get_or_count(o, || last.count_list(o, Some(memo))),
                    |o| memo.prefetch(o),
                );
            }
        }
        let walked_passes = |r| walked.passes(r);
        // The counted hop's filter is asked only of walked relationships
        // that passed the walked hop's: when the two are the same filter
        // (A4), the answer is known.
        let same = walked.same_filter(last);
        let last_passes = |r| same || last.passes(r);
        let prefetch_value = |r| {
            if let Some((_, values)) = &walked.filter {
                values.prefetch(r);
            }
        };
        let changed_lists = !last.lists.all_base();
        let created_ahead = changed_lists && last.filter.is_some();
        match last.memo.get() {
            Some(memo) => self.sum_with(
                others,
                ids,
                walked_passes,
                last_passes,
                |o| memo.get_or_count(o, || last.count_list(o, Some(memo))),
                // Over changed lists the memo slot is requested at
                // `farthest` (a list not counted yet costs a delta lookup),
                // and a filtered hop requests a list's created ids at `far`
                // once the slot says it is not counted yet, so that `near`
                // finds them cached to request their values. Over base
                // lists only, the memo slot is requested at `far`.
                Prefetch {
                    farthest: |o| {
                        if changed_lists {
                            memo.prefetch(o);
                        }
                    },
                    far: |o, r| {
                        prefetch_value(r);
                        if !changed_lists {
                            memo.prefetch(o);
                        } else if created_ahead && memo.unknown(o) {
                            last.prefetch_created(o);
                        }
                    },
                    // Nothing of an unfiltered list but its length is read.
                    near: |o| {
                        if last.filter.is_some() && memo.unknown(o) {
                            last.prefetch_list(o);
                        }
                    },
                },
            ),
            None => self.sum_with(
                others,
                ids,
                walked_passes,
                last_passes,
                |o| last.count_list(o, None),
                Prefetch {
                    farthest: |_| {},
                    far: |o, r| {
                        prefetch_value(r);
                        if created_ahead {
                            last.prefetch_created(o);
                        }
                    },
                    near: |o| last.prefetch_list(o),
                },
            ),
        }
    }

    /// [`CountSums::sum`] without filters, the counted lists' lengths given
    /// by `length` (base degrees, or the memo's lengths over a changed
    /// type; `prefetch_length` requests them): the sum of the other ends'
    /// lengths, less the walked relationship where it
    /// always lies in the counted list. Only an entry whose other end is
    /// `node`, an anchor or a path relationship's endpoint can need more
    /// (a path relationship is skipped, an anchored one not counted), so
    /// the loop reads no relationship id and asks one bit of a 64-bit mask
    /// whether an entry is such a one; those take the general rule.
    #[inline(always)]
    fn sum_unfiltered<T: Copy + Into<NodeId>>(
        &self,
        others: &[T],
        ids: impl WalkedIds,
        length: impl Fn(NodeId) -> u64,
        prefetch_length: impl Fn(NodeId),
    ) -> u64 {
        let path_rels = &self.path_rels[..self.len];
        let always = u64::from(self.walked_always);
        let mut total = 0u64;
        for (i, &other) in others.iter().enumerate() {
            let other: NodeId = other.into();
            if let Some(&ahead) = others.get(i + Self::AHEAD) {
                prefetch_length(ahead.into());
            }
            if self.special & special_bit(other) == 0 {
                total += length(other).saturating_sub(always);
                continue;
            }
            if path_rels.contains(&ids.at(i, other)) {
                continue;
            }
            total += length(other).saturating_sub(self.in_list(other, true));
        }
        total
    }

    /// How many relationships of `other`'s counted list the count from it
    /// leaves out: the walked relationship (if `walked_passes_last`, and
    /// it lies there) and the passing path relationships anchored at `other`.
    #[inline(always)]
    fn in_list(&self, other: NodeId, walked_passes_last: bool) -> u64 {
        if self.special & special_bit(other) == 0 {
            return u64::from(self.walked_always && walked_passes_last);
        }
        let walked_in_list = (self.walked_always || (self.walked_on_loop && other == self.node))
            && walked_passes_last;
        let anchors = &self.anchors[..self.len];
        u64::from(walked_in_list) + anchors.iter().filter(|&&a| a == other).count() as u64
    }

    /// [`CountSums::sum`] with the hops' filters `walked_passes` and
    /// `last_passes`, the counted lists' passing entries `passing` and the
    /// requests `prefetch` of what later entries will read besides the
    /// offsets.
    #[inline(always)]
    fn sum_with<T: Copy + Into<NodeId>>(
        &self,
        others: &[T],
        ids: impl WalkedIds,
        walked_passes: impl Fn(RelId) -> bool,
        last_passes: impl Fn(RelId) -> bool,
        passing: impl Fn(NodeId) -> u64,
        prefetch: Prefetch<impl Fn(NodeId), impl Fn(NodeId, RelId), impl Fn(NodeId)>,
    ) -> u64 {
        let path_rels = &self.path_rels[..self.len];
        let counted = *self.last.lists.csr();
        let mut total = 0u64;
        // The ids of the next AHEAD entries, entry j's at j % AHEAD: each is
        // read once, when its entry's values are requested, and used when
        // the loop reaches it (an incoming entry's id costs its rank and
        // its source's offset).
        let mut ahead_ids = [NULL_ID; SUM_AHEAD];
        // Incoming ids read the outgoing offsets, which the counted hop
        // reads too when it counts outgoing lists of the walked type: they
        // were requested at FAR already.
        let offsets_requested = ids.requests(counted.offsets());
        for (j, (&other, slot)) in others.iter().zip(&mut ahead_ids).enumerate() {
            *slot = ids.at(j, other.into());
        }
        for (i, &other) in others.iter().enumerate() {
            let other: NodeId = other.into();
            if let Some(&far) = others.get(i + Self::FAR) {
                ids.prefetch(far.into());
                (prefetch.farthest)(far.into());
            }
            let slot = &mut ahead_ids[i % Self::AHEAD];
            let r = *slot;
            if let Some(&ahead) = others.get(i + Self::AHEAD) {
                let ahead: NodeId = ahead.into();
                if !offsets_requested {
                    counted.prefetch(ahead);
                }
                *slot = ids.at(i + Self::AHEAD, ahead);
                (prefetch.far)(ahead, *slot);
            }
            if let Some(&near) = others.get(i + Self::NEAR) {
                (prefetch.near)(near.into());
            }
            if (self.special & special_bit(other) != 0 && path_rels.contains(&r))
                || !walked_passes(r)
            {
                continue;
            }
            total += passing(other).saturating_sub(self.in_list(other, last_passes(r)));
        }
        total
    }
}

/// What [`CountSums::sum_with`] requests ahead of an entry: `farthest` for
/// the entry [`CountSums::FAR`] on (its other end), `far` for the entry
/// [`CountSums::AHEAD`] on (its other end and relationship; the other end's
/// offsets are requested beside it), `near` for the entry
/// [`CountSums::NEAR`] on (its other end).
struct Prefetch<T, F, N> {
    farthest: T,
    far: F,
    near: N,
}

/// How the entries of a walked list give their relationship ids, for
/// [`CountSums::sum`]: compiled once per kind, so no entry asks how its
/// list is stored.
trait WalkedIds {
    /// The id of entry `i`, whose other end is `other`.
    fn at(&self, i: usize, other: NodeId) -> RelId;

    /// Starts loading what [`WalkedIds::at`] will read for an entry whose
    /// other end is `other` ([`CountSums::FAR`] entries before it does).
    #[inline(always)]
    fn prefetch(&self, _other: NodeId) {}

    /// Whether [`WalkedIds::prefetch`] requests entries of `offsets`
    /// (the same array, so nobody needs to request them again).
    fn requests(&self, _offsets: &[u64]) -> bool {
        false
    }
}

/// An outgoing base list: ids `first + i`.
struct Consecutive(RelId);

impl WalkedIds for Consecutive {
    #[inline(always)]
    fn at(&self, i: usize, _other: NodeId) -> RelId {
        self.0 + i as u64
    }
}

/// A list of the delta layer: explicit ids.
struct Listed<'a>(&'a [RelId]);

impl WalkedIds for Listed<'_> {
    #[inline(always)]
    fn at(&self, i: usize, _other: NodeId) -> RelId {
        self.0.get(i).copied().unwrap_or(NULL_ID)
    }
}

/// An incoming base list: the id is the type's first id plus the source's
/// outgoing offset plus the entry's rank, read at its stored width `R`.
struct Ranked<'a, R> {
    first: RelId,
    back: BackLinks<'a>,
    ranks: &'a [R],
}

impl<R: Copy + Into<u64>> WalkedIds for Ranked<'_, R> {
    #[inline(always)]
    fn at(&self, i: usize, other: NodeId) -> RelId {
        let rank = self.ranks.get(i).map_or(u64::MAX, |&r| r.into());
        self.first
            .wrapping_add(self.back.source_offset(other).saturating_add(rank))
    }

    #[inline(always)]
    fn prefetch(&self, other: NodeId) {
        self.back.prefetch_source(other);
    }

    fn requests(&self, offsets: &[u64]) -> bool {
        std::ptr::eq(self.back.source_offsets(), offsets)
    }
}

struct CountCtx<'a, 'q> {
    snap: &'a Snapshot,
    eval: Evaluator<'q>,
    input: &'a Chunk,
    row: usize,
    prefix: &'a [Step<'a>],
    last: &'a Step<'a>,
    /// The counted hop as a plain hop, if it is one.
    last_plain: Option<PlainHop<'a>>,
    /// The last walked hop as a plain hop, if it is one and so is the counted hop.
    walked_plain: Option<PlainHop<'a>>,
}

impl<'a> CountCtx<'a, '_> {
    /// Matches of the counted hop from `source`, none of them in `excluded`.
    fn count_last(&self, source: NodeId, excluded: &[Used]) -> Result<u64> {
        if let Some(last) = &self.last_plain {
            return Ok(last.count_from(source, excluded, None));
        }
        let step = self.last;
        let snap = self.snap;
        let mut count = 0u64;
        for (w, &(t, d)) in step.walks.iter().enumerate() {
            let adj = snap.adjacency(source, t, d);
            let members = &step.members[w];
            if step.labels.is_empty() && step.predicate.is_none() {
                // Degree minus the excluded relationships that lie in this
                // list. An undirected hop sees a self-loop once, from its
                // outgoing list: its incoming entries that point back at
                // `source` (found by binary search) do not count, nor do
                // excluded self-loops there.
                count += adj.len() as u64;
                let skips_loops = step.direction == ExpandDirection::Both
                    && d == Direction::Incoming
                    && !adj.is_empty();
                if skips_loops {
                    count -= adj.neighbours().equal_range(source).len() as u64;
                }
                for u in excluded {
                    if u.in_list(source, t, d, members) && !(skips_loops && u.is_loop(snap)) {
                        count -= 1;
                    }
                }
                continue;
            }
            let plain_list = step.labels.is_empty() && step.direction != ExpandDirection::Both;
            if let (true, Some(f)) = (plain_list, &step.numeric) {
                let Some(values) = &step.floats[w] else {
                    continue; // no such property: nothing passes
                };
                count += match adj
                    .contiguous_rows()
                    .and_then(|rows| values.base_slice(rows))
                {
                    Some(slice) => slice.iter().filter(|&&x| f.test(x)).count() as u64,
                    None => (0..adj.len())
                        .filter(|&i| values.get(adj.rel_id(i)).is_some_and(|x| f.test(x)))
                        .count() as u64,
                };
                for u in excluded {
                    if u.in_list(source, t, d, members) && step.passes_numeric(f, w, u.rel()) {
                        count -= 1;
                    }
                }
                continue;
            }
            let flow = adj.try_for_each(|_, neighbour, r| {
                match self.matches(step, w, d, source, neighbour, r, excluded) {
                    Ok(matched) => count += u64::from(matched),
                    Err(e) => return ControlFlow::Break(e),
                }
                ControlFlow::Continue(())
            });
            if let ControlFlow::Break(e) = flow {
                return Err(e);
            }
        }
        Ok(count)
    }

    /// Whether entry (`neighbour`, `r`) of `node`'s list of walk `w` (direction
    /// `d`) of `step` is a match: not an undirected self-loop seen twice,
    /// labels and predicate hold, `r` not in `used`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn matches(
        &self,
        step: &Step<'_>,
        w: usize,
        d: Direction,
        node: NodeId,
        neighbour: NodeId,
        r: RelId,
        used: &[Used],
    ) -> Result<bool> {
        if skip_entry(step.direction, d, node, neighbour)
            || (!step.labels.is_empty() && !has_labels(self.snap, neighbour, step.labels))
            || uses(used, r)
        {
            return Ok(false);
        }
        step.passes(&self.eval, self.input, self.row, w, r)
    }

    /// Walks prefix hops `level..` from `node`; `path` holds the excluded
    /// relationships plus those of the walk so far.
    fn walk(&self, level: usize, node: NodeId, path: &mut Vec<Used>) -> Result<u64> {
        if level == self.prefix.len() {
            return self.count_last(node, path);
        }
        let step = &self.prefix[level];
        let snap = self.snap;
        let mut total = 0u64;
        // Last walked hop feeding a plain counted hop: count it inline (as
        // two array loops when the walked hop is a plain hop too).
        let inline_last = self
            .last_plain
            .as_ref()
            .filter(|_| level + 1 == self.prefix.len());
        if let (Some(walked), Some(last)) = (&self.walked_plain, inline_last) {
            return Ok(walked.walk_then_count(last, node, path));
        }
        for (w, &(t, d)) in step.walks.iter().enumerate() {
            let adj = snap.adjacency(node, t, d);
            if let Some(last) = inline_last {
                last.note_walk(adj.len());
            }
            let flow = adj.try_for_each(|_, neighbour, r| {
                match self.matches(step, w, d, node, neighbour, r, path) {
                    Ok(true) => {}
                    Ok(false) => return ControlFlow::Continue(()),
                    Err(e) => return ControlFlow::Break(e),
                }
                let walked = Used::walked(r, t, d, node, neighbour);
                total += match inline_last {
                    Some(last) => last.count_from(neighbour, path, Some(walked)),
                    None => {
                        path.push(walked);
                        let n = self.walk(level + 1, neighbour, path);
                        path.pop();
                        match n {
                            Ok(n) => n,
                            Err(e) => return ControlFlow::Break(e),
                        }
                    }
                };
                ControlFlow::Continue(())
            });
            if let ControlFlow::Break(e) = flow {
                return Err(e);
            }
        }
        Ok(total)
    }
}

impl Operator for ExpandCount {
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult> {
        let OpKind::ExpandCount {
            from,
            prefix,
            direction,
            distinct_from,
            count_slot,
            rel_predicate,
            ..
        } = &self.node.kind
        else {
            unreachable!("ExpandCount built for an ExpandCount node");
        };
        let snap = &ctx.q.snapshot;
        let c = &self.node.c;
        if prefix.len() != c.hops.len() {
            return Err(rhizome_common::Error::internal(
                "ExpandCount prefix was not compiled",
            ));
        }
        let types = c.types.as_ref().expect("compiled types");
        let hop_steps: Vec<Step<'_>> = prefix
            .iter()
            .zip(&c.hops)
            .map(|(hop, ch)| {
                Step::new(
                    snap,
                    &ch.types,
                    hop.direction,
                    &ch.to_labels,
                    hop.rel_predicate
                        .as_ref()
                        .map(|(s, _)| *s)
                        .zip(ch.predicate.as_ref()),
                )
            })
            .collect();
        let last = Step::new(
            snap,
            types,
            *direction,
            &c.to_labels,
            rel_predicate.as_ref().map(|(s, _)| *s).zip(c.exprs.first()),
        );
        let mut last_plain = PlainHop::of(snap, &last);
        if let Some(hop) = &mut last_plain {
            // A filtered list is counted entry by entry, and a list over a
            // delta is found through the delta's map: both cost more than a
            // degree, so reaching a node again reads its count from the memo.
            let costly = hop.filter.is_some() || !hop.lists.all_base();
            if costly && !hop_steps.is_empty() {
                hop.memo_source = Some(MemoSource {
                    cell: &self.memo,
                    node_bound: snap.node_bound(),
                    walked: Cell::new(0),
                });
            }
        }
        let walked_plain = last_plain
            .as_ref()
            .and_then(|_| PlainHop::of(snap, hop_steps.last()?));
        let mut cc = CountCtx {
            snap,
            eval: Evaluator::new(ctx.q),
            input: &input,
            row: 0,
            prefix: &hop_steps,
            last: &last,
            last_plain,
            walked_plain,
        };
        if snap.external().is_some() {
            // Over a source: each hop's level of the whole chunk in one
            // round trip per (type, direction).
            let starts = input.column(*from).map_or_else(Vec::new, |c| {
                (0..input.len()).filter_map(|i| c.node(i)).collect()
            });
            let hops: Vec<LevelHop<'_>> = hop_steps
                .iter()
                .chain(std::iter::once(&last))
                .map(|s| (s.walks.as_slice(), s.labels))
                .collect();
            prefetch_levels(snap, starts, &hops);
        }
        ctx.restart_quantum();
        let heavy = !prefix.is_empty();
        let mut counts: Vec<Value> = Vec::with_capacity(input.len());
        let (mut bound, mut path) = (Vec::new(), Vec::new());
        let from_column = input.column(*from).cloned();
        let mut end = input.len();
        let mut row = 0;
        while row < end {
            if heavy || row % 256 == 0 {
                if ctx.cancelled() {
                    return NEED_MORE;
                }
                // A heavy row (a walk of several hops) is worth a task of
                // its own; cheap rows are handed over two at least.
                end = maybe_split(&input, row + 1, end, if heavy { 1 } else { 2 }, ctx)?;
            }
            let source = from_column
                .as_ref()
                .and_then(|c| c.node(row))
                .unwrap_or(NULL_ID);
            let mut count = 0u64;
            if source != NULL_ID {
                excluded_rels(&input, row, distinct_from, &mut bound);
                path.clear();
                path.extend(bound.iter().map(|&r| match snap.relationship(r) {
                    // A walk tests them once per list it counts: look the
                    // endpoints up once per row instead.
                    Some(info) if heavy => Used::Walked {
                        rel: r,
                        rel_type: info.rel_type,
                        start: info.start,
                        end: info.end,
                    },
                    _ => Used::Bound(r),
                }));
                cc.row = row;
                count = cc.walk(0, source, &mut path)?;
            }
            counts.push(Value::Int(count as i64));
            row += 1;
        }
        let mut chunk = if end == input.len() {
            input
        } else {
            input.select((0..end as u32).collect())
        };
        chunk.set_column(*count_slot, Column::new(ColumnData::Values(counts)));
        ctx.emit(chunk)
    }
}
