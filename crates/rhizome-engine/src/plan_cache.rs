//! The plan cache: statements planned before run again without being parsed,
//! analysed or planned.
//!
//! A plan depends on the statement's text, the names of its parameters (a
//! missing parameter is an error of the analysis; values never reach the
//! planner, so they are never part of a plan) and on what the planner learnt
//! from the database through [`PlannerContext`]: counts, degrees, indexes,
//! implied labels, procedure signatures. Instead of a version number for the
//! catalog, the schema and the statistics, each entry keeps the questions its
//! planning asked and the answers it got ([`Recording`]). A lookup asks them
//! again of the current snapshot; if every answer is the same, planning
//! would produce the same plan, so the entry is used. Otherwise it is
//! replanned: a new index, a dropped constraint or changed counts take effect
//! at the next statement, while writes to data the plan never asked about
//! leave it alone.
//!
//! The cache is bounded ([`CAPACITY`] entries; the least recently used goes
//! first). Schema commands and statements that fail to plan are not cached.

use rhizome_planner::{Dir, PlannedStatement, PlannerContext, ProcedureInfo};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// Most plans kept.
pub const CAPACITY: usize = 256;

/// One question the planner asked its context.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Question {
    LabelCount(String),
    NodeCount,
    RelCount(Option<String>),
    TripleCount(Option<String>, Option<String>, Option<String>),
    AvgDegree(Option<String>, Option<String>, Dir),
    HasIndex(String, String),
    DistinctValues(String, String),
    LabelImplied(String, Dir, String),
    Procedure(String),
}

/// The answer to a [`Question`].
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Count(Option<u64>),
    /// A float, compared bit for bit.
    Ratio(u64),
    Flag(bool),
    Procedure(Option<ProcedureInfo>),
}

impl Question {
    /// Asks `ctx`.
    fn ask(&self, ctx: &dyn PlannerContext) -> Answer {
        use Question as Q;
        match self {
            Q::LabelCount(l) => Answer::Count(ctx.label_count(l)),
            Q::NodeCount => Answer::Count(Some(ctx.node_count())),
            Q::RelCount(t) => Answer::Count(Some(ctx.rel_count(t.as_deref()))),
            Q::TripleCount(s, t, d) => Answer::Count(Some(ctx.triple_count(
                s.as_deref(),
                t.as_deref(),
                d.as_deref(),
            ))),
            Q::AvgDegree(l, t, dir) => {
                Answer::Ratio(ctx.avg_degree(l.as_deref(), t.as_deref(), *dir).to_bits())
            }
            Q::HasIndex(l, k) => Answer::Flag(ctx.has_index(l, k)),
            Q::DistinctValues(l, k) => Answer::Count(ctx.distinct_values(l, k)),
            Q::LabelImplied(t, dir, l) => Answer::Flag(ctx.label_implied(t, *dir, l)),
            Q::Procedure(name) => Answer::Procedure(ctx.procedure(name)),
        }
    }
}

/// A [`PlannerContext`] that answers from `inner` and writes down every
/// question and answer, so a plan's dependencies can be checked later.
pub(crate) struct Recording<'a> {
    inner: &'a dyn PlannerContext,
    log: Mutex<HashMap<Question, Answer>>,
}

