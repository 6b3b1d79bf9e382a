//! Branch scopes (docs/scheduling.md, "Scopes"): an apply's inner plan run
//! once per input row, each run an *instance* with its own pipelines, its
//! own cancellation token and its own queue of pending work, up to MAX_SI
//! instances open at once and interleaved by the scope's policy.
//!
//! An instance's queue holds its current pipeline's source chunks and the
//! work its operators hand off ([`TaskCtx::spawn`], [`TaskCtx::split_off`]:
//! an expansion's rest, a loop scope's paused walk, a nested apply's rows
//! not started). A *step* runs one item on the calling thread
//! ([`TaskCtx::for_instance`]); while other instances are open a step
//! hands its rest back to its queue after [`INSTANCE_SLICE`], so the
//! policy chooses again. The policy picks the instance whose oldest
//! pending item comes first:
//!
//! * `fifo`: the item created first, over all open instances;
//! * `bfs`: the least advanced item (fewest hand-offs since its pipeline
//!   started), then the oldest;
//! * `dfs`: the most advanced item, then the oldest: the instance that got
//!   furthest goes on until it ends, so MAX_SI instances are open but one
//!   finishes first.
//!
//! Within an instance items run oldest first, so an ordered pipeline keeps
//! its order. When an instance's run token is cancelled (an `EXISTS`
//! instance's first row), or a pipeline's (a `LIMIT` inside it has its
//! rows), its pending items are dropped without touching the other
//! instances; when the consumer needs no more rows, every open instance is
//! cancelled and its queue dropped. PROFILE counts instances started,
//! finished, cancelled, steps run, items dropped and the instances' time.
//!
//! The scope is resumable: once the operator's task has spent its quantum
//! ([`ScopeConsumer::pause`]) with instances open, the scope returns its
//! state ([`ScopeEnd::Paused`]) and the operator hands it to a new task,
//! which resumes it; when the task could do that, even a lone instance's
//! steps are cut into slices, so no task outlasts its quantum by more
//! than a slice.

use super::build::build;
use super::Pipeline;
use crate::chunk::Chunk;
use crate::context::{InlineLimit, PausedScope, QueryContext, ScopeConsumer, ScopeEnd, ScopeRun};
use crate::operator::{Spawner, TaskCtx, TaskWork};
use crate::scheduler::{exclude_from_profile, nested_nanos, yielded_nanos, CancelToken};
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_plan::ScopePolicy;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a step of an instance runs, while other instances are open,
/// before it hands the rest of its work back to its instance's queue.
pub const INSTANCE_SLICE: Duration = Duration::from_micros(200);

/// A pending item's work.
enum Work {
    /// A source chunk of the instance's current pipeline.
    Chunk(Chunk),
    /// Work an operator handed off, at its stage.
    Task(TaskWork),
}

/// One item of an instance's queue.
struct Pending {
    /// Creation order over the whole scope.
    seq: u64,
    /// Hand-offs since the pipeline's source chunk (how advanced it is).
    generation: u32,
    stage: usize,
    source: usize,
    work: Work,
}

/// The work a step hands off: the instance's queue, as a [`Spawner`].
#[derive(Default)]
struct Handed(Mutex<Vec<(usize, usize, TaskWork)>>);

impl Spawner for Handed {
    fn spawn_at(&self, stage: usize, source: usize, work: TaskWork) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((stage, source, work));
    }
}

/// What one call of a scope did (PROFILE).
#[derive(Default)]
struct Counts {
    started: u64,
    finished: u64,
    cancelled: u64,
    steps: u64,
    dropped: u64,
    nanos: u64,
}

/// One open instance: an input row's inner run.
struct Instance {
    row: usize,
    argument: Chunk,
    token: Arc<CancelToken>,
    pipelines: std::vec::IntoIter<Pipeline>,
    current: Option<Pipeline>,
    queue: VecDeque<Pending>,
    output: Vec<Chunk>,
}

/// The scope's state across its instances.
struct Scope<'a> {
    q: &'a QueryContext,
    seq: u64,
    counts: Counts,
    timed: bool,
}

