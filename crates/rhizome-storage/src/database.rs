//! Opening a database directory: read the manifest, map the segment, resolve
//! every array once, then replay the write-ahead log into the delta layer.
//! Nothing of the segment is parsed or copied, so opening takes milliseconds
//! whatever the database's size (plus the replay of the log, which a
//! checkpoint keeps short).
//!
//! ## Files
//! `manifest.json` names the current segment (`segment-NNNNNN.rhz`, NNNNNN =
//! the manifest generation) and `wal.log` holds the commits since that
//! segment was written (see [`crate::wal`]). Anything else (`*.tmp`, segments
//! the manifest does not name) is debris of an interrupted checkpoint and is
//! removed when a database is opened for writing.
//!
//! ## Concurrency
//! A [`Database`] handle is shared by cloning. The current state is one
//! `Arc<Version>` (base store + delta) behind an atomic pointer: readers load
//! it without locking; the single writer (see [`crate::txn`]) and checkpoints
//! replace it. One process owns a database directory at a time.

use crate::catalog::{Catalog, LabelId, PropertyKeyId, RelTypeId};
use crate::column::view::SliceSource;
use crate::column::ColumnView;
use crate::csr::{Csr, CsrMeta};
use crate::delta::Delta;
use crate::index::PropertyIndex;
use crate::io::{StdIo, StorageIo};
use crate::labels::LabelIndex;
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
use std::sync::atomic::{AtomicU64, Ordering};
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

