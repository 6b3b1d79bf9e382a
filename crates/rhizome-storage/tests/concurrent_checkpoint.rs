//! Checkpoints that write their files beside commits: commits made while a
//! checkpoint writes its delta file or segment complete without waiting for
//! it, are carried over into the new log (renumbered after a full
//! checkpoint) and survive a reopen; a crash between any two steps of the
//! checkpoint loses none of them.

use rhizome_common::{Error, ErrorKind, NodeId, RelId, Value};
use rhizome_storage::builder::{GraphBuilder, NodeGroupInput, RelGroupInput};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{
    CheckpointStep, Database, DatabaseOptions, Direction, GraphRead, Snapshot, StdIo, StorageIo,
    WalFile, WalSync,
};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const NODES: u64 = 60;

fn ints(values: impl IntoIterator<Item = i64>) -> rhizome_storage::column::ColumnData {
    let mut b = ColumnBuilder::new();
    values.into_iter().for_each(|v| b.push_i64(v));
    b.finish()
}

/// `NODES` nodes `N {k}`; T: i -> i+1 twice (parallel, distinct `w`), i -> 7i+3.
fn base(dir: &Path) {
    let mut b = GraphBuilder::new();
    let n = b
        .add_nodes(NodeGroupInput {
            rows: NODES,
            labels: vec!["N".into()],
            row_labels: None,
            properties: vec![("k".into(), ints(0..NODES as i64))],
        })
        .unwrap();
    let (mut sources, mut targets) = (Vec::new(), Vec::new());
    for i in 0..NODES as usize {
        for t in [
            (i + 1) % NODES as usize,
            (i + 1) % NODES as usize,
            (i * 7 + 3) % NODES as usize,
        ] {
            sources.push(n[i]);
            targets.push(n[t]);
        }
    }
    let count = sources.len() as i64;
    b.add_relationships(
        "T",
        RelGroupInput {
            sources,
            targets,
            properties: vec![("w".into(), ints(1000..1000 + count))],
        },
    )
    .unwrap();
    b.write(dir).unwrap();
}