impl Scope<'_> {
    /// Runs `f` as instance work: its time is the scope's (less other
    /// queries' work nested at yield points) and, under PROFILE, not the
    /// calling operator's (the instance's operators count it).
    fn timed<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if !self.timed {
            return f(self);
        }
        let (start, nested, yielded) = (Instant::now(), nested_nanos(), yielded_nanos());
        let result = f(self);
        let elapsed = start.elapsed().as_nanos() as u64;
        self.counts.nanos += elapsed.saturating_sub(yielded_nanos().wrapping_sub(yielded));
        exclude_from_profile(start, nested);
        result
    }

    /// Opens the instance of `row`; it may have ended already.
    fn open(&mut self, run: &ScopeRun<'_>, row: usize) -> Result<(Instance, bool)> {
        let q = self.q;
        let argument = run.input.select(vec![row as u32]);
        let token = q.scope.cancel.child();
        let pipelines = build(run.plan, q, &token, run.limit == InlineLimit::FirstRow)?;
        let mut instance = Instance {
            row,
            argument,
            token,
            pipelines: pipelines.into_iter(),
            current: None,
            queue: VecDeque::new(),
            output: Vec::new(),
        };
        self.next_pipeline(&mut instance);
        let ended = self.settle(&mut instance)?;
        Ok((instance, ended))
    }

    /// Starts the instance's next pipeline (its source chunks queued);
    /// false if none is left.
    fn next_pipeline(&mut self, instance: &mut Instance) -> bool {
        instance.current = instance.pipelines.next();
        let Some(pipeline) = &instance.current else {
            return false;
        };
        for (source, chunk) in pipeline
            .source
            .chunks(&instance.argument)
            .into_iter()
            .enumerate()
        {
            instance.queue.push_back(Pending {
                seq: self.seq,
                generation: 0,
                stage: 0,
                source,
                work: Work::Chunk(chunk),
            });
            self.seq += 1;
        }
        true
    }

    /// Runs the instance's oldest pending item; true if the instance ended.
    fn step(&mut self, instance: &mut Instance, slice: Option<Duration>) -> Result<bool> {
        let q = self.q;
        let Some(item) = instance.queue.pop_front() else {
            return self.settle(instance);
        };
        let Some(pipeline) = &instance.current else {
            return Ok(true);
        };
        let handed = Handed::default();
        {
            let mut ctx =
                TaskCtx::for_instance(q, &pipeline.chain, &handed, item.stage, item.source, slice);
            match item.work {
                Work::Chunk(chunk) => {
                    if !pipeline.chain.token.is_cancelled() {
                        let _ = ctx.push_at(0, chunk)?;
                    }
                }
                Work::Task(work) => work(&mut ctx)?,
            }
        }
        self.counts.steps += 1;
        for (stage, source, work) in handed.0.into_inner().unwrap_or_else(|p| p.into_inner()) {
            instance.queue.push_back(Pending {
                seq: self.seq,
                generation: item.generation + 1,
                stage,
                source,
                work: Work::Task(work),
            });
            self.seq += 1;
        }
        self.settle(instance)
    }

    /// Ends the instance's current pipeline once it has nothing pending or
    /// was stopped (its pending items dropped), and starts the next; true
    /// when the last one ended (the instance's output is then set).
    fn settle(&mut self, instance: &mut Instance) -> Result<bool> {
        loop {
            let Some(pipeline) = &instance.current else {
                return Ok(true);
            };
            if pipeline.chain.token.is_cancelled() {
                self.counts.dropped += instance.queue.len() as u64;
                instance.queue.clear();
            }
            if !instance.queue.is_empty() {
                return Ok(false);
            }
            let sink = &pipeline.chain.sink.1;
            loop {
                let parts = sink.finish_parts();
                if parts == 0 {
                    break;
                }
                for part in 0..parts {
                    sink.finish_part(part)?;
                }
            }
            instance.output = pipeline.finish(self.q)?;
            if !self.next_pipeline(instance) {
                return Ok(true);
            }
        }
    }

    /// Cancels the open instances (the consumer stopped the scope).
    fn cancel(&mut self, open: &mut Vec<Instance>) {
        for instance in open.drain(..) {
            instance.token.cancel();
            self.counts.cancelled += 1;
            self.counts.dropped += instance.queue.len() as u64;
        }
    }
}

/// The open instance whose next item the policy takes (every open
/// instance has a pending item).
fn pick(open: &[Instance], policy: ScopePolicy) -> usize {
    let key = |i: usize| {
        open[i]
            .queue
            .front()
            .map_or((0, u64::MAX), |p| (p.generation, p.seq))
    };
    let indices = 0..open.len();
    match policy {
        ScopePolicy::Bfs => indices.min_by_key(|&i| key(i)),
        ScopePolicy::Dfs => indices.min_by_key(|&i| {
            let (generation, seq) = key(i);
            (std::cmp::Reverse(generation), seq)
        }),
        _ => indices.min_by_key(|&i| key(i).1),
    }
    .unwrap_or(0)
}

/// A scope paused with instances open ([`PausedScope`]).
struct Paused {
    open: Vec<Instance>,
    next_row: usize,
    seq: u64,
    reports: Reports,
}

