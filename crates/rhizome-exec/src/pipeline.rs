//! Pipelines: chains of streaming operators from a source to a sink, and the
//! drivers that run them.
//!
//! A plan is cut into pipelines at breakers (aggregation, sort, top, limit,
//! the build side of joins, union branches). Each pipeline is a source of
//! chunks (the argument row, or the output of an earlier pipeline's sink),
//! a list of [`Operator`]s that push chunks to the next stage, and a
//! [`Sink`] with per-worker state that is merged by [`Sink::finish`].
//! Pipelines run one after another in dependency order; inside one, every
//! source chunk is a task on the worker pool, and operators split their
//! remaining work into new tasks at their own stage when workers are idle
//! ([`TaskCtx::split_off`]), so even a query that starts
//! at one node fans out over all workers.
//!
//! The same pipelines run *inline* (on the current thread, without the pool)
//! for the inner side of applies and expression subqueries, where a whole run
//! is one quantum of the outer task.

use crate::chunk::Chunk;
use crate::compile::CNode;
use crate::context::QueryContext;
use crate::ops;
use crate::scheduler::{CancelToken, Task, QUANTUM};
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_plan::{OpKind, Slot};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// A streaming operator: consumes a chunk and pushes results downstream
/// with [`TaskCtx::emit`]. Called concurrently from many workers; any state
/// shared across chunks must be synchronized (most operators have none).
pub trait Operator: Send + Sync {
    /// Processes one input chunk.
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()>;
}

/// The end of a pipeline. `consume` runs concurrently on many workers and
/// should touch only the calling worker's local state (`ctx.worker`);
/// `finish` runs once, after every `consume`, and merges.
pub trait Sink: Send + Sync {
    /// Absorbs a chunk.
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()>;
    /// Merges local states and returns the output chunks.
    fn finish(&self, q: &QueryContext) -> Result<Vec<Chunk>>;
    /// Starts the next wave of finishing work that runs on the pool before
    /// [`Sink::finish`] (such as sorting each worker's rows) and returns its
    /// number of independent pieces; 0 when there is no more. Called by the
    /// driver between waves, so it may do serial planning work.
    fn finish_parts(&self) -> usize {
        0
    }
    /// True if the sink puts its rows in the order of the source chunks they
    /// came from ([`TaskCtx::source`]), so an ordered pipeline ending here
    /// may run its source chunks as parallel tasks.
    fn sequenced(&self) -> bool {
        false
    }
    /// Does piece `part` of the current wave; pieces run concurrently.
    fn finish_part(&self, _part: usize) -> Result<()> {
        Ok(())
    }
    /// The only slots the sink reads from its chunks, if it reads no others
    /// (`None`: any slot may be read).
    fn reads(&self) -> Option<&[Slot]> {
        None
    }
}

/// A shared cell through which a pipeline hands its output to a later one.
pub type Cell = Arc<Mutex<Vec<Chunk>>>;

/// Where a pipeline's chunks come from.
pub enum Source {
    /// The run's argument chunk.
    Argument,
    /// The output of an earlier pipeline.
    Cell(Cell),
}

/// One pipeline of a run.
pub struct Pipeline {
    /// Operators in push order, with their operator ids (for PROFILE).
    pub stages: Vec<(usize, Arc<dyn Operator>)>,
    /// The sink and its operator id, if it is a planned operator (a breaker).
    pub sink: (Option<usize>, Arc<dyn Sink>),
    /// The source.
    pub source: Source,
    /// Where the sink's output goes (`None` for the final result).
    pub output: Option<Cell>,
    /// Source chunks must be processed in order, one at a time.
    pub ordered: bool,
    /// Ordered, but each source chunk may be a task of its own: the sink
    /// restores the order of the source chunks, and no stage keeps state
    /// across chunks.
    pub sequenced: bool,
    /// Cancelled when the pipeline may stop early (a limit was reached).
    pub token: Arc<CancelToken>,
}

/// Whether a wave of tasks is done, and whether the caller sleeps until it is.
#[derive(Default)]
struct Done {
    done: bool,
    /// The caller blocked and counts as asleep: the last task counts it
    /// awake again before waking it, so threads polling for work give up
    /// their cores for it at once ([`QueryScope::fall_asleep`]).
    caller_asleep: bool,
}

/// Shared by all tasks of one pipeline when it runs on the pool.
struct SharedRun {
    pipeline: Pipeline,
    q: Arc<QueryContext>,
    outstanding: AtomicUsize,
    done: (Mutex<Done>, Condvar),
}