impl<'a> Recording<'a> {
    /// Records the questions asked of `inner`.
    pub(crate) fn new(inner: &'a dyn PlannerContext) -> Recording<'a> {
        Recording {
            inner,
            log: Mutex::new(HashMap::new()),
        }
    }

    fn ask(&self, question: Question) -> Answer {
        let answer = question.ask(self.inner);
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.entry(question).or_insert_with(|| answer.clone());
        answer
    }

    /// The distinct questions asked, with their answers.
    fn into_log(self) -> Vec<(Question, Answer)> {
        let log = self.log.into_inner().unwrap_or_else(|p| p.into_inner());
        log.into_iter().collect()
    }
}

fn count(answer: Answer) -> Option<u64> {
    match answer {
        Answer::Count(n) => n,
        _ => unreachable!("a count question has a count answer"),
    }
}

fn flag(answer: Answer) -> bool {
    matches!(answer, Answer::Flag(true))
}

fn owned(s: Option<&str>) -> Option<String> {
    s.map(str::to_string)
}

impl PlannerContext for Recording<'_> {
    fn label_count(&self, label: &str) -> Option<u64> {
        count(self.ask(Question::LabelCount(label.into())))
    }
    fn node_count(&self) -> u64 {
        count(self.ask(Question::NodeCount)).unwrap_or(0)
    }
    fn rel_count(&self, rel_type: Option<&str>) -> u64 {
        count(self.ask(Question::RelCount(owned(rel_type)))).unwrap_or(0)
    }
    fn triple_count(&self, src: Option<&str>, t: Option<&str>, dst: Option<&str>) -> u64 {
        count(self.ask(Question::TripleCount(owned(src), owned(t), owned(dst)))).unwrap_or(0)
    }
    fn avg_degree(&self, label: Option<&str>, rel_type: Option<&str>, dir: Dir) -> f64 {
        match self.ask(Question::AvgDegree(owned(label), owned(rel_type), dir)) {
            Answer::Ratio(bits) => f64::from_bits(bits),
            _ => unreachable!("a degree question has a ratio answer"),
        }
    }
    fn has_index(&self, label: &str, key: &str) -> bool {
        flag(self.ask(Question::HasIndex(label.into(), key.into())))
    }
    fn distinct_values(&self, label: &str, key: &str) -> Option<u64> {
        count(self.ask(Question::DistinctValues(label.into(), key.into())))
    }
    fn label_implied(&self, rel_type: &str, dir: Dir, label: &str) -> bool {
        flag(self.ask(Question::LabelImplied(rel_type.into(), dir, label.into())))
    }
    fn procedure(&self, name: &str) -> Option<ProcedureInfo> {
        match self.ask(Question::Procedure(name.into())) {
            Answer::Procedure(p) => p,
            _ => unreachable!("a procedure question has a procedure answer"),
        }
    }
}

/// A cached plan and what it was planned with.
struct Entry {
    params: Vec<String>,
    depends_on: Arc<Vec<(Question, Answer)>>,
    plan: Arc<PlannedStatement>,
    last_used: u64,
}

/// Counters of a plan cache, for tests and monitoring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanCacheStats {
    /// Statements that ran a cached plan.
    pub hits: u64,
    /// Statements planned (no entry, or a stale one).
    pub misses: u64,
    /// Entries dropped because what their plan depended on changed.
    pub invalidations: u64,
    /// Entries dropped to make room.
    pub evictions: u64,
    /// Plans held now.
    pub entries: usize,
}

#[derive(Default)]
struct Inner {
    /// Entries by statement text (one per set of parameter names).
    entries: HashMap<String, Vec<Entry>>,
    clock: u64,
    stats: PlanCacheStats,
}

/// A bounded, least-recently-used cache of plans, shared by the clones of
/// an engine.
#[derive(Default)]
pub struct PlanCache {
    inner: Mutex<Inner>,
}

