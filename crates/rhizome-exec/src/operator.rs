//! The roles a physical operator plays in a pipeline, and what a running
//! task knows. This module is the bottom of the runtime: operators
//! (`crate::ops`) implement its traits, the pipeline builder and driver
//! (`crate::pipeline`) wire them up and run them; it depends on neither.
//!
//! A pipeline is one [`Source`], a chain of [`Operator`]s and one [`Sink`]
//! (DuckDB's three roles). Chunks are *pushed*: the driver takes the
//! source's chunks and hands each to the first operator, which pushes what
//! it produces to the next stage with [`TaskCtx::emit`], down to the sink.
//! Every push answers with an [`OperatorResult`], so an operator learns at
//! once when nothing downstream wants more rows.
//!
//! Threading contract, for all three roles: within one pipeline, many
//! workers push chunks through the same operator and sink objects at the
//! same time (every source chunk is a task, and operators split their work
//! into more tasks, [`TaskCtx::split_off`]), unless the pipeline is
//! *ordered*, when one task pushes its chunks in source order. State shared
//! across chunks is therefore either synchronized or kept per worker
//! ([`crate::per_worker::PerWorker`] indexed by [`TaskCtx::worker`]).

use crate::chunk::Chunk;
use crate::context::{QueryContext, VALUE_BYTES};
use crate::scheduler::{nested_nanos, CancelToken, QUANTUM};
use rhizome_common::Result;
use rhizome_plan::Slot;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What an operator or a sink answers after taking a chunk (after DuckDB's
/// `OperatorResultType`; there is no `HaveMoreOutput`, since operators
/// push all their output before they return, and no `Blocked`, since no
/// operator waits).
#[must_use = "an operator must stop producing once downstream is finished"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperatorResult {
    /// The chunk is done with; send the next one.
    NeedMoreInput,
    /// No more input is wanted by this stage or any after it (a `LIMIT`
    /// has its rows, an existence check found one): the caller stops
    /// producing, and the driver stops feeding the pipeline on every
    /// worker.
    Finished,
}

impl OperatorResult {
    /// True for [`OperatorResult::Finished`].
    #[inline]
    pub fn is_finished(self) -> bool {
        self == OperatorResult::Finished
    }
}

/// Shorthand for the common answer.
pub const NEED_MORE: Result<OperatorResult> = Ok(OperatorResult::NeedMoreInput);

/// The start of a pipeline: hands the driver every chunk the pipeline is
/// to process. Called once per pipeline run, on the driving thread, before
/// any operator runs; the chunks then become tasks (one per chunk, or one
/// for all when the pipeline is ordered).
///
/// Scans are not sources: every pipeline starts from an argument row (the
/// outer row of a correlated subquery, or the empty row), and a scan is an
/// [`Operator`] that expands that row into the graph's nodes.
pub trait Source: Send + Sync {
    /// The chunks to push, in their order; `argument` is the run's argument chunk.
    fn chunks(&self, argument: &Chunk) -> Vec<Chunk>;
}