impl SharedRun {
    /// Waits until every task counted in `outstanding` is done (the caller's
    /// own count included), then rearms for the next wave of tasks.
    fn wait(&self) {
        // Rather than sleep while tasks wait for a worker, run them here.
        self.task_done();
        self.q
            .scope
            .watch(|| self.outstanding.load(Ordering::Acquire) == 0);
        let mut state = self.done.0.lock().unwrap_or_else(|p| p.into_inner());
        if !state.done {
            state.caller_asleep = true;
            self.q.scope.fall_asleep();
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
            let parts = self.pipeline.sink.1.finish_parts();
            if parts == 0 || self.q.scope.is_cancelled() {
                return;
            }
            self.finish_wave(parts);
        }
    }

    fn finish_wave(self: &Arc<SharedRun>, parts: usize) {
        for part in 0..parts {
            let run = self.clone();
            run.outstanding.fetch_add(1, Ordering::AcqRel);
            self.q.scope.spawn(Box::new(move |worker| {
                let start = run.q.profile.as_ref().map(|_| Instant::now());
                if let Err(e) = run.pipeline.sink.1.finish_part(part) {
                    run.q.scope.fail(e);
                }
                if let (Some(profile), Some(start), Some(id)) =
                    (&run.q.profile, start, run.pipeline.sink.0)
                {
                    profile.record(id, worker.worker, 0, start.elapsed().as_nanos() as u64);
                }
                run.task_done();
            }));
        }
        self.wait();
    }

    fn task_done(&self) {
        if self.outstanding.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut state = self.done.0.lock().unwrap_or_else(|p| p.into_inner());
            state.done = true;
            if std::mem::take(&mut state.caller_asleep) {
                self.q.scope.woken();
            }
            self.done.1.notify_all();
        }
    }
}

/// What a running task knows: the query, its pipeline and stage, its worker.
pub struct TaskCtx<'a> {
    /// The query.
    pub q: &'a QueryContext,
    pipe: &'a Pipeline,
    shared: Option<&'a Arc<SharedRun>>,
    stage: usize,
    /// Worker index (for per-worker sink state).
    pub worker: usize,
    /// Position of the task's source chunk in the pipeline's source.
    pub source: usize,
    inner_nanos: u64,
    /// When the task started on the pool (none for inline runs).
    started: Option<Instant>,
}

impl<'a> TaskCtx<'a> {
    /// Pushes a chunk to the next stage.
    pub fn emit(&mut self, chunk: Chunk) -> Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        if let Some(profile) = &self.q.profile {
            let id = self.pipe.stages[self.stage].0;
            profile.operators[id]
                .rows
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
        let pipe = self.pipe;
        push_at(pipe, self.stage + 1, chunk, self)
    }