/// Every node and relationship with its labels and properties, by content
/// (ids change at a full checkpoint).
fn dump(s: &Snapshot) -> Vec<String> {
    let c = s.catalog();
    let k = c.property_key_id("k").unwrap();
    let mut out = Vec::new();
    let mut props = Vec::new();
    let describe = |props: &mut Vec<(u32, Value)>| {
        let mut named: Vec<String> = props
            .iter()
            .map(|(key, v)| format!("{}={v:?}", c.property_key_name(*key)))
            .collect();
        named.sort();
        named
    };
    for range in s.node_ranges().iter() {
        for node in range.clone() {
            let mut labels: Vec<&str> = s
                .node_labels(node)
                .iter()
                .map(|&l| c.label_name(l))
                .collect();
            labels.sort();
            props.clear();
            s.node_properties(node, &mut props);
            out.push(format!("node {labels:?} {:?}", describe(&mut props)));
            for t in 0..c.rel_types.len() as u32 {
                let adj = s.adjacency(node, t, Direction::Outgoing);
                for i in 0..adj.len() {
                    props.clear();
                    s.rel_properties(adj.rel_id(i), &mut props);
                    out.push(format!(
                        "rel {:?} -{}-> {:?} {:?}",
                        s.node_property(node, k),
                        c.rel_type_name(t),
                        s.node_property(adj.neighbour(i), k),
                        describe(&mut props)
                    ));
                }
            }
        }
    }
    out.sort();
    out
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn nodes(s: &Snapshot) -> Vec<NodeId> {
    s.node_ranges().iter().flat_map(|r| r.clone()).collect()
}

fn rels(s: &Snapshot) -> Vec<RelId> {
    let mut out = Vec::new();
    for node in nodes(s) {
        let adj = s.adjacency(node, 0, Direction::Outgoing);
        out.extend((0..adj.len()).map(|i| adj.rel_id(i)));
    }
    out
}

/// `commits` commits of one to three random changes each: properties of
/// nodes and relationships (old ones, and ones created in these commits),
/// labels, new nodes and relationships, deletions.
fn churn(db: &Database, rng: &mut Rng, commits: u64, next_k: &mut i64) {
    for _ in 0..commits {
        let mut txn = db.begin_write().unwrap();
        for _ in 0..1 + rng.below(3) {
            let s = txn.view();
            let ns = nodes(&s);
            let rs = rels(&s);
            let node = ns[rng.below(ns.len() as u64) as usize];
            match rng.below(8) {
                0 => txn
                    .set_node_property(node, "x", Value::Int(rng.below(100) as i64))
                    .unwrap(),
                1 if !rs.is_empty() => {
                    let rel = rs[rng.below(rs.len() as u64) as usize];
                    txn.set_rel_property(rel, "y", Value::Int(rng.below(100) as i64))
                        .unwrap()
                }
                2 if !rs.is_empty() => {
                    let rel = rs[rng.below(rs.len() as u64) as usize];
                    txn.delete_relationship(rel).unwrap()
                }
                3 => {
                    *next_k += 1;
                    let new = txn
                        .create_node(&["N", "New"], &[("k", Value::Int(*next_k))])
                        .unwrap();
                    txn.create_relationship(node, new, "T", &[("w", Value::Int(*next_k))])
                        .unwrap();
                }
                4 => {
                    let end = ns[rng.below(ns.len() as u64) as usize];
                    *next_k += 1;
                    txn.create_relationship(node, end, "T", &[("w", Value::Int(*next_k))])
                        .unwrap();
                }
                5 if ns.len() > 20 => txn.delete_node(node, true).unwrap(),
                6 => {
                    txn.add_label(node, "Tagged").unwrap();
                }
                _ => {
                    txn.remove_label(node, "New").unwrap();
                }
            }
        }
        txn.commit().unwrap();
    }
}

/// A hook that holds the first checkpoint at [`CheckpointStep::Written`]
/// and then at [`CheckpointStep::Staged`], each time until the test lets it
/// go (failing it if that takes more than 20 s: the commits made meanwhile
/// must not wait for it), and fails it at `crash`.
fn hook(
    crash: Option<CheckpointStep>,
) -> (
    rhizome_storage::CheckpointHook,
    mpsc::Receiver<()>,
    mpsc::Sender<()>,
) {
    let (reached_tx, reached_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let reached_tx = Mutex::new(reached_tx);
    let go_rx = Mutex::new(go_rx);
    let held = Mutex::new(Vec::new());
    let hook = move |step: CheckpointStep| {
        let hold = matches!(step, CheckpointStep::Written | CheckpointStep::Staged) && {
            let mut held = held.lock().unwrap();
            let first = !held.contains(&step);
            held.push(step);
            first
        };
        if hold {
            reached_tx.lock().unwrap().send(()).ok();
            if go_rx
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(20))
                .is_err()
            {
                return Err(Error::new(
                    ErrorKind::IoError,
                    "the test never let the checkpoint go",
                ));
            }
        }
        match crash == Some(step) {
            true => Err(Error::new(ErrorKind::IoError, "simulated crash")),
            false => Ok(()),
        }
    };
    (Arc::new(hook), reached_rx, go_tx)
}

fn options(full: bool, hook: Option<rhizome_storage::CheckpointHook>) -> DatabaseOptions {
    DatabaseOptions {
        background_checkpoints: false,
        checkpoint_wal_bytes: u64::MAX,
        checkpoint_delta_bytes: u64::MAX,
        delta_checkpoint_ratio: if full { 0.0 } else { 1e6 },
        checkpoint_hook: hook,
        ..DatabaseOptions::default()
    }
}

fn files(dir: &Path, suffix: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(suffix))
        .collect();
    out.sort();
    out
}