/// A streaming operator: takes a chunk and pushes its results to the next
/// stage with [`TaskCtx::emit`] before it returns.
///
/// Called concurrently from many workers with different chunks (see the
/// module's threading contract); errors fail the query. An operator
/// checks [`TaskCtx::cancelled`] in long loops and stops as soon as an
/// `emit` answers [`OperatorResult::Finished`].
pub trait Operator: Send + Sync {
    /// Processes one input chunk.
    fn execute(&self, input: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult>;
}

/// The end of a pipeline (a breaker, or the collector of a run's result),
/// with a global state and a local state per worker.
///
/// * [`Sink::consume`] runs concurrently on many workers and touches only
///   the calling worker's local state (`ctx.worker`) or synchronized state.
/// * [`Sink::finish_parts`] runs serially on the driving thread between
///   waves; the pieces of one wave ([`Sink::finish_part`]) run concurrently.
/// * [`Sink::finish`] runs once, on the driving thread, after every
///   `consume` and every wave; it merges the local states and returns the
///   output chunks that the next pipeline reads.
pub trait Sink: Send + Sync {
    /// Absorbs a chunk.
    fn consume(&self, chunk: Chunk, ctx: &mut TaskCtx<'_>) -> Result<OperatorResult>;
    /// Merges local states and returns the output chunks.
    fn finish(&self, q: &QueryContext) -> Result<Vec<Chunk>>;
    /// Starts the next wave of finishing work that runs on the pool before
    /// [`Sink::finish`] (such as sorting each worker's rows) and returns its
    /// number of independent pieces; 0 when there is no more.
    fn finish_parts(&self) -> usize {
        0
    }
    /// Does piece `part` of the current wave; pieces run concurrently.
    fn finish_part(&self, _part: usize) -> Result<()> {
        Ok(())
    }
    /// True if the sink puts its rows in the order of the source chunks they
    /// came from ([`TaskCtx::source`]), so an ordered pipeline ending here
    /// may run its source chunks as parallel tasks.
    fn sequenced(&self) -> bool {
        false
    }
    /// The only slots the sink reads from its chunks, if it reads no others
    /// (`None`: any slot may be read).
    fn reads(&self) -> Option<&[Slot]> {
        None
    }
}

/// A shared cell through which a pipeline hands its output to a later one.
pub type Cell = Arc<Mutex<Vec<Chunk>>>;

/// The stages of one pipeline as a task pushes chunks through them: the
/// operators in push order and the sink, each with the operator id PROFILE
/// charges it to.
pub struct Chain {
    /// Operators in push order, with their operator ids.
    pub operators: Vec<(usize, Arc<dyn Operator>)>,
    /// The sink and its operator id, if it is a planned operator (a breaker).
    pub sink: (Option<usize>, Arc<dyn Sink>),
    /// The sink produces the query's result rows; their time is charged to
    /// the plan's root without counting rows again.
    pub result_sink: bool,
    /// Source chunks are processed in order, by one task.
    pub ordered: bool,
    /// The rows reach the operators in an order the query text implies
    /// (after a sort): an operator must emit them in that order. (A
    /// pipeline ending in a `LIMIT` is `ordered`, so that it is
    /// deterministic, but its input's order means nothing.)
    pub keeps_order: bool,
    /// Cancelled when the pipeline may stop early (a sink is finished).
    pub token: Arc<CancelToken>,
    /// The sink stops at the first row (an `EXISTS` run): operators that
    /// fan out send their first rows in small batches that double up to a
    /// chunk ([`TaskCtx::first_batch`]), so a run that finds its row early
    /// stops before a whole chunk of rows was made.
    pub first_row_only: bool,
}

/// Runs work as a new task of the current pipeline on the worker pool;
/// implemented by the parallel driver (`crate::pipeline::drive`), absent
/// in inline runs, where work runs in place.
pub trait Spawner: Sync {
    /// Queues `work` at `stage` for the task of source chunk `source`.
    fn spawn_at(&self, stage: usize, source: usize, work: TaskWork);
    /// Queues `work`, the rest of the calling task's work handed back at
    /// its quantum, as the task's successor: the task ends right after,
    /// and its worker may take it next without waking another
    /// (`crate::scheduler::QueryScope::spawn_successor`).
    fn hand_back_at(&self, stage: usize, source: usize, work: TaskWork) {
        self.spawn_at(stage, source, work);
    }
}

/// The least first batch of an `EXISTS` run's expansions
/// ([`TaskCtx::first_batch`]). Smaller batches cost more per row than they
/// save (a chunk's columns are made and dropped per batch): CQ3's
/// throughput was 19–26% higher starting at 4 or 8 rows than at 1.
pub const FIRST_BATCH: usize = 8;

/// The batch after one of `batch` rows: twice as many, at most a chunk —
/// how every operator that sends its first rows early grows its batches
/// (expansions in an `EXISTS` run, [`TaskCtx::first_batch`]; scoped walks,
/// shortest-path searches and semi-applies, which start at one row).
#[inline]
pub fn next_batch(batch: usize) -> usize {
    (batch * 2).min(crate::chunk::CHUNK_SIZE)
}

/// Work handed to another task ([`TaskCtx::spawn`]).
pub type TaskWork = Box<dyn FnOnce(&mut TaskCtx<'_>) -> Result<()> + Send>;

/// What a running task knows: the query, its pipeline and stage, its worker.
pub struct TaskCtx<'a> {
    /// The query.
    pub q: &'a QueryContext,
    chain: &'a Chain,
    spawner: Option<&'a dyn Spawner>,
    stage: usize,
    /// Worker index (for per-worker sink state).
    pub worker: usize,
    /// Position of the task's source chunk in the pipeline's source.
    pub source: usize,
    /// Time spent in later stages, to be subtracted from the current one.
    inner_nanos: u64,
    /// When the task started on the pool, or its slice of a branch-scope
    /// instance (none for inline runs).
    started: Option<Instant>,
    /// A step of a branch-scope instance ([`TaskCtx::for_instance`]): the
    /// spawner is the instance's queue, and `slice` (if any) how long the
    /// step runs before it hands its rest back there.
    instance: Option<Option<Duration>>,
    /// The task runs an ordered pipeline on the pool and hands work back
    /// to its successor ([`TaskCtx::defer_hand_backs`]).
    defers: bool,
    /// Work handed back by an ordered pipeline's task, and every push
    /// after it, in the order the task would have run them in place: the
    /// driver runs them in a new task before anything else of that task
    /// ([`TaskCtx::take_handed_back`]).
    handed_back: Vec<(usize, HandedBack)>,
    /// Pushes kept in `handed_back`, and their bytes charged to the
    /// query's memory.
    kept: (usize, usize),
}

/// The most pushes an ordered pipeline's task keeps behind work handed
/// back before it runs what it kept in place: an operator that does not
/// stop at the quantum (a plain variable-length walk, which has no state
/// to hand back) would otherwise keep a chunk per push without bound.
const MAX_KEPT_PUSHES: usize = 8;

/// Work an ordered pipeline's task handed back ([`TaskCtx::defer_hand_backs`]).
pub enum HandedBack {
    /// Work handed back at a stage ([`TaskCtx::spawn`]).
    Work(TaskWork),
    /// A chunk pushed to a stage after some work was handed back.
    Push(Chunk),
}

impl<'a> TaskCtx<'a> {
    /// A task at `stage` of `chain`; `spawner` is the pool's, if the task runs there.
    pub fn new(
        q: &'a QueryContext,
        chain: &'a Chain,
        spawner: Option<&'a dyn Spawner>,
        stage: usize,
        worker: usize,
        source: usize,
    ) -> TaskCtx<'a> {
        TaskCtx {
            q,
            chain,
            spawner,
            stage,
            worker,
            source,
            inner_nanos: 0,
            started: spawner.map(|_| Instant::now()),
            instance: None,
            defers: false,
            handed_back: Vec::new(),
            kept: (0, 0),
        }
    }

