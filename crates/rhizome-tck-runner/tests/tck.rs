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

#[test]
fn tck_passes_at_least_the_recorded_number_of_scenarios() {
    let dir = default_features_dir();
    assert!(
        dir.is_dir(),
        "no TCK features at {} (set RHIZOME_TCK_FEATURES)",
        dir.display()
    );
    let report = run(&dir, &RunOptions::default());
    let counts = report.counts();
    let expected = ratchet();
    println!("{}", report.render_categories());
    println!("not passing, by cause:\n{}", report.render_causes());
    println!(
        "{} passed, {} failed, {} errored in {:.1}s (ratchet: {expected})",
        counts.passed,
        counts.failed,
        counts.errored,
        report.elapsed.as_secs_f64()
    );
    assert!(
        counts.passed >= expected,
        "TCK regression: {} scenarios pass, tck-passing.txt expects at least {expected}",
        counts.passed
    );
    if counts.passed > expected {
        println!(
            "{} scenarios pass now: raise tck-passing.txt from {expected}",
            counts.passed
        );
    }
}
