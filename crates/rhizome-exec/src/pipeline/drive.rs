//! Running pipelines: on the worker pool ([`run_parallel`]), each source
//! chunk a task and operators' splits more tasks, or inline on the calling
//! thread ([`run_inline`], the [`InlineRunner`] behind
//! [`QueryContext::run_inline`]).

use super::build::build;
use super::Pipeline;
use crate::chunk::Chunk;
use crate::compile::CNode;
use crate::context::{
    InlineLimit, PausedScope, QueryContext, ScopeConsumer, ScopeEnd, ScopeRun, SubqueryRunner,
};
use crate::operator::{HandedBack, OperatorResult, Spawner, TaskCtx, TaskWork};
use crate::scheduler::{exclude_from_profile, nested_nanos, Task};
use rhizome_common::{Error, ErrorKind, Result};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Whether a wave of tasks is done, and whether the caller sleeps until it is.
#[derive(Default)]
struct Done {
    done: bool,
    /// The caller blocked and counts as asleep: the last task counts it
    /// awake again before waking it, so threads polling for work give up
    /// their cores for it at once (`QueryScope::fall_asleep`).
    caller_asleep: bool,
}

/// What runs when a wave of a pipeline's tasks is done, instead of waking
/// a waiting caller ([`run_parallel_then`]).
type Continuation = Box<dyn FnOnce() + Send>;

/// What receives a run's output once its last pipeline is finished
/// ([`run_parallel_then`]).
pub type Then = Box<dyn FnOnce(Result<Vec<Chunk>>) + Send>;

/// Shared by all tasks of one pipeline when it runs on the pool.
struct SharedRun {
    pipeline: Pipeline,
    q: Arc<QueryContext>,
    outstanding: AtomicUsize,
    done: (Mutex<Done>, Condvar),
    /// Set by a driver that does not wait: run by whoever ends the wave.
    next: Mutex<Option<Continuation>>,
}

impl SharedRun {
    fn new(pipeline: Pipeline, q: &Arc<QueryContext>) -> Arc<SharedRun> {
        Arc::new(SharedRun {
            pipeline,
            q: q.clone(),
            outstanding: AtomicUsize::new(1),
            done: (Mutex::default(), Condvar::new()),
            next: Mutex::new(None),
        })
    }

    /// The pipeline's source tasks (one per source chunk, or one for all
    /// of an ordered pipeline's), each counted in `outstanding`.
    fn source_tasks(self: &Arc<SharedRun>, argument: &Chunk) -> Vec<Task> {
        let chunks = self.pipeline.source.chunks(argument);
        let one_task = self.pipeline.chain.ordered && !self.pipeline.sequenced;
        let batches: Vec<Vec<Chunk>> = if one_task {
            vec![chunks]
        } else {
            chunks.into_iter().map(|c| vec![c]).collect()
        };
        batches
            .into_iter()
            .enumerate()
            .map(|(source, batch)| {
                self.outstanding.fetch_add(1, Ordering::AcqRel);
                self.clone()
                    .source_task(source, None, VecDeque::new(), batch.into())
            })
            .collect()
    }

    /// A task pushing source chunk(s) `chunks` of source `source`, after
    /// `handed_back`: what an ordered pipeline's task handed back
    /// ([`TaskCtx::defer_hand_backs`]), run first and in order. When a stage of an ordered pipeline hands work back (its
    /// quantum is spent), the task ends and a new one goes on where it
    /// stopped, so an ordered pipeline (one ending in a `LIMIT`) no longer
    /// holds its worker to its end. The successor keeps the worker slot
    /// (`slot`) of the first task: sinks keep state per slot, each slot's in
    /// arrival order, so rows of one source stay in order (a collected
    /// result, `collect()`, a sort's ties) whichever worker runs the
    /// successor. The caller counted the task in `outstanding`.
    fn source_task(
        self: Arc<SharedRun>,
        source: usize,
        slot: Option<usize>,
        mut handed_back: VecDeque<(usize, HandedBack)>,
        mut chunks: VecDeque<Chunk>,
    ) -> Task {
        Box::new(move |worker| {
            let run = self;
            let spawner: &dyn Spawner = &run;
            let slot = slot.unwrap_or(worker.worker);
            let mut ctx = TaskCtx::new(&run.q, &run.pipeline.chain, Some(spawner), 0, slot, source);
            ctx.defer_hand_backs();
            while !run.stopped() {
                let result = if let Some((stage, handed)) = handed_back.pop_front() {
                    ctx.run_handed_back(stage, handed)
                        .map(|()| OperatorResult::NeedMoreInput)
                } else if let Some(chunk) = chunks.pop_front() {
                    ctx.push_at(0, chunk)
                } else {
                    break;
                };
                match result {
                    Ok(result) if result.is_finished() => break,
                    Ok(_) => {}
                    Err(e) => {
                        run.q.scope.fail(e);
                        break;
                    }
                }
                let more = ctx.take_handed_back();
                if !more.is_empty() {
                    for work in more.into_iter().rev() {
                        handed_back.push_front(work);
                    }
                    run.outstanding.fetch_add(1, Ordering::AcqRel);
                    let next = run
                        .clone()
                        .source_task(source, Some(slot), handed_back, chunks);
                    run.q.scope.spawn_successor(next);
                    break;
                }
            }
            run.task_done();
        })
    }