    /// A step of a branch-scope instance (`crate::pipeline::instances`) at
    /// `stage` of the instance's own `chain`: work handed off
    /// ([`TaskCtx::spawn`], [`TaskCtx::split_off`]) goes to the instance's
    /// queue (`spawner`), not to the pool, and runs when the scope's
    /// policy picks it. With a `slice`, the step hands its rest back once
    /// it has run that long ([`TaskCtx::quantum_spent`]), so the scope can
    /// interleave its instances; without one (no other instance to switch
    /// to) it runs on. Yield points work as in an inline run.
    pub fn for_instance(
        q: &'a QueryContext,
        chain: &'a Chain,
        spawner: &'a dyn Spawner,
        stage: usize,
        source: usize,
        slice: Option<Duration>,
    ) -> TaskCtx<'a> {
        TaskCtx {
            q,
            chain,
            spawner: Some(spawner),
            stage,
            worker: 0,
            source,
            inner_nanos: 0,
            started: Some(Instant::now()),
            instance: Some(slice),
            defers: false,
            handed_back: Vec::new(),
            kept: (0, 0),
        }
    }

    /// Lets this task of an ordered pipeline on the pool (one ending in a
    /// `LIMIT`, or after a sort) hand work back at its quantum like a
    /// parallel task, without changing the order in which rows reach any
    /// stage: work handed back ([`TaskCtx::spawn`]) is kept instead of
    /// run in place, and from then on every push to a stage is kept too,
    /// behind it; [`TaskCtx::quantum_spent`] is true, so the operators on
    /// the stack hand the rest of their work back at their next check
    /// and return. The driver then runs what was kept, in order, in a new
    /// task before the pipeline's next source chunk
    /// ([`TaskCtx::take_handed_back`]): the same pushes in the same order
    /// as in place, cut into tasks of about a quantum.
    pub fn defer_hand_backs(&mut self) {
        self.defers = self.spawner.is_some() && self.chain.ordered && self.instance.is_none();
    }

    /// True if this task hands work back to its successor in order
    /// ([`TaskCtx::defer_hand_backs`]).
    #[inline]
    pub fn hands_back_in_order(&self) -> bool {
        self.defers
    }

    /// The work handed back and the pushes kept since the last call, in
    /// the order they are to run ([`TaskCtx::defer_hand_backs`]).
    pub fn take_handed_back(&mut self) -> Vec<(usize, HandedBack)> {
        self.q.memory.release(self.kept.1);
        self.kept = (0, 0);
        std::mem::take(&mut self.handed_back)
    }

