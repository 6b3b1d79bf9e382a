//! The outcome of a TCK run and its text rendering.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

/// How one scenario ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The engine produced exactly the specified result.
    Passed,
    /// The engine's behaviour differs from the specification.
    Failed {
        /// A short category shared by failures of the same kind
        /// (e.g. `setup failed: not supported yet: CREATE ...`).
        cause: String,
        /// The reason in one line.
        detail: String,
    },
    /// The runner could not run the scenario (unknown step, malformed
    /// table, a panic); the reason in one line.
    Errored(String),
}

/// One scenario's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioReport {
    /// The scenario's name (outline rows are named after their outline).
    pub name: String,
    /// 1-based line of the scenario in its file.
    pub line: usize,
    /// How it ended.
    pub outcome: Outcome,
}

/// One feature file's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureReport {
    /// The file, relative to the features directory.
    pub path: PathBuf,
    /// The feature's name.
    pub name: String,
    /// Its category (see [`crate::category`]).
    pub category: String,
    /// Its scenarios in file order.
    pub scenarios: Vec<ScenarioReport>,
}

/// Passed / failed / errored scenario counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Scenarios that passed.
    pub passed: usize,
    /// Scenarios that failed.
    pub failed: usize,
    /// Scenarios the runner could not run.
    pub errored: usize,
}

impl Counts {
    /// All scenarios.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.errored
    }

    fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed { .. } => self.failed += 1,
            Outcome::Errored(_) => self.errored += 1,
        }
    }

    fn percent(&self) -> f64 {
        if self.total() == 0 {
            0.0
        } else {
            100.0 * self.passed as f64 / self.total() as f64
        }
    }
}

/// The results of a whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The features directory that was run.
    pub dir: PathBuf,
    /// Per feature file, sorted by path.
    pub features: Vec<FeatureReport>,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

impl FeatureReport {
    /// This file's counts.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for s in &self.scenarios {
            c.add(&s.outcome);
        }
        c
    }
}

impl Report {
    /// Counts over all scenarios.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for f in &self.features {
            for s in &f.scenarios {
                c.add(&s.outcome);
            }
        }
        c
    }

    /// Scenarios that passed.
    pub fn passed(&self) -> usize {
        self.counts().passed
    }

    /// Scenarios that did not pass (failed or errored).
    pub fn not_passed(&self) -> usize {
        let c = self.counts();
        c.failed + c.errored
    }

    /// Counts per category (`clauses/match`, `expressions/list`, `useCases`, ...).
    pub fn categories(&self) -> BTreeMap<String, Counts> {
        let mut out: BTreeMap<String, Counts> = BTreeMap::new();
        for f in &self.features {
            let c = out.entry(f.category.clone()).or_default();
            for s in &f.scenarios {
                c.add(&s.outcome);
            }
        }
        out
    }

    /// Counts per top-level group (`clauses`, `expressions`, `useCases`).
    pub fn groups(&self) -> BTreeMap<String, Counts> {
        let mut out: BTreeMap<String, Counts> = BTreeMap::new();
        for f in &self.features {
            let group = f.category.split('/').next().unwrap_or("").to_string();
            let c = out.entry(group).or_default();
            for s in &f.scenarios {
                c.add(&s.outcome);
            }
        }
        out
    }

    /// Scenarios that did not pass, grouped by cause, most frequent first.
    pub fn causes(&self) -> Vec<(String, usize)> {
        let mut by_cause: BTreeMap<String, usize> = BTreeMap::new();
        for f in &self.features {
            for s in &f.scenarios {
                let cause = match &s.outcome {
                    Outcome::Passed => continue,
                    Outcome::Failed { cause, .. } => cause.clone(),
                    Outcome::Errored(detail) => format!("errored: {detail}"),
                };
                *by_cause.entry(cause).or_default() += 1;
            }
        }
        let mut out: Vec<(String, usize)> = by_cause.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// The per-category table: passed, failed, errored, total and pass rate.
    pub fn render_categories(&self) -> String {
        let mut out = String::new();
        let width = self
            .categories()
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(8)
            .max(8);
        let _ = writeln!(
            out,
            "{:width$}  {:>6}  {:>6}  {:>7}  {:>5}  {:>6}",
            "category", "passed", "failed", "errored", "total", "rate"
        );
        let mut row = |name: &str, c: &Counts| {
            let _ = writeln!(
                out,
                "{name:width$}  {:>6}  {:>6}  {:>7}  {:>5}  {:>5.1}%",
                c.passed,
                c.failed,
                c.errored,
                c.total(),
                c.percent()
            );
        };
        for (name, c) in self.categories() {
            row(&name, &c);
        }
        for (name, c) in self.groups() {
            row(&format!("{name} (all)"), &c);
        }
        row("total", &self.counts());
        out
    }

    /// The causes of non-passing scenarios with their counts.
    pub fn render_causes(&self) -> String {
        let mut out = String::new();
        for (cause, n) in self.causes() {
            let _ = writeln!(out, "{n:>5}  {cause}");
        }
        out
    }

    /// The full report: per feature file its counts and every non-passing
    /// scenario with its reason, then the category table and the causes, and
    /// finally the line `N passed, M failed` (M counts errored scenarios too).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "openCypher TCK: {}", self.dir.display());
        for f in &self.features {
            let c = f.counts();
            let _ = writeln!(
                out,
                "{}: {} passed, {} failed, {} errored",
                f.path.display(),
                c.passed,
                c.failed,
                c.errored
            );
            for s in &f.scenarios {
                match &s.outcome {
                    Outcome::Passed => {}
                    Outcome::Failed { detail, .. } => {
                        let _ = writeln!(out, "  FAIL  {}:{}  {detail}", s.line, s.name);
                    }
                    Outcome::Errored(detail) => {
                        let _ = writeln!(out, "  ERROR {}:{}  {detail}", s.line, s.name);
                    }
                }
            }
        }
        out.push('\n');
        out.push_str(&self.render_categories());
        out.push_str("\nnot passing, by cause:\n");
        out.push_str(&self.render_causes());
        let c = self.counts();
        let _ = writeln!(
            out,
            "\n{} scenarios in {:.1}s ({} errored)",
            c.total(),
            self.elapsed.as_secs_f64(),
            c.errored
        );
        let _ = writeln!(out, "{} passed, {} failed", c.passed, c.failed + c.errored);
        out
    }
}
