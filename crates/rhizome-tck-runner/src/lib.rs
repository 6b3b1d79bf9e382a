//! The openCypher TCK runner: reads Gherkin feature files and runs every
//! scenario against a fresh, temporary Rhizome database.
//!
//! [`run`] loads the features under a directory (with `rhizome-tck`), runs
//! their scenarios on a few threads (each in its own temporary directory) and
//! returns a [`Report`]: per feature file the scenarios that passed, failed
//! (with a one-line reason and a groupable cause) or errored (the runner could
//! not interpret the scenario, or the engine panicked). [`Report::render`]
//! prints it and ends with the line `N passed, M failed`.
//!
//! Supported steps: `Given an empty graph` / `any graph` / `the <name>
//! graph` (the scripts in the TCK's `graphs/` directory), `having executed:`,
//! `parameters are:`, `there exists a procedure …:`; `When executing query:`
//! / `executing control query:`; `Then the result should be …` (in any
//! order, in order, ignoring element order for lists, empty), `no side
//! effects`, `the side effects should be:`, and `a <Type> should be raised at
//! <phase>: <Detail>`. A query's error is of phase compile time when
//! [`rhizome_engine::Engine::explain`] (parse, analysis, planning) rejects it,
//! runtime otherwise.
//!
//! A scenario passes only when the engine produces the specified result by
//! itself: expectations are never adjusted.

mod report;
mod scenario;
pub mod side_effects;
pub mod value;

pub use report::{Counts, FeatureReport, Outcome, Report, ScenarioReport};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable naming the features directory.
pub const FEATURES_ENV: &str = "RHIZOME_TCK_FEATURES";

/// How to run the TCK.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Scenarios run at once (default: four per core: a scenario mostly waits
    /// for the file system while its database is created, so more scenarios
    /// than cores keep the cores busy).
    pub threads: usize,
    /// Only scenarios whose feature path or name contains this text.
    pub filter: Option<String>,
    /// Where the named graphs live (default: `graphs/` beside the features directory).
    pub graphs_dir: Option<PathBuf>,
    /// Longest time one query may run (the engine stops it).
    pub query_timeout: Duration,
    /// Longest time one scenario may take before the runner gives up on it.
    pub scenario_timeout: Duration,
    /// Workers one query may use (default: the engine's default, so the TCK
    /// exercises the parallel runtime as users get it).
    pub query_threads: Option<usize>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()) * 4,
            filter: None,
            graphs_dir: None,
            query_timeout: Duration::from_secs(30),
            scenario_timeout: Duration::from_secs(120),
            query_threads: None,
        }
    }
}

/// The features directory: `RHIZOME_TCK_FEATURES` if set, otherwise
/// `../shared/tck/features` relative to the repository root (found from this
/// crate's source directory, then by walking up from the current directory).
pub fn default_features_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(FEATURES_ENV) {
        return PathBuf::from(dir);
    }
    let relative = Path::new("..").join("shared").join("tck").join("features");
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut candidates = Vec::new();
    // The crate lives in <root>/crates/rhizome-tck-runner.
    if let Some(root) = crate_dir.parent().and_then(Path::parent) {
        candidates.push(root.join(&relative));
    }
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            candidates.push(dir.join(&relative));
            candidates.push(dir.join("shared").join("tck").join("features"));
        }
    }
    candidates
        .iter()
        .find(|c| c.is_dir())
        .map(|c| c.canonicalize().unwrap_or_else(|_| c.clone()))
        .unwrap_or_else(|| candidates.first().cloned().unwrap_or(relative))
}

/// Category of a feature file for the summary table: `clauses/<name>`,
/// `expressions/<name>`, or the first directory (`useCases`).
pub fn category(relative: &Path) -> String {
    let parts: Vec<String> = relative
        .parent()
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    match parts.as_slice() {
        [] => "(top)".to_string(),
        [first, second, ..] if first == "clauses" || first == "expressions" => {
            format!("{first}/{second}")
        }
        [first, ..] => first.clone(),
    }
}