    /// Runs what this task kept ([`TaskCtx::defer_hand_backs`]) in place,
    /// in order, each to its end (nothing is handed back meanwhile).
    fn run_kept(&mut self) -> Result<OperatorResult> {
        let kept = self.take_handed_back();
        self.defers = false;
        let mut outcome = NEED_MORE;
        for (stage, handed) in kept {
            let result = match handed {
                HandedBack::Push(chunk) => self.push_at(stage, chunk),
                work => self
                    .run_handed_back(stage, work)
                    .map(|()| OperatorResult::NeedMoreInput),
            };
            if !matches!(result, Ok(OperatorResult::NeedMoreInput)) {
                outcome = result;
                break;
            }
        }
        self.defers = true;
        outcome
    }

    /// Runs what was handed back at `stage` ([`TaskCtx::take_handed_back`]):
    /// work as the task's own (its time, less later stages' and other
    /// queries' nested work, charged to that stage's operator), a push as
    /// the driver's.
    pub fn run_handed_back(&mut self, stage: usize, handed: HandedBack) -> Result<()> {
        let work = match handed {
            HandedBack::Push(chunk) => return self.push_at(stage, chunk).map(drop),
            HandedBack::Work(work) => work,
        };
        let saved_stage = self.stage;
        let outer_inner = std::mem::take(&mut self.inner_nanos);
        self.stage = stage;
        let start = self
            .q
            .profile
            .as_ref()
            .map(|_| (Instant::now(), nested_nanos()));
        let result = work(self);
        if let (Some(profile), Some((start, nested))) = (&self.q.profile, start) {
            let total = (start.elapsed().as_nanos() as u64)
                .saturating_sub(nested_nanos().wrapping_sub(nested));
            if let Some((id, _)) = self.chain.operators.get(stage) {
                profile.record(*id, self.worker, 0, total.saturating_sub(self.inner_nanos));
            }
        }
        self.inner_nanos = outer_inner;
        self.stage = saved_stage;
        result
    }

    /// Pushes a chunk to the next stage; answers whether more is wanted.
    pub fn emit(&mut self, chunk: Chunk) -> Result<OperatorResult> {
        if chunk.is_empty() {
            return NEED_MORE;
        }
        if let Some(profile) = &self.q.profile {
            let id = self.chain.operators[self.stage].0;
            profile.operators[id]
                .rows
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
        self.push_at(self.stage + 1, chunk)
    }

    /// Pushes `chunk` into the current stage again (used to hand a split off).
    pub fn push_here(&mut self, chunk: Chunk) -> Result<OperatorResult> {
        self.push_at(self.stage, chunk)
    }

    /// Pushes `chunk` into `stage` (the sink after the last operator),
    /// charging the time to it for PROFILE. A stage that answers
    /// [`OperatorResult::Finished`] stops the whole pipeline.
    pub fn push_at(&mut self, stage: usize, chunk: Chunk) -> Result<OperatorResult> {
        if self.defers && !self.handed_back.is_empty() {
            if self.kept.0 < MAX_KEPT_PUSHES {
                // Behind work handed back: keep the push for the next task.
                let bytes = chunk.len() * chunk.width().max(1) * VALUE_BYTES;
                self.q.memory.charge(bytes)?;
                self.kept = (self.kept.0 + 1, self.kept.1 + bytes);
                self.handed_back.push((stage, HandedBack::Push(chunk)));
                return NEED_MORE;
            }
            // The pushing operator goes on past its quantum: run what was
            // kept here, then this push, rather than keep without bound.
            let ran = self.run_kept()?;
            if ran.is_finished() {
                return Ok(ran);
            }
        }
        let chain = self.chain;
        let saved_stage = self.stage;
        self.stage = stage;
        let outer_inner = std::mem::take(&mut self.inner_nanos);
        let start = self
            .q
            .profile
            .as_ref()
            .map(|_| (Instant::now(), nested_nanos()));
        self.yield_point();
        let at_sink = stage == chain.operators.len();
        let result = if at_sink {
            chain.sink.1.consume(chunk, self)
        } else {
            chain.operators[stage].1.execute(chunk, self)
        };
        if let (Some(profile), Some((start, nested))) = (&self.q.profile, start) {
            // Another query's work run nested at a yield point in between is
            // not this query's time.
            let total = (start.elapsed().as_nanos() as u64)
                .saturating_sub(nested_nanos().wrapping_sub(nested));
            let id = if at_sink {
                chain.sink.0
            } else {
                Some(chain.operators[stage].0)
            };
            let own = total.saturating_sub(self.inner_nanos);
            if let (true, Some(id)) = (at_sink && chain.result_sink, id) {
                // The result sink, charged to the plan's root: time only (its
                // chunks were counted where they were produced).
                profile.add_time(id, own);
            } else if let Some(id) = id {
                profile.record(id, self.worker, 0, own);
            }
            self.inner_nanos = outer_inner + total;
        } else {
            self.inner_nanos = outer_inner;
        }
        self.stage = saved_stage;
        if let Ok(OperatorResult::Finished) = result {
            chain.token.cancel();
        }
        result
    }

    /// The current operator's loop-scope counters, under PROFILE.
    pub fn scope_stats(&self) -> Option<&crate::context::ScopeStats> {
        let profile = self.q.profile.as_ref()?;
        let id = self.chain.operators[self.stage].0;
        profile.operators.get(id).map(|s| &s.scope)
    }

    /// The size of the first batch an operator that fans out emits for an
    /// input chunk of `input_rows`: a whole chunk, except in a pipeline
    /// whose sink stops at its first row ([`Chain::first_row_only`]),
    /// where it is the input's size (at least [`FIRST_BATCH`]): the first
    /// expansion of an `EXISTS` run, whose input is its one argument row,
    /// starts small, and the stages after it keep the size they are fed
    /// instead of cutting each of their input chunks small again. Each
    /// later batch doubles up to [`crate::chunk::CHUNK_SIZE`] ([`next_batch`]).
    #[inline]
    pub fn first_batch(&self, input_rows: usize) -> usize {
        if self.chain.first_row_only {
            input_rows.clamp(FIRST_BATCH, crate::chunk::CHUNK_SIZE)
        } else {
            crate::chunk::CHUNK_SIZE
        }
    }

    /// True if the pipeline (or the query) was stopped; operators check it
    /// between chunks and in long loops.
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.chain.token.is_cancelled() || self.q.scope.is_cancelled()
    }

