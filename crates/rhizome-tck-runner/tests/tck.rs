//! The TCK ratchet: runs the whole openCypher TCK and fails if fewer
//! scenarios pass than `tck-passing.txt` records. Raise the number there when
//! the engine passes more.

use rhizome_tck_runner::{default_features_dir, run, RunOptions};

fn ratchet() -> usize {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tck-passing.txt");
    let text = std::fs::read_to_string(path).expect("tck-passing.txt");
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .and_then(|l| l.parse().ok())
        .expect("tck-passing.txt holds the number of passing scenarios")
}

/// Runs the TCK with `query_threads` workers per query and checks the ratchet.
fn passes_the_ratchet(query_threads: Option<usize>) {
    let dir = default_features_dir();
    assert!(
        dir.is_dir(),
        "no TCK features at {} (set RHIZOME_TCK_FEATURES)",
        dir.display()
    );
    let options = RunOptions {
        query_threads,
        ..RunOptions::default()
    };
    let report = run(&dir, &options);
    let counts = report.counts();
    let expected = ratchet();
    let workers = query_threads.map_or("the default workers".to_string(), |n| {
        format!("{n} worker(s)")
    });
    println!("{}", report.render_categories());
    println!("not passing, by cause:\n{}", report.render_causes());
    println!(
        "{} passed, {} failed, {} errored in {:.1}s with {workers} per query (ratchet: {expected})",
        counts.passed,
        counts.failed,
        counts.errored,
        report.elapsed.as_secs_f64()
    );
    assert!(
        counts.passed >= expected,
        "TCK regression with {workers} per query: {} scenarios pass, tck-passing.txt expects at least {expected}",
        counts.passed
    );
    if counts.passed > expected {
        println!(
            "{} scenarios pass now: raise tck-passing.txt from {expected}",
            counts.passed
        );
    }
}

/// The parallel runtime as users get it (one worker per core).
#[test]
fn tck_passes_at_least_the_recorded_number_of_scenarios() {
    passes_the_ratchet(None);
}

/// The same scenarios with one worker per query: the serial paths of every
/// operator (CI's machine has two cores, so the default run covers two).
#[test]
fn tck_passes_with_one_worker_per_query() {
    passes_the_ratchet(Some(1));
}
