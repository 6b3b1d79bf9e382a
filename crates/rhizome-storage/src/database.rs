//! Opening a database directory: read the manifest, map the segment, resolve
//! every array once, then replay the write-ahead log into the delta layer.
//! Nothing of the segment is parsed or copied, so opening takes milliseconds
//! whatever the database's size (plus the replay of the log, which a
//! checkpoint keeps short).
//!
//! ## Files
//! `manifest.json` names the current segment (`segment-NNNNNN.rhz`, NNNNNN =
//! the manifest generation; `segment-NNNNNN-v3.rhz` after [`crate::upgrade()`]), `wal.log` holds the commits since that segment
//! was written (see [`crate::wal`]) and `lock` carries the writer lock (see
//! [`crate::lock`]). `wal.next` exists only while a checkpoint switches to
//! its new manifest, or after a crash then (see `relog`). Anything else (`*.tmp`, segments the manifest does not
//! name) is debris of an interrupted or superseded checkpoint; the next
//! writer removes it (segments only once no process maps them). Opening
//! writes nothing.
//!
//! ## Concurrency
//! A [`Database`] handle is shared by cloning. The current state is one
//! `Arc<Version>` (base store + delta + where it stands in the files) behind
//! an atomic pointer: readers load it without locking; the single writer (see
//! [`crate::txn`]), checkpoints and catching up with other processes (see
//! `follow.rs`) replace it, ordered by the log mutex. Any number of
//! processes may open a directory; writers of all of them are serialized by
//! the writer lock.

use crate::autocheckpoint::{Step, Trigger};
use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::column::view::SliceSource;
use crate::column::ColumnView;
use crate::csr::{BackLinks, Csr, CsrMeta, Ranks};
use crate::delta::Delta;
use crate::follow::{self, Loaded, LogPosition, News};
use crate::index::PropertyIndex;
use crate::io::{StdIo, StorageIo, WalSync};
use crate::labels::LabelIndex;
use crate::lock::{CheckpointLock, FileId, WriterLock};
use crate::manifest::Manifest;
use crate::schema::{IndexDef, Schema};
use crate::segment::{ArrayRef, Segment};
use crate::snapshot::{GraphRead, Snapshot};
use crate::stats::Statistics;
use crate::txn::{CommitInfo, TxnState, WriteTxn};
use crate::wal::{self, Wal, WAL_FILE};
use arc_swap::ArcSwap;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Slices detached from the segment's borrow; see [`Segment::slice_detached`].
struct Detached<'s>(&'s Segment);

impl SliceSource<'static> for Detached<'_> {
    fn get<T: bytemuck::Pod>(&self, r: ArrayRef) -> Result<&'static [T]> {
        // SAFETY: every detached slice is stored in the same `Store` as the
        // `Arc<Segment>` it points into, and `Store` never hands the slices
        // out with a lifetime longer than a borrow of itself.
        unsafe { self.0.slice_detached(r) }
    }
}

/// Property columns of a node group, indexed by property key id.
pub(crate) struct GroupView {
    pub(crate) start: NodeId,
    pub(crate) count: u64,
    pub(crate) columns: Vec<Option<ColumnView<'static>>>,
}

/// One relationship type's adjacency and columns.
pub(crate) struct RelView {
    pub(crate) rel_type: RelTypeId,
    pub(crate) base: RelId,
    pub(crate) count: u64,
    pub(crate) outgoing: Csr<'static>,
    pub(crate) incoming: Csr<'static>,
    pub(crate) columns: Vec<Option<ColumnView<'static>>>,
}

/// Everything a snapshot reads. Field order matters: the views (which
/// borrow the mapping) are declared before the segment so they are dropped first.
pub(crate) struct Store {
    pub(crate) manifest: Manifest,
    pub(crate) labels: LabelIndex,
    pub(crate) groups: Vec<GroupView>,
    /// Indexed by relationship type id; `None` for types without relationships.
    pub(crate) rels: Vec<Option<RelView>>,
    pub(crate) indexes: Vec<PropertyIndex<'static>>,
    pub(crate) _segment: Arc<Segment>,
}

fn resolve_columns(
    src: &Detached<'_>,
    metas: &[(PropertyKeyId, crate::column::ColumnMeta)],
    key_count: usize,
    rows: u64,
) -> Result<Vec<Option<ColumnView<'static>>>> {
    let mut columns: Vec<Option<ColumnView<'static>>> = vec![None; key_count];
    for (key, meta) in metas {
        let view = ColumnView::resolve(src, meta)?;
        let slot = columns.get_mut(*key as usize).ok_or_else(|| {
            Error::new(
                ErrorKind::CorruptDatabase,
                format!("property key {key} is not in the catalog"),
            )
        })?;
        if view.rows() != rows {
            return Err(Error::new(
                ErrorKind::CorruptDatabase,
                "column row count differs from its owner",
            ));
        }
        *slot = Some(view);
    }
    Ok(columns)
}

/// Maps a CSR's arrays; an incoming CSR (`meta.ranks` set) needs the
/// outgoing CSR `out` of its type.
fn resolve_csr(
    src: &Detached<'_>,
    meta: &CsrMeta,
    out: Option<&Csr<'static>>,
) -> Result<Csr<'static>> {
    let offsets: &'static [u64] = src.get(meta.offsets)?;
    let neighbours: &'static [u32] = src.get(meta.neighbours)?;
    let corrupt = |why: &str| Error::new(ErrorKind::CorruptDatabase, why.to_string());
    let back = match (meta.ranks, out) {
        (None, None) => None,
        (Some(r), Some(out)) => {
            let ranks = match r.width {
                1 => Ranks::U8(src.get(r.array)?),
                2 => Ranks::U16(src.get(r.array)?),
                4 => Ranks::U32(src.get(r.array)?),
                8 => Ranks::U64(src.get(r.array)?),
                w => return Err(corrupt(&format!("adjacency ranks of width {w}"))),
            };
            if ranks.len() != neighbours.len() {
                return Err(corrupt("adjacency ranks differ in number from the entries"));
            }
            Some(BackLinks::new(ranks, out.node_range().start, out.offsets()))
        }
        _ => {
            return Err(corrupt(
                "incoming adjacency without ranks, or outgoing with",
            ))
        }
    };
    let expected = if meta.hi >= meta.lo {
        meta.hi - meta.lo + 1
    } else {
        0
    };
    if offsets.len() as u64 != expected && !(meta.hi == meta.lo && offsets.len() == 1) {
        return Err(Error::new(
            ErrorKind::CorruptDatabase,
            "adjacency offsets do not match their node range",
        ));
    }
    Ok(Csr::new(meta.lo, meta.hi, offsets, neighbours, back))
}

impl Store {
    /// Every relationship id of the base is below this.
    pub(crate) fn rel_bound(&self) -> RelId {
        self.manifest
            .rel_types
            .iter()
            .map(|r| r.base + r.count)
            .max()
            .unwrap_or(0)
    }

    /// The schema recorded in the manifest.
    pub(crate) fn schema(&self) -> Schema {
        Schema {
            indexes: self
                .manifest
                .indexes
                .iter()
                .map(|i| IndexDef {
                    label: i.label,
                    key: i.key,
                })
                .collect(),
            constraints: self.manifest.constraints.clone(),
            names: self.manifest.schema_names.clone(),
        }
    }