    /// True if the pipeline (or the query) was stopped; operators check it
    /// between chunks and in long loops.
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.pipe.token.is_cancelled() || self.q.scope.is_cancelled()
    }

    /// True if handing part of the current work to another worker would help now.
    #[inline]
    pub fn can_split(&self) -> bool {
        self.shared.is_some() && !self.pipe.ordered && self.q.scope.wants_split()
    }

    /// True once this task has run on the pool for a [`QUANTUM`]: an
    /// operator that can stop between chunks then hands the rest of its work
    /// to a new task ([`TaskCtx::spawn`]) and returns, so the worker chooses
    /// the next task again and no query holds a worker for long. Always
    /// false inline and in ordered pipelines, where a spawn runs in place.
    #[inline]
    pub fn quantum_spent(&self) -> bool {
        self.is_parallel() && self.started.is_some_and(|t| t.elapsed() >= QUANTUM)
    }

    /// True if tasks run on the pool (so [`TaskCtx::spawn`] runs in parallel).
    pub fn is_parallel(&self) -> bool {
        self.shared.is_some() && !self.pipe.ordered
    }

    /// Runs `work` at the current stage as a new task (or right away when
    /// running inline). Errors fail the query.
    pub fn spawn(
        &mut self,
        work: impl FnOnce(&mut TaskCtx<'_>) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        let Some(shared) = self.shared.filter(|_| !self.pipe.ordered) else {
            return work(self);
        };
        let shared = shared.clone();
        let (stage, source) = (self.stage, self.source);
        shared.outstanding.fetch_add(1, Ordering::AcqRel);
        let scope = shared.q.scope.clone();
        scope.spawn(Box::new(move |worker| {
            if !shared.pipeline.token.is_cancelled() && !shared.q.scope.is_cancelled() {
                let mut ctx = TaskCtx {
                    q: &shared.q,
                    pipe: &shared.pipeline,
                    shared: Some(&shared),
                    stage,
                    worker: worker.worker,
                    source,
                    inner_nanos: 0,
                    started: Some(Instant::now()),
                };
                let start = shared.q.profile.as_ref().map(|_| Instant::now());
                if let Err(e) = work(&mut ctx) {
                    shared.q.scope.fail(e);
                }
                // Work done directly in the task (not through a stage) belongs
                // to the operator that spawned it.
                if let (Some(profile), Some(start)) = (&shared.q.profile, start) {
                    let total = start.elapsed().as_nanos() as u64;
                    if let Some((id, _)) = shared.pipeline.stages.get(stage) {
                        profile.record(
                            *id,
                            worker.worker,
                            0,
                            total.saturating_sub(ctx.inner_nanos),
                        );
                    }
                }
            }
            shared.task_done();
        }));
        Ok(())
    }

    /// Hands the second half of the work `next..end` still to do to a new
    /// task at the current stage when that helps now ([`TaskCtx::can_split`])
    /// and at least `min` (and 1) items remain; returns the end of the part
    /// the calling task keeps. `part` makes the new task's work for the half
    /// it takes over. Operators call it between pieces of work, so one big
    /// input (a start node's neighbours, a long unwound list) is cut in
    /// halves for as long as workers are idle.
    pub fn split_off<W>(
        &mut self,
        next: usize,
        end: usize,
        min: usize,
        part: impl FnOnce(Range<usize>) -> W,
    ) -> Result<usize>
    where
        W: FnOnce(&mut TaskCtx<'_>) -> Result<()> + Send + 'static,
    {
        if end.saturating_sub(next) < min.max(1) || !self.can_split() {
            return Ok(end);
        }
        let mid = next + (end - next) / 2;
        self.spawn(part(mid..end))?;
        Ok(mid)
    }

    /// Pushes `chunk` into the current stage again (used to hand a split off).
    pub fn push_here(&mut self, chunk: Chunk) -> Result<()> {
        let pipe = self.pipe;
        push_at(pipe, self.stage, chunk, self)
    }

    /// Cancels this pipeline's token (a limit was reached upstream work may stop).
    pub fn stop_pipeline(&self) {
        self.pipe.token.cancel();
    }
}