impl PlanCache {
    /// The plan of `query` with parameters named like `params`' keys, if one
    /// is cached and the answers it was planned with still hold in `ctx`.
    /// The answers are checked outside the lock (the first statistics
    /// question of a new database version may compute them).
    pub(crate) fn get<V>(
        &self,
        query: &str,
        params: &BTreeMap<String, V>,
        ctx: &dyn PlannerContext,
    ) -> Option<Arc<PlannedStatement>> {
        let found = {
            let mut inner = self.lock();
            let found = inner.entries.get(query).and_then(|entries| {
                let e = entries.iter().find(|e| e.params.iter().eq(params.keys()))?;
                Some((e.depends_on.clone(), e.plan.clone()))
            });
            if found.is_none() {
                inner.stats.misses += 1;
            }
            found
        };
        let (depends_on, plan) = found?;
        let valid = depends_on.iter().all(|(q, a)| q.ask(ctx) == *a);
        let mut inner = self.lock();
        let inner = &mut *inner;
        inner.clock += 1;
        if valid {
            inner.stats.hits += 1;
            if let Some(e) = inner
                .entries
                .get_mut(query)
                .and_then(|es| es.iter_mut().find(|e| Arc::ptr_eq(&e.plan, &plan)))
                .filter(|e| e.params.iter().eq(params.keys()))
            {
                e.last_used = inner.clock;
            }
            return Some(plan);
        }
        inner.stats.misses += 1;
        inner.stats.invalidations += 1;
        inner.remove(query, |e| {
            Arc::ptr_eq(&e.plan, &plan) && e.params.iter().eq(params.keys())
        });
        None
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `plan`, planned for `query` with `params`' names through
    /// `recording`, evicting the least recently used entry when full.
    pub(crate) fn insert<V>(
        &self,
        query: &str,
        params: &BTreeMap<String, V>,
        recording: Recording<'_>,
        plan: Arc<PlannedStatement>,
    ) {
        let depends_on = Arc::new(recording.into_log());
        let names: Vec<String> = params.keys().cloned().collect();
        let mut inner = self.lock();
        let inner = &mut *inner;
        inner.clock += 1;
        // Another thread may have planned the same statement meanwhile.
        inner.remove(query, |e| e.params == names);
        inner
            .entries
            .entry(query.to_string())
            .or_default()
            .push(Entry {
                params: names,
                depends_on,
                plan,
                last_used: inner.clock,
            });
        inner.stats.entries += 1;
        if inner.stats.entries > CAPACITY {
            inner.evict_oldest();
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> PlanCacheStats {
        self.lock().stats
    }
}

impl Inner {
    /// Drops the entry of `query` that `which` picks, if there is one.
    fn remove(&mut self, query: &str, which: impl Fn(&Entry) -> bool) {
        let Some(entries) = self.entries.get_mut(query) else {
            return;
        };
        if let Some(at) = entries.iter().position(which) {
            entries.swap_remove(at);
            self.stats.entries -= 1;
            if entries.is_empty() {
                self.entries.remove(query);
            }
        }
    }

    /// Drops the least recently used entry (a scan: only done when a new
    /// plan was just made, which costs far more).
    fn evict_oldest(&mut self) {
        let oldest = self
            .entries
            .iter()
            .flat_map(|(text, es)| {
                es.iter()
                    .enumerate()
                    .map(move |(i, e)| (e.last_used, text, i))
            })
            .min_by_key(|(used, _, _)| *used)
            .map(|(_, text, i)| (text.clone(), i));
        if let Some((text, i)) = oldest {
            let last_used = self.entries[&text][i].last_used;
            self.remove(&text, |e| e.last_used == last_used);
            self.stats.evictions += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_planner::EmptyContext;

    struct Counts(u64);

    impl PlannerContext for Counts {
        fn label_count(&self, _label: &str) -> Option<u64> {
            Some(self.0)
        }
        fn node_count(&self) -> u64 {
            self.0
        }
        fn rel_count(&self, _rel_type: Option<&str>) -> u64 {
            0
        }
        fn triple_count(&self, _: Option<&str>, _: Option<&str>, _: Option<&str>) -> u64 {
            0
        }
        fn has_index(&self, _label: &str, _key: &str) -> bool {
            false
        }
        fn distinct_values(&self, _label: &str, _key: &str) -> Option<u64> {
            None
        }
    }

    fn planned() -> Arc<PlannedStatement> {
        let statement = rhizome_cypher::parse("RETURN 1").unwrap();
        let analyzed = rhizome_cypher::analyze(&statement, "RETURN 1").unwrap();
        Arc::new(rhizome_planner::plan_statement(&analyzed, &EmptyContext).unwrap())
    }

    #[test]
    fn entries_hold_while_their_answers_do_and_the_oldest_go_first() {
        let cache = PlanCache::default();
        let none: BTreeMap<String, ()> = BTreeMap::new();
        let x = BTreeMap::from([("x".to_string(), ())]);
        let plan = planned();
        let recording = Recording::new(&Counts(5));
        assert_eq!(recording.label_count("A"), Some(5));
        cache.insert("q", &none, recording, plan.clone());
        assert!(cache.get("q", &none, &Counts(5)).is_some());
        // Other parameter names: another entry.
        assert!(cache.get("q", &x, &Counts(5)).is_none());
        // A changed answer drops the entry.
        assert!(cache.get("q", &none, &Counts(6)).is_none());
        assert!(cache.get("q", &none, &Counts(5)).is_none());
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses, stats.invalidations), (1, 3, 1));
        assert_eq!(stats.entries, 0);

        for i in 0..=CAPACITY {
            if i == CAPACITY {
                // Used again: not the oldest any more.
                assert!(cache.get("q0", &none, &Counts(0)).is_some());
            }
            let recording = Recording::new(&Counts(0));
            cache.insert(&format!("q{i}"), &none, recording, plan.clone());
        }
        assert_eq!(cache.stats().entries, CAPACITY);
        assert_eq!(cache.stats().evictions, 1);
        assert!(cache.get("q0", &none, &Counts(0)).is_some());
        assert!(cache.get("q1", &none, &Counts(0)).is_none());
    }
}