/// Runs a branch scope ([`crate::context::SubqueryRunner::run_scope`]).
pub fn run_scope(
    run: ScopeRun<'_>,
    q: &QueryContext,
    consumer: &mut dyn ScopeConsumer,
    resume: Option<PausedScope>,
) -> Result<ScopeEnd> {
    let paused = match resume {
        Some(PausedScope(state)) => Some(
            *state
                .downcast::<Paused>()
                .map_err(|_| Error::internal("a branch scope resumed from a foreign state"))?,
        ),
        None => None,
    };
    let mut scope = Scope {
        q,
        seq: paused.as_ref().map_or(0, |p| p.seq),
        counts: Counts::default(),
        timed: run.stats.is_some() || q.profile.is_some(),
    };
    let result = run_instances(&run, &mut scope, consumer, paused);
    if let Some(stats) = run.stats {
        let c = &scope.counts;
        stats.branch.store(true, Ordering::Relaxed);
        stats.add(c.started, c.finished, c.cancelled, c.steps, c.dropped);
        stats.nanos.fetch_add(c.nanos, Ordering::Relaxed);
    }
    result
}

/// Hands ended instances' outputs to the consumer, in row order if asked.
struct Reports {
    in_order: bool,
    /// Outputs waiting for an earlier row's.
    waiting: BTreeMap<usize, Vec<Chunk>>,
    /// The next row to report, in order.
    next: usize,
}

impl Reports {
    /// Reports (or keeps) `row`'s output; false once the consumer wants no more.
    fn report(
        &mut self,
        consumer: &mut dyn ScopeConsumer,
        row: usize,
        output: Vec<Chunk>,
    ) -> Result<bool> {
        if !self.in_order {
            return consumer.ended(row, output);
        }
        self.waiting.insert(row, output);
        while let Some(output) = self.waiting.remove(&self.next) {
            if !consumer.ended(self.next, output)? {
                return Ok(false);
            }
            self.next += 1;
        }
        Ok(true)
    }
}

fn run_instances(
    run: &ScopeRun<'_>,
    scope: &mut Scope<'_>,
    consumer: &mut dyn ScopeConsumer,
    paused: Option<Paused>,
) -> Result<ScopeEnd> {
    let q = scope.q;
    let max_si = run.scope.max_si.max(1) as usize;
    let (mut open, mut next_row, mut reports) = match paused {
        Some(p) => (p.open, p.next_row, p.reports),
        None => (
            Vec::with_capacity(max_si),
            run.rows.start,
            Reports {
                in_order: run.in_order,
                waiting: BTreeMap::new(),
                next: run.rows.start,
            },
        ),
    };
    let pausable = consumer.pausable();
    // An instance started in this call (the first may always start).
    let mut started_here = false;
    let mut stepped = false;
    loop {
        if q.scope.is_cancelled() {
            scope.cancel(&mut open);
            return Err(q.scope.take_error().unwrap_or_else(|| {
                Error::new(ErrorKind::QueryAborted, "the query was cancelled")
            }));
        }
        // Start instances while fewer than MAX_SI are open.
        while open.len() < max_si && next_row < run.rows.end && consumer.may_start(!started_here) {
            started_here = true;
            let row = next_row;
            next_row += 1;
            if let Some(output) = consumer.known(row) {
                if !reports.report(consumer, row, output)? {
                    scope.cancel(&mut open);
                    return Ok(ScopeEnd::Rows(next_row));
                }
                continue;
            }
            scope.counts.started += 1;
            let (instance, ended) = scope.timed(|s| s.open(run, row))?;
            if !ended {
                open.push(instance);
            } else {
                scope.counts.finished += 1;
                if !reports.report(consumer, row, instance.output)? {
                    scope.cancel(&mut open);
                    return Ok(ScopeEnd::Rows(next_row));
                }
            }
        }
        if open.is_empty() || consumer.stopped() {
            scope.cancel(&mut open);
            return Ok(ScopeEnd::Rows(next_row));
        }
        // At least one step per call, so a resumed scope always progresses.
        if stepped && consumer.pause() {
            return Ok(ScopeEnd::Paused(PausedScope(Box::new(Paused {
                open,
                next_row,
                seq: scope.seq,
                reports,
            }))));
        }
        let i = pick(&open, run.scope.policy);
        // Steps are cut into slices when there is another instance to
        // switch to, or the task may have to hand its work back.
        let slice = (open.len() > 1 || pausable).then_some(INSTANCE_SLICE);
        let ended = scope.timed(|s| s.step(&mut open[i], slice))?;
        stepped = true;
        if ended {
            let instance = open.remove(i);
            if instance.token.is_cancelled() {
                scope.counts.cancelled += 1;
            } else {
                scope.counts.finished += 1;
            }
            if !reports.report(consumer, instance.row, instance.output)? {
                scope.cancel(&mut open);
                return Ok(ScopeEnd::Rows(next_row));
            }
        }
    }
}
