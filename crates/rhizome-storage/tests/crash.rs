//! Crash test: a child process commits groups of changes (checkpointing
//! often: incremental delta-file checkpoints, and every fourth a full one;
//! a second thread checkpoints beside the commits, so kills also land while
//! a checkpoint carries commits over) and prints each acknowledged commit; the parent kills it with
//! SIGKILL at random moments, reopens the database and checks that every
//! acknowledged group is there, no group is half there, and the integrity
//! check passes.

use rhizome_common::Value;
use rhizome_storage::builder::GraphBuilder;
use rhizome_storage::{Database, DatabaseOptions, Direction, GraphRead};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "RHIZOME_CRASH_CHILD_DIR";
const MEMBERS: usize = 3;

fn options() -> DatabaseOptions {
    DatabaseOptions {
        checkpoint_wal_bytes: 3000,
        checkpoint_on_close: false,
        // Incremental (delta file) checkpoints, and a full one every 20 groups.
        delta_checkpoint_ratio: 1e6,
        ..DatabaseOptions::default()
    }
}

/// Groups present: for each `G` node its `g`, after checking the group is whole.
fn verify(db: &Database) -> Vec<i64> {
    let s = db.snapshot();
    let problems = db.check();
    assert!(problems.is_empty(), "{problems:?}");
    let c = s.catalog();
    let (Some(g_label), Some(m_label), Some(g_key)) =
        (c.label_id("G"), c.label_id("M"), c.property_key_id("g"))
    else {
        return Vec::new();
    };
    let has = c.rel_type_id("HAS").expect("groups have relationships");
    let mut groups = Vec::new();
    for n in s.label_range_slice(g_label).iter().flat_map(|r| r.clone()) {
        let Value::Int(g) = s.node_property(n, g_key) else {
            panic!("G node {n} without g");
        };
        let adj = s.adjacency(n, has, Direction::Outgoing);
        assert_eq!(adj.len(), MEMBERS, "group {g} is partial");
        for i in 0..adj.len() {
            let m = adj.neighbour(i);
            assert!(s.has_label(m, m_label));
            assert_eq!(s.node_property(m, g_key), Value::Int(g));
            assert_eq!(s.rel_property(adj.rel_id(i), g_key), Value::Int(g));
        }
        groups.push(g);
    }
    let members: usize = s
        .label_range_slice(m_label)
        .iter()
        .map(|r| (r.end - r.start) as usize)
        .sum();
    assert_eq!(members, groups.len() * MEMBERS, "orphan members");
    groups.sort_unstable();
    groups
}

fn child(dir: &Path) {
    let db = Database::open_with(dir, options()).unwrap();
    let start = verify(&db).last().map_or(0, |g| g + 1);
    let stdout = std::io::stdout();
    // Checkpoints beside the commits (each waits for the other's to end).
    let beside = db.clone();
    std::thread::spawn(move || {
        for i in 0u64.. {
            std::thread::sleep(Duration::from_millis(3));
            let done = if i % 3 == 0 {
                beside.checkpoint_full()
            } else {
                beside.checkpoint()
            };
            done.unwrap();
        }
    });
    for g in start.. {
        let mut txn = db.begin_write().unwrap();
        let head = txn.create_node(&["G"], &[("g", Value::Int(g))]).unwrap();
        for _ in 0..MEMBERS {
            let m = txn.create_node(&["M"], &[("g", Value::Int(g))]).unwrap();
            txn.create_relationship(head, m, "HAS", &[("g", Value::Int(g))])
                .unwrap();
        }
        txn.commit().unwrap();
        let mut out = stdout.lock();
        writeln!(out, "ACK {g}").unwrap();
        out.flush().unwrap();
        if g % 5 == 0 {
            if g % 20 == 0 {
                db.checkpoint_full().unwrap();
            } else {
                db.checkpoint().unwrap();
            }
            let mut out = stdout.lock();
            writeln!(out, "CKPT {g}").unwrap();
            out.flush().unwrap();
        }
    }
}

/// The child's entry point: does nothing unless started by `crash_rounds`.
#[test]
fn crash_child() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(Path::new(&dir));
    }
}

#[test]
fn crash_rounds() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    GraphBuilder::new().write(&dir).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
    let mut acked: Vec<i64> = Vec::new();
    let mut checkpoints = 0;
    let started = Instant::now();
    let rounds = 50;
    for round in 0..rounds {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_millis(10 + seed % 200);
        let mut child = Command::new(&exe)
            .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let lines: Vec<String> = BufReader::new(stdout)
                .lines()
                .map_while(|l| l.ok())
                .collect();
            let checkpoints = lines.iter().filter(|l| l.starts_with("CKPT ")).count();
            let acks = lines
                .iter()
                .filter_map(|l| l.strip_prefix("ACK ").and_then(|g| g.parse::<i64>().ok()))
                .collect::<Vec<i64>>();
            (acks, checkpoints)
        });
        std::thread::sleep(delay);
        child.kill().unwrap();
        child.wait().unwrap();
        let (acks, ckpts) = reader.join().unwrap();
        acked.extend(acks);
        checkpoints += ckpts;
        let db = Database::open_with(&dir, options()).unwrap();
        let present = verify(&db);
        for g in &acked {
            assert!(
                present.binary_search(g).is_ok(),
                "round {round}: acknowledged group {g} is missing"
            );
        }
        let expected: Vec<i64> = (0..present.len() as i64).collect();
        assert_eq!(present, expected, "round {round}: groups are not a prefix");
    }
    assert!(!acked.is_empty(), "the child never committed");
    eprintln!(
        "crash test: {rounds} rounds, {} acknowledged commits, {checkpoints} completed checkpoints, {:?}",
        acked.len(),
        started.elapsed()
    );
}