/// Commits while a checkpoint (full or incremental) is held after writing
/// its files, then lets it go (or fails it at `crash`); returns the state
/// the commits made, which every later open must show.
fn commit_during_checkpoint(
    dir: &Path,
    full: bool,
    crash: Option<CheckpointStep>,
    seed: u64,
) -> Vec<String> {
    let (hook, reached, go) = hook(crash);
    let db = Database::open_with(dir, options(full, Some(hook))).unwrap();
    let mut rng = Rng(seed);
    let mut next_k = 10_000;
    // Changes before the freeze: the checkpoint writes them.
    churn(&db, &mut rng, 15, &mut next_k);
    let before = dump(&db.snapshot());
    let checkpoint = {
        let db = db.clone();
        std::thread::spawn(move || {
            if full {
                db.checkpoint_full()
            } else {
                db.checkpoint()
            }
        })
    };
    reached.recv_timeout(Duration::from_secs(60)).unwrap();
    // The checkpoint holds here: these commits must complete (a commit
    // waiting for the checkpoint would fail the checkpoint's hook). They
    // are staged into the new log without the writer lock...
    churn(&db, &mut rng, 30, &mut next_k);
    go.send(()).unwrap();
    let staged = match crash {
        Some(CheckpointStep::Written) => Err(mpsc::RecvTimeoutError::Disconnected),
        _ => reached.recv_timeout(Duration::from_secs(60)),
    };
    // ...and these carried over by the install (unless the checkpoint
    // failed at the first step).
    churn(&db, &mut rng, 10, &mut next_k);
    let during = dump(&db.snapshot());
    assert_ne!(during, before);
    if staged.is_ok() {
        go.send(()).unwrap();
    }
    let done = checkpoint.join().unwrap();
    match crash {
        None => {
            assert!(done.unwrap());
            assert_eq!(
                dump(&db.snapshot()),
                during,
                "the checkpoint lost or changed commits"
            );
            assert!(db.check().is_empty(), "{:?}", db.check());
        }
        Some(_) => assert!(done.is_err()),
    }
    during
}

fn reopened_state(dir: &Path) -> Vec<String> {
    let db = Database::open(dir).unwrap();
    let state = dump(&db.snapshot());
    assert!(db.check().is_empty(), "{:?}", db.check());
    state
}

#[test]
fn commits_complete_while_a_checkpoint_writes_and_survive_a_reopen() {
    for full in [false, true] {
        for seed in [1, 7, 42] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("db");
            base(&dir);
            let during = commit_during_checkpoint(&dir, full, None, seed);
            assert_eq!(reopened_state(&dir), during, "full: {full}, seed {seed}");
            // The commits are in the new log, of the new generation.
            let db = Database::open_with(&dir, options(full, None)).unwrap();
            assert!(db.checkpoint_status().wal_bytes > 16);
            // And the next checkpoint saves them.
            assert!(db.checkpoint().unwrap());
            drop(db);
            assert_eq!(reopened_state(&dir), during);
            assert!(files(&dir, ".next").is_empty());
        }
    }
}

#[test]
fn a_crash_between_writing_and_installing_a_checkpoint_loses_nothing() {
    for full in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        base(&dir);
        let during = commit_during_checkpoint(&dir, full, Some(CheckpointStep::Written), 5);
        // The written file is debris: nothing names it.
        let written = if full {
            files(&dir, ".rhz")
        } else {
            files(&dir, ".rhd")
        };
        assert_eq!(written.len(), if full { 2 } else { 1 }, "{written:?}");
        assert_eq!(reopened_state(&dir), during);
        let db = Database::open(&dir).unwrap();
        drop(db.begin_write().unwrap());
        assert_eq!(files(&dir, ".rhz").len(), 1);
        assert!(files(&dir, ".rhd").is_empty());
        drop(db);
        assert_eq!(reopened_state(&dir), during);
    }
}