    /// Maps the segment `manifest` names and resolves every array.
    pub(crate) fn from_manifest(dir: &Path, manifest: Manifest) -> Result<Store> {
        let segment = Arc::new(Segment::open(
            &dir.join(&manifest.segment),
            manifest.segment_len,
        )?);
        let src = Detached(&segment);
        let key_count = manifest.catalog.property_keys.len();
        let labels = LabelIndex::new(
            manifest
                .node_groups
                .iter()
                .flat_map(|g| g.label_runs.iter().copied())
                .collect(),
            manifest.node_bound,
            manifest.label_sets.clone(),
            manifest.catalog.labels.len(),
        );
        let groups = manifest
            .node_groups
            .iter()
            .map(|g| {
                Ok(GroupView {
                    start: g.start,
                    count: g.count,
                    columns: resolve_columns(&src, &g.columns, key_count, g.count)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut rels: Vec<Option<RelView>> = (0..manifest.catalog.rel_types.len())
            .map(|_| None)
            .collect();
        for r in &manifest.rel_types {
            let outgoing = resolve_csr(&src, &r.outgoing, None)?;
            let view = RelView {
                rel_type: r.rel_type,
                base: r.base,
                count: r.count,
                incoming: resolve_csr(&src, &r.incoming, Some(&outgoing))?,
                outgoing,
                columns: resolve_columns(&src, &r.columns, key_count, r.count)?,
            };
            let slot = rels.get_mut(r.rel_type as usize).ok_or_else(|| {
                Error::new(
                    ErrorKind::CorruptDatabase,
                    "relationship type is not in the catalog",
                )
            })?;
            *slot = Some(view);
        }
        let indexes = manifest
            .indexes
            .iter()
            .map(|i| {
                Ok(PropertyIndex {
                    label: i.label,
                    key: i.key,
                    distinct: i.distinct,
                    sorted: src.get(i.sorted)?,
                    int_keys: i.int_keys.map(|k| src.get::<i64>(k)).transpose()?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Store {
            manifest,
            labels,
            groups,
            rels,
            indexes,
            _segment: segment,
        })
    }
}

/// See [`DatabaseOptions::checkpoint_hook`].
pub type CheckpointHook = Arc<dyn Fn(CheckpointStep) -> Result<()> + Send + Sync>;

/// Where a checkpoint calls [`DatabaseOptions::checkpoint_hook`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointStep {
    /// A checkpoint that runs beside commits ([`Database::checkpoint`] and
    /// the background ones) wrote its delta file or segment and has not yet
    /// taken the writer lock to install it. The hook may block here:
    /// commits go on meanwhile.
    Written,
    /// Such a checkpoint wrote the commits made so far since it froze its
    /// state to its new log and staged its manifest, and has not yet taken
    /// the writer lock (commits go on; the hook may block here too).
    Staged,
    /// Any checkpoint installed its manifest and has not yet renamed its
    /// new log into place (the writer lock is held: do not block).
    ManifestInstalled,
}

/// How a database is opened.
#[derive(Clone)]
pub struct DatabaseOptions {
    /// How long [`Database::begin_write`] (and [`Database::checkpoint`])
    /// waits for the writer lock (held by another transaction of this
    /// process or by another process) before failing with `TransientError`
    /// / `LockAcquisitionTimeout`.
    pub lock_timeout: Duration,
    /// A write transaction open longer than this is rolled back and its lock
    /// released (its commit then fails with `TransientError` /
    /// `TransactionTimedOut`); `None`: no limit.
    pub transaction_timeout: Option<Duration>,
    /// A checkpoint is due once the write-ahead log is longer than this
    /// many bytes (default 64 MiB); see [`DatabaseOptions::background_checkpoints`].
    pub checkpoint_wal_bytes: u64,
    /// A checkpoint is due once the in-memory changes since the last full
    /// checkpoint (the delta, deleted entities included; an estimate) hold
    /// more than this many bytes, or twice what they held right after the
    /// last incremental checkpoint, whichever is more (default 8 MiB;
    /// `u64::MAX`: never for this reason). What bounds the memory of a
    /// long-running process: a full checkpoint empties the delta. See
    /// `crate::autocheckpoint`.
    pub checkpoint_delta_bytes: u64,
    /// Run due checkpoints on a background thread of this handle (default),
    /// so that commits never wait for a checkpoint's file writes (a
    /// checkpoint holds the writer lock only while it freezes its state and
    /// while it installs its files).
    /// `false`: the commit that makes one due runs it before returning (the
    /// behaviour tests rely on to place checkpoints exactly).
    pub background_checkpoints: bool,
    /// Checkpoint when the last handle is dropped (if anything changed).
    /// Off by default: the log survives a clean close and is replayed on open.
    pub checkpoint_on_close: bool,
    /// A checkpoint writes only a delta file (the changes since the last
    /// full checkpoint; ids unchanged) while that file stays below this
    /// fraction of the segment's size, and rewrites the whole segment (a
    /// full checkpoint, which renumbers ids) beyond it. `0.0`: every
    /// checkpoint is full. Default `0.25`.
    pub delta_checkpoint_ratio: f64,
    /// Open for reading only: no write transaction, no checkpoint, no lock
    /// taken for writing and no file created, changed or removed.
    pub read_only: bool,
    /// A test hook, called by checkpoints at the steps of
    /// [`CheckpointStep`]; an error abandons the checkpoint at that step
    /// and is returned, its files left as a crash would leave them (after
    /// [`CheckpointStep::ManifestInstalled`] the handle then refuses writes
    /// until reopened). `None` (default) in normal use.
    pub checkpoint_hook: Option<CheckpointHook>,
    /// File I/O of the log (replace to inject failures in tests).
    pub io: Arc<dyn StorageIo>,
}

impl Default for DatabaseOptions {
    fn default() -> Self {
        DatabaseOptions {
            lock_timeout: Duration::from_secs(5),
            transaction_timeout: None,
            checkpoint_wal_bytes: 64 << 20,
            checkpoint_delta_bytes: 8 << 20,
            background_checkpoints: true,
            checkpoint_on_close: false,
            delta_checkpoint_ratio: 0.25,
            read_only: false,
            checkpoint_hook: None,
            io: Arc::new(StdIo),
        }
    }
}

/// One published state: the base store and a delta version over it, and
/// where it stands in the files.
pub(crate) struct Version {
    id: u64,
    store: Arc<Store>,
    delta: Arc<Delta>,
    pos: LogPosition,
    last_commit: u64,
}

static VERSION_IDS: AtomicU64 = AtomicU64::new(1);

impl Version {
    fn new(store: Arc<Store>, delta: Arc<Delta>, pos: LogPosition, last_commit: u64) -> Version {
        Version {
            id: VERSION_IDS.fetch_add(1, Ordering::Relaxed),
            store,
            delta,
            pos,
            last_commit,
        }
    }

    fn from_loaded(l: Loaded) -> Version {
        Version::new(l.store, l.delta, l.pos, l.last_commit)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.store.clone(), self.delta.clone())
    }
}

/// Reads the delta file `meta` of `store`'s manifest.
pub(crate) fn read_delta_file(
    dir: &Path,
    store: &Store,
    meta: &crate::manifest::DeltaFileMeta,
) -> Result<Delta> {
    let mut delta = crate::deltafile::read(
        dir,
        &meta.file,
        &crate::deltafile::Base {
            node_bound: store.manifest.node_bound,
            rel_bound: store.rel_bound(),
            catalog: &store.manifest.catalog,
            store: Some(store),
        },
    )?;
    // Which indexes the segment holds is the manifest's to say.
    let base_indexes = store.schema().indexes;
    for set in &mut delta.index_sets {
        if set.base && !base_indexes.contains(&set.def) {
            return Err(Error::new(
                ErrorKind::CorruptDatabase,
                format!(
                    "{}: an index the segment does not hold is marked as held",
                    dir.join(&meta.file).display()
                ),
            ));
        }
    }
    Ok(delta)
}

/// A delta holding no change over `store`.
pub(crate) fn empty_delta(store: &Store) -> Delta {
    let schema = store.schema();
    let base_indexes = schema.indexes.clone();
    Delta::empty(
        Arc::new(store.manifest.catalog.clone()),
        store.manifest.node_bound,
        store.rel_bound(),
        schema,
        &base_indexes,
    )
}

/// The log as this handle writes it; guarded by one mutex, which also
/// orders publishing (commits, checkpoints, catching up with other processes).
struct LogState {
    /// The open log: opened under the writer lock, kept open after it is
    /// given back and reused if nobody else wrote meanwhile (see
    /// `unchanged_since_own_commits`).
    wal: Option<Wal>,
    /// Identity of the file `wal` is.
    wal_id: Option<FileId>,
    /// True if `wal.log` must be (re)created before the next append (missing,
    /// stale generation or unreadable header).
    fresh: bool,
    /// Set when a checkpoint failed half way: writes are refused until reopen.
    broken: Option<String>,
    /// Leftovers of earlier checkpoints were collected (once per handle).
    collected: bool,
    /// Commits appended to the log but not yet known durable, oldest first
    /// (group commit). While there are any, this handle keeps the file lock.
    pending: std::collections::VecDeque<Pending>,
    /// The newest committed version, durable or not: the next write
    /// transaction starts from it.
    head: Option<Arc<Version>>,
    /// Syncs the open log from the thread leading a group sync.
    syncer: Option<Arc<dyn WalSync>>,
}

/// A commit appended to the log, waiting for a sync to be published.
struct Pending {
    /// Its place in this handle's order of commits.
    seq: u64,
    /// Where its record starts in the log.
    start: u64,
    version: Arc<Version>,
}

/// The group sync: one thread syncs the log for every commit appended
/// before it started; the others wait.
#[derive(Default)]
struct SyncState {
    /// A thread is syncing now.
    syncing: bool,
    /// Every commit with a lower or equal sequence number is durable and published.
    durable_seq: u64,
    /// Commits from this sequence number on failed (the sync failed).
    failed_from: Option<(u64, String)>,
    /// Sequence number of the next commit.
    next_seq: u64,
    /// Threads parked until their commit (this sequence number) is settled
    /// or they are to lead the next sync. A finished sync wakes only those
    /// (waking every waiter made 16 writer threads on 2 cores queue for
    /// this mutex after every sync).
    waiters: Vec<(u64, std::thread::Thread)>,
}

impl SyncState {
    /// True if commit `seq` is durable or failed.
    fn settled(&self, seq: u64) -> bool {
        seq <= self.durable_seq || self.failed_from.as_ref().is_some_and(|(f, _)| seq >= *f)
    }

    /// Wakes the waiters whose commits are settled and, if commits still
    /// wait and nobody syncs, the oldest of them to lead the next sync.
    fn wake_waiters(&mut self) {
        let mut i = 0;
        while i < self.waiters.len() {
            if self.settled(self.waiters[i].0) {
                self.waiters.swap_remove(i).1.unpark();
            } else {
                i += 1;
            }
        }
        if !self.syncing {
            if let Some((_, next)) = self.waiters.iter().min_by_key(|w| w.0) {
                next.unpark();
            }
        }
    }
}

/// Which transaction of this handle holds the writer lock.
#[derive(Default)]
struct WriterSlot {
    holder: Option<u64>,
    next_ticket: u64,
    /// When the holder's transaction times out.
    deadline: Option<Instant>,
    /// The database is closing (stops the transaction watchdog).
    closing: bool,
}

/// Legacy accessors ([`Database::catalog`], [`Database::statistics`]) return
/// references; the values they returned stay alive here until the database closes.
type Retained = Vec<(u64, Arc<Catalog>, Arc<Statistics>)>;

/// The writer lock of one handle: which transaction holds it in this
/// process, and the cross-process file lock.
pub(crate) struct Gate {
    slot: Mutex<WriterSlot>,
    /// Transactions waiting for the slot; a release wakes one of them (a
    /// woken waiter takes the slot if it is free, so no wake-up is lost).
    cv: Condvar,
    /// The transaction watchdog: woken when a deadline is set or the
    /// handle closes.
    watch_cv: Condvar,
    file: Mutex<WriterLock>,
    /// Number of commits appended but not yet synced (`LogState::pending`).
    unsynced: AtomicUsize,
    /// True while this handle holds the file lock and has caught up with
    /// every other process's commit: no other process can write meanwhile,
    /// so a snapshot needs no look at the files (see [`Database::try_snapshot`]).
    current_while_held: AtomicBool,
    /// `slot.holder.is_some()`, readable without the mutex (for the spinning waiter).
    slot_taken: AtomicBool,
    /// A waiter for the slot is spinning (at most one does).
    spinning: AtomicBool,
}

/// How long the next waiter for the writer slot spins before it sleeps: a
/// single-row transaction holds the slot for some tens of microseconds, and
/// waking a sleeping thread on a busy machine takes longer than that, so
/// with many writers the slot would otherwise sit free between holders.
const SLOT_SPIN: Duration = Duration::from_micros(40);

/// Syncs at most this long are waited for awake (see
/// [`Shared::durable_spin`]): waking a sleeping thread costs about as much.
const SPIN_FOR_SYNCS_UP_TO: Duration = Duration::from_micros(500);

impl Gate {
    /// Marks the slot free (no holder, no deadline), for waiters that
    /// sleep on `cv` and for the one spinning on `slot_taken`.
    fn free_slot(&self, slot: &mut WriterSlot) {
        slot.holder = None;
        self.slot_taken.store(false, Ordering::SeqCst);
        slot.deadline = None;
    }

    /// Releases the lock if `ticket` still holds it.
    fn release(&self, ticket: u64) {
        let mut slot = lock(&self.slot);
        if slot.holder == Some(ticket) {
            self.free_slot(&mut slot);
            self.release_file_if_idle(&slot);
            drop(slot);
            self.cv.notify_one();
        }
    }

    /// Gives the file lock back to other processes unless a transaction of
    /// this handle holds the slot or commits still wait for their sync.
    fn release_file_if_idle(&self, slot: &WriterSlot) {
        if slot.holder.is_none() && self.unsynced.load(Ordering::SeqCst) == 0 {
            self.current_while_held.store(false, Ordering::SeqCst);
            lock(&self.file).release();
        }
    }
}

pub(crate) struct Shared {
    dir: PathBuf,
    options: DatabaseOptions,
    current: ArcSwap<Version>,
    gate: Arc<Gate>,
    log: Arc<Mutex<LogState>>,
    sync: Mutex<SyncState>,
    /// `sync.durable_seq` and `sync.syncing`, readable without the mutex,
    /// for committers that wait for a running sync without sleeping.
    durable_seq: AtomicU64,
    syncing: AtomicBool,
    /// How long the last group sync took, in nanoseconds.
    last_sync_ns: AtomicU64,
    /// The transaction watchdog thread was started.
    watchdog: AtomicBool,
    retained: Mutex<Retained>,
    /// Rings the background checkpoint thread (see [`crate::autocheckpoint`]).
    auto: Arc<Trigger>,
    /// (manifest generation, delta bytes) right after the last checkpoint
    /// this handle made: the baseline of the delta size trigger.
    auto_baseline: Mutex<(u64, u64)>,
    /// Checkpoints this handle ran because one was due.
    auto_count: AtomicU64,
    /// The log file held open for [`follow::news`].
    peek: follow::LogPeek,
}

/// Rolls back (releases the lock of) a transaction open longer than its
/// deadline; runs on a thread of its own until the handle closes. Takes the
/// log mutex first so that it never revokes a transaction in the middle of
/// its commit.
fn watch_transactions(gate: &Gate, log: &Mutex<LogState>) {
    let mut slot = lock(&gate.slot);
    loop {
        if slot.closing {
            return;
        }
        let now = Instant::now();
        match slot.deadline {
            Some(deadline) if now >= deadline => {
                let holder = slot.holder;
                drop(slot);
                let _log = lock(log);
                slot = lock(&gate.slot);
                if slot.holder == holder && slot.deadline.is_some_and(|d| Instant::now() >= d) {
                    gate.free_slot(&mut slot);
                    gate.release_file_if_idle(&slot);
                    gate.cv.notify_all();
                }
            }
            Some(deadline) => {
                slot = gate
                    .watch_cv
                    .wait_timeout(slot, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            None => slot = gate.watch_cv.wait(slot).unwrap_or_else(|e| e.into_inner()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn read_only_error(dir: &Path) -> Error {
    Error::new(
        ErrorKind::ArgumentError,
        format!(
            "the database {} was opened read-only: it cannot be written",
            dir.display()
        ),
    )
    .with_code("ForbiddenOnReadOnlyDatabase")
}

impl Shared {
    /// Takes the writer lock (this process's, then the cross-process file
    /// lock), catches up with what other processes committed, and returns
    /// the ticket of the holder.
    fn acquire_writer(self: &Arc<Self>) -> Result<u64> {
        self.acquire_writer_within(self.options.lock_timeout)
    }

    /// [`Shared::acquire_writer`], waiting at most `timeout` (zero: try once).
    fn acquire_writer_within(self: &Arc<Self>, timeout: Duration) -> Result<u64> {
        if self.options.read_only {
            return Err(read_only_error(&self.dir));
        }
        let deadline = Instant::now() + timeout;
        let ticket = {
            let mut slot = lock(&self.gate.slot);
            let mut may_spin = true;
            while slot.holder.is_some() {
                let now = Instant::now();
                if now >= deadline {
                    return Err(Error::new(
                        ErrorKind::TransientError,
                        format!(
                            "another write transaction of this process held the database's \
                             writer lock for more than {timeout:?}; retry later"
                        ),
                    )
                    .with_code("LockAcquisitionTimeout"));
                }
                // One waiter spins briefly (once per wake-up), the others sleep.
                if may_spin && !self.gate.spinning.swap(true, Ordering::SeqCst) {
                    may_spin = false;
                    drop(slot);
                    let until = (now + SLOT_SPIN).min(deadline);
                    let mut spins = 0u32;
                    while self.gate.slot_taken.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                        spins += 1;
                        if spins.is_multiple_of(64) && Instant::now() >= until {
                            break;
                        }
                    }
                    self.gate.spinning.store(false, Ordering::SeqCst);
                    slot = lock(&self.gate.slot);
                    continue;
                }
                slot = self
                    .gate
                    .cv
                    .wait_timeout(slot, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                may_spin = true;
            }
            slot.next_ticket += 1;
            slot.holder = Some(slot.next_ticket);
            self.gate.slot_taken.store(true, Ordering::SeqCst);
            slot.deadline = self.options.transaction_timeout.map(|t| Instant::now() + t);
            if slot.deadline.is_some() {
                self.gate.watch_cv.notify_one();
            }
            slot.next_ticket
        };
        // Still held (commits of this handle wait for their sync): no other
        // process can have written since this handle last caught up.
        let held = lock(&self.gate.file).is_held();
        if !held {
            let locked = lock(&self.gate.file).acquire(deadline, timeout);
            if let Err(e) = locked {
                self.gate.release(ticket);
                return Err(e);
            }
            let caught_up = { self.catch_up(&mut lock(&self.log)) };
            if let Err(e) = caught_up {
                self.gate.release(ticket);
                return Err(e);
            }
            self.gate.current_while_held.store(true, Ordering::SeqCst);
        }
        if self.options.transaction_timeout.is_some() && !self.watchdog.swap(true, Ordering::SeqCst)
        {
            let (gate, log) = (self.gate.clone(), self.log.clone());
            std::thread::Builder::new()
                .name("rhizome-txn-watchdog".into())
                .spawn(move || watch_transactions(&gate, &log))
                .map_err(|e| Error::internal(format!("starting the transaction watchdog: {e}")))?;
        }
        Ok(ticket)
    }

    pub(crate) fn release_writer(&self, ticket: u64) {
        self.gate.release(ticket);
    }

    /// Under the writer lock: replays what other processes committed, cuts
    /// off a torn record a dead writer left, and collects old segments.
    fn catch_up(&self, w: &mut LogState) -> Result<()> {
        if self.unchanged_since_own_commits(w) {
            return Ok(());
        }
        // Another process may have appended or replaced the log: reopen it.
        w.wal = None;
        w.wal_id = None;
        w.syncer = None;
        crate::relog::finish_switch(&self.dir)?;
        self.refresh(w, true)?;
        let v = self.current.load();
        w.fresh = !v.pos.live;
        if !w.collected {
            // Not while a checkpoint writes files that are not named yet.
            if let Ok(Some(ckpt)) = CheckpointLock::try_take(&self.dir) {
                collect_leftovers(&self.dir, &v.store.manifest, &ckpt);
                w.collected = true;
            }
        }
        Ok(())
    }

    /// True if the files are as this handle left them when it last gave up
    /// the file lock: the published version is its own last commit, the
    /// log at the path is the file it keeps open, as long as it wrote it,
    /// and the manifest is the one it knows (two `stat` calls). Then the open
    /// log stays open and nothing needs replaying. (The open file cannot have
    /// been replaced by another with the same inode number: this handle holds it.)
    fn unchanged_since_own_commits(&self, w: &LogState) -> bool {
        let Some(wal) = &w.wal else {
            return false;
        };
        if !w.pending.is_empty() || w.fresh || w.wal_id.is_none() {
            return false;
        }
        let v = self.current.load();
        v.pos.live
            && v.pos.wal == w.wal_id
            && v.pos.wal_len == wal.len()
            && follow::news(&self.dir, &v.pos, &self.peek) == News::None
    }

    /// Publishes what changed in the files since the current version (see
    /// [`crate::follow`]). `_log` is the guard of the log mutex, which orders
    /// every publication. `writer`: the caller holds the writer lock, so a
    /// torn record at the end of the log is debris and is cut off.
    fn refresh(&self, log: &mut LogState, writer: bool) -> Result<()> {
        if !log.pending.is_empty() {
            // This handle holds the file lock and its own commits are being
            // synced: nobody else wrote, and they are published when durable.
            return Ok(());
        }
        let v = self.current.load_full();
        let io = &*self.options.io;
        let loaded = match follow::news(&self.dir, &v.pos, &self.peek) {
            News::None => return Ok(()),
            News::Tail => {
                match follow::read_tail(&self.dir, io, v.snapshot(), &v.pos, v.last_commit)? {
                    Some(l) => l,
                    None => follow::load(&self.dir, io)?,
                }
            }
            News::Reload => follow::load(&self.dir, io)?,
        };
        if writer && loaded.torn {
            // Opening for append at the end of the valid records cuts off
            // the torn one (anything but zeros after the end) and syncs.
            io.open_append(&self.wal_path(), loaded.pos.wal_len)
                .map_err(|e| self.io_error("cutting the torn record off", e))?;
        }
        self.current.store(Arc::new(Version::from_loaded(loaded)));
        Ok(())
    }

    fn wal_path(&self) -> PathBuf {
        self.dir.join(WAL_FILE)
    }

    fn io_error(&self, what: &str, e: std::io::Error) -> Error {
        Error::new(
            ErrorKind::IoError,
            format!("{what} {}: {e}", self.wal_path().display()),
        )
    }

    /// The open log, created on first use.
    fn ensure_wal<'w>(&self, w: &'w mut LogState, generation: u64) -> Result<&'w mut Wal> {
        if w.wal.is_none() {
            let io = &self.options.io;
            let path = self.wal_path();
            if w.fresh {
                io.replace(&path, &wal::header(generation))
                    .map_err(|e| self.io_error("creating", e))?;
                w.fresh = false;
            }
            let (id, size) = FileId::stat(&path).map_err(|e| self.io_error("reading", e))?;
            // The records end where the current version stopped reading
            // (the writer lock is held and caught up); scanning on from
            // there makes sure.
            let v = self.current.load();
            let from = match v.pos.live && v.pos.wal == Some(id) && v.pos.wal_len <= size {
                true => v.pos.wal_len.max(wal::HEADER_LEN),
                false => wal::HEADER_LEN,
            };
            let end = wal::find_end(&**io, &path, from)?;
            let file = io
                .open_append(&path, end)
                .map_err(|e| self.io_error("opening", e))?;
            w.wal_id = Some(id);
            let wal = Wal::new(file);
            w.syncer = Some(wal.sync_handle()?);
            w.wal = Some(wal);
        }
        Ok(w.wal.as_mut().expect("opened above"))
    }

    /// Commits `txn` (group commit): under the log mutex, append its record
    /// (no sync yet), make its version the base of the next transaction and
    /// free the writer slot; then wait until a sync covers the record (one
    /// thread syncs for every commit appended before it started) and its
    /// version is published.
    pub(crate) fn commit(&self, mut txn: WriteTxn) -> Result<CommitInfo> {
        let counters = txn.state.counters;
        if txn.state.ops.is_empty() {
            return Ok(CommitInfo {
                commit: 0,
                counters,
            });
        }
        let mut w = lock(&self.log);
        let mut slot = lock(&self.gate.slot);
        if slot.holder != Some(txn.ticket) {
            return Err(Error::new(
                ErrorKind::TransientError,
                format!(
                    "the transaction was open longer than the transaction timeout ({:?}) \
                     and was rolled back; run it again",
                    self.options.transaction_timeout.unwrap_or_default()
                ),
            )
            .with_code("TransactionTimedOut"));
        }
        if let Some(why) = &w.broken {
            return Err(Error::new(ErrorKind::IoError, why.clone()));
        }
        let base = w.head.clone().unwrap_or_else(|| self.current.load_full());
        let commit = base.last_commit + 1;
        let record = wal::encode_record(commit, &txn.state.ops);
        if record.len() > u32::MAX as usize {
            return Err(Error::new(
                ErrorKind::IoError,
                "the transaction is too large for one log record (4 GiB); split it",
            ));
        }
        let generation = txn.state.snap.store().manifest.generation;
        let wal = self.ensure_wal(&mut w, generation)?;
        let start = wal.len();
        wal.append_unsynced(&record)?;
        let wal_len = wal.len();
        if txn.state.snap.delta().has_loose() {
            txn.state.snap.delta_mut().pack();
        }
        let background = self.options.background_checkpoints;
        let full = !background && self.checkpoint_due(generation, wal_len, txn.state.snap.delta());
        let pos = LogPosition {
            manifest: base.pos.manifest,
            wal: w.wal_id,
            wal_len,
            live: true,
        };
        let version = Arc::new(Version::new(
            txn.state.snap.store().clone(),
            txn.state.snap.delta().clone(),
            pos,
            commit,
        ));
        let seq = {
            let mut sync = lock(&self.sync);
            sync.next_seq += 1;
            sync.next_seq
        };
        w.head = Some(version.clone());
        w.pending.push_back(Pending {
            seq,
            start,
            version,
        });
        self.gate.unsynced.fetch_add(1, Ordering::SeqCst);
        // The next transaction may start now, from this one's version.
        // The next waiting transaction is woken only once this commit has
        // let go of the log mutex too: woken earlier, it queued for the
        // mutexes this commit still held (16 writers: 43–58% of 16 × the
        // raw sync rate against 33–52%, six pairs).
        self.gate.free_slot(&mut slot);
        drop(slot);
        if background {
            self.auto.wake();
        }
        if full {
            // Sync and publish everything now, then checkpoint (still under
            // the log mutex, so no commit slips in between).
            let synced = self.sync_pending(&mut w);
            if synced.is_ok() {
                // The commit is durable already; a failed checkpoint leaves the log in place.
                if self.checkpoint_locked(&mut w, false).is_ok() {
                    self.auto_count.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.release_file_if_idle();
            drop(w);
            self.gate.cv.notify_one();
            drop(txn);
            return synced.map(|_| CommitInfo { commit, counters });
        }
        drop(w);
        self.gate.cv.notify_one();
        drop(txn);
        self.wait_durable(seq)?;
        Ok(CommitInfo { commit, counters })
    }

    /// Gives the file lock back unless this handle still needs it.
    fn release_file_if_idle(&self) {
        let slot = lock(&self.gate.slot);
        self.gate.release_file_if_idle(&slot);
    }

    /// Waits until commit `seq` is durable and published; leads a sync if
    /// no thread is syncing. Waits parked (see `SyncState::waiters`).
    fn wait_durable(&self, seq: u64) -> Result<()> {
        let mut sync = lock(&self.sync);
        let me = std::thread::current();
        loop {
            if let Some((from, why)) = &sync.failed_from {
                if seq >= *from {
                    return Err(Error::new(ErrorKind::IoError, why.clone()));
                }
            }
            if sync.durable_seq >= seq {
                return Ok(());
            }
            if !sync.syncing {
                // Lead one sync, then hand the lead to whichever committer
                // waits next: the others wait awake while syncs are fast, so
                // one of them starts the next sync at once, and this thread
                // goes back to its own work. (Leading for up to 1 ms more,
                // as before, kept one writer of 16 from committing: 16
                // writers reached 44–53% of 16 × the raw sync rate against
                // 47–58% now, ten alternating pairs.)
                sync.syncing = true;
                self.syncing.store(true, Ordering::SeqCst);
                drop(sync);
                let outcome = self.lead_sync();
                sync = lock(&self.sync);
                match outcome {
                    Ok(upto) => self.mark_durable(&mut sync, upto),
                    Err((from, why)) => sync.failed_from = Some((from, why)),
                }
                sync.syncing = false;
                self.syncing.store(false, Ordering::SeqCst);
                sync.wake_waiters();
                continue;
            }
            // A sync runs: wait for it awake for a while, then sleep.
            drop(sync);
            let spin = self.durable_spin();
            if !spin.is_zero() {
                let until = Instant::now() + spin;
                while self.durable_seq.load(Ordering::SeqCst) < seq
                    && self.syncing.load(Ordering::SeqCst)
                    && Instant::now() < until
                {
                    std::thread::yield_now();
                }
                if self.durable_seq.load(Ordering::SeqCst) >= seq {
                    return Ok(());
                }
            }
            sync = lock(&self.sync);
            if sync.settled(seq) || !sync.syncing {
                continue;
            }
            sync.waiters.push((seq, me.clone()));
            drop(sync);
            // A wake-up meant for an earlier wait, or a spurious one, only
            // costs another look.
            std::thread::park();
            sync = lock(&self.sync);
            if let Some(i) = sync.waiters.iter().position(|w| w.1.id() == me.id()) {
                sync.waiters.swap_remove(i);
            }
        }
    }

    /// Records that every commit up to `upto` is durable and published,
    /// in `sync` and in its mirror for committers waiting awake.
    fn mark_durable(&self, sync: &mut SyncState, upto: u64) {
        sync.durable_seq = sync.durable_seq.max(upto);
        self.durable_seq.fetch_max(upto, Ordering::SeqCst);
    }

    /// How long a committer whose commit a running sync does not cover
    /// waits for it awake, giving the processor away between looks, before
    /// it sleeps: about two syncs (the running one and the one that will
    /// cover it) while syncs are fast, none when they are slow. Waking a
    /// sleeping thread costs about as much as a fast sync, and a writer
    /// woken late misses the next sync: with 16 writers on 2 vCPUs this
    /// took group commit from 35–42k to 52–66k commits/s.
    fn durable_spin(&self) -> Duration {
        let last = Duration::from_nanos(self.last_sync_ns.load(Ordering::Relaxed));
        if last <= SPIN_FOR_SYNCS_UP_TO {
            2 * last
        } else {
            Duration::ZERO
        }
    }

    /// Syncs the log outside the log mutex (commits go on appending), then
    /// publishes the commits the sync covered. Returns the last sequence
    /// number published, or where the failed ones start and why.
    fn lead_sync(&self) -> std::result::Result<u64, (u64, String)> {
        let (syncer, upto) = {
            let w = lock(&self.log);
            match (w.syncer.clone(), w.pending.back()) {
                (Some(syncer), Some(last)) => (syncer, last.seq),
                // Published meanwhile (a checkpoint synced everything).
                _ => return Ok(lock(&self.sync).next_seq),
            }
        };
        let started = Instant::now();
        let synced = syncer.sync();
        let took = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last_sync_ns.store(took, Ordering::Relaxed);
        let mut w = lock(&self.log);
        let result = match synced {
            Ok(()) => {
                self.publish_up_to(&mut w, upto);
                Ok(upto)
            }
            Err(e) => Err(self.fail_pending(&mut w, &e.to_string())),
        };
        drop(w);
        self.release_file_if_idle();
        result
    }

    /// Publishes the pending commits up to sequence number `upto`, in order.
    fn publish_up_to(&self, w: &mut LogState, upto: u64) {
        let mut newest = None;
        while w.pending.front().is_some_and(|p| p.seq <= upto) {
            newest = w.pending.pop_front().map(|p| p.version);
            self.gate.unsynced.fetch_sub(1, Ordering::SeqCst);
        }
        if let Some(v) = newest {
            self.current.store(v);
        }
        if w.pending.is_empty() {
            w.head = None;
        }
    }

    /// A sync failed: every pending commit fails, the log is cut back to
    /// before the first of them and refuses further commits until reopen.
    fn fail_pending(&self, w: &mut LogState, error: &str) -> (u64, String) {
        let first = w
            .pending
            .front()
            .map_or((u64::MAX, 0), |p| (p.seq, p.start));
        if let Some(wal) = w.wal.as_mut() {
            wal.sync_failed(first.1);
        }
        let n = w.pending.len();
        w.pending.clear();
        w.head = None;
        self.gate.unsynced.fetch_sub(n, Ordering::SeqCst);
        (
            first.0,
            format!("syncing the write-ahead log failed, the transaction was rolled back: {error}"),
        )
    }

    /// Syncs and publishes every pending commit now (caller holds the log mutex).
    fn sync_pending(&self, w: &mut LogState) -> Result<()> {
        let Some(last) = w.pending.back().map(|p| p.seq) else {
            return Ok(());
        };
        let synced = match &w.syncer {
            Some(syncer) => syncer.sync().map_err(|e| e.to_string()),
            None => Err("the log is not open".to_string()),
        };
        let mut sync = lock(&self.sync);
        let outcome = match synced {
            Ok(()) => {
                self.publish_up_to(w, last);
                self.mark_durable(&mut sync, last);
                Ok(())
            }
            Err(e) => {
                let (from, why) = self.fail_pending(w, &e);
                sync.failed_from = Some((from, why.clone()));
                Err(Error::new(ErrorKind::IoError, why))
            }
        };
        sync.wake_waiters();
        outcome
    }

    /// The checkpoint policy (see [`crate::autocheckpoint`]) for a log of
    /// `wal_len` bytes and `delta` over the segment of `generation`.
    fn checkpoint_due(&self, generation: u64, wal_len: u64, delta: &Delta) -> bool {
        if wal_len >= self.options.checkpoint_wal_bytes {
            return true;
        }
        if self.options.checkpoint_delta_bytes == u64::MAX || delta.is_empty() {
            return false;
        }
        let (at, bytes) = *lock(&self.auto_baseline);
        // A checkpoint of another process (or a full one) resets the baseline.
        let baseline = if at == generation { bytes } else { 0 };
        crate::autocheckpoint::due(
            wal_len,
            delta.approx_bytes(),
            baseline,
            self.options.checkpoint_wal_bytes,
            self.options.checkpoint_delta_bytes,
        )
    }

    /// One look of the background checkpoint thread: checkpoints if due,
    /// taking the writer lock only if it is free within a moment.
    fn auto_step(self: &Arc<Self>) -> Step {
        let v = self.current.load_full();
        let wal_len = if v.pos.live { v.pos.wal_len } else { 0 };
        if !self.checkpoint_due(v.store.manifest.generation, wal_len, &v.delta) {
            return Step::Idle;
        }
        drop(v);
        // Another checkpoint is running: look again later.
        let Ok(Some(ckpt)) = CheckpointLock::try_take(&self.dir) else {
            return Step::RetrySoon;
        };
        // Catching up or the commits before may have changed the picture:
        // the policy is asked again once the lock is held.
        match self.checkpoint_concurrently(ckpt, false, true, Duration::from_millis(50)) {
            Ok(true) => {
                self.auto_count.fetch_add(1, Ordering::Relaxed);
                // The commits made while it wrote may make another due,
                // and no commit may come to ring the thread again: look.
                Step::RetrySoon
            }
            Ok(false) => Step::Idle,
            Err(e) if e.kind == ErrorKind::TransientError => Step::RetrySoon,
            Err(_) => Step::Idle,
        }
    }

    /// Checkpoints the current state while the caller holds the writer lock
    /// (inline checkpoints, on open and on close): nothing is committed
    /// meanwhile. Does nothing (false) if a checkpoint is running elsewhere.
    fn checkpoint_locked(&self, w: &mut LogState, full: bool) -> Result<bool> {
        let Some(ckpt) = CheckpointLock::try_take(&self.dir)? else {
            return Ok(false);
        };
        let superseded = self.checkpoint_held(w, full, &ckpt)?;
        Ok(superseded
            .map(|s| self.remove_superseded(s, &ckpt))
            .is_some())
    }

    /// [`Shared::checkpoint_locked`] with the checkpoint lock held, but
    /// the files it replaced are left to the caller; `None`: nothing to save.
    fn checkpoint_held(
        &self,
        w: &mut LogState,
        full: bool,
        ckpt: &CheckpointLock,
    ) -> Result<Option<Superseded>> {
        let Some(frozen) = self.freeze(w, full, false)? else {
            return Ok(None);
        };
        let prepared = self.write_checkpoint(&frozen)?;
        match self.stage(&frozen, prepared)? {
            Some(staged) => self.install(w, frozen, staged, ckpt),
            None => Err(Error::internal(
                "a checkpoint could not renumber the ids of commits it had to carry over",
            )),
        }
    }

    /// Removes the files a checkpoint replaced and what interrupted ones
    /// left, with the checkpoint lock but not the writer lock held
    /// (removing a large file takes a while).
    fn remove_superseded(&self, s: Superseded, ckpt: &CheckpointLock) {
        if let Some(segment) = s.segment {
            crate::lock::remove_if_unused(&self.dir.join(segment));
        }
        if let Some(old) = s.delta {
            // Read whole at load, never mapped: nobody needs it any more (a
            // process loading the old manifest right now retries).
            let _ = std::fs::remove_file(self.dir.join(old));
        }
        collect_leftovers(&self.dir, &s.manifest, ckpt);
    }

    /// Checkpoints with the writer lock held only for a moment at each end:
    /// to freeze the state to write (waiting at most `lock_wait` for the
    /// lock) and to install what was written; commits go on while the
    /// files are written. `if_due`: only if a checkpoint is still due once
    /// the lock is held.
    fn checkpoint_concurrently(
        self: &Arc<Self>,
        ckpt: CheckpointLock,
        full: bool,
        if_due: bool,
        lock_wait: Duration,
    ) -> Result<bool> {
        let ticket = self.acquire_writer_within(lock_wait)?;
        let frozen = self.freeze(&mut lock(&self.log), full, if_due);
        self.release_writer(ticket);
        let Some(frozen) = frozen? else {
            return Ok(false);
        };
        // A failure leaves the written files as debris, collected later.
        let prepared = self.write_checkpoint(&frozen)?;
        if let Some(hook) = &self.options.checkpoint_hook {
            hook(CheckpointStep::Written)?;
        }
        let staged = self.stage(&frozen, prepared)?;
        if let Some(hook) = &self.options.checkpoint_hook {
            hook(CheckpointStep::Staged)?;
        }
        let ticket = self.acquire_writer()?;
        let installed = match staged {
            Some(staged) => self.install(&mut lock(&self.log), frozen, staged, &ckpt),
            // Ids the renumbering could not place: checkpoint again with
            // the lock held (nothing commits meanwhile).
            None => self.checkpoint_held(&mut lock(&self.log), true, &ckpt),
        };
        self.release_writer(ticket);
        Ok(installed?
            .map(|s| self.remove_superseded(s, &ckpt))
            .is_some())
    }

    /// Under the writer lock: syncs what this handle committed and returns
    /// the state a checkpoint is to write, or `None` if there is nothing to
    /// save (or, with `if_due`, no checkpoint is due).
    fn freeze(&self, w: &mut LogState, full: bool, if_due: bool) -> Result<Option<Frozen>> {
        if let Some(why) = &w.broken {
            return Err(Error::new(ErrorKind::IoError, why.clone()));
        }
        self.sync_pending(w)?;
        let v = self.current.load_full();
        let wal_len = if v.pos.live { v.pos.wal_len } else { 0 };
        if if_due && !self.checkpoint_due(v.store.manifest.generation, wal_len, &v.delta) {
            return Ok(None);
        }
        // After an incremental checkpoint the delta is not empty, but the
        // delta file holds all of it until the log gets a record.
        let saved = v.store.manifest.delta.is_some()
            && (!v.pos.live || v.pos.wal_len <= crate::wal::HEADER_LEN);
        if v.delta.is_empty() || (saved && !full) {
            return Ok(None);
        }
        Ok(Some(Frozen {
            generation: v.store.manifest.generation + 1,
            version: v,
            full,
        }))
    }

    /// Writes the files of a checkpoint of `f` (no lock needed): a delta
    /// file if the changes are small enough (see
    /// [`DatabaseOptions::delta_checkpoint_ratio`]) and a full one was not
    /// asked for, else a new segment. Nothing names them yet.
    fn write_checkpoint(&self, f: &Frozen) -> Result<Prepared> {
        let v = &f.version;
        if !f.full {
            let bytes = crate::deltafile::encode(&v.delta, &v.store);
            let limit = self.options.delta_checkpoint_ratio * v.store.manifest.segment_len as f64;
            if bytes.len() as f64 <= limit {
                let file = crate::deltafile::file_name(f.generation);
                crate::deltafile::write(&self.dir, &file, &bytes)?;
                crate::manifest::sync_dir(&self.dir)?;
                let mut manifest = v.store.manifest.clone();
                manifest.generation = f.generation;
                manifest.delta = Some(crate::manifest::DeltaFileMeta {
                    file,
                    len: bytes.len() as u64,
                });
                return Ok(Prepared::Incremental(manifest));
            }
        }
        Ok(Prepared::Full(crate::checkpoint::write(
            &self.dir,
            &v.snapshot(),
            f.generation,
        )?))
    }

    /// Prepares the switch of a checkpoint of `f` without the writer lock:
    /// the commits the log holds after the freeze so far (whole records
    /// only) are written to `wal.next` — renumbered after a full checkpoint
    /// — and the manifest is staged as `manifest.json.tmp`, so that the
    /// install under the lock has only the commits made after this to
    /// carry over. `None`: a full checkpoint's ids could not be renumbered
    /// (its segment is removed; the caller checkpoints under the lock).
    fn stage(&self, f: &Frozen, prepared: Prepared) -> Result<Option<Staged>> {
        let old = &f.version;
        let (wal, raw) = match old.pos.live {
            // A log created since a stale one was frozen is read under the lock.
            false => (None, Vec::new()),
            true => {
                let path = self.wal_path();
                match self
                    .options
                    .io
                    .read_from(&path, old.pos.wal_len)
                    .map_err(|e| Error::io(path.display(), e))?
                {
                    Some((id, mut bytes)) if Some(id) == old.pos.wal => {
                        // Whole records only: one may be being appended.
                        let valid = crate::wal::parse_records(&bytes, old.pos.wal_len).valid_len;
                        bytes.truncate(valid as usize);
                        (Some(id), bytes)
                    }
                    _ => (None, Vec::new()),
                }
            }
        };
        self.stage_records(f, prepared, wal, raw)
    }

    /// [`Shared::stage`] with the log bytes to carry (`raw`, whole records
    /// from the frozen position, of the log `wal`) read.
    fn stage_records(
        &self,
        f: &Frozen,
        prepared: Prepared,
        wal: Option<FileId>,
        raw: Vec<u8>,
    ) -> Result<Option<Staged>> {
        let from = tail_start(&f.version);
        let records = crate::wal::parse_records(&raw, from).records;
        let (manifest, log_records, full) = match prepared {
            Prepared::Incremental(manifest) => (manifest, raw.clone(), None),
            Prepared::Full(written) => {
                let segment = written.manifest.segment.clone();
                let store = match Store::from_manifest(&self.dir, written.manifest.clone()) {
                    Ok(store) => Arc::new(store),
                    Err(_) => {
                        crate::lock::remove_if_unused(&self.dir.join(segment));
                        return Ok(None);
                    }
                };
                let base = Arc::new(empty_delta(&store));
                let mut full = FullStage {
                    store,
                    delta: base.clone(),
                    base,
                    node_map: written.node_map,
                };
                match self.carry_renumbered(&f.version, &mut full, &records) {
                    Some(bytes) => (written.manifest, bytes, Some(full)),
                    None => {
                        drop(full);
                        crate::lock::remove_if_unused(&self.dir.join(segment));
                        return Ok(None);
                    }
                }
            }
        };
        let io = &*self.options.io;
        crate::relog::write_next(&self.dir, io, f.generation, &log_records)?;
        manifest.stage(&self.dir)?;
        Ok(Some(Staged {
            manifest,
            wal,
            raw,
            full,
        }))
    }

    /// `records` (old ids) renumbered into the ids of the new segment of
    /// `full` and replayed over its state; the framed records, or `None` if
    /// an id could not be renumbered or the records do not replay.
    fn carry_renumbered(
        &self,
        old: &Version,
        full: &mut FullStage,
        records: &[crate::wal::Record],
    ) -> Option<Vec<u8>> {
        if records.is_empty() {
            return Some(Vec::new());
        }
        let new = Snapshot::new(full.store.clone(), full.base.clone());
        let renumbering = crate::relog::Renumbering {
            old: &old.snapshot(),
            new: &new,
            node_map: &full.node_map,
        };
        let bytes = renumbering.records(records)?;
        let over = Snapshot::new(full.store.clone(), full.delta.clone());
        let at = crate::wal::HEADER_LEN;
        match follow::replay(over, &bytes, at, 0, &self.dir) {
            Ok((delta, _, scan)) if scan.valid_len == bytes.len() as u64 => {
                full.delta = delta;
                Some(bytes)
            }
            _ => None,
        }
    }

    /// Under the writer lock: installs a checkpoint staged of `f`, carrying
    /// the commits made since it was staged over to the new log too (see
    /// [`crate::relog`] for the order of the steps and why a crash between
    /// any two loses nothing). Returns the files it replaced.
    fn install(
        &self,
        w: &mut LogState,
        f: Frozen,
        mut staged: Staged,
        ckpt: &CheckpointLock,
    ) -> Result<Option<Superseded>> {
        if let Some(why) = &w.broken {
            return Err(Error::new(ErrorKind::IoError, why.clone()));
        }
        self.sync_pending(w)?;
        let cur = self.current.load_full();
        let old = &f.version;
        if cur.pos.manifest != old.pos.manifest || (old.pos.live && cur.pos.wal != old.pos.wal) {
            return Err(Error::new(
                ErrorKind::TransientError,
                "the database was checkpointed by another handle meanwhile; \
                 this checkpoint was abandoned",
            )
            .with_code("DatabaseChanging"));
        }
        // The commits since the freeze: the rest of the log the frozen state
        // read, or all of a log created since (the frozen one was stale).
        let from = tail_start(old);
        let to = if cur.pos.live { cur.pos.wal_len } else { from };
        let io = &*self.options.io;
        let (raw, _) = crate::relog::read_tail(&self.dir, io, cur.pos.wal, from, to)?;
        let carried = staged.raw.len();
        let still = carried <= raw.len()
            && raw[..carried] == staged.raw[..]
            && (carried == 0 || staged.wal == cur.pos.wal);
        if !still {
            // The log changed under the staged part (a commit whose sync
            // failed was cut off): stage again, now that nothing commits.
            let prepared = match staged.full.take() {
                None => Prepared::Incremental(staged.manifest),
                Some(full) => Prepared::Full(crate::checkpoint::Written {
                    manifest: staged.manifest,
                    node_map: full.node_map,
                }),
            };
            staged = match self.stage_records(&f, prepared, cur.pos.wal, raw.clone())? {
                Some(s) => s,
                None => return self.checkpoint_held(w, true, ckpt),
            };
        }
        let extra_raw = &raw[staged.raw.len()..];
        let extra = crate::wal::parse_records(extra_raw, from + staged.raw.len() as u64).records;
        let extra_bytes = match staged.full.as_mut() {
            None => extra_raw.to_vec(),
            Some(full) => match self.carry_renumbered(old, full, &extra) {
                Some(bytes) => bytes,
                None => {
                    // Ids the renumbering could not place: write it again
                    // with the lock held (nothing commits now).
                    let segment = staged.manifest.segment.clone();
                    drop(staged);
                    crate::lock::remove_if_unused(&self.dir.join(segment));
                    return self.checkpoint_held(w, true, ckpt);
                }
            },
        };
        let generation = f.generation;
        if !extra_bytes.is_empty() {
            crate::relog::append_next(&self.dir, io, &extra_bytes)?;
        }
        if let Err(e) = Manifest::install_staged(&self.dir) {
            if Manifest::read_with_id(&self.dir).map_or(true, |(_, id)| id != cur.pos.manifest) {
                w.broken = Some(format!(
                    "a checkpoint failed while it installed its manifest ({e}); reopen the database"
                ));
            }
            return Err(e);
        }
        // From here on the old log is stale (its generation is older than the manifest's).
        w.wal = None;
        w.wal_id = None;
        w.syncer = None;
        w.fresh = false;
        if let Some(hook) = &self.options.checkpoint_hook {
            if let Err(e) = hook(CheckpointStep::ManifestInstalled) {
                w.broken = Some(format!(
                    "a checkpoint was interrupted ({e}); reopen the database"
                ));
                return Err(e);
            }
        }
        let switched = crate::relog::rename_next(&self.dir)
            .and_then(|_| Manifest::read_with_id(&self.dir))
            .and_then(|(m, id)| {
                let store = match staged.full.as_ref() {
                    Some(full) => Arc::clone(&full.store),
                    None => Arc::new(Store::from_manifest(&self.dir, m)?),
                };
                Ok((store, id))
            })
            .and_then(|(store, id)| {
                let wal_len = self.ensure_wal(w, generation)?.len();
                Ok((store, id, wal_len))
            });
        let (store, manifest_id, wal_len) = match switched {
            Ok(s) => s,
            Err(e) => {
                w.wal = None;
                w.broken = Some(format!(
                    "a checkpoint could not open its own files ({e}); reopen the database"
                ));
                return Err(e);
            }
        };
        let pos = LogPosition {
            manifest: manifest_id,
            wal: w.wal_id,
            wal_len,
            live: true,
        };
        // After an incremental checkpoint the state is the same delta over
        // the same segment, now saved in the delta file (the commits since
        // the freeze included: they are in the new log too).
        // The doubling rule of the checkpoint policy counts from the delta
        // an incremental checkpoint kept; a full one leaves only the
        // commits it carried over, so it resets the baseline.
        let (delta, baseline) = match staged.full {
            Some(full) => (full.delta, 0),
            None => (cur.delta.clone(), cur.delta.approx_bytes()),
        };
        let old_segment = &old.store.manifest.segment;
        let superseded = Superseded {
            segment: (*old_segment != store.manifest.segment).then(|| old_segment.clone()),
            delta: old.store.manifest.delta.as_ref().map(|d| d.file.clone()),
            manifest: store.manifest.clone(),
        };
        *lock(&self.auto_baseline) = (store.manifest.generation, baseline);
        self.current
            .store(Arc::new(Version::new(store, delta, pos, cur.last_commit)));
        Ok(Some(superseded))
    }
}

/// Where the commits after the frozen state `old` start in the log.
fn tail_start(old: &Version) -> u64 {
    if old.pos.live {
        old.pos.wal_len
    } else {
        crate::wal::HEADER_LEN
    }
}

/// A checkpoint's switch prepared without the writer lock (see [`Shared::stage`]).
struct Staged {
    /// The manifest to install (staged as `manifest.json.tmp`).
    manifest: Manifest,
    /// The log the carried bytes were read from.
    wal: Option<FileId>,
    /// The log bytes from the frozen position carried into `wal.next`
    /// (checked unchanged under the writer lock).
    raw: Vec<u8>,
    /// A full checkpoint's new segment and state.
    full: Option<FullStage>,
}

/// The new segment of a full checkpoint, opened, and the commits carried
/// over replayed on it.
struct FullStage {
    store: Arc<Store>,
    /// No changes over `store` (its ids are the new ones).
    base: Arc<Delta>,
    /// The commits carried so far, replayed over `store`.
    delta: Arc<Delta>,
    /// New id of every node id of the frozen state.
    node_map: Vec<NodeId>,
}

/// The state a checkpoint writes, frozen under the writer lock.
struct Frozen {
    /// The state (synced and published).
    version: Arc<Version>,
    /// Generation of the manifest the checkpoint installs.
    generation: u64,
    /// A full checkpoint was asked for.
    full: bool,
}

/// The files an installed checkpoint replaced.
struct Superseded {
    /// The old segment, if the checkpoint wrote a new one.
    segment: Option<String>,
    /// The old delta file, if there was one.
    delta: Option<String>,
    /// The manifest installed.
    manifest: Manifest,
}

/// The files a checkpoint wrote, not yet installed.
enum Prepared {
    /// A delta file, and the manifest that names it.
    Incremental(Manifest),
    /// A new segment, its manifest and the map from old node ids to new ones.
    Full(crate::checkpoint::Written),
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.auto.close();
        lock(&self.gate.slot).closing = true;
        self.gate.cv.notify_all();
        self.gate.watch_cv.notify_all();
        if self.options.checkpoint_on_close
            && !self.options.read_only
            && !self.current.load().delta.is_empty()
        {
            // Not through `acquire_writer` (it needs an `Arc<Self>`): no
            // transaction of this handle is left, so only the file lock is needed.
            let deadline = Instant::now() + self.options.lock_timeout;
            if lock(&self.gate.file)
                .acquire(deadline, self.options.lock_timeout)
                .is_ok()
            {
                let mut w = lock(&self.log);
                if self.catch_up(&mut w).is_ok() {
                    let _ = self.checkpoint_locked(&mut w, false);
                }
                lock(&self.gate.file).release();
            }
        }
    }
}

/// What a database holds since its last checkpoint; see [`Database::checkpoint_status`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointStatus {
    /// Estimated bytes of memory the changes since the last full checkpoint
    /// hold (the delta, deleted entities included; 0 if none).
    pub delta_bytes: u64,
    /// Length of the write-ahead log in bytes.
    pub wal_bytes: u64,
    /// Checkpoints this handle ran because one was due (by
    /// [`DatabaseOptions::checkpoint_wal_bytes`] or
    /// [`DatabaseOptions::checkpoint_delta_bytes`]), in the background or
    /// inline.
    pub automatic_checkpoints: u64,
}

/// An open database. Cheap to clone; all clones share the mapping, the
/// current state and the writer lock.
#[derive(Clone)]
pub struct Database {
    shared: Arc<Shared>,
}

/// Removes what interrupted or superseded checkpoints left: temporary files
/// and segments the manifest does not name, if no process maps them. Only
/// called under the writer lock and the checkpoint lock (so no checkpoint
/// is writing them now).
fn collect_leftovers(dir: &Path, manifest: &Manifest, _ckpt: &CheckpointLock) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let stray_segment =
            name.starts_with("segment-") && name.ends_with(".rhz") && name != manifest.segment;
        let stray_delta = name.starts_with("delta-")
            && name.ends_with(".rhd")
            && manifest.delta.as_ref().is_none_or(|d| d.file != name);
        if stray_segment {
            crate::lock::remove_if_unused(&entry.path());
        } else if name.ends_with(".tmp") || stray_delta {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

impl Database {
    /// Opens the database in `dir` with default options; see [`Database::open_with`].
    pub fn open(dir: &Path) -> Result<Database> {
        Database::open_with(dir, DatabaseOptions::default())
    }

    /// Opens the database in `dir` by mapping its segment and replaying the
    /// commits of its write-ahead log. Fails with `IoError` if `dir` is not a
    /// database and `CorruptDatabase` if its files are damaged (a manifest
    /// naming arrays outside the segment, a truncated segment). A torn or
    /// corrupt record at the end of the log is ignored (it was never
    /// acknowledged; the next writer cuts it off); the commits before it are
    /// kept. Opening takes no lock and writes nothing, with one exception: a
    /// writable handle that finds a log longer than
    /// [`DatabaseOptions::checkpoint_wal_bytes`] checkpoints it if the
    /// writer lock is free (without waiting), so that later processes
    /// replay a short log.
    pub fn open_with(dir: &Path, options: DatabaseOptions) -> Result<Database> {
        let loaded = follow::load(dir, &*options.io)?;
        let long_log = loaded.pos.live && loaded.pos.wal_len > options.checkpoint_wal_bytes;
        let db = Database {
            shared: Arc::new(Shared {
                dir: dir.to_path_buf(),
                options,
                current: ArcSwap::from_pointee(Version::from_loaded(loaded)),
                gate: Arc::new(Gate {
                    slot: Mutex::new(WriterSlot::default()),
                    cv: Condvar::new(),
                    watch_cv: Condvar::new(),
                    file: Mutex::new(WriterLock::new(dir)),
                    unsynced: AtomicUsize::new(0),
                    current_while_held: AtomicBool::new(false),
                    slot_taken: AtomicBool::new(false),
                    spinning: AtomicBool::new(false),
                }),
                log: Arc::new(Mutex::new(LogState {
                    wal: None,
                    wal_id: None,
                    fresh: true,
                    broken: None,
                    collected: false,
                    pending: Default::default(),
                    head: None,
                    syncer: None,
                })),
                sync: Mutex::new(SyncState::default()),
                durable_seq: AtomicU64::new(0),
                syncing: AtomicBool::new(false),
                last_sync_ns: AtomicU64::new(0),
                watchdog: AtomicBool::new(false),
                retained: Mutex::new(Vec::new()),
                auto: Arc::new(Trigger::default()),
                auto_baseline: Mutex::new((0, 0)),
                auto_count: AtomicU64::new(0),
                peek: follow::LogPeek::default(),
            }),
        };
        if db.shared.options.background_checkpoints && !db.shared.options.read_only {
            let weak = Arc::downgrade(&db.shared);
            crate::autocheckpoint::spawn(db.shared.auto.clone(), move || match weak.upgrade() {
                Some(shared) => shared.auto_step(),
                None => Step::Exit,
            })
            .map_err(|e| Error::internal(format!("starting the checkpoint thread: {e}")))?;
        }
        if long_log && !db.shared.options.read_only {
            db.checkpoint_long_log();
        }
        Ok(db)
    }

    /// A writable handle that found a log longer than
    /// [`DatabaseOptions::checkpoint_wal_bytes`] checkpoints it, so the
    /// processes opening the database after it replay a short log — if the
    /// writer lock is free right now (a writer of another process will
    /// checkpoint at its next commit anyway). Best effort: a failed
    /// checkpoint leaves the database as it was and opening goes on.
    fn checkpoint_long_log(&self) {
        let Ok(ticket) = self.shared.acquire_writer_within(Duration::ZERO) else {
            return;
        };
        let _ = self
            .shared
            .checkpoint_locked(&mut lock(&self.shared.log), false);
        self.shared.release_writer(ticket);
    }

    /// The directory the database lives in.
    pub fn path(&self) -> &Path {
        &self.shared.dir
    }

    /// A read snapshot of the latest committed state, including what other
    /// processes committed (see [`Database::try_snapshot`]); share it across
    /// threads freely. If the files cannot be read right now, the last state
    /// this handle knew is returned.
    pub fn snapshot(&self) -> Snapshot {
        self.try_snapshot()
            .unwrap_or_else(|_| self.shared.current.load().snapshot())
    }

    /// The latest state this handle knows, without looking at the files
    /// for other processes' commits (see [`Database::try_snapshot`]): a
    /// base to plan a statement on, not one to read from.
    pub fn known_snapshot(&self) -> Snapshot {
        self.shared.current.load().snapshot()
    }

    /// A read snapshot of the latest committed state. Checks first (two
    /// `stat` calls) whether another process committed or checkpointed
    /// since this handle last looked, and if so replays its log records or
    /// loads the new checkpoint. Fails only if the files cannot be read.
    /// While this handle holds the writer lock (a transaction of it is open
    /// or its commits wait for their sync) no other process can have
    /// written since it caught up, so it does not look.
    pub fn try_snapshot(&self) -> Result<Snapshot> {
        if self.shared.gate.current_while_held.load(Ordering::SeqCst) {
            return Ok(self.shared.current.load().snapshot());
        }
        let v = self.shared.current.load();
        if follow::news(&self.shared.dir, &v.pos, &self.shared.peek) == News::None {
            return Ok(v.snapshot());
        }
        drop(v);
        self.shared.refresh(&mut lock(&self.shared.log), false)?;
        Ok(self.shared.current.load().snapshot())
    }

    /// Starts the write transaction, waiting up to
    /// [`DatabaseOptions::lock_timeout`] for the writer lock (another
    /// transaction of this process or of another process); then fails with
    /// `TransientError` / `LockAcquisitionTimeout` (retryable), naming the
    /// process holding it. The lock is held until the transaction commits,
    /// rolls back, is dropped or times out. The transaction starts from the
    /// latest state, other processes' commits included.
    pub fn begin_write(&self) -> Result<WriteTxn> {
        let ticket = self.shared.acquire_writer()?;
        // The newest commit, even if its sync is still running.
        let head = lock(&self.shared.log).head.clone();
        let snap = match head {
            Some(v) => v.snapshot(),
            None => self.shared.current.load().snapshot(),
        };
        Ok(WriteTxn {
            state: TxnState::new(snap),
            shared: self.shared.clone(),
            ticket,
        })
    }

    /// Saves every change since the last checkpoint, switches the manifest
    /// atomically and starts a new log. Writes its files beside commits:
    /// waits for the writer lock like [`Database::begin_write`] only to
    /// freeze the state it saves and to install the result (the commits
    /// made meanwhile are carried into the new log), and for another
    /// checkpoint to end (up to [`DatabaseOptions::lock_timeout`]). Returns false if there was nothing to
    /// save. Incremental while the changes since the last full checkpoint
    /// are small (see [`DatabaseOptions::delta_checkpoint_ratio`]): it
    /// writes them as a delta file and keeps every id; else as
    /// [`Database::checkpoint_full`].
    pub fn checkpoint(&self) -> Result<bool> {
        self.checkpoint_with(false)
    }

    /// Merges every change since the last full checkpoint (the delta file
    /// and the log) into a new segment, switches the manifest atomically
    /// and starts a new log (beside commits, as [`Database::checkpoint`]). Returns false if there was nothing to merge.
    /// Node and relationship ids are renumbered densely (see
    /// [`crate::checkpoint`]); snapshots taken before keep reading the old
    /// state with the old ids.
    pub fn checkpoint_full(&self) -> Result<bool> {
        self.checkpoint_with(true)
    }

    fn checkpoint_with(&self, full: bool) -> Result<bool> {
        let timeout = self.shared.options.lock_timeout;
        let ckpt = CheckpointLock::take(&self.shared.dir, Instant::now() + timeout)?;
        self.shared
            .checkpoint_concurrently(ckpt, full, false, timeout)
    }

    /// Writes a consistent copy of the latest committed state (other
    /// processes' commits included) into `dest`, a new or empty directory,
    /// without blocking readers or writers: the segment is pinned while it
    /// is copied, and the copy holds exactly the log records of that state.
    /// The copy opens like any database. Works on a read-only handle.
    pub fn backup(&self, dest: &Path) -> Result<()> {
        crate::backup::prepare(dest)?;
        for attempt in 0..100 {
            if attempt >= 10 {
                // A checkpoint in another thread or process may be paused
                // half way (a loaded machine): give it time.
                std::thread::sleep(Duration::from_millis(attempt / 10));
            }
            self.try_snapshot()?;
            let v = self.shared.current.load_full();
            let io = &*self.shared.options.io;
            let Some(delta) = crate::backup::delta_bytes(&self.shared.dir, &v.store)? else {
                continue;
            };
            if let Some(log) = crate::backup::log_prefix(&self.shared.dir, io, &v.pos)? {
                return crate::backup::write(
                    &self.shared.dir,
                    dest,
                    &v.store,
                    delta.as_deref(),
                    log.as_deref(),
                );
            }
        }
        Err(Error::new(
            ErrorKind::TransientError,
            "the database kept being checkpointed while it was backed up; retry",
        )
        .with_code("DatabaseChanging"))
    }

    /// Closes this handle. Nothing is rewritten: the log keeps the commits
    /// since the last checkpoint and the next open replays it.
    pub fn close(self) -> Result<()> {
        Ok(())
    }

    /// How much this handle's latest state holds uncheckpointed, and how many
    /// checkpoints ran by themselves (see [`DatabaseOptions::checkpoint_delta_bytes`]).
    pub fn checkpoint_status(&self) -> CheckpointStatus {
        let v = self.shared.current.load();
        CheckpointStatus {
            delta_bytes: if v.delta.is_empty() {
                0
            } else {
                v.delta.approx_bytes()
            },
            wal_bytes: if v.pos.live { v.pos.wal_len } else { 0 },
            automatic_checkpoints: self.shared.auto_count.load(Ordering::Relaxed),
        }
    }

    /// Number of the last acknowledged commit (0 if none since the database was created).
    pub fn last_commit(&self) -> u64 {
        self.shared.current.load().last_commit
    }

    fn retained(&self) -> (Arc<Catalog>, Arc<Statistics>) {
        let v = self.shared.current.load_full();
        let mut retained = lock(&self.shared.retained);
        if let Some((id, c, s)) = retained.last() {
            if *id == v.id {
                return (c.clone(), s.clone());
            }
        }
        let snap = v.snapshot();
        let entry = (
            v.id,
            v.delta.catalog.clone(),
            Arc::new(snap.statistics().clone()),
        );
        retained.push(entry.clone());
        (entry.1, entry.2)
    }

    /// The catalog (names of labels, types and keys) of the latest state.
    /// Prefer [`Database::snapshot`]; each state seen through this accessor
    /// is kept in memory until the database closes.
    pub fn catalog(&self) -> &Catalog {
        let (catalog, _) = self.retained();
        // SAFETY: the Arc is kept in `retained`, which only grows and lives as
        // long as `self.shared`, which outlives the borrow of `self`.
        unsafe { &*Arc::as_ptr(&catalog) }
    }

    /// The statistics of the latest state (as [`Database::catalog`]).
    pub fn statistics(&self) -> &Statistics {
        let (_, stats) = self.retained();
        // SAFETY: as in `catalog`.
        unsafe { &*Arc::as_ptr(&stats) }
    }

    /// Checks every structure of the database: adjacency in both directions
    /// agrees (base and changes since the checkpoint), columns are
    /// consistent, indexes are sorted and match the data, uniqueness
    /// constraints hold, the write-ahead log is readable. Returns the list
    /// of problems found (empty when healthy).
    pub fn check(&self) -> Vec<String> {
        // A torn record at the end of the log is what an interrupted writer
        // leaves, not damage: with the writer lock, catching up cuts it off.
        // If another process is writing, its record in progress is skipped.
        let writing_elsewhere = self.shared.options.read_only
            || match self.shared.acquire_writer() {
                Ok(ticket) => {
                    self.shared.release_writer(ticket);
                    false
                }
                Err(_) => true,
            };
        let mut problems = crate::check::check(&self.snapshot());
        let path = self.shared.wal_path();
        match self.shared.options.io.read(&path) {
            Ok(Some(bytes)) => {
                let parsed = wal::parse(&bytes);
                let tail_in_progress = writing_elsewhere && parsed.generation.is_some();
                if let Some(d) = parsed.damage.filter(|_| !tail_in_progress) {
                    problems.push(format!("write-ahead log {}: {d}", path.display()));
                }
            }
            Ok(None) => {}
            Err(e) => problems.push(format!("write-ahead log {}: {e}", path.display())),
        }
        problems
    }

    /// Labels that exist, with their ids (convenience for tools).
    pub fn labels(&self) -> Vec<(LabelId, &str)> {
        let names = self.catalog().labels.names();
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (i as LabelId, n.as_str()))
            .collect()
    }
}
