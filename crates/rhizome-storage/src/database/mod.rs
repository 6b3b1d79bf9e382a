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

mod checkpoint;
mod commit;
mod store;

pub(crate) use store::{GroupView, RelView, Store};

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