    /// Ends the driver's own count of the wave: `next` runs once every
    /// task of the wave is done (here, if they all are already).
    fn then(&self, next: Continuation) {
        *self.next.lock().unwrap_or_else(|p| p.into_inner()) = Some(next);
        self.task_done();
    }

    /// Waits until every task counted in `outstanding` is done (the caller's
    /// own count included), then rearms for the next wave of tasks.
    fn wait(&self) {
        self.task_done();
        // Rather than sleep while tasks wait for a worker, a helping caller
        // runs them here; one that only waits (a server's) polls briefly
        // for the end, then sleeps, not counted as awake.
        let helps = self.q.scope.caller_helps();
        let finished = || self.outstanding.load(Ordering::Acquire) == 0;
        if helps {
            self.q.scope.watch(finished);
        } else {
            self.q.scope.poll(finished);
        }
        let mut state = self.done.0.lock().unwrap_or_else(|p| p.into_inner());
        if !state.done {
            if helps {
                state.caller_asleep = true;
                self.q.scope.fall_asleep();
            }
            while !state.done {
                state = self.done.1.wait(state).unwrap_or_else(|p| p.into_inner());
            }
        }
        state.done = false;
        self.outstanding.store(1, Ordering::Release);
    }

    /// Runs the sink's waves of finishing pieces as tasks, waiting for each.
    fn finish_parts(self: &Arc<SharedRun>) {
        loop {
            let parts = self.pipeline.chain.sink.1.finish_parts();
            if parts == 0 || self.q.scope.is_cancelled() {
                return;
            }
            self.finish_wave(parts);
        }
    }

    fn finish_wave(self: &Arc<SharedRun>, parts: usize) {
        self.spawn_finish_parts(parts);
        self.wait();
    }

    /// Queues one task per finishing piece of the sink.
    fn spawn_finish_parts(self: &Arc<SharedRun>, parts: usize) {
        for part in 0..parts {
            let run = self.clone();
            run.outstanding.fetch_add(1, Ordering::AcqRel);
            self.q.scope.spawn(Box::new(move |worker| {
                let start = run.q.profile.as_ref().map(|_| Instant::now());
                if let Err(e) = run.pipeline.chain.sink.1.finish_part(part) {
                    run.q.scope.fail(e);
                }
                if let (Some(profile), Some(start), Some(id)) =
                    (&run.q.profile, start, run.pipeline.chain.sink.0)
                {
                    profile.record(id, worker.worker, 0, start.elapsed().as_nanos() as u64);
                }
                run.task_done();
            }));
        }
    }

    fn task_done(&self) {
        if self.outstanding.fetch_sub(1, Ordering::AcqRel) == 1 {
            let next = self.next.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(next) = next {
                // The next wave counts the driver in again.
                self.outstanding.store(1, Ordering::Release);
                next();
                return;
            }
            let mut state = self.done.0.lock().unwrap_or_else(|p| p.into_inner());
            state.done = true;
            if std::mem::take(&mut state.caller_asleep) {
                self.q.scope.woken();
            }
            self.done.1.notify_all();
        }
    }

    fn stopped(&self) -> bool {
        self.pipeline.chain.token.is_cancelled() || self.q.scope.is_cancelled()
    }
}