    /// True if handing part of the current work to another worker would help now.
    #[inline]
    pub fn can_split(&self) -> bool {
        self.is_parallel() && self.q.scope.wants_split()
    }

    /// True once this task has run on the pool for a [`QUANTUM`], or its
    /// query is held (its output has no room, see
    /// [`crate::scheduler::QueryScope::hold`]): an operator that can stop
    /// between chunks then hands the rest of its work to a new task
    /// ([`TaskCtx::spawn`]) and returns, so the worker chooses the next task
    /// again and no query holds a worker for long, nor while it waits for
    /// room. Always false inline and in ordered pipelines, where a spawn
    /// runs in place, except in an ordered pipeline's task on the pool
    /// ([`TaskCtx::defer_hand_backs`]), where it is also true once some
    /// work was handed back. In a step of a branch-scope instance: true
    /// once the step has run for its slice ([`TaskCtx::for_instance`]).
    #[inline]
    pub fn quantum_spent(&self) -> bool {
        if let Some(slice) = self.instance {
            return !self.chain.ordered
                && slice.is_some_and(|s| self.started.is_some_and(|t| t.elapsed() >= s));
        }
        if self.defers && !self.handed_back.is_empty() {
            return true;
        }
        (self.is_parallel() || self.defers)
            && (self.q.scope.is_held() || self.started.is_some_and(|t| t.elapsed() >= QUANTUM))
    }

    /// A yield point ([`crate::scheduler::QueryScope::yield_now`]) where
    /// the task cannot hand its work back instead: inline (an `EXISTS`,
    /// `OPTIONAL MATCH` or `CALL` instance for one row) and in ordered
    /// pipelines. Every push between stages is one; long loops that push
    /// rarely call it every few thousand steps. The caller holds no lock
    /// of another query's; PROFILE's timers subtract the nested work.
    #[inline]
    pub fn yield_point(&self) {
        if !self.is_parallel() {
            self.q.scope.yield_now();
        }
    }

    /// Starts the task's quantum again. Called after a batched fetch of a
    /// whole input's neighbourhood (over a graph source, a round trip to
    /// its backend): that wait is not compute, and a task that handed its
    /// rest back because of it would cut its input into several chunks,
    /// each of which costs the next operator a round trip of its own.
    #[inline]
    pub fn restart_quantum(&mut self) {
        if self.started.is_some() {
            self.started = Some(Instant::now());
        }
    }