/// Runs every scenario under `dir` and reports the outcomes. Feature files
/// that cannot be read are reported as one errored scenario each.
pub fn run(dir: &Path, options: &RunOptions) -> Report {
    let start = Instant::now();
    let graphs_dir = options.graphs_dir.clone().or_else(|| {
        let g = dir.parent()?.join("graphs");
        g.is_dir().then_some(g)
    });
    let mut files = Vec::new();
    collect_features(dir, &mut files);
    files.sort();
    let mut features: Vec<FeatureReport> = Vec::new();
    // (feature index, scenario) jobs.
    let mut jobs = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(dir).unwrap_or(path).to_path_buf();
        let index = features.len();
        match rhizome_tck::load_feature(path) {
            Ok(feature) => {
                let feature_matches = options.filter.as_deref().is_none_or(|f| {
                    relative.to_string_lossy().contains(f) || feature.name.contains(f)
                });
                let scenarios: Vec<_> = feature
                    .scenarios
                    .into_iter()
                    .filter(|s| {
                        feature_matches
                            || options
                                .filter
                                .as_deref()
                                .is_some_and(|f| s.name.contains(f))
                    })
                    .collect();
                if scenarios.is_empty() {
                    continue;
                }
                features.push(FeatureReport {
                    category: category(&relative),
                    path: relative,
                    name: feature.name,
                    scenarios: Vec::new(),
                });
                for s in scenarios {
                    jobs.push((index, s));
                }
            }
            Err(e) => features.push(FeatureReport {
                category: category(&relative),
                path: relative,
                name: String::new(),
                scenarios: vec![ScenarioReport {
                    name: "(feature file)".into(),
                    line: e.line,
                    outcome: Outcome::Errored(format!("cannot parse: {e}")),
                }],
            }),
        }
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<ScenarioReport>>> = Mutex::new(vec![None; jobs.len()]);
    let threads = options.threads.max(1).min(jobs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((_, scenario)) = jobs.get(i) else {
                    break;
                };
                let outcome = run_isolated(scenario, graphs_dir.as_deref(), options);
                let report = ScenarioReport {
                    name: scenario.name.clone(),
                    line: scenario.line,
                    outcome,
                };
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(report);
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    for ((feature, _), report) in jobs.iter().zip(results) {
        if let Some(report) = report {
            features[*feature].scenarios.push(report);
        }
    }
    Report {
        dir: dir.to_path_buf(),
        features,
        elapsed: start.elapsed(),
    }
}

/// Runs one scenario in its own temporary directory on a thread of its own,
/// turning panics into errored outcomes. A scenario that runs longer than
/// [`RunOptions::scenario_timeout`] is reported as errored and abandoned (its
/// thread is left to finish on its own), so one stuck query cannot stop the run.
fn run_isolated(
    scenario: &rhizome_tck::Scenario,
    graphs_dir: Option<&Path>,
    options: &RunOptions,
) -> Outcome {
    let (send, receive) = std::sync::mpsc::channel();
    let scenario = scenario.clone();
    let graphs_dir = graphs_dir.map(Path::to_path_buf);
    let thread_options = options.clone();
    let spawned = std::thread::Builder::new()
        .name("tck-scenario".into())
        // As much stack as a main thread: deeply nested expressions recurse.
        .stack_size(8 << 20)
        .spawn(move || {
            let _ = send.send(run_guarded(
                &scenario,
                graphs_dir.as_deref(),
                &thread_options,
            ));
        });
    if let Err(e) = spawned {
        return Outcome::Errored(format!("starting a scenario thread: {e}"));
    }
    match receive.recv_timeout(options.scenario_timeout) {
        Ok(outcome) => outcome,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Outcome::Errored(format!(
            "did not finish within {}s",
            options.scenario_timeout.as_secs()
        )),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Outcome::Errored("the scenario thread ended without an outcome".into())
        }
    }
}

fn run_guarded(
    scenario: &rhizome_tck::Scenario,
    graphs_dir: Option<&Path>,
    options: &RunOptions,
) -> Outcome {
    let tmp = match tempfile::Builder::new().prefix("rhizome-tck-").tempdir() {
        Ok(t) => t,
        Err(e) => return Outcome::Errored(format!("creating a temporary directory: {e}")),
    };
    let db = tmp.path().join("db");
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        scenario::run_scenario(scenario, &db, graphs_dir, options)
    }));
    match result {
        Ok(outcome) => outcome,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Outcome::Errored(scenario::one_line(&format!("panicked: {message}")))
        }
    }
}

fn collect_features(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_features(&path, out);
        } else if path.extension().is_some_and(|e| e == "feature") {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_follow_the_tck_layout() {
        assert_eq!(
            category(Path::new("clauses/match/Match1.feature")),
            "clauses/match"
        );
        assert_eq!(
            category(Path::new("expressions/temporal/Temporal10.feature")),
            "expressions/temporal"
        );
        assert_eq!(
            category(Path::new(
                "useCases/triadicSelection/TriadicSelection1.feature"
            )),
            "useCases"
        );
        assert_eq!(category(Path::new("Top.feature")), "(top)");
    }

    #[test]
    fn the_default_features_directory_is_found_from_the_crate() {
        if std::env::var_os(FEATURES_ENV).is_none() {
            let dir = default_features_dir();
            assert!(dir.ends_with("shared/tck/features"), "{}", dir.display());
        }
    }
}