#[test]
fn a_crash_after_staging_a_checkpoint_loses_nothing() {
    for full in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        base(&dir);
        let during = commit_during_checkpoint(&dir, full, Some(CheckpointStep::Staged), 13);
        // The staged log and manifest are debris: the manifest in place is
        // the old one, and its log holds every commit.
        assert_eq!(files(&dir, ".next"), vec!["wal.next"]);
        assert_eq!(files(&dir, ".tmp"), vec!["manifest.json.tmp"]);
        assert_eq!(reopened_state(&dir), during, "full: {full}");
        // A writer collects the debris and writes on; the next checkpoint
        // (which stages over the stale `wal.next`) saves everything.
        let db = Database::open_with(&dir, options(full, None)).unwrap();
        let mut txn = db.begin_write().unwrap();
        txn.create_node(&["N"], &[("k", Value::Int(-5))]).unwrap();
        txn.commit().unwrap();
        assert!(files(&dir, ".tmp").is_empty());
        assert_eq!(files(&dir, ".rhz").len(), 1);
        let after = dump(&db.snapshot());
        assert_eq!(after.len(), during.len() + 1);
        assert!(db.checkpoint().unwrap());
        drop(db);
        assert!(files(&dir, ".next").is_empty());
        assert_eq!(reopened_state(&dir), after, "full: {full}");
    }
}

#[test]
fn a_crash_between_installing_the_manifest_and_renaming_the_log_loses_nothing() {
    for full in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        base(&dir);
        let during =
            commit_during_checkpoint(&dir, full, Some(CheckpointStep::ManifestInstalled), 9);
        // The new manifest applies to `wal.next`; the old log is stale.
        assert_eq!(files(&dir, ".next"), vec!["wal.next"]);
        // A reader takes `wal.next` as the log and changes nothing.
        let reader = Database::open_with(
            &dir,
            DatabaseOptions {
                read_only: true,
                ..DatabaseOptions::default()
            },
        )
        .unwrap();
        assert_eq!(dump(&reader.snapshot()), during);
        assert_eq!(files(&dir, ".next"), vec!["wal.next"]);
        // The first writer renames it into place; the reader follows.
        let db = Database::open(&dir).unwrap();
        let mut txn = db.begin_write().unwrap();
        let n = txn.create_node(&["N"], &[("k", Value::Int(-1))]).unwrap();
        txn.commit().unwrap();
        assert!(files(&dir, ".next").is_empty());
        let mut after = during.clone();
        after.push(
            dump(&db.snapshot())
                .into_iter()
                .find(|l| l.contains("Int(-1)"))
                .unwrap(),
        );
        after.sort();
        assert_eq!(dump(&db.snapshot()), after);
        assert_eq!(dump(&reader.snapshot()), after);
        assert!(db.snapshot().node_exists(n));
        drop((db, reader));
        assert_eq!(reopened_state(&dir), after);
    }
}