    /// True if the rows reach this pipeline in an order the query implies
    /// ([`Chain::keeps_order`]), which its operators keep.
    #[inline]
    pub fn keeps_order(&self) -> bool {
        self.chain.keeps_order
    }

    /// True if the task can hand its work back ([`TaskCtx::can_hand_back`])
    /// without disturbing the order its rows must keep: the pipeline keeps
    /// no order, or the task hands back in order
    /// ([`TaskCtx::hands_back_in_order`]). What an operator asks before it
    /// pauses a row's evaluation or a search and hands the rest back.
    #[inline]
    pub fn can_hand_back_in_order(&self) -> bool {
        self.can_hand_back() && (!self.keeps_order() || self.hands_back_in_order())
    }

    /// True if [`TaskCtx::spawn`] hands work to another task (of the pool,
    /// of a branch-scope instance's queue, or the next task of an ordered
    /// pipeline's, [`TaskCtx::defer_hand_backs`]) rather than running it
    /// in place.
    #[inline]
    pub fn can_hand_back(&self) -> bool {
        self.spawner.is_some() && (!self.chain.ordered || self.defers)
    }

    /// True if tasks run on the pool (so [`TaskCtx::spawn`] runs in
    /// parallel); false inline, in ordered pipelines and in the steps of a
    /// branch-scope instance (whose spawns go to the instance's queue).
    #[inline]
    pub fn is_parallel(&self) -> bool {
        self.spawner.is_some() && !self.chain.ordered && self.instance.is_none()
    }

    /// Runs `work` at the current stage as a new task (or right away when
    /// running inline or ordered; in a branch-scope instance, queued in the
    /// instance's queue; in an ordered pipeline's task on the pool, kept
    /// for the task's successor, [`TaskCtx::defer_hand_backs`]). Errors
    /// fail the query.
    pub fn spawn(
        &mut self,
        work: impl FnOnce(&mut TaskCtx<'_>) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        if self.defers {
            self.handed_back
                .push((self.stage, HandedBack::Work(Box::new(work))));
            return Ok(());
        }
        match self.spawner.filter(|_| !self.chain.ordered) {
            // Handing the rest back at the quantum, the task ends next.
            Some(spawner) if self.instance.is_none() && self.quantum_spent() => {
                spawner.hand_back_at(self.stage, self.source, Box::new(work));
                Ok(())
            }
            Some(spawner) => {
                spawner.spawn_at(self.stage, self.source, Box::new(work));
                Ok(())
            }
            None => work(self),
        }
    }

    /// Hands the second half of the work `next..end` still to do to a new
    /// task at the current stage when that helps now ([`TaskCtx::can_split`])
    /// and at least `min` (and 1) items remain; returns the end of the part
    /// the calling task keeps. `part` makes the new task's work for the half
    /// it takes over. Operators call it between pieces of work, so one big
    /// input (a start node's neighbours, a long unwound list) is cut in
    /// halves for as long as workers are idle. Once the task has run for a
    /// [`QUANTUM`] ([`TaskCtx::quantum_spent`]), or while the query is held
    /// (its output has no room), it hands all of `next..end` to the new task
    /// and returns `next`: the calling task stops there and its worker
    /// chooses again by virtual time (a held query's rest waits in its
    /// queue until it resumes), so one long input never holds a worker for
    /// more than a quantum while other queries wait.
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
        if next < end && self.quantum_spent() {
            self.spawn(part(next..end))?;
            return Ok(next);
        }
        if end.saturating_sub(next) < min.max(1) || !self.can_split() {
            return Ok(end);
        }
        let mid = next + (end - next) / 2;
        self.spawn(part(mid..end))?;
        Ok(mid)
    }

    /// Time spent in later stages since the task (or its last push) began;
    /// the driver subtracts it from the time of work done directly in a
    /// spawned task.
    pub fn inner_nanos(&self) -> u64 {
        self.inner_nanos
    }
}

/// Evaluates a push (`Result<OperatorResult>`, such as [`TaskCtx::emit`]),
/// propagates its error, and returns [`OperatorResult::Finished`] from the
/// calling function once downstream is finished:
/// `return_if_finished!(ctx.emit(chunk));`.
macro_rules! return_if_finished {
    ($push:expr) => {
        if $push?.is_finished() {
            return Ok($crate::operator::OperatorResult::Finished);
        }
    };
}
pub(crate) use return_if_finished;