impl Spawner for Arc<SharedRun> {
    fn spawn_at(&self, stage: usize, source: usize, work: TaskWork) {
        let scope = self.q.scope.clone();
        scope.spawn(self.stage_task(stage, source, work));
    }

    fn hand_back_at(&self, stage: usize, source: usize, work: TaskWork) {
        let scope = self.q.scope.clone();
        scope.spawn_successor(self.stage_task(stage, source, work));
    }
}

impl SharedRun {
    /// A task running `work` at `stage` for source chunk `source`, counted
    /// in `outstanding`.
    fn stage_task(self: &Arc<SharedRun>, stage: usize, source: usize, work: TaskWork) -> Task {
        let shared = self.clone();
        shared.outstanding.fetch_add(1, Ordering::AcqRel);
        Box::new(move |worker| {
            if !shared.stopped() {
                let spawner: &dyn Spawner = &shared;
                let chain = &shared.pipeline.chain;
                let mut ctx = TaskCtx::new(
                    &shared.q,
                    chain,
                    Some(spawner),
                    stage,
                    worker.worker,
                    source,
                );
                let start = shared
                    .q
                    .profile
                    .as_ref()
                    .map(|_| (Instant::now(), nested_nanos()));
                if let Err(e) = work(&mut ctx) {
                    shared.q.scope.fail(e);
                }
                // Work done directly in the task (not through a stage) belongs
                // to the operator that spawned it (less other queries' work
                // run nested at its yield points).
                if let (Some(profile), Some((start, nested))) = (&shared.q.profile, start) {
                    let total = (start.elapsed().as_nanos() as u64)
                        .saturating_sub(nested_nanos().wrapping_sub(nested));
                    if let Some((id, _)) = chain.operators.get(stage) {
                        profile.record(
                            *id,
                            worker.worker,
                            0,
                            total.saturating_sub(ctx.inner_nanos()),
                        );
                    }
                }
            }
            shared.task_done();
        })
    }
}

/// Runs a run's pipelines on the worker pool, waiting for each; returns the
/// final pipeline's output.
pub fn run_parallel(
    pipelines: Vec<Pipeline>,
    argument: Chunk,
    q: &Arc<QueryContext>,
) -> Result<Vec<Chunk>> {
    let mut result = Vec::new();
    for pipeline in pipelines {
        q.check_cancelled()
            .map_err(|e| q.scope.take_error().unwrap_or(e))?;
        let shared = SharedRun::new(pipeline, q);
        let mut first = None;
        for task in shared.source_tasks(&argument) {
            // A helping caller starts the first source chunk itself (the
            // others are queued first, for the workers); one that only
            // waits queues it too.
            match first {
                None => first = Some(task),
                Some(_) => q.scope.spawn(task),
            }
        }
        if let Some(task) = first {
            q.scope.run_here(task);
        }
        shared.wait();
        // A failure cancels the scope, so this skips failed runs.
        if !q.scope.is_cancelled() {
            shared.finish_parts();
        }
        if let Some(error) = q.scope.take_error() {
            return Err(error);
        }
        q.check_cancelled()?;
        result = shared.pipeline.finish(q)?;
    }
    Ok(result)
}

/// Runs a run's pipelines on the worker pool like [`run_parallel`], but
/// no thread waits for them: each wave of tasks, when its last task ends,
/// starts the next (on the thread that ended it), and `then` gets the final
/// pipeline's output. Called on a pool worker between tasks (a job), the
/// first source task runs here at once ([`crate::scheduler::QueryScope::run_now`]).
pub fn run_parallel_then(
    pipelines: Vec<Pipeline>,
    argument: Chunk,
    q: &Arc<QueryContext>,
    then: Then,
) {
    Drive {
        pipelines: pipelines.into_iter(),
        argument,
        q: q.clone(),
        result: Vec::new(),
        then,
    }
    .next_pipeline();
}

/// A run driven by continuations ([`run_parallel_then`]).
struct Drive {
    pipelines: std::vec::IntoIter<Pipeline>,
    argument: Chunk,
    q: Arc<QueryContext>,
    result: Vec<Chunk>,
    then: Then,
}

