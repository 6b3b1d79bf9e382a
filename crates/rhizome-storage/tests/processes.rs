//! Many handles and many processes on one database directory: the writer
//! lock, catching up with other processes' commits, checkpoints under
//! readers, read-only opening, transaction timeouts, and a kill test with
//! real processes (this test binary re-executed in child roles).

use rhizome_common::{ErrorKind, Value};
use rhizome_storage::builder::{GraphBuilder, NodeGroupInput};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{Database, DatabaseOptions, GraphRead, Snapshot, WriteTxn};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ACCOUNTS: i64 = 8;
const BALANCE: i64 = 100;

/// Accounts 0..8 (`Acct {id, bal: 100}`).
fn create(dir: &Path) {
    let mut ids = ColumnBuilder::new();
    let mut bal = ColumnBuilder::new();
    for i in 0..ACCOUNTS {
        ids.push_i64(i);
        bal.push_i64(BALANCE);
    }
    let mut b = GraphBuilder::new();
    b.add_nodes(NodeGroupInput {
        rows: ACCOUNTS as u64,
        labels: vec!["Acct".into()],
        row_labels: None,
        properties: vec![("id".into(), ids.finish()), ("bal".into(), bal.finish())],
    })
    .unwrap();
    b.write(dir).unwrap();
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    create(&dir);
    (tmp, dir)
}

/// Node ids of `label` in `g`.
fn nodes(g: &impl GraphRead, label: &str) -> Vec<u64> {
    let Some(l) = g.catalog().label_id(label) else {
        return Vec::new();
    };
    g.label_ranges(l)
        .into_iter()
        .flatten()
        .filter(|&n| g.has_label(n, l))
        .collect()
}

fn int(g: &impl GraphRead, node: u64, key: &str) -> Option<i64> {
    let k = g.catalog().property_key_id(key)?;
    match g.node_property(node, k) {
        Value::Int(i) => Some(i),
        _ => None,
    }
}

/// The sum of all balances.
fn total(g: &impl GraphRead) -> i64 {
    nodes(g, "Acct")
        .into_iter()
        .map(|n| int(g, n, "bal").unwrap_or(0))
        .sum()
}

/// `(writer, seq)` of every `Y` node.
fn written(s: &Snapshot) -> std::collections::HashSet<(i64, i64)> {
    nodes(s, "Y")
        .into_iter()
        .map(|n| (int(s, n, "w").unwrap(), int(s, n, "i").unwrap()))
        .collect()
}

fn create_y(db: &Database, w: i64, i: i64) {
    let mut txn = db.begin_write().unwrap();
    txn.create_node(&["Y"], &[("w", Value::Int(w)), ("i", Value::Int(i))])
        .unwrap();
    txn.commit().unwrap();
}

/// Moves `amount` from account `from` to account `to` (by `id`) in `txn`.
fn transfer(txn: &mut WriteTxn, from: i64, to: i64, amount: i64) {
    let accounts = nodes(txn, "Acct");
    let find = |txn: &WriteTxn, id: i64| {
        *accounts
            .iter()
            .find(|&&n| int(txn, n, "id") == Some(id))
            .expect("account exists")
    };
    let (a, b) = (find(txn, from), find(txn, to));
    let (x, y) = (int(txn, a, "bal").unwrap(), int(txn, b, "bal").unwrap());
    txn.set_node_property(a, "bal", Value::Int(x - amount))
        .unwrap();
    txn.set_node_property(b, "bal", Value::Int(y + amount))
        .unwrap();
}

#[test]
fn handles_see_each_others_commits_and_checkpoints() {
    let (_tmp, dir) = setup();
    let a = Database::open(&dir).unwrap();
    let b = Database::open(&dir).unwrap();
    create_y(&a, 1, 1);
    assert_eq!(written(&b.snapshot()).len(), 1, "b replays a's log record");
    create_y(&b, 2, 1);
    assert_eq!(written(&a.snapshot()).len(), 2, "and a replays b's");
    let old = b.snapshot();
    assert!(a.checkpoint().unwrap());
    // b loads a's checkpoint; its old snapshot still reads the old segment.
    assert_eq!(written(&b.snapshot()).len(), 2);
    assert_eq!(written(&old).len(), 2);
    create_y(&b, 2, 2);
    create_y(&a, 1, 2);
    let both = [(1, 1), (2, 1), (2, 2), (1, 2)].into_iter().collect();
    assert_eq!(written(&a.snapshot()), both);
    assert_eq!(written(&b.snapshot()), both);
    assert_eq!(a.last_commit(), 2);
    assert!(a.check().is_empty(), "{:?}", a.check());
    drop((a, b, old));
    assert_eq!(written(&Database::open(&dir).unwrap().snapshot()), both);
}