fn resolve_csr(src: &Detached<'_>, meta: &CsrMeta) -> Result<Csr<'static>> {
    let offsets: &'static [u64] = src.get(meta.offsets)?;
    let neighbours: &'static [NodeId] = src.get(meta.neighbours)?;
    let perm = meta.perm.map(|p| src.get::<u64>(p)).transpose()?;
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
    Ok(Csr::new(meta.lo, meta.hi, offsets, neighbours, perm))
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

    pub(crate) fn open(dir: &Path) -> Result<Store> {
        let manifest = Manifest::read(dir)?;
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
            let view = RelView {
                rel_type: r.rel_type,
                base: r.base,
                count: r.count,
                outgoing: resolve_csr(&src, &r.outgoing)?,
                incoming: resolve_csr(&src, &r.incoming)?,
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

/// How a database is opened.
#[derive(Clone)]
pub struct DatabaseOptions {
    /// How long [`Database::begin_write`] (and [`Database::checkpoint`])
    /// waits for the writer lock before failing with `TransientError`.
    pub lock_timeout: Duration,
    /// A commit that leaves the write-ahead log longer than this many bytes
    /// runs a checkpoint.
    pub checkpoint_wal_bytes: u64,
    /// Checkpoint when the last handle is dropped (if anything changed).
    pub checkpoint_on_close: bool,
    /// File I/O of the log (replace to inject failures in tests).
    pub io: Arc<dyn StorageIo>,
}

impl Default for DatabaseOptions {
    fn default() -> Self {
        DatabaseOptions {
            lock_timeout: Duration::from_secs(5),
            checkpoint_wal_bytes: 64 << 20,
            checkpoint_on_close: true,
            io: Arc::new(StdIo),
        }
    }
}

/// One published state: the base store and a delta version over it.
pub(crate) struct Version {
    id: u64,
    store: Arc<Store>,
    delta: Arc<Delta>,
}

static VERSION_IDS: AtomicU64 = AtomicU64::new(1);

impl Version {
    fn new(store: Arc<Store>, delta: Arc<Delta>) -> Version {
        Version {
            id: VERSION_IDS.fetch_add(1, Ordering::Relaxed),
            store,
            delta,
        }
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.store.clone(), self.delta.clone())
    }
}

fn empty_delta(store: &Store) -> Delta {
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

/// The log and what is known about it; guarded by one mutex, used only by
/// the holder of the writer lock.
struct WalState {
    wal: Option<Wal>,
    /// True if `wal.log` must be (re)created before the next append (missing,
    /// stale generation or unreadable header).
    fresh: bool,
    last_commit: u64,
    /// Set when a checkpoint failed half way: writes are refused until reopen.
    broken: Option<String>,
}

/// Legacy accessors ([`Database::catalog`], [`Database::statistics`]) return
/// references; the values they returned stay alive here until the database closes.
type Retained = Vec<(u64, Arc<Catalog>, Arc<Statistics>)>;

pub(crate) struct Shared {
    dir: PathBuf,
    options: DatabaseOptions,
    current: ArcSwap<Version>,
    writer: Mutex<bool>,
    writer_cv: Condvar,
    wal: Mutex<WalState>,
    retained: Mutex<Retained>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn acquire_writer(&self) -> Result<()> {
        let deadline = Instant::now() + self.options.lock_timeout;
        let mut busy = lock(&self.writer);
        while *busy {
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::new(
                    ErrorKind::TransientError,
                    format!(
                        "another write transaction held the database's writer lock for more than {:?}; retry later",
                        self.options.lock_timeout
                    ),
                )
                .with_code("LockAcquisitionTimeout"));
            }
            busy = self
                .writer_cv
                .wait_timeout(busy, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *busy = true;
        Ok(())
    }

    pub(crate) fn release_writer(&self) {
        *lock(&self.writer) = false;
        self.writer_cv.notify_one();
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
    fn ensure_wal<'w>(&self, w: &'w mut WalState, generation: u64) -> Result<&'w mut Wal> {
        if w.wal.is_none() {
            let io = &self.options.io;
            if w.fresh {
                io.replace(&self.wal_path(), &wal::header(generation))
                    .map_err(|e| self.io_error("creating", e))?;
                w.fresh = false;
            }
            let file = io
                .open_append(&self.wal_path())
                .map_err(|e| self.io_error("opening", e))?;
            w.wal = Some(Wal::new(file));
        }
        Ok(w.wal.as_mut().expect("opened above"))
    }

    pub(crate) fn commit(&self, mut txn: WriteTxn) -> Result<CommitInfo> {
        let counters = txn.state.counters;
        if txn.state.ops.is_empty() {
            return Ok(CommitInfo {
                commit: 0,
                counters,
            });
        }
        let mut w = lock(&self.wal);
        if let Some(why) = &w.broken {
            return Err(Error::new(ErrorKind::IoError, why.clone()));
        }
        let commit = w.last_commit + 1;
        let record = wal::encode_record(commit, &txn.state.ops);
        if record.len() > u32::MAX as usize {
            return Err(Error::new(
                ErrorKind::IoError,
                "the transaction is too large for one log record (4 GiB); split it",
            ));
        }
        let generation = txn.state.snap.store().manifest.generation;
        let wal = self.ensure_wal(&mut w, generation)?;
        wal.append(&record)?;
        let full = wal.len() >= self.options.checkpoint_wal_bytes;
        w.last_commit = commit;
        if txn.state.snap.delta().has_loose() {
            txn.state.snap.delta_mut().pack();
        }
        self.current.store(Arc::new(Version::new(
            txn.state.snap.store().clone(),
            txn.state.snap.delta().clone(),
        )));
        if full {
            // The commit is durable already; a failed checkpoint leaves the log in place.
            let _ = self.checkpoint_locked(&mut w);
        }
        drop(w);
        drop(txn);
        Ok(CommitInfo { commit, counters })
    }

    /// Merges the current state into a new segment (caller holds the writer lock).
    fn checkpoint_locked(&self, w: &mut WalState) -> Result<bool> {
        if let Some(why) = &w.broken {
            return Err(Error::new(ErrorKind::IoError, why.clone()));
        }
        let v = self.current.load_full();
        if v.delta.is_empty() {
            return Ok(false);
        }
        let generation = v.store.manifest.generation + 1;
        let old_segment = v.store.manifest.segment.clone();
        // Until the manifest is renamed, a crash leaves the old state plus the log.
        crate::checkpoint::write(&self.dir, &v.snapshot(), generation)?;
        // From here on the old log is stale (its generation is older than the manifest's).
        w.wal = None;
        w.fresh = true;
        let reopened = Store::open(&self.dir).map(Arc::new);
        let store = match reopened {
            Ok(s) => s,
            Err(e) => {
                let why = format!(
                    "a checkpoint could not reopen its own segment ({e}); reopen the database"
                );
                w.broken = Some(why);
                return Err(e);
            }
        };
        let delta = Arc::new(empty_delta(&store));
        self.current.store(Arc::new(Version::new(store, delta)));
        if let Err(e) = self.ensure_wal(w, generation) {
            w.wal = None;
            w.fresh = true;
            let _ = e;
        }
        if old_segment != self.current.load().store.manifest.segment {
            let _ = std::fs::remove_file(self.dir.join(old_segment));
        }
        Ok(true)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if self.options.checkpoint_on_close && !self.current.load().delta.is_empty() {
            let mut w = lock(&self.wal);
            let _ = self.checkpoint_locked(&mut w);
        }
    }
}

/// An open database. Cheap to clone; all clones share the mapping, the
/// current state and the writer lock.
#[derive(Clone)]
pub struct Database {
    shared: Arc<Shared>,
}

/// Removes files an interrupted checkpoint may have left (best effort).
fn remove_debris(dir: &Path, manifest: &Manifest) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let stray_segment =
            name.starts_with("segment-") && name.ends_with(".rhz") && name != manifest.segment;
        if stray_segment || name.ends_with(".tmp") {
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
    /// corrupt record at the end of the log is cut off (it was never
    /// acknowledged); the commits before it are kept.
    pub fn open_with(dir: &Path, options: DatabaseOptions) -> Result<Database> {
        let store = Arc::new(Store::open(dir)?);
        remove_debris(dir, &store.manifest);
        let generation = store.manifest.generation;
        let mut state = TxnState::new(Snapshot::new(store.clone(), Arc::new(empty_delta(&store))));
        let mut wal_state = WalState {
            wal: None,
            fresh: true,
            last_commit: 0,
            broken: None,
        };
        let wal_path = dir.join(WAL_FILE);
        let bytes = options
            .io
            .read(&wal_path)
            .map_err(|e| Error::io(wal_path.display(), e))?;
        if let Some(bytes) = bytes {
            let parsed = wal::parse(&bytes);
            if parsed.generation == Some(generation) {
                for record in &parsed.records {
                    for op in &record.ops {
                        state.apply(op).map_err(|e| {
                            Error::new(
                                ErrorKind::CorruptDatabase,
                                format!(
                                    "{}: replaying commit {} failed: {e}",
                                    wal_path.display(),
                                    record.commit
                                ),
                            )
                        })?;
                    }
                    wal_state.last_commit = record.commit;
                }
                if parsed.valid_len < bytes.len() as u64 {
                    let mut f = options
                        .io
                        .open_append(&wal_path)
                        .map_err(|e| Error::io(wal_path.display(), e))?;
                    f.truncate(parsed.valid_len)
                        .map_err(|e| Error::io(wal_path.display(), e))?;
                }
                wal_state.fresh = false;
            }
        }
        if state.snap.delta().has_loose() {
            state.snap.delta_mut().pack();
        }
        let delta = state.snap.delta().clone();
        Ok(Database {
            shared: Arc::new(Shared {
                dir: dir.to_path_buf(),
                options,
                current: ArcSwap::from_pointee(Version::new(store, delta)),
                writer: Mutex::new(false),
                writer_cv: Condvar::new(),
                wal: Mutex::new(wal_state),
                retained: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The directory the database lives in.
    pub fn path(&self) -> &Path {
        &self.shared.dir
    }

    /// A read snapshot of the latest committed state; share it across threads freely.
    pub fn snapshot(&self) -> Snapshot {
        self.shared.current.load().snapshot()
    }

    /// Starts the (single) write transaction, waiting up to
    /// [`DatabaseOptions::lock_timeout`] for the current one to finish; then
    /// fails with `TransientError` / `LockAcquisitionTimeout` (retryable).
    pub fn begin_write(&self) -> Result<WriteTxn> {
        self.shared.acquire_writer()?;
        let snap = self.snapshot();
        Ok(WriteTxn {
            state: TxnState::new(snap),
            shared: self.shared.clone(),
        })
    }

    /// Merges every change since the last checkpoint into a new segment,
    /// switches the manifest atomically and resets the log. Waits for the
    /// writer lock like [`Database::begin_write`]. Returns false if there was
    /// nothing to merge. Node and relationship ids are renumbered densely
    /// (see [`crate::checkpoint`]); snapshots taken before keep reading the
    /// old state with the old ids.
    pub fn checkpoint(&self) -> Result<bool> {
        self.shared.acquire_writer()?;
        let r = self.shared.checkpoint_locked(&mut lock(&self.shared.wal));
        self.shared.release_writer();
        r
    }

    /// Checkpoints (if anything changed) and closes this handle.
    pub fn close(self) -> Result<()> {
        self.checkpoint().map(|_| ())
    }

    /// Number of the last acknowledged commit (0 if none since the database was created).
    pub fn last_commit(&self) -> u64 {
        lock(&self.shared.wal).last_commit
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
        let mut problems = crate::check::check(&self.snapshot());
        let path = self.shared.wal_path();
        match self.shared.options.io.read(&path) {
            Ok(Some(bytes)) => {
                let parsed = wal::parse(&bytes);
                if let Some(d) = parsed.damage {
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