impl Drive {
    /// Starts the next pipeline, or hands the output on after the last.
    fn next_pipeline(mut self) {
        let Some(pipeline) = self.pipelines.next() else {
            let result = std::mem::take(&mut self.result);
            return (self.then)(Ok(result));
        };
        if let Err(e) = self.q.check_cancelled() {
            let error = self.q.scope.take_error().unwrap_or(e);
            return (self.then)(Err(error));
        }
        let shared = SharedRun::new(pipeline, &self.q);
        let mut tasks = shared.source_tasks(&self.argument).into_iter();
        let first = tasks.next();
        for task in tasks {
            self.q.scope.spawn(task);
        }
        let scope = self.q.scope.clone();
        if let Some(task) = first {
            scope.run_now(task);
        }
        let run = shared.clone();
        shared.then(Box::new(move || self.finish_parts(run)));
    }

    /// After a wave: the sink's next wave of finishing pieces, or the end
    /// of the pipeline.
    fn finish_parts(self, run: Arc<SharedRun>) {
        if !self.q.scope.is_cancelled() {
            let parts = run.pipeline.chain.sink.1.finish_parts();
            if parts > 0 && !self.q.scope.is_cancelled() {
                run.spawn_finish_parts(parts);
                let next = run.clone();
                return run.then(Box::new(move || self.finish_parts(next)));
            }
        }
        self.finish_pipeline(&run);
    }

    fn finish_pipeline(mut self, run: &SharedRun) {
        if let Some(error) = self.q.scope.take_error() {
            return (self.then)(Err(error));
        }
        if let Err(e) = self.q.check_cancelled() {
            return (self.then)(Err(e));
        }
        match run.pipeline.finish(&self.q) {
            Ok(result) => {
                self.result = result;
                self.next_pipeline();
            }
            Err(e) => (self.then)(Err(e)),
        }
    }
}

/// Runs a plan on the current thread, starting from `argument` (the outer
/// row), and returns its output chunks. Used for inner sides of applies,
/// expression subqueries and updates; each call is its own scope instance
/// with its own cancellation token, so stopping at the first row stops only
/// this run.
pub fn run_inline(
    node: &Arc<CNode>,
    argument: Chunk,
    q: &QueryContext,
    limit: InlineLimit,
) -> Result<Vec<Chunk>> {
    let timed = q.profile.as_ref().map(|_| (Instant::now(), nested_nanos()));
    let result = run_inline_untimed(node, argument, q, limit);
    // The run's operators count its time under PROFILE; the operator that
    // started it does not.
    if let Some((start, before)) = timed {
        exclude_from_profile(start, before);
    }
    result
}

fn run_inline_untimed(
    node: &Arc<CNode>,
    argument: Chunk,
    q: &QueryContext,
    limit: InlineLimit,
) -> Result<Vec<Chunk>> {
    let token = q.scope.cancel.child();
    let pipelines = build(node, q, &token, limit == InlineLimit::FirstRow)?;
    let mut result = Vec::new();
    for pipeline in pipelines {
        if q.scope.is_cancelled() {
            return Err(q.scope.take_error().unwrap_or_else(|| {
                Error::new(ErrorKind::QueryAborted, "the query was cancelled")
            }));
        }
        let chunks = pipeline.source.chunks(&argument);
        let mut ctx = TaskCtx::new(q, &pipeline.chain, None, 0, 0, 0);
        for (source, chunk) in chunks.into_iter().enumerate() {
            if pipeline.chain.token.is_cancelled() {
                break;
            }
            ctx.source = source;
            if ctx.push_at(0, chunk)?.is_finished() {
                break;
            }
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
        result = pipeline.finish(q)?;
    }
    Ok(result)
}

/// The [`SubqueryRunner`] every query context holds: [`run_inline`].
pub struct InlineRunner;

impl SubqueryRunner for InlineRunner {
    fn run(
        &self,
        plan: &Arc<CNode>,
        argument: Chunk,
        q: &QueryContext,
        limit: InlineLimit,
    ) -> Result<Vec<Chunk>> {
        run_inline(plan, argument, q, limit)
    }

    fn run_scope(
        &self,
        run: ScopeRun<'_>,
        q: &QueryContext,
        consumer: &mut dyn ScopeConsumer,
        resume: Option<PausedScope>,
    ) -> Result<ScopeEnd> {
        super::instances::run_scope(run, q, consumer, resume)
    }
}