#[test]
fn a_commit_does_not_wait_for_a_background_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    base(&dir);
    let (hook, reached, go) = hook(None);
    let db = Database::open_with(
        &dir,
        DatabaseOptions {
            checkpoint_wal_bytes: 2000,
            checkpoint_hook: Some(hook),
            ..DatabaseOptions::default()
        },
    )
    .unwrap();
    let mut rng = Rng(3);
    let mut next_k = 10_000;
    // Commit until the background thread starts a checkpoint and holds.
    let mut held = false;
    for _ in 0..500 {
        churn(&db, &mut rng, 1, &mut next_k);
        if reached.try_recv().is_ok() {
            held = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(held, "no background checkpoint started");
    churn(&db, &mut rng, 20, &mut next_k);
    go.send(()).unwrap();
    reached.recv_timeout(Duration::from_secs(60)).unwrap();
    churn(&db, &mut rng, 10, &mut next_k);
    let during = dump(&db.snapshot());
    go.send(()).unwrap();
    // The checkpoint installs; wait for it.
    for _ in 0..400 {
        if db.checkpoint_status().automatic_checkpoints > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(db.checkpoint_status().automatic_checkpoints, 1);
    assert_eq!(dump(&db.snapshot()), during);
    drop(db);
    assert_eq!(reopened_state(&dir), during);
}

#[test]
fn commits_of_another_handle_during_a_checkpoint_are_carried_over() {
    // Two handles exclude each other through the file locks exactly like
    // two processes (see `lock`).
    for full in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        base(&dir);
        let (hook, reached, go) = hook(None);
        let a = Database::open_with(&dir, options(full, Some(hook))).unwrap();
        let b = Database::open_with(
            &dir,
            DatabaseOptions {
                lock_timeout: Duration::from_millis(300),
                ..options(full, None)
            },
        )
        .unwrap();
        let mut rng = Rng(11);
        let mut next_k = 10_000;
        churn(&a, &mut rng, 10, &mut next_k);
        let checkpoint = {
            let a = a.clone();
            std::thread::spawn(move || {
                if full {
                    a.checkpoint_full()
                } else {
                    a.checkpoint()
                }
            })
        };
        reached.recv_timeout(Duration::from_secs(60)).unwrap();
        // The other handle writes, and may not checkpoint meanwhile.
        churn(&b, &mut rng, 30, &mut next_k);
        let err = b.checkpoint();
        assert!(
            err.as_ref()
                .is_err_and(|e| e.kind == ErrorKind::TransientError),
            "a second checkpoint ran beside the first: {err:?}"
        );
        go.send(()).unwrap();
        reached.recv_timeout(Duration::from_secs(60)).unwrap();
        churn(&b, &mut rng, 10, &mut next_k);
        let during = dump(&b.snapshot());
        go.send(()).unwrap();
        assert!(checkpoint.join().unwrap().unwrap());
        assert_eq!(dump(&a.snapshot()), during, "full: {full}");
        assert_eq!(dump(&b.snapshot()), during, "full: {full}");
        // The other handle writes on over the new generation.
        churn(&b, &mut rng, 5, &mut next_k);
        let after = dump(&b.snapshot());
        assert_eq!(dump(&a.snapshot()), after);
        drop((a, b));
        assert_eq!(reopened_state(&dir), after);
    }
}

/// Log I/O whose next sync, once armed, tells the test it started, waits
/// until the test lets it go and then fails: a commit whose record is in
/// the log (where a checkpoint staging beside it reads it) but whose sync
/// fails, so the log is cut back under the staged copy.
#[derive(Clone)]
struct StallingIo(Arc<Stall>);

struct Stall {
    armed: AtomicBool,
    entered: Mutex<mpsc::Sender<()>>,
    release: Mutex<mpsc::Receiver<()>>,
}

impl Stall {
    fn sync(&self) -> std::io::Result<()> {
        if !self.armed.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        self.entered.lock().unwrap().send(()).ok();
        let _ = self
            .release
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(60));
        Err(std::io::Error::other("fsync failed (injected)"))
    }
}

struct StallingFile {
    inner: Box<dyn WalFile>,
    stall: Arc<Stall>,
}

impl WalFile for StallingFile {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.inner.append(bytes)
    }
    fn sync(&mut self) -> std::io::Result<()> {
        self.stall.sync()?;
        self.inner.sync()
    }
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.inner.truncate(len)
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn sync_handle(&self) -> std::io::Result<Arc<dyn WalSync>> {
        Ok(Arc::new(StallingSync {
            inner: self.inner.sync_handle()?,
            stall: self.stall.clone(),
        }))
    }
}

struct StallingSync {
    inner: Arc<dyn WalSync>,
    stall: Arc<Stall>,
}

impl WalSync for StallingSync {
    fn sync(&self) -> std::io::Result<()> {
        self.stall.sync()?;
        self.inner.sync()
    }
}