/// A handle keeps its log open between its own commits; whenever another
/// handle wrote or checkpointed since, its next transaction must start from
/// that state (it never snapshots in between here, so only the catch-up at
/// the writer lock can tell it).
#[test]
fn a_writer_that_kept_its_log_open_still_sees_what_others_wrote() {
    let (_tmp, dir) = setup();
    let a = Database::open(&dir).unwrap();
    let b = Database::open(&dir).unwrap();
    let count_in_txn = |db: &Database| {
        let txn = db.begin_write().unwrap();
        let n = nodes(&txn, "Y").len();
        txn.rollback();
        n
    };
    create_y(&a, 1, 1);
    create_y(&a, 1, 2);
    // b appends to the log a holds open.
    create_y(&b, 2, 1);
    assert_eq!(count_in_txn(&a), 3);
    create_y(&a, 1, 3);
    // b replaces log and manifest (a checkpoint), then appends.
    assert!(b.checkpoint().unwrap());
    create_y(&b, 2, 2);
    assert_eq!(count_in_txn(&a), 5);
    create_y(&a, 1, 4);
    // b checkpoints and writes nothing after: a's log was replaced.
    assert!(b.checkpoint().unwrap());
    create_y(&a, 1, 5);
    // Nobody else wrote: a goes on with the log it holds.
    create_y(&a, 1, 6);
    let all: std::collections::HashSet<(i64, i64)> =
        (1..=6).map(|i| (1, i)).chain([(2, 1), (2, 2)]).collect();
    assert_eq!(written(&b.snapshot()), all);
    assert_eq!(written(&a.snapshot()), all);
    assert!(a.check().is_empty(), "{:?}", a.check());
    drop((a, b));
    assert_eq!(written(&Database::open(&dir).unwrap().snapshot()), all);
}