fn push_at(pipe: &Pipeline, stage: usize, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<()> {
    let saved_stage = ctx.stage;
    ctx.stage = stage;
    let outer_inner = std::mem::take(&mut ctx.inner_nanos);
    let start = ctx.q.profile.as_ref().map(|_| Instant::now());
    let result = if stage == pipe.stages.len() {
        pipe.sink.1.consume(chunk, ctx)
    } else {
        pipe.stages[stage].1.execute(chunk, ctx)
    };
    if let (Some(profile), Some(start)) = (&ctx.q.profile, start) {
        let total = start.elapsed().as_nanos() as u64;
        let id = if stage == pipe.stages.len() {
            pipe.sink.0
        } else {
            Some(pipe.stages[stage].0)
        };
        let own = total.saturating_sub(ctx.inner_nanos);
        if let (true, Some(id)) = (stage == pipe.stages.len() && pipe.output.is_none(), id) {
            // The result sink, charged to the plan's root: time only (its
            // chunks were counted where they were produced).
            profile.add_time(id, own);
        } else if let Some(id) = id {
            profile.record(id, ctx.worker, 0, own);
        }
        ctx.inner_nanos = outer_inner + total;
    } else {
        ctx.inner_nanos = outer_inner;
    }
    ctx.stage = saved_stage;
    result
}

fn source_chunks(pipeline: &Pipeline, argument: &Chunk) -> Vec<Chunk> {
    match &pipeline.source {
        Source::Argument => vec![argument.clone()],
        Source::Cell(cell) => std::mem::take(&mut *cell.lock().unwrap_or_else(|p| p.into_inner())),
    }
}

fn finish(pipeline: &Pipeline, q: &QueryContext) -> Result<Vec<Chunk>> {
    let out = pipeline.sink.1.finish(q)?;
    match &pipeline.output {
        Some(cell) => {
            cell.lock().unwrap_or_else(|p| p.into_inner()).extend(out);
            Ok(Vec::new())
        }
        None => Ok(out),
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
        let chunks = source_chunks(&pipeline, &argument);
        let one_task = pipeline.ordered && !pipeline.sequenced;
        let shared = Arc::new(SharedRun {
            pipeline,
            q: q.clone(),
            outstanding: AtomicUsize::new(1),
            done: (Mutex::default(), Condvar::new()),
        });
        let tasks: Vec<Vec<Chunk>> = if one_task {
            vec![chunks]
        } else {
            chunks.into_iter().map(|c| vec![c]).collect()
        };
        let mut first = None;
        for (source, batch) in tasks.into_iter().enumerate() {
            let run = shared.clone();
            run.outstanding.fetch_add(1, Ordering::AcqRel);
            let task: Task = Box::new(move |worker| {
                let mut ctx = TaskCtx {
                    q: &run.q,
                    pipe: &run.pipeline,
                    shared: Some(&run),
                    stage: 0,
                    worker: worker.worker,
                    source,
                    inner_nanos: 0,
                    started: Some(Instant::now()),
                };
                for chunk in batch {
                    if run.pipeline.token.is_cancelled() || run.q.scope.is_cancelled() {
                        break;
                    }
                    if let Err(e) = push_at(&run.pipeline, 0, chunk, &mut ctx) {
                        run.q.scope.fail(e);
                        break;
                    }
                }
                run.task_done();
            });
            // The waiting thread starts the first source chunk itself (the
            // others are queued first, for the workers).
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
        result = finish(&shared.pipeline, q)?;
    }
    Ok(result)
}

/// How much of an inline run's output is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlineLimit {
    /// Every row.
    All,
    /// Stop at the first row (existence checks).
    FirstRow,
}

/// Runs a plan on the current thread, starting from `argument` (the outer
/// row), and returns its output chunks. Used for inner sides of applies and
/// for expression subqueries; each call is its own scope instance with its
/// own cancellation token, so stopping at the first row stops only this run.
pub fn run_inline(
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
        let chunks = source_chunks(&pipeline, &argument);
        let mut ctx = TaskCtx {
            q,
            pipe: &pipeline,
            shared: None,
            stage: 0,
            worker: 0,
            source: 0,
            inner_nanos: 0,
            started: None,
        };
        for (source, chunk) in chunks.into_iter().enumerate() {
            if pipeline.token.is_cancelled() {
                break;
            }
            ctx.source = source;
            push_at(&pipeline, 0, chunk, &mut ctx)?;
        }
        loop {
            let parts = pipeline.sink.1.finish_parts();
            if parts == 0 {
                break;
            }
            for part in 0..parts {
                pipeline.sink.1.finish_part(part)?;
            }
        }
        result = finish(&pipeline, q)?;
    }
    Ok(result)
}

/// Cuts a compiled plan into pipelines (dependencies first, the result last).
/// `first_row_only` makes the result sink stop the run at its first row.
pub fn build(
    root: &Arc<CNode>,
    q: &QueryContext,
    run_token: &Arc<CancelToken>,
    first_row_only: bool,
) -> Result<Vec<Pipeline>> {
    let sink: Arc<dyn Sink> = Arc::new(ops::sinks::CollectSink::new(
        q.worker_slots,
        first_row_only.then(|| run_token.clone()),
    ));
    build_with_sink(root, q, run_token, (None, sink))
}

/// Cuts a compiled plan into pipelines whose last one ends in `sink` (with
/// the operator id PROFILE charges its time to, if any).
pub fn build_with_sink(
    root: &Arc<CNode>,
    q: &QueryContext,
    run_token: &Arc<CancelToken>,
    sink: (Option<usize>, Arc<dyn Sink>),
) -> Result<Vec<Pipeline>> {
    let mut pipelines = Vec::new();
    build_chain(root, sink, false, None, q, run_token, &mut pipelines)?;
    Ok(pipelines)
}

/// Builds the pipelines of `node` with a collecting sink whose rows go to
/// `cell` (union branches, the materialized side of joins and products).
fn collect_into(
    node: &Arc<CNode>,
    cell: &Cell,
    q: &QueryContext,
    run_token: &Arc<CancelToken>,
    pipelines: &mut Vec<Pipeline>,
) -> Result<()> {
    let collect: Arc<dyn Sink> = Arc::new(ops::sinks::CollectSink::new(q.worker_slots, None));
    build_chain(
        node,
        (None, collect),
        false,
        Some(cell.clone()),
        q,
        run_token,
        pipelines,
    )
}