impl StorageIo for StallingIo {
    fn open_append(&self, path: &Path, end: u64) -> std::io::Result<Box<dyn WalFile>> {
        Ok(Box::new(StallingFile {
            inner: StdIo.open_append(path, end)?,
            stall: self.0.clone(),
        }))
    }
    fn read(&self, path: &Path) -> std::io::Result<Option<Vec<u8>>> {
        StdIo.read(path)
    }
    fn replace(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        StdIo.replace(path, bytes)
    }
}

/// A checkpoint staged a commit of another handle whose record was in the
/// log but whose sync then failed (so the log was cut back under the staged
/// copy, and other commits appended in its place): the install must see
/// that the log no longer holds what it staged and stage again, so the
/// failed commit is not carried into the new log and the commits made
/// after it are.
#[test]
fn a_checkpoint_stages_again_when_a_failed_sync_cut_the_log_it_staged() {
    for full in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        base(&dir);
        let (hook, reached, go) = hook(None);
        let a = Database::open_with(&dir, options(full, Some(hook))).unwrap();
        let (entered_tx, entered) = mpsc::channel();
        let (release, release_rx) = mpsc::channel();
        let stall = Arc::new(Stall {
            armed: AtomicBool::new(false),
            entered: Mutex::new(entered_tx),
            release: Mutex::new(release_rx),
        });
        let b = Database::open_with(
            &dir,
            DatabaseOptions {
                io: Arc::new(StallingIo(stall.clone())),
                ..options(full, None)
            },
        )
        .unwrap();
        let mut rng = Rng(23);
        let mut next_k = 10_000;
        churn(&a, &mut rng, 10, &mut next_k);
        let checkpoint = {
            let a = a.clone();
            std::thread::spawn(move || {
                if full {
                    a.checkpoint_full()
                } else {
                    a.checkpoint()
                }
            })
        };
        // Held after writing its file: the other handle commits, and then
        // appends a commit whose sync stalls.
        reached.recv_timeout(Duration::from_secs(60)).unwrap();
        churn(&b, &mut rng, 5, &mut next_k);
        stall.armed.store(true, Ordering::SeqCst);
        let failing = {
            let b = b.clone();
            std::thread::spawn(move || {
                let mut txn = b.begin_write().unwrap();
                txn.create_node(&["N", "Lost"], &[("k", Value::Int(-77))])
                    .unwrap();
                txn.commit()
            })
        };
        entered.recv_timeout(Duration::from_secs(60)).unwrap();
        // The checkpoint stages the log as it is now, the stalled record
        // included, and holds again.
        go.send(()).unwrap();
        reached.recv_timeout(Duration::from_secs(60)).unwrap();
        assert!(dir.join("wal.next").exists());
        // The sync fails: the commit fails and its record is cut off.
        release.send(()).unwrap();
        let err = failing.join().unwrap().unwrap_err();
        assert_eq!(err.kind, ErrorKind::IoError, "{err}");
        // Commits appended where the failed one was, before the install.
        churn(&a, &mut rng, 5, &mut next_k);
        let during = dump(&a.snapshot());
        assert!(!during.iter().any(|l| l.contains("Int(-77)")));
        go.send(()).unwrap();
        assert!(checkpoint.join().unwrap().unwrap(), "full: {full}");
        assert_eq!(dump(&a.snapshot()), during, "full: {full}");
        assert!(a.check().is_empty(), "{:?}", a.check());
        assert!(files(&dir, ".next").is_empty());
        drop((a, b));
        assert_eq!(reopened_state(&dir), during, "full: {full}");
        // And the next checkpoint saves the same state.
        let db = Database::open_with(&dir, options(full, None)).unwrap();
        assert!(db.checkpoint_full().unwrap());
        drop(db);
        assert_eq!(reopened_state(&dir), during, "full: {full}");
    }
}