#[test]
fn concurrent_commits_of_one_handle_share_syncs_and_all_land() {
    let (_tmp, dir) = setup();
    let db = Database::open(&dir).unwrap();
    let other = Database::open(&dir).unwrap();
    let commits: Vec<u64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..16)
            .map(|t| {
                let db = &db;
                scope.spawn(move || {
                    (0..40)
                        .map(|i| {
                            let mut txn = db.begin_write().unwrap();
                            txn.create_node(&["Y"], &[("w", Value::Int(t)), ("i", Value::Int(i))])
                                .unwrap();
                            if i % 4 == 0 {
                                transfer(&mut txn, t % ACCOUNTS, (t + 1) % ACCOUNTS, 1);
                            }
                            let commit = txn.commit().unwrap().commit;
                            // Read your own write at once.
                            assert!(written(&db.snapshot()).contains(&(t, i)));
                            commit
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        // Another handle reads meanwhile: whole commits only.
        for _ in 0..50 {
            assert_eq!(total(&other.snapshot()), ACCOUNTS * BALANCE);
        }
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let mut sorted = commits.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (1..=640).collect::<Vec<u64>>(),
        "dense, unique commit numbers"
    );
    assert_eq!(written(&other.snapshot()).len(), 640);
    assert_eq!(total(&other.snapshot()), ACCOUNTS * BALANCE);
    drop(db);
    let db = Database::open(&dir).unwrap();
    assert_eq!(written(&db.snapshot()).len(), 640);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

#[test]
fn a_second_writer_waits_then_fails_naming_the_holder() {
    let (_tmp, dir) = setup();
    let a = Database::open(&dir).unwrap();
    let options = DatabaseOptions {
        lock_timeout: Duration::from_millis(200),
        ..DatabaseOptions::default()
    };
    let b = Database::open_with(&dir, options).unwrap();
    let mut txn = a.begin_write().unwrap();
    transfer(&mut txn, 0, 1, 5);
    let t0 = Instant::now();
    let err = b.begin_write().err().expect("the lock is held");
    assert!(t0.elapsed() >= Duration::from_millis(200));
    assert_eq!(err.kind, ErrorKind::TransientError);
    assert_eq!(err.code, Some("LockAcquisitionTimeout"));
    assert!(
        err.message
            .contains(&format!("process {}", std::process::id())),
        "{}",
        err.message
    );
    // Readers are not blocked, and see nothing uncommitted.
    assert_eq!(int(&b.snapshot(), 0, "bal"), Some(BALANCE));
    txn.commit().unwrap();
    let mut txn = b.begin_write().unwrap();
    assert_eq!(int(&txn, 0, "bal"), Some(BALANCE - 5), "b caught up");
    transfer(&mut txn, 1, 0, 5);
    txn.commit().unwrap();
    assert_eq!(int(&a.snapshot(), 0, "bal"), Some(BALANCE));
}

#[test]
fn a_forgotten_transaction_times_out() {
    let (_tmp, dir) = setup();
    let options = DatabaseOptions {
        transaction_timeout: Some(Duration::from_millis(100)),
        ..DatabaseOptions::default()
    };
    let a = Database::open_with(&dir, options).unwrap();
    let b = Database::open(&dir).unwrap();
    let mut forgotten = a.begin_write().unwrap();
    transfer(&mut forgotten, 0, 1, 50);
    // b waits (default lock timeout 5 s) until the watchdog rolls it back.
    let t0 = Instant::now();
    create_y(&b, 1, 1);
    assert!(t0.elapsed() < Duration::from_secs(3));
    let err = forgotten.commit().unwrap_err();
    assert_eq!(err.code, Some("TransactionTimedOut"));
    assert_eq!(total(&a.snapshot()), ACCOUNTS * BALANCE);
    assert_eq!(int(&a.snapshot(), 0, "bal"), Some(BALANCE));
    // The handle keeps working.
    let mut txn = a.begin_write().unwrap();
    transfer(&mut txn, 0, 1, 1);
    txn.commit().unwrap();
    assert_eq!(int(&b.snapshot(), 0, "bal"), Some(BALANCE - 1));
}

/// Every file of `dir` with its length and modification time.
fn listing(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().to_string(),
                m.len(),
                m.modified().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Options that open a database read-only.
fn read_only() -> DatabaseOptions {
    DatabaseOptions {
        read_only: true,
        ..DatabaseOptions::default()
    }
}

fn set_read_only(dir: &Path, read_only: bool) {
    use std::os::unix::fs::PermissionsExt;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let mode = if read_only { 0o444 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let mode = if read_only { 0o555 } else { 0o755 };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn read_only_opening_changes_nothing() {
    let (_tmp, dir) = setup();
    let writer = Database::open(&dir).unwrap();
    create_y(&writer, 1, 1);
    // Leave a torn record at the end of the log, as a killed writer would.
    let wal = dir.join("wal.log");
    let end = rhizome_storage::wal::parse(&std::fs::read(&wal).unwrap()).valid_len;
    let f = std::fs::OpenOptions::new().write(true).open(&wal).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &[7, 0, 0, 0, 1, 2], end).unwrap();
    drop((f, writer));
    set_read_only(&dir, true);
    let before = listing(&dir);
    let options = read_only();
    let db = Database::open_with(&dir, options).unwrap();
    assert_eq!(written(&db.snapshot()).len(), 1);
    let err = db.begin_write().err().expect("read-only");
    assert_eq!(err.code, Some("ForbiddenOnReadOnlyDatabase"));
    assert!(db.checkpoint().is_err());
    assert!(db.check().is_empty(), "{:?}", db.check());
    drop(db);
    assert_eq!(listing(&dir), before, "no file created, changed or removed");
    set_read_only(&dir, false);
    // A writer cuts the torn record off and appends after it.
    let db = Database::open(&dir).unwrap();
    create_y(&db, 1, 2);
    drop(db);
    let db = Database::open(&dir).unwrap();
    assert_eq!(written(&db.snapshot()).len(), 2);
    assert!(db.check().is_empty(), "{:?}", db.check());
}

/// A process that opens a database for writing (the default) but only
/// reads creates, changes and removes no file either: opening takes no lock
/// and writes nothing, and its background checkpoint thread finds nothing due.
#[test]
fn a_reading_process_changes_nothing() {
    let (_tmp, dir) = setup();
    let writer = Database::open(&dir).unwrap();
    create_y(&writer, 1, 1);
    drop(writer);
    let before = listing(&dir);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let db = Database::open(&dir).unwrap();
    for _ in 0..3 {
        assert_eq!(written(&db.snapshot()).len(), 1);
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    drop(db);
    assert_eq!(listing(&dir), before, "no file created, changed or removed");
}

#[test]
fn a_newer_format_is_refused_clearly() {
    let (_tmp, dir) = setup();
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"version\":3", "\"version\":7")).unwrap();
    let err = Database::open(&dir).err().expect("refused");
    assert_eq!(err.kind, ErrorKind::CorruptDatabase);
    assert!(
        err.message.contains("format version 7") && err.message.contains("newer Rhizome"),
        "{}",
        err.message
    );
}

#[test]
fn backups_are_consistent_while_others_write() {
    let (tmp, dir) = setup();
    let writer = Database::open(&dir).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy = {
        let (dir, stop) = (dir.clone(), stop.clone());
        std::thread::spawn(move || {
            let db = Database::open(&dir).unwrap();
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut txn = db.begin_write().unwrap();
                transfer(&mut txn, i % ACCOUNTS, (i + 1) % ACCOUNTS, 3);
                txn.create_node(&["Y"], &[("w", Value::Int(9)), ("i", Value::Int(i))])
                    .unwrap();
                txn.commit().unwrap();
                if i % 20 == 0 {
                    db.checkpoint().unwrap();
                }
                i += 1;
            }
        })
    };
    create_y(&writer, 1, 1);
    let options = read_only();
    let reader = Database::open_with(&dir, options).unwrap();
    for k in 0..10 {
        std::thread::sleep(Duration::from_millis(5));
        let dest = tmp.path().join(format!("backup-{k}"));
        reader.backup(&dest).unwrap();
        let copy = Database::open(&dest).unwrap();
        let s = copy.snapshot();
        assert_eq!(total(&s), ACCOUNTS * BALANCE);
        assert!(written(&s).contains(&(1, 1)));
        assert!(copy.check().is_empty(), "{:?}", copy.check());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    busy.join().unwrap();
    let err = reader.backup(&tmp.path().join("backup-0")).unwrap_err();
    assert!(err.message.contains("not empty"), "{}", err.message);
}

// ---------------------------------------------------------------------------
// Real processes, killed at random.

const ROLE: &str = "RHIZOME_MP_ROLE";

/// Child processes run this (as the only test of a re-executed test binary).
#[test]
fn mp_child() {
    let Ok(role) = std::env::var(ROLE) else {
        return; // not a child: nothing to do
    };
    die_with_parent();
    let dir = PathBuf::from(std::env::var("RHIZOME_MP_DIR").unwrap());
    let me: i64 = std::env::var("RHIZOME_MP_ID").unwrap().parse().unwrap();
    let out_path = PathBuf::from(std::env::var("RHIZOME_MP_OUT").unwrap());
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out_path)
        .unwrap();
    if role == "parent" {
        // Spawns a writer and a reader, reports their pids, and waits to
        // be killed (`children_die_with_their_parent`).
        let mut children = Children::default();
        for (k, role) in ["writer", "reader"].into_iter().enumerate() {
            let child_out = out_path.with_extension(format!("child-{k}"));
            children.spawn(&dir, role, me * 10 + k as i64, &child_out);
        }
        let pids: Vec<String> = children.0.iter().map(|(c, _)| c.id().to_string()).collect();
        writeln!(out, "PIDS {}", pids.join(" ")).unwrap();
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    let options = DatabaseOptions {
        lock_timeout: Duration::from_secs(20),
        checkpoint_wal_bytes: 4096,
        // Mostly incremental (delta file) checkpoints; full ones below.
        delta_checkpoint_ratio: 1e6,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&dir, options).unwrap();
    let mut rng = me as u64 * 7919 + u64::from(std::process::id());
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let fail = |out: &mut std::fs::File, what: String| -> ! {
        writeln!(out, "ERROR {what}").unwrap();
        std::process::exit(3);
    };
    if role == "group" {
        // Four threads of one process commit at once (group commit).
        let out = std::sync::Mutex::new(out);
        std::thread::scope(|scope| {
            for t in 0..4i64 {
                let (db, out) = (&db, &out);
                scope.spawn(move || {
                    for i in 0.. {
                        let r = db.begin_write().and_then(|mut txn| {
                            let props =
                                [("w", Value::Int(me)), ("i", Value::Int(t * 1_000_000 + i))];
                            txn.create_node(&["Y"], &props)?;
                            txn.commit()
                        });
                        let mut out = out.lock().unwrap();
                        match r {
                            Ok(_) => writeln!(out, "ACK {me} {}", t * 1_000_000 + i).unwrap(),
                            Err(e) => {
                                writeln!(out, "ERROR {e}").unwrap();
                                std::process::exit(3);
                            }
                        }
                    }
                });
            }
        });
        return;
    }
    for i in 0.. {
        match role.as_str() {
            "writer" => {
                let r = db.begin_write().and_then(|mut txn| {
                    txn.create_node(&["Y"], &[("w", Value::Int(me)), ("i", Value::Int(i))])?;
                    txn.commit()
                });
                match r {
                    // Acknowledged: must survive anything that follows.
                    Ok(_) => writeln!(out, "ACK {me} {i}").unwrap(),
                    Err(e) => fail(&mut out, e.to_string()),
                }
                if next() % 16 == 0 {
                    let r = if next() % 4 == 0 {
                        db.checkpoint_full()
                    } else {
                        db.checkpoint()
                    };
                    if let Err(e) = r {
                        fail(&mut out, e.to_string());
                    }
                }
            }
            "mover" => {
                let from = (next() % 8) as i64;
                let to = (from + 1 + (next() % 7) as i64) % 8;
                let r = db.begin_write().and_then(|mut txn| {
                    transfer(&mut txn, from, to, (next() % 30) as i64);
                    // Stay inside the transaction a little.
                    std::thread::sleep(Duration::from_micros(next() % 2000));
                    txn.commit()
                });
                if let Err(e) = r {
                    fail(&mut out, e.to_string());
                }
            }
            _ => {
                let s = match db.try_snapshot() {
                    Ok(s) => s,
                    Err(e) => fail(&mut out, e.to_string()),
                };
                let t = total(&s);
                if t != ACCOUNTS * BALANCE {
                    fail(&mut out, format!("invariant broken: total {t}"));
                }
                writeln!(out, "READ {}", written(&s).len()).unwrap();
            }
        }
    }
}

/// Makes the kernel SIGKILL this child process when its parent dies (the
/// parent's spawning thread, which in `kill_rounds` lives until the test
/// ends), so a parent killed by a CI timeout or Ctrl-C leaves no writer
/// looping on. A parent that died before this call is caught by its pid.
fn die_with_parent() {
    use rustix::process::{getppid, set_parent_process_death_signal, Signal};
    set_parent_process_death_signal(Some(Signal::KILL)).unwrap();
    let parent: i32 = std::env::var("RHIZOME_MP_PARENT").unwrap().parse().unwrap();
    if getppid().map(|p| p.as_raw_nonzero().get()) != Some(parent) {
        std::process::exit(4); // orphaned already
    }
}

/// Child processes of one round with their output files; dropping them
/// (also when the parent panics) kills and reaps every one.
#[derive(Default)]
struct Children(Vec<(Child, PathBuf)>);

impl Children {
    /// This test binary re-executed as child `id` in `role`.
    fn spawn(&mut self, dir: &Path, role: &str, id: i64, out: &Path) {
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["mp_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(ROLE, role)
            .env("RHIZOME_MP_DIR", dir)
            .env("RHIZOME_MP_ID", id.to_string())
            .env("RHIZOME_MP_OUT", out)
            .env("RHIZOME_MP_PARENT", std::process::id().to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.0.push((child, out.to_path_buf()));
    }

    /// Kills and reaps every child.
    fn kill_all(&mut self) {
        for (child, _) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Whether process `pid` (started at `start`, field 22 of its stat) still
/// runs: a zombie or a new process under a reused pid does not count.
fn running(pid: u32, start: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // Fields after the command name in parentheses: state is the first,
    // the start time the 20th.
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields.first() != Some(&"Z") && fields.get(19) == Some(&start)
}

fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19).map(str::to_string)
}

/// A parent process killed with SIGKILL (as a CI timeout would) takes its
/// writer and reader children with it.
#[test]
fn children_die_with_their_parent() {
    let (tmp, dir) = setup();
    let out = tmp.path().join("out-parent");
    let mut parent = Children::default();
    parent.spawn(&dir, "parent", 1, &out);
    let t0 = Instant::now();
    let pids: Vec<u32> = loop {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.starts_with("PIDS ")) {
            break line[5..].split(' ').map(|p| p.parse().unwrap()).collect();
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no pids: {text}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let starts: Vec<String> = pids.iter().map(|&p| start_time(p).unwrap()).collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().zip(&starts).all(|(&p, s)| running(p, s)));
    parent.kill_all();
    let t0 = Instant::now();
    while pids.iter().zip(&starts).any(|(&p, s)| running(p, s)) {
        if t0.elapsed() > Duration::from_secs(10) {
            for &p in &pids {
                let pid = rustix::process::Pid::from_raw(p as i32).unwrap();
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            panic!("children {pids:?} outlived their killed parent by 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Several processes write (creations, and transfers that keep the total
/// constant) while others read and check the total; the parent kills
/// processes at random with SIGKILL (during commits and checkpoints).
/// Afterwards every acknowledged creation is there, no reader ever saw a
/// broken total or an error, and the database checks clean.
/// Three rounds here; 30 in the ignored test below (CI runs it).
#[test]
fn processes_killed_at_random_lose_no_acknowledged_commit() {
    kill_rounds(3);
}

/// As above, 30 rounds (about 10 s in a debug build);
/// `RHIZOME_MP_ROUNDS` sets another number.
#[test]
#[ignore = "slow: about 10 s; CI runs it with --ignored"]
fn processes_killed_at_random_30_rounds() {
    let rounds: u64 = std::env::var("RHIZOME_MP_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(30);
    kill_rounds(rounds);
}

fn kill_rounds(rounds: u64) {
    let (tmp, dir) = setup();
    let mut seed = 0x9e37_79b9_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let t0 = Instant::now();
    let mut reads = 0usize;
    for round in 0..rounds {
        let roles = ["writer", "group", "mover", "mover", "reader", "reader"];
        let mut children = Children::default();
        for (k, role) in roles.iter().enumerate() {
            let id = (round * 10 + k as u64) as i64;
            children.spawn(&dir, role, id, &tmp.path().join(format!("out-{id}")));
        }
        // Kill two processes at random moments, then the rest.
        for _ in 0..2 {
            std::thread::sleep(Duration::from_millis(30 + next() % 150));
            let k = (next() % children.0.len() as u64) as usize;
            let _ = children.0[k].0.kill();
        }
        std::thread::sleep(Duration::from_millis(next() % 100));
        children.kill_all();
        let db = Database::open(&dir).unwrap();
        let s = db.snapshot();
        let present = written(&s);
        assert_eq!(total(&s), ACCOUNTS * BALANCE, "round {round}");
        for (_, out) in &children.0 {
            let text = std::fs::read_to_string(out).unwrap_or_default();
            // `writeln!` on a file is several writes: a kill can leave the
            // last line without its newline (and its last words).
            for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
                let mut words = line.trim_end().split(' ');
                match words.next() {
                    Some("ACK") => {
                        let w = words.next().unwrap().parse().unwrap();
                        let i = words.next().unwrap().parse().unwrap();
                        assert!(present.contains(&(w, i)), "round {round}: lost {w} {i}");
                    }
                    Some("ERROR") => panic!("round {round}: {line}"),
                    Some("READ") => reads += 1,
                    _ => {} // a line cut by the kill
                }
            }
        }
        drop(s);
        assert!(db.check().is_empty(), "round {round}: {:?}", db.check());
    }
    assert!(reads > 0, "the readers read");
    eprintln!("{rounds} rounds, {reads} checked reads, {:?}", t0.elapsed());
}

/// The writer reserves the log's space ahead, so the file does not grow
/// with each commit: a reader still sees every new commit (it looks past
/// what it read) and nothing while only reserved zeros follow.
#[test]
fn a_reader_tells_new_records_from_reserved_space() {
    let (_tmp, dir) = setup();
    let writer = Database::open(&dir).unwrap();
    create_y(&writer, 1, 1);
    let reader = Database::open_with(&dir, read_only()).unwrap();
    let size = || std::fs::metadata(dir.join("wal.log")).unwrap().len();
    let before = size();
    for i in 2..=20 {
        create_y(&writer, 1, i);
        assert_eq!(written(&reader.snapshot()).len() as i64, i);
        assert_eq!(written(&reader.snapshot()).len() as i64, i, "no change");
    }
    assert_eq!(size(), before, "the records went into reserved space");
}
