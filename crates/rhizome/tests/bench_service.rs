//! `rhizome bench service` end to end on `ldbc-tiny`: it imports the data
//! set, starts `rhizome serve` as a child process on a free port, drives it
//! with its own Bolt clients and prints every measurement (a short run of
//! a few seconds; the data set is read from `../shared/datasets` beside the
//! workspace, and the test says so and passes if it is absent).

use std::path::Path;
use std::process::Command;

mod support;
use support::{path_str, Run};

fn tiny() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/ldbc-tiny");
    dir.is_dir().then_some(dir)
}

fn bench(data: &Path, dataset: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "bench",
        "service",
        "--layout",
        "tiny",
        "--dataset",
        path_str(dataset),
        "--data-dir",
        path_str(data),
        "--quick",
    ];
    args.extend_from_slice(extra);
    Run::from(
        Command::new(env!("CARGO_BIN_EXE_rhizome"))
            .args(&args)
            .output()
            .expect("run rhizome"),
    )
}

#[test]
fn bench_service_prints_every_measurement() {
    let Some(dataset) = tiny() else {
        eprintln!("skipped: ldbc-tiny not found");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let run = bench(
        tmp.path(),
        &dataset,
        &[
            "--persons",
            "2",
            "--only",
            "CQ1,CQ3,CQ4,CQ6",
            "--limits",
            "1,10",
            "--foreground",
            "IS3",
            "--foreground-runs",
            "10",
            "--clients",
            "1,2",
            "--seconds",
            "0.2",
            "--cycles",
            "2",
        ],
    );
    run.assert_code(0);
    let out = &run.stdout;
    for expected in [
        "service bench on ldbc-tiny: `rhizome serve` (pid ",
        ", auth basic, ",
        "parameter persons (a WORK_AT, KNOWS degree 2..=10, by id, every k-th): [41, ",
        "CQ3 $n=1 ",
        "CQ4 $n=10 ",
        "[1] CQ latency per $n, scopes off (CYPHER scheduling=off)",
        "[1] scopes on vs off: per-person speedup t(off) / t(policy)",
        "  CQ6 $n=10 ",
        " | planner ",
        " | fifo ",
        " | bfs ",
        " | dfs ",
        " | max_si=4 ",
        "[1] CQ6 best policy vs fifo, median per-person t(fifo) / t(best): $n=1 ",
        "(Banyan: 1.8-3.5x; best beats fifo at every $n: ",
        "[1] scope instantiation overhead, cancellation off and no LIMIT (CQ1 without LIMIT",
        "1 rounds x 2 persons of off, each policy, off back to back",
        ": dfs ",
        " fifo ",
        "target <= +15% for fifo, bfs and dfs: ",
        "Banyan: 25%, 13% with MAX_SI = 1)",
        "[2] isolation across queries: foreground IS3 submitted 10 times",
        "  idle     p50 ",
        "p95 limit 1.25x idle p95 + 2 ms = ",
        "p95 limit 1.5x idle p95 + 2 ms = ",
        "[3] isolation across tenants: users bench_tenant_a (tenant A) and bench_tenant_b (tenant B), share 1 each; CQ3 $n=10000 by B's one client",
        "  B alone ",
        "  B under flood ",
        "of its solo throughput (target >= 40%): ",
        "[4] throughput under concurrency: CQ3 $n=10000",
        "2 cycle(s) over every W (ascending, then descending)",
        "  W=2 ",
        "  windows ",
        "load average at the end: ",
    ] {
        assert!(out.contains(expected), "`{expected}` in\n{out}");
    }
    assert!(!out.contains("CQ2 $n"), "--only CQ1,CQ3,CQ4,CQ6\n{out}");
    assert!(!out.contains("$n=100 "), "--limits 1,10\n{out}");
    // The server was stopped: nothing listens at its address any more.
    let address = out
        .split("at bolt://")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .unwrap();
    assert!(
        std::net::TcpStream::connect(address).is_err(),
        "{address} still open"
    );
}

#[test]
fn bench_service_rejects_unknown_queries_before_serving() {
    let Some(dataset) = tiny() else {
        eprintln!("skipped: ldbc-tiny not found");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let run = bench(tmp.path(), &dataset, &["--foreground", "IC99"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains("unknown query `IC99`"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("rhizome serve"), "{}", run.stdout);
    let run = bench(tmp.path(), &dataset, &["--only", "CQ9"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("CQ1 … CQ6"), "{}", run.stderr);
}