#[allow(clippy::too_many_arguments)]
fn build_chain(
    node: &Arc<CNode>,
    sink: (Option<usize>, Arc<dyn Sink>),
    ends_in_limit: bool,
    output: Option<Cell>,
    q: &QueryContext,
    run_token: &Arc<CancelToken>,
    pipelines: &mut Vec<Pipeline>,
) -> Result<()> {
    let token = run_token.child();
    let mut has_skip = false;
    let mut stages: Vec<(usize, Arc<dyn Operator>)> = Vec::new();
    let mut current = node;
    let mut ordered = false;
    // Every stage handles each chunk on its own (no state across chunks).
    let mut chunk_local = true;
    let source = loop {
        match &current.kind {
            OpKind::Argument => break Source::Argument,
            kind if matches!(kind, OpKind::Eager) || kind.is_update() => {
                // Computed beforehand by the updating run (`crate::write`).
                let rows = q
                    .materialized
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&current.id)
                    .ok_or_else(|| {
                        Error::new(
                            ErrorKind::Internal,
                            format!("{} reached the read runtime unmaterialized", current.id),
                        )
                    })?;
                break Source::Cell(Arc::new(Mutex::new(rows)));
            }
            OpKind::Aggregate { .. }
            | OpKind::Sort { .. }
            | OpKind::Top { .. }
            | OpKind::Limit { .. } => {
                let cell: Cell = Arc::default();
                // A breaker right below this pipeline's sink need only
                // produce the slots the sink reads.
                let wanted = stages
                    .is_empty()
                    .then(|| sink.1.reads().map(<[Slot]>::to_vec))
                    .flatten();
                let breaker = ops::sinks::breaker_sink(current, q, wanted)?;
                build_chain(
                    &current.inputs[0],
                    (Some(current.id), breaker),
                    matches!(current.kind, OpKind::Limit { .. }),
                    Some(cell.clone()),
                    q,
                    run_token,
                    pipelines,
                )?;
                ordered = matches!(current.kind, OpKind::Sort { .. } | OpKind::Top { .. })
                    || (matches!(current.kind, OpKind::Limit { .. })
                        && input_is_ordered(&current.inputs[0]));
                break Source::Cell(cell);
            }
            OpKind::Union { distinct, slots } => {
                let cell: Cell = Arc::default();
                for branch in &current.inputs {
                    collect_into(branch, &cell, q, run_token, pipelines)?;
                }
                if *distinct {
                    stages.push((
                        current.id,
                        Arc::new(ops::simple::Distinct::new(slots.clone())),
                    ));
                }
                break Source::Cell(cell);
            }
            OpKind::CartesianProduct => {
                let cell: Cell = Arc::default();
                collect_into(&current.inputs[1], &cell, q, run_token, pipelines)?;
                stages.push((current.id, Arc::new(ops::join::Cartesian::new(cell))));
                current = &current.inputs[0];
            }
            OpKind::HashJoin {
                build_keys,
                probe_keys,
            } => {
                let cell: Cell = Arc::default();
                collect_into(&current.inputs[0], &cell, q, run_token, pipelines)?;
                stages.push((
                    current.id,
                    Arc::new(ops::join::HashJoin::new(
                        cell,
                        build_keys.clone(),
                        probe_keys.clone(),
                    )),
                ));
                current = &current.inputs[1];
            }
            _ => {
                has_skip |= matches!(current.kind, OpKind::Skip { .. });
                chunk_local &= matches!(
                    current.kind,
                    OpKind::Project { .. } | OpKind::Filter { .. } | OpKind::Unwind { .. }
                );
                stages.push((current.id, ops::streaming_operator(current, q)?));
                current = &current.inputs[0];
            }
        }
    };
    stages.reverse();
    // Which rows a LIMIT keeps or a SKIP drops depends on arrival order; a
    // list unwound or a sorted input has a meaningful order the query text
    // implies, so such pipelines run in source order (one task, no splits).
    let sequenced = ordered && chunk_local && !ends_in_limit && !has_skip && sink.1.sequenced();
    if ends_in_limit || has_skip {
        ordered = true;
    }
    pipelines.push(Pipeline {
        sequenced,
        stages,
        sink,
        source,
        output,
        ordered,
        token,
    });
    Ok(())
}

/// Whether the rows reaching `node` come in a meaningful order (after a sort).
fn input_is_ordered(node: &CNode) -> bool {
    match &node.kind {
        OpKind::Sort { .. } | OpKind::Top { .. } => true,
        OpKind::Project { .. }
        | OpKind::Filter { .. }
        | OpKind::Skip { .. }
        | OpKind::Limit { .. }
        | OpKind::Distinct { .. } => node.inputs.first().is_some_and(|i| input_is_ordered(i)),
        _ => false,
    }
}
