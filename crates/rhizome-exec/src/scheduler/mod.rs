//! The process-wide worker pool and the scope tree it schedules.
//!
//! One fixed pool of workers serves every query of the process (no thread
//! per query). The top of the scheduling tree is process → [`Tenant`] →
//! [`ClientSession`] → query (within a tenant, the queries and statement
//! jobs of the session that has used the least CPU go first). A tenant (a server's user, or a group of users named in the
//! server's configuration; embedded use has one default tenant) has a
//! *share*; each running query is a [`QueryScope`] of one tenant with its
//! own lock-free task queue, a weight, a cap on how many workers it may use
//! at once (`--threads`). Tenants and queries each keep a *virtual time*:
//! the CPU time consumed divided by the share (weight). A free worker walks
//! the tree: the runnable tenant with the least virtual time, then within
//! it the runnable query with the least virtual time, and takes that
//! query's next task. So a tenant that floods the server with queries gets
//! no more CPU than its share against a tenant with one, and a query's
//! share does not grow with the tasks it queued. A tenant that becomes
//! runnable again starts at no less than the least virtual time of the
//! runnable tenants (the level's *floor*), so idling banks no credit; a
//! query starts, or becomes runnable again, at its tenant's query floor
//! less a bounded credit ([`START_CREDIT`], 4 ms of its CPU time), so a
//! short statement runs ahead of its tenant's long queries instead of
//! taking turns with each of them, and idling banks no more than that. Every task is a bounded quantum (one input chunk, one split of an
//! expansion, or a scan's run of a [`QUANTUM`] and one morsel) after which
//! the worker chooses again.
//!
//! Work a task cannot hand back — a subquery instance run inline for one
//! row, an ordered pipeline's task — has *yield points*
//! ([`QueryScope::yield_now`]): once the task has run a quantum, the
//! worker runs there, nested, the work it would pick first were the task
//! to end (a short statement start, another query's task with less
//! virtual time), at most [`DEFAULT_YIELD_DEPTH`] levels deep, then
//! resumes; so a waiting query waits for a quantum, not for an instance.
//!
//! Below a query, [`CancelToken`]s form the rest of the scope tree: a
//! pipeline, an inner run of an `OPTIONAL MATCH` or `EXISTS` subquery, each
//! has a token whose cancellation stops its own work without touching its
//! siblings, while cancelling a parent (timeout, `LIMIT` reached, user
//! cancel) stops everything below it.
//!
//! An embedded caller's thread (the command line, Python) is not idle
//! while it waits for its query: it runs the query's first task itself and,
//! before it sleeps, watches the query's queue and runs its tasks
//! ([`QueryScope::run_here`], [`QueryScope::watch`]), within the query's cap
//! on workers. A small query then runs without waking a worker and without
//! putting its caller to sleep; larger ones still fan out to the pool as
//! their operators split. A server's caller only waits
//! ([`ScopeOptions::caller_helps`] false): one thread per running statement
//! must not compute, so every task of its queries runs on the workers and
//! no more threads than workers ever run query tasks at once.
//!
//! A server's statement need not have a waiting thread at all: a *job*
//! ([`WorkerPool::submit`]; a worker alternates between jobs and query
//! tasks when both wait, so neither starves) plans it
//! on a worker and starts it there ([`crate::query::start_streaming`]),
//! running its first task at once ([`QueryScope::run_now`]); the thread
//! that ends a pipeline's last task starts the next, and the last one
//! hands the result on, so no thread waits for the query.
//!
//! A query whose output has no room (a client that does not fetch its
//! streamed rows) is *held* ([`QueryScope::hold`]): no worker takes its
//! queued tasks, and its running tasks hand the rest of their work back to
//! the queue at their next hand-back point
//! ([`crate::operator::TaskCtx::quantum_spent`],
//! [`crate::operator::TaskCtx::split_off`]) instead of going on, so the
//! query keeps its state in its queued tasks and no worker waits for the
//! client. [`QueryScope::resume`] (room again) queues them for the workers
//! again; a held query that is cancelled, passes its deadline or stays held
//! past its hold's deadline is resumed by the next worker that looks for
//! work, so its tasks see that and end.
//!
//! Workers that ran out of work, and waiting callers, poll for up to the
//! pool's spin time before they sleep, so a split or the end of a pipeline
//! is noticed in microseconds rather than a wake-up later; no thread polls,
//! and no worker is woken, while as many threads are awake as there are
//! workers (`PoolInner::active`).
//!
//! Threading rules: [`QueryScope::spawn`] may be called from any thread; the
//! morsel path (spawn, pick, run) takes no lock while workers are busy — the
//! only mutex guards sleeping, and is touched only when some worker is idle.

use arc_swap::ArcSwap;
use crossbeam_deque::{Injector, Steal};
use rhizome_common::{Error, ErrorKind};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

mod cancel;
mod query_scope;
mod tenant;

pub use cancel::CancelToken;
pub use query_scope::{QueryScope, ScopeOptions};
use query_scope::{CLOSED, LISTED};
use tenant::{credited_floor, session_id, session_key, PICK_ADVANCE, START_CREDIT};
pub use tenant::{ClientSession, Tenant, DEFAULT_TENANT};

/// How long a worker that ran out of work, or a thread waiting for its
/// query, polls for more before it sleeps. Waking a sleeping thread costs
/// 20–150 µs on a virtual machine, which is most of a small query's run;
/// polling only while fewer threads are awake than there are workers keeps
/// it from taking a core from a thread with work.
pub const DEFAULT_SPIN: Duration = Duration::from_millis(5);

/// How long a caller that only waits polls for its query's end before it
/// blocks ([`QueryScope::poll`]): a few small queries' runs, so that their
/// end is seen without a wake-up (20–150 µs on a virtual machine, far more
/// on a loaded one), but far below a worker's spin, since the waiter does
/// no work meanwhile.
pub const WAITER_SPIN: Duration = Duration::from_micros(200);

/// A unit of work: runs on some worker with that worker's context.
pub type Task = Box<dyn FnOnce(&WorkerContext) + Send>;

thread_local! {
    /// The index of the pool worker this thread is, if it is one.
    static WORKER: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// This thread runs a query's task now ([`QueryScope::run_now`] must
    /// not nest a second one in it: it would count twice as executing).
    static IN_TASK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The query task this thread runs now: what of its time is not charged
    /// yet, and whether it may yield ([`QueryScope::yield_now`]).
    static FRAME: std::cell::Cell<Option<TaskFrame>> = const { std::cell::Cell::new(None) };
    /// Time (ns, ever growing) this thread spent in work a PROFILE timer
    /// around it must not count as its own ([`nested_nanos`]).
    static NESTED_NANOS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Time (ns, ever growing) this thread spent in other queries' work
    /// nested at yield points ([`yielded_nanos`]).
    static YIELDED_NANOS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// The queries whose tasks this thread suspended at yield points
    /// (addresses of their scopes): their work is never nested here.
    static SUSPENDED: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    /// This thread is a pool worker running a task it picked in its loop,
    /// and looks for work again when the task ends ([`QueryScope::spawn_successor`]).
    static LOOP_TASK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The query (its scope's address) whose task this thread last took in
    /// [`PoolInner::pick_in_tenant`] ([`AFFINITY_SLACK`]).
    static LAST_PICKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The running task's frame ([`QueryScope::yield_now`]).
#[derive(Clone, Copy)]
struct TaskFrame {
    /// Start of the part of the task's time not charged yet (the task's
    /// start, or its last yield point).
    since: Instant,
    /// The pick's advance ([`PICK_ADVANCE`]) not yet subtracted from a charge.
    advance: u64,
    /// The worker running the task, if it may yield: a task a pool worker
    /// runs (at top level, or nested at a yield point).
    yield_as: Option<usize>,
    /// How many tasks this one is nested in (0: top level); a task nested
    /// [`WorkerPool::yield_depth`] deep has no yield points.
    depth: usize,
}

/// How deep tasks nest at yield points by default ([`QueryScope::yield_now`],
/// `RHIZOME_YIELD_DEPTH` for the process-wide pool; 0 turns yield points
/// off). Two levels: a task nested at a yield point is often another heavy
/// query's start, and with one level a waiting query could find every
/// worker inside such nested work (measurement 2 on SF0.1, W = 2 and 4
/// background clients: foreground p95 about halved from one level to two;
/// a third level did not help further, docs/benchmarks.md).
pub const DEFAULT_YIELD_DEPTH: usize = 2;

/// Time the calling thread has spent, in total, in work that a PROFILE
/// timer bracketing it must not count as the timed operator's own: other
/// queries' work run nested at yield points ([`QueryScope::yield_now`]),
/// and inline runs of subqueries, whose own operators count their time
/// ([`exclude_from_profile`]). A timer subtracts this counter's growth.
#[inline]
pub fn nested_nanos() -> u64 {
    NESTED_NANOS.with(|n| n.get())
}

/// Time the calling thread has spent, in total, in other queries' work run
/// nested at yield points ([`QueryScope::yield_now`]): a timer of this
/// query's work subtracts its growth (unlike [`nested_nanos`], it leaves
/// the query's own inline runs in).
#[inline]
pub fn yielded_nanos() -> u64 {
    YIELDED_NANOS.with(|n| n.get())
}

/// Marks the time since `start` as not the enclosing operator's own:
/// called when a region ends that began at `start` with [`nested_nanos`]
/// at `before` (the region's own excluded parts are within it, so the
/// counter is set, not added to).
pub fn exclude_from_profile(start: Instant, before: u64) {
    let elapsed = start.elapsed().as_nanos() as u64;
    NESTED_NANOS.with(|n| n.set(before.wrapping_add(elapsed)));
}

/// The index of the pool worker the calling thread is, if it is one and
/// runs no query task now (it runs a job, [`WorkerPool::submit`]).
pub fn free_worker() -> Option<usize> {
    if IN_TASK.with(|t| t.get()) {
        return None;
    }
    WORKER.with(|w| w.get())
}

/// How long a task whose work can stop between any two chunks (a scan's
/// range of nodes) runs before it hands the rest back to its query's queue
/// ([`crate::operator::TaskCtx::quantum_spent`]), so that the worker
/// chooses again by virtual time: the bound on one quantum of a long scan.
pub const QUANTUM: Duration = Duration::from_millis(1);

/// How far ahead of the least runnable query of its tenant (in session
/// key and in query key, ns of CPU time at the default weight) the query
/// whose task a worker took last may be and still be the worker's next
/// pick: one quantum. A query then runs a few quanta in a row on one
/// worker instead of one quantum on each worker in turn, so the memory its
/// tasks allocate is mostly freed on the thread that allocated it. With
/// 32 queries on 2 workers the allocator's paths for memory freed on
/// another thread took about 6% of the samples (docs/benchmarks.md); a
/// query's lead over the fair point stays below one quantum, and a light
/// session ([`START_CREDIT`] behind) still goes first.
const AFFINITY_SLACK: u64 = QUANTUM.as_nanos() as u64;

/// What a task learns about the worker running it.
pub struct WorkerContext {
    /// Index of the worker, `0..pool threads`; `threads` is the thread that
    /// waits for the query ([`QueryScope::run_here`], [`QueryScope::help`]),
    /// when it helps.
    pub worker: usize,
}

struct PoolInner {
    /// The open queries that have queued a task ([`QueryScope::register`]).
    scopes: ArcSwap<Vec<Arc<QueryScope>>>,
    /// Open queries ([`WorkerPool::open_scope`] to [`WorkerPool::close_scope`]).
    open: AtomicUsize,
    /// The tenant of queries that name none.
    default_tenant: Arc<Tenant>,
    /// The least virtual time of the runnable tenants when a worker last
    /// picked among them (never decreases): a tenant becoming runnable again
    /// starts at no less than this.
    tenant_floor: AtomicU64,
    /// Work of no query yet, with the tenant it is for
    /// ([`WorkerPool::submit_as`]); see `pick`.
    jobs: Injector<QueuedJob>,
    jobs_pending: AtomicUsize,
    threads: usize,
    idle: AtomicUsize,
    /// Workers without work that still poll for it before they sleep.
    spinning: AtomicUsize,
    /// Threads awake: workers not asleep, and threads inside a query
    /// ([`WorkerPool::open_scope`] to [`WorkerPool::close_scope`]) not
    /// blocked. No worker is woken, and none polls, while as many threads
    /// as workers (cores) are awake: a thread polling for work must not take
    /// a core from one doing the work.
    active: AtomicUsize,
    /// How long a worker polls for work before it sleeps.
    idle_spin: Duration,
    sleep_lock: Mutex<u64>,
    sleep_signal: Condvar,
    /// Waiting callers polling for their query's end ([`QueryScope::poll`]).
    waiters_polling: AtomicUsize,
    /// Threads running a query task now (workers and helping callers).
    executing: AtomicUsize,
    /// The most threads seen running query tasks at once.
    peak_executing: AtomicUsize,
    /// Pieces of work run nested at yield points ([`QueryScope::yield_now`]).
    nested_runs: AtomicU64,
    /// How deep tasks nest at yield points ([`WorkerPool::yield_depth`]).
    yield_depth: usize,
}

impl PoolInner {
    fn wake_one(&self) {
        if self.spinning.load(Ordering::SeqCst) > 0
            || self.active.load(Ordering::SeqCst) >= self.threads
        {
            return;
        }
        if self.idle.load(Ordering::SeqCst) > 0 {
            let mut generation = self.sleep_lock.lock().unwrap_or_else(|p| p.into_inner());
            *generation += 1;
            self.sleep_signal.notify_one();
        }
    }

    /// The next work for a worker. Jobs start statements and queries run
    /// tasks; neither may starve the other, so a worker that just ran a job
    /// looks at the queries first (`tasks_first`), and otherwise at the
    /// jobs first — except for a *light* session's job, which goes first
    /// either way: one of a session at least [`START_CREDIT`] behind its
    /// tenant's session floor ([`ClientSession`]), which a task of its
    /// tenant's busier sessions would otherwise make wait another quantum.
    /// A session stays light only until it has used that credit, so tasks
    /// wait for a bounded share. A query's task is that of the runnable
    /// scope with the least virtual time.
    fn pick(&self, tasks_first: bool) -> Option<Work> {
        if tasks_first {
            self.pick_light_job()
                .or_else(|| self.pick_task())
                .or_else(|| self.pick_job())
        } else {
            self.pick_job().or_else(|| self.pick_task())
        }
    }

    /// The queued job ([`WorkerPool::submit_as`]) of the tenant with the
    /// least virtual time, and within it of the session with the least
    /// ([`ClientSession`]; the first of that session's, in order), if that
    /// tenant is first in line ([`PoolInner::first_in_line`]) against the
    /// tenants with runnable tasks. A statement's job of a tenant behind
    /// (whose clients flood the server) thus waits, and one of a tenant
    /// ahead goes first even when it has no query running yet; a light
    /// session's statement starts before those of its tenant's sessions
    /// that run heavy queries back to back. The other jobs are put back at
    /// the end, in their order.
    fn pick_job(&self) -> Option<Work> {
        self.pick_job_where(|_| true)
    }

    /// [`PoolInner::pick_job`] among the jobs submitted as short
    /// ([`WorkerPool::submit_short_as`]).
    fn pick_short_job(&self) -> Option<Work> {
        self.pick_job_where(|job| job.short)
    }

    /// [`PoolInner::pick_job`] among the jobs of light sessions: sessions
    /// at least [`START_CREDIT`] behind their tenant's session floor
    /// ([`PoolInner::pick`]).
    fn pick_light_job(&self) -> Option<Work> {
        if self.jobs_pending.load(Ordering::SeqCst) == 0 {
            return None;
        }
        self.pick_job_where(|job| {
            job.session.as_ref().is_some_and(|s| {
                let credited = job
                    .tenant
                    .session_floor
                    .load(Ordering::Relaxed)
                    .saturating_sub(START_CREDIT);
                s.vtime.load(Ordering::Relaxed) <= credited
            })
        })
    }

    /// [`PoolInner::pick_job`] among the jobs that pass `eligible`.
    fn pick_job_where(&self, eligible: impl Fn(&QueuedJob) -> bool) -> Option<Work> {
        let queued = self.jobs_pending.load(Ordering::SeqCst);
        let floor = self.tenant_floor.load(Ordering::Relaxed);
        let key = |job: &QueuedJob| {
            let t = &job.tenant;
            (
                t.vtime.load(Ordering::Relaxed).max(floor),
                Arc::as_ptr(t) as usize,
                session_key(
                    job.session.as_ref(),
                    t.session_floor.load(Ordering::Relaxed),
                ),
            )
        };
        // One turn of the queue finds the least key, a second takes the
        // first job of that tenant and session; both put every other job
        // back, so the queue keeps its order.
        let mut best: Option<((u64, usize, u64), usize)> = None;
        let mut looked = 0;
        while looked < queued {
            let job = match self.jobs.steal() {
                Steal::Success(job) => job,
                Steal::Retry => continue,
                Steal::Empty => break,
            };
            looked += 1;
            let job_key = key(&job);
            if eligible(&job) && best.is_none_or(|(b, _)| job_key < b) {
                best = Some((job_key, session_id(job.session.as_ref())));
            }
            self.jobs.push(job);
        }
        let ((_, tenant, session_at), session) = best?;
        let mut taken = None;
        for _ in 0..looked {
            let job = match self.jobs.steal() {
                Steal::Success(job) => job,
                Steal::Retry => continue,
                Steal::Empty => break,
            };
            if taken.is_none()
                && eligible(&job)
                && Arc::as_ptr(&job.tenant) as usize == tenant
                && session_id(job.session.as_ref()) == session
            {
                taken = Some(job);
            } else {
                self.jobs.push(job);
            }
        }
        let job = taken?;
        if self.first_in_line(&job.tenant) {
            self.jobs_pending.fetch_sub(1, Ordering::SeqCst);
            // A session below the floor goes on from it.
            if let Some(s) = &job.session {
                s.vtime.fetch_max(session_at, Ordering::Relaxed);
            }
            return Some(Work::Job(job.job));
        }
        self.jobs.push(job);
        None
    }

    /// A task found by walking the tree: the runnable tenant with the least
    /// virtual time, then its runnable query with the least virtual time.
    /// Allocates nothing: each level is a scan of the scope snapshot for
    /// the least key (virtual time clamped up to the level's floor, then
    /// position) above the keys already tried, and a second try happens
    /// only when another worker took the last task or slot first.
    fn pick_task(&self) -> Option<Work> {
        let scopes = self.scopes.load();
        let floor = self.tenant_floor.load(Ordering::Relaxed);
        let mut tried: Option<(u64, usize)> = None;
        for round in 0..scopes.len() {
            let mut best: Option<((u64, usize), &Arc<Tenant>)> = None;
            for scope in scopes.iter() {
                let tenant = &scope.tenant;
                let key = (
                    tenant.vtime.load(Ordering::Relaxed).max(floor),
                    Arc::as_ptr(tenant) as usize,
                );
                if tried.is_some_and(|t| key <= t) || best.is_some_and(|(b, _)| key >= b) {
                    continue;
                }
                if scope.runnable() {
                    best = Some((key, tenant));
                }
            }
            let (key, tenant) = best?;
            if round == 0 {
                self.tenant_floor.fetch_max(key.0, Ordering::Relaxed);
            }
            tried = Some(key);
            if let Some(work) = Self::pick_in_tenant(&scopes, tenant) {
                // A tenant below the floor (runnable again after a pause)
                // starts from it.
                tenant.vtime.fetch_max(key.0, Ordering::Relaxed);
                return Some(work);
            }
        }
        None
    }

    /// Work to run nested in `current`'s long task at a yield point
    /// (never of a query in `suspended`, the scopes whose tasks the thread
    /// runs or suspended)
    /// ([`QueryScope::yield_now`]): what a worker would pick before
    /// `current` were its task to end now. A short job first (a statement
    /// start, [`WorkerPool::submit_short_as`], first in line as for
    /// [`PoolInner::pick_job`]); else a queued task of another query: the
    /// least key of those whose tenant has less virtual time than
    /// `current`'s, or, in `current`'s tenant, whose session, then query,
    /// has less virtual time than `current`'s, and that may be nested
    /// ([`ScopeOptions::nestable`]). A scan of the scope snapshot, no lock.
    fn pick_before(&self, current: &QueryScope, suspended: &[usize]) -> Option<Work> {
        if self.jobs_pending.load(Ordering::SeqCst) > 0 {
            if let Some(job) = self.pick_short_job() {
                return Some(job);
            }
        }
        let scopes = self.scopes.load();
        let floor = self.tenant_floor.load(Ordering::Relaxed);
        let tenant_key = |t: &Arc<Tenant>| {
            (
                t.vtime.load(Ordering::Relaxed).max(floor),
                Arc::as_ptr(t) as usize,
            )
        };
        let mine_tenant = tenant_key(&current.tenant);
        let session_floor = current.tenant.session_floor.load(Ordering::Relaxed);
        let mine_query = (
            current.session_key(session_floor),
            current.vtime.load(Ordering::Relaxed),
        );
        type Key = ((u64, usize), (u64, u64, usize));
        let mut best: Option<(Key, &Arc<QueryScope>)> = None;
        for (at, scope) in scopes.iter().enumerate() {
            if !scope.nestable
                || suspended.contains(&(Arc::as_ptr(scope) as usize))
                || scope.pending.load(Ordering::SeqCst) == 0
            {
                continue;
            }
            let t = tenant_key(&scope.tenant);
            let q = (
                scope.session_key(scope.tenant.session_floor.load(Ordering::Relaxed)),
                scope
                    .vtime
                    .load(Ordering::Relaxed)
                    .max(scope.floor_in(scope.tenant.query_floor.load(Ordering::Relaxed))),
                at,
            );
            let before = if Arc::ptr_eq(&scope.tenant, &current.tenant) {
                (q.0, q.1) < mine_query
            } else {
                t < mine_tenant
            };
            if !before || best.is_some_and(|(b, _)| (t, q) >= b) {
                continue;
            }
            if scope.runnable() {
                best = Some(((t, q), scope));
            }
        }
        let ((_, q), scope) = best?;
        if !scope.try_reserve() {
            return None;
        }
        match scope.take() {
            Some(task) => {
                scope.vtime.fetch_max(q.1, Ordering::Relaxed);
                scope.raise_session(q.0);
                scope.charge(PICK_ADVANCE);
                Some(Work::Task(scope.clone(), task))
            }
            None => {
                scope.running.fetch_sub(1, Ordering::AcqRel);
                None
            }
        }
    }

    /// True if no other tenant with less virtual time than `tenant` has a
    /// runnable query: [`PoolInner::pick_task`] would look at `tenant` first.
    fn first_in_line(&self, tenant: &Arc<Tenant>) -> bool {
        let floor = self.tenant_floor.load(Ordering::Relaxed);
        let key = |t: &Arc<Tenant>| {
            (
                t.vtime.load(Ordering::Relaxed).max(floor),
                Arc::as_ptr(t) as usize,
            )
        };
        let mine = key(tenant);
        !self
            .scopes
            .load()
            .iter()
            .any(|s| !Arc::ptr_eq(&s.tenant, tenant) && key(&s.tenant) < mine && s.runnable())
    }

    /// A task of `tenant`'s runnable query whose session has the least
    /// virtual time ([`ClientSession`]), and within it with the least
    /// virtual time of its own — or of the query whose task this worker
    /// took last, while that query is within [`AFFINITY_SLACK`] of it. The
    /// tenant's query and session floors become the least of its runnable
    /// queries' and sessions' keys.
    fn pick_in_tenant(scopes: &[Arc<QueryScope>], tenant: &Arc<Tenant>) -> Option<Work> {
        let floor = tenant.query_floor.load(Ordering::Relaxed);
        let session_floor = tenant.session_floor.load(Ordering::Relaxed);
        type Key = (u64, u64, usize);
        let mut tried: Option<Key> = None;
        let last = LAST_PICKED.with(|l| l.get());
        for round in 0..scopes.len() {
            let mut best: Option<(Key, &Arc<QueryScope>)> = None;
            // The least query and session keys of the runnable queries.
            let mut least = (u64::MAX, u64::MAX);
            // The query this worker took a task of last, if runnable.
            let mut again: Option<(Key, &Arc<QueryScope>)> = None;
            for (at, scope) in scopes.iter().enumerate() {
                if !Arc::ptr_eq(&scope.tenant, tenant) {
                    continue;
                }
                let key = (
                    scope.session_key(session_floor),
                    scope
                        .vtime
                        .load(Ordering::Relaxed)
                        .max(scope.floor_in(floor)),
                    at,
                );
                if round == 0 {
                    if scope.runnable() {
                        if Arc::as_ptr(scope) as usize == last {
                            again = Some((key, scope));
                        }
                        least = (least.0.min(key.1), least.1.min(key.0));
                        if best.is_none_or(|(b, _)| key < b) {
                            best = Some((key, scope));
                        }
                    }
                    continue;
                }
                if tried.is_some_and(|t| key <= t) || best.is_some_and(|(b, _)| key >= b) {
                    continue;
                }
                if scope.runnable() {
                    best = Some((key, scope));
                }
            }
            let (key, scope) = best?;
            if round == 0 {
                tenant.query_floor.fetch_max(least.0, Ordering::Relaxed);
                tenant.session_floor.fetch_max(least.1, Ordering::Relaxed);
                if let Some((k, again)) = again {
                    let near = k.0 <= key.0.saturating_add(AFFINITY_SLACK)
                        && k.1 <= key.1.saturating_add(AFFINITY_SLACK);
                    if near && !Arc::ptr_eq(again, scope) {
                        if let Some(work) = Self::take_task(again, k) {
                            return Some(work);
                        }
                    }
                }
            }
            tried = Some(key);
            if let Some(work) = Self::take_task(scope, key) {
                return Some(work);
            }
        }
        None
    }

    /// `scope`'s next task, if it has one and may use one more worker,
    /// charged at its pick key `key` (session key, query key); the worker
    /// remembers the query ([`AFFINITY_SLACK`]).
    fn take_task(scope: &Arc<QueryScope>, key: (u64, u64, usize)) -> Option<Work> {
        if !scope.try_reserve() {
            return None;
        }
        let Some(task) = scope.take() else {
            scope.running.fetch_sub(1, Ordering::AcqRel);
            return None;
        };
        scope.vtime.fetch_max(key.1, Ordering::Relaxed);
        scope.raise_session(key.0);
        // A running task's time is charged when it ends; the advance puts
        // its query and tenant above the floor now, so that they lose ties
        // to those with nothing running (a query just started, a tenant
        // back from a pause) while the task runs.
        scope.charge(PICK_ADVANCE);
        LAST_PICKED.with(|l| l.set(Arc::as_ptr(scope) as usize));
        Some(Work::Task(scope.clone(), task))
    }

    /// Takes `scope` out of the list the workers pick from.
    fn unlist(&self, scope: &Arc<QueryScope>) {
        self.scopes.rcu(|scopes| {
            scopes
                .iter()
                .filter(|s| !Arc::ptr_eq(s, scope))
                .cloned()
                .collect::<Vec<_>>()
        });
    }

    /// True if some query has queued tasks (cheaper than [`PoolInner::pick`]).
    fn any_pending(&self) -> bool {
        self.jobs_pending.load(Ordering::SeqCst) > 0
            || self
                .scopes
                .load()
                .iter()
                .any(|s| s.pending.load(Ordering::SeqCst) > 0 && !s.is_held())
    }

    /// Threads awake that are not polling for work: those running tasks
    /// (and helping callers between their tasks).
    fn working(&self) -> usize {
        self.active
            .load(Ordering::SeqCst)
            .saturating_sub(self.spinning.load(Ordering::SeqCst))
    }

    /// Counts a waiting caller in as polling ([`QueryScope::poll`]) if the
    /// threads running tasks and the waiters polling leave a core free;
    /// true if it may poll. Many waiting callers must not all poll: they
    /// would take the cores from the workers running their tasks.
    fn start_waiter_poll(&self) -> bool {
        let mut polling = self.waiters_polling.load(Ordering::SeqCst);
        loop {
            if self.working() + polling >= self.threads {
                return false;
            }
            match self.waiters_polling.compare_exchange_weak(
                polling,
                polling + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return true,
                Err(now) => polling = now,
            }
        }
    }

    /// True if more threads are awake than there are workers (cores).
    fn oversubscribed(&self) -> bool {
        self.active.load(Ordering::SeqCst) > self.threads
    }

    /// Counts the calling thread as asleep; if work is queued, a worker may
    /// now be woken for it.
    fn fall_asleep(&self) {
        self.active.fetch_sub(1, Ordering::SeqCst);
        if self.any_pending() {
            self.wake_one();
        }
    }

    /// Polls for work for up to `idle_spin`; the task found, if any.
    fn spin_for_work(&self, tasks_first: bool) -> Option<Work> {
        if self.idle_spin.is_zero() || self.oversubscribed() {
            return None;
        }
        self.spinning.fetch_add(1, Ordering::SeqCst);
        let until = Instant::now() + self.idle_spin;
        let mut found = None;
        let mut rounds = 0u32;
        // Queued work this worker may not take (its query runs on as many
        // workers as it may) is looked at again only every 256 rounds: the
        // worker keeps polling for the next query, which then starts
        // without waiting for a sleeping worker to wake (~85 us here).
        let mut capped = false;
        while found.is_none() {
            if (!capped || rounds.is_multiple_of(256)) && self.any_pending() {
                found = self.pick(tasks_first);
                capped = found.is_none();
            }
            rounds = rounds.wrapping_add(1);
            if rounds.is_multiple_of(64) && (Instant::now() >= until || self.oversubscribed()) {
                break;
            }
            std::hint::spin_loop();
        }
        self.spinning.fetch_sub(1, Ordering::SeqCst);
        found
    }

    // Kept out of the thread's start closure: inlined there, its polling
    // loop compiled differently and a scan of a million nodes (SQ1) ran
    // 16% slower.
    #[inline(never)]
    fn worker_loop(self: Arc<PoolInner>, worker: usize) {
        WORKER.with(|w| w.set(Some(worker)));
        self.active.fetch_add(1, Ordering::SeqCst);
        // Only a worker that just ran a task polls before it sleeps: one
        // woken for nothing goes back to sleep at once.
        let mut worked = false;
        // Whether the last work was a job: then queries' tasks come first.
        let mut after_job = false;
        loop {
            if let Some(work) = self.pick(after_job) {
                after_job = work.is_job();
                work.run(worker);
                worked = true;
                continue;
            }
            if std::mem::take(&mut worked) {
                if let Some(work) = self.spin_for_work(after_job) {
                    after_job = work.is_job();
                    work.run(worker);
                    worked = true;
                    continue;
                }
            }
            // Counted as asleep before the last look for work, so a task
            // queued meanwhile is either seen here or wakes a worker.
            self.idle.fetch_add(1, Ordering::SeqCst);
            self.active.fetch_sub(1, Ordering::SeqCst);
            // Until signalled, the worker looks for work every 10 ms without
            // counting as awake: a worker polling for work stops when more
            // threads are awake than cores, and these periodic looks must
            // not chase it off.
            let found = loop {
                let seen = *self.sleep_lock.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(found) = self.pick(after_job) {
                    break Some(found);
                }
                let guard = self.sleep_lock.lock().unwrap_or_else(|p| p.into_inner());
                if *guard != seen {
                    break None;
                }
                let (guard, _) = self
                    .sleep_signal
                    .wait_timeout(guard, Duration::from_millis(10))
                    .unwrap_or_else(|p| p.into_inner());
                if *guard != seen {
                    break None;
                }
            };
            self.active.fetch_add(1, Ordering::SeqCst);
            self.idle.fetch_sub(1, Ordering::SeqCst);
            if let Some(work) = found {
                after_job = work.is_job();
                work.run(worker);
                worked = true;
            }
        }
    }
}

/// A job waiting for a worker ([`WorkerPool::submit_as`]).
struct QueuedJob {
    /// The tenant it is for.
    tenant: Arc<Tenant>,
    /// The client session it is for, if any.
    session: Option<Arc<ClientSession>>,
    job: Task,
    /// Submitted with [`WorkerPool::submit_short_as`]: may run nested.
    short: bool,
}

/// What a worker found to do.
enum Work {
    /// A job ([`WorkerPool::submit`]).
    Job(Task),
    /// A query's task, with a running slot reserved for it.
    Task(Arc<QueryScope>, Task),
}

impl Work {
    fn is_job(&self) -> bool {
        matches!(self, Work::Job(_))
    }

    fn run(self, worker: usize) {
        let trace = task_trace().map(|t| (t, Instant::now(), yielded_nanos()));
        let what = trace.map(|_| match &self {
            Work::Job(_) => "job".to_string(),
            Work::Task(scope, _) => format!(
                "task of query {:p} (tenant {}, weight {})",
                Arc::as_ptr(scope),
                scope.tenant.name(),
                scope.weight
            ),
        });
        match self {
            Work::Job(job) => job(&WorkerContext { worker }),
            Work::Task(scope, task) => {
                LOOP_TASK.with(|t| t.set(true));
                scope.run_charged(task, worker, PICK_ADVANCE);
                LOOP_TASK.with(|t| t.set(false));
            }
        }
        if let (Some((threshold, start, yielded)), Some(what)) = (trace, what) {
            let took = start.elapsed();
            let nested = Duration::from_nanos(yielded_nanos().wrapping_sub(yielded));
            if took.saturating_sub(nested) >= threshold {
                eprintln!(
                    "rhizome task trace: worker {worker} ran a {what} for {} us ({} us of it other queries' work nested at yield points)",
                    took.as_micros(),
                    nested.as_micros()
                );
            }
        }
    }
}

/// The threshold of the task trace: with `RHIZOME_TASK_TRACE_US=N` in the
/// environment, every job or task a worker runs for at least N µs of its
/// own (other queries' work nested at its yield points left out) is
/// reported on standard error, with its query: a diagnostic for tasks that
/// overrun the quantum (measurement 2 of the service benchmark).
fn task_trace() -> Option<Duration> {
    static TRACE: OnceLock<Option<Duration>> = OnceLock::new();
    *TRACE.get_or_init(|| parse_task_trace(std::env::var("RHIZOME_TASK_TRACE_US").ok().as_deref()))
}

/// `RHIZOME_TASK_TRACE_US`'s value as a threshold (none: unset or not a
/// number).
fn parse_task_trace(value: Option<&str>) -> Option<Duration> {
    value?.trim().parse().ok().map(Duration::from_micros)
}

/// Closes a scope when dropped ([`WorkerPool::close_on_drop`]).
pub struct CloseOnDrop<'a> {
    pool: &'a WorkerPool,
    scope: &'a Arc<QueryScope>,
}

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.pool.close_scope(self.scope);
    }
}

/// Who a job ([`WorkerPool::submit_with`]) is for, and how it may run.
#[derive(Debug, Clone, Default)]
pub struct JobOptions {
    /// The tenant (default: the pool's default tenant).
    pub tenant: Option<Arc<Tenant>>,
    /// The client session whose statement the job starts (default: none).
    pub session: Option<Arc<ClientSession>>,
    /// The job never blocks and may run nested at a yield point
    /// ([`WorkerPool::submit_short_as`]).
    pub short: bool,
}

/// The fixed pool of workers shared by all queries of the process.
#[derive(Clone)]
pub struct WorkerPool {
    inner: Arc<PoolInner>,
    /// The workers' kernel thread ids (0 until the thread has started),
    /// for [`WorkerPool::set_worker_nice`].
    worker_tids: Arc<[AtomicI32]>,
}

static GLOBAL: OnceLock<WorkerPool> = OnceLock::new();

impl WorkerPool {
    /// A new pool with `threads` workers (at least one) that poll for
    /// [`DEFAULT_SPIN`] before they sleep. Workers live as long as the process.
    pub fn new(threads: usize) -> WorkerPool {
        WorkerPool::with_spin(threads, DEFAULT_SPIN)
    }

    /// A new pool whose workers, and the threads waiting for its queries,
    /// poll for work for `spin` before they sleep (zero: never poll).
    pub fn with_spin(threads: usize, spin: Duration) -> WorkerPool {
        WorkerPool::with_yield_depth(threads, spin, DEFAULT_YIELD_DEPTH)
    }

    /// [`WorkerPool::with_spin`] whose tasks nest up to `yield_depth` deep
    /// at yield points ([`QueryScope::yield_now`]; 0: no yield points).
    pub fn with_yield_depth(threads: usize, spin: Duration, yield_depth: usize) -> WorkerPool {
        let threads = threads.max(1);
        let inner = Arc::new(PoolInner {
            scopes: ArcSwap::from_pointee(Vec::new()),
            open: AtomicUsize::new(0),
            default_tenant: Tenant::new(DEFAULT_TENANT, 1),
            tenant_floor: AtomicU64::new(0),
            jobs: Injector::new(),
            jobs_pending: AtomicUsize::new(0),
            threads,
            idle: AtomicUsize::new(0),
            spinning: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            idle_spin: spin,
            sleep_lock: Mutex::new(0),
            sleep_signal: Condvar::new(),
            waiters_polling: AtomicUsize::new(0),
            executing: AtomicUsize::new(0),
            peak_executing: AtomicUsize::new(0),
            nested_runs: AtomicU64::new(0),
            yield_depth,
        });
        let worker_tids: Arc<[AtomicI32]> = (0..threads).map(|_| AtomicI32::new(0)).collect();
        for worker in 0..threads {
            let inner = inner.clone();
            let tids = worker_tids.clone();
            std::thread::Builder::new()
                .name(format!("rhizome-worker-{worker}"))
                .spawn(move || {
                    let tid = rustix::thread::gettid().as_raw_nonzero().get();
                    tids[worker].store(tid, Ordering::SeqCst);
                    drop(tids);
                    inner.worker_loop(worker)
                })
                .expect("spawning a worker thread");
        }
        WorkerPool { inner, worker_tids }
    }

    /// The process-wide pool, sized by `RHIZOME_WORKERS` or the number of
    /// cores, polling for `RHIZOME_SPIN_US` microseconds or [`DEFAULT_SPIN`],
    /// nesting `RHIZOME_YIELD_DEPTH` or [`DEFAULT_YIELD_DEPTH`] deep at
    /// yield points.
    pub fn global() -> &'static WorkerPool {
        GLOBAL.get_or_init(|| {
            let threads = std::env::var("RHIZOME_WORKERS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let spin = std::env::var("RHIZOME_SPIN_US")
                .ok()
                .and_then(|v| v.parse().ok())
                .map_or(DEFAULT_SPIN, Duration::from_micros);
            let depth = std::env::var("RHIZOME_YIELD_DEPTH")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_YIELD_DEPTH);
            WorkerPool::with_yield_depth(threads, spin, depth)
        })
    }

    /// Runs `job` on one of the pool's workers (jobs and query tasks
    /// alternate when both wait): work that belongs to no query yet, such
    /// as a server's statement, which plans its query and starts it there
    /// ([`QueryScope::run_now`]) so that the thread that asked never waits.
    /// A job must not block: what it waits for, it hands on as a task or
    /// a continuation. The job is for the pool's default tenant
    /// ([`WorkerPool::submit_as`]).
    pub fn submit(&self, job: Task) {
        self.submit_as(None, job);
    }

    /// [`WorkerPool::submit`] for `tenant` (default: the pool's default
    /// tenant): the job waits while another tenant with less virtual time
    /// has runnable work, as that tenant's queries' tasks would.
    pub fn submit_as(&self, tenant: Option<Arc<Tenant>>, job: Task) {
        self.submit_job(tenant, job, false);
    }

    /// [`WorkerPool::submit_as`] for a *short* job: one that never blocks
    /// and starts its query's tasks with [`QueryScope::run_now`] (a read
    /// statement's start: planning, then its first task). A worker inside
    /// a long task may run such a job nested at a yield point
    /// ([`QueryScope::yield_now`]; `run_now` then queues the first task),
    /// so a statement starts within a quantum even while every worker is
    /// busy. A job that may wait (a write statement waits for its run)
    /// must use [`WorkerPool::submit_as`].
    pub fn submit_short_as(&self, tenant: Option<Arc<Tenant>>, job: Task) {
        self.submit_job(tenant, job, true);
    }

    /// [`WorkerPool::submit_as`] (or, if `options.short`,
    /// [`WorkerPool::submit_short_as`]) for a client session's statement:
    /// among its tenant's queued jobs, those of the session that has used
    /// the least CPU go first ([`ClientSession`]).
    pub fn submit_with(&self, options: JobOptions, job: Task) {
        let tenant = options
            .tenant
            .unwrap_or_else(|| self.inner.default_tenant.clone());
        self.inner.jobs.push(QueuedJob {
            tenant,
            session: options.session,
            job,
            short: options.short,
        });
        self.inner.jobs_pending.fetch_add(1, Ordering::SeqCst);
        self.inner.wake_one();
    }

    fn submit_job(&self, tenant: Option<Arc<Tenant>>, job: Task, short: bool) {
        self.submit_with(
            JobOptions {
                tenant,
                session: None,
                short,
            },
            job,
        );
    }

    /// Number of workers.
    pub fn threads(&self) -> usize {
        self.inner.threads
    }

    /// Threads running a query task at this moment: the workers busy with
    /// one, and callers helping their queries. Never more than
    /// [`WorkerPool::threads`] while only queries whose callers wait run.
    pub fn executing(&self) -> usize {
        self.inner.executing.load(Ordering::SeqCst)
    }

    /// The most threads that ran query tasks at once since the pool began
    /// or [`WorkerPool::reset_peak_executing`] (tests of the thread bound).
    pub fn peak_executing(&self) -> usize {
        self.inner.peak_executing.load(Ordering::SeqCst)
    }

    /// How deep tasks nest at yield points ([`QueryScope::yield_now`]).
    pub fn yield_depth(&self) -> usize {
        self.inner.yield_depth
    }

    /// Pieces of work (other queries' tasks, statements' jobs) run nested
    /// at yield points inside long tasks since the pool began
    /// ([`QueryScope::yield_now`]).
    pub fn nested_runs(&self) -> u64 {
        self.inner.nested_runs.load(Ordering::Relaxed)
    }

    /// Gives the pool's workers the scheduling priority `nice` (Linux nice
    /// values, 0 to 19; a larger one is a lower priority), so that threads
    /// at the default priority — a server's network threads, its clients on
    /// the same machine — take a core from a busy worker at once when they
    /// wake. A server's workers run at nice 5 by default (`worker_nice`):
    /// under measurement 2 of `rhizome bench service` the foreground
    /// query's replies otherwise waited for a core behind the background
    /// queries' workers. An unprivileged process can raise its nice value
    /// but not lower it again; an error names the worker it failed for.
    pub fn set_worker_nice(&self, nice: i32) -> std::result::Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(5);
        for (worker, tid) in self.worker_tids.iter().enumerate() {
            let raw = loop {
                match tid.load(Ordering::SeqCst) {
                    0 if Instant::now() < deadline => std::thread::yield_now(),
                    0 => return Err(format!("worker {worker} did not start")),
                    raw => break raw,
                }
            };
            let pid = rustix::process::Pid::from_raw(raw)
                .ok_or_else(|| format!("worker {worker} has no thread id"))?;
            rustix::process::setpriority_process(Some(pid), nice)
                .map_err(|e| format!("cannot set worker {worker} to nice {nice}: {e}"))?;
        }
        Ok(())
    }

    /// Starts counting [`WorkerPool::peak_executing`] afresh.
    pub fn reset_peak_executing(&self) {
        self.inner
            .peak_executing
            .store(self.executing(), Ordering::SeqCst);
    }

    /// Queries registered now ([`WorkerPool::open_scope`] to
    /// [`WorkerPool::close_scope`]).
    pub fn open_queries(&self) -> usize {
        self.inner.open.load(Ordering::SeqCst)
    }

    /// The tenant of queries that name none ([`DEFAULT_TENANT`], share 1).
    pub fn default_tenant(&self) -> &Arc<Tenant> {
        &self.inner.default_tenant
    }

    /// Registers a new query; its virtual time starts at its tenant's floor
    /// (the least of the tenant's runnable queries' when a worker last
    /// picked) so it neither starves them nor is starved.
    /// A calling thread that helps its query counts as awake until it
    /// closes the scope.
    pub fn open_scope(&self, options: ScopeOptions) -> Arc<QueryScope> {
        if options.caller_helps {
            self.inner.active.fetch_add(1, Ordering::SeqCst);
        }
        let tenant = options
            .tenant
            .clone()
            .unwrap_or_else(|| self.inner.default_tenant.clone());
        let weight = options.weight.max(1);
        let start_vtime = credited_floor(tenant.query_floor.load(Ordering::Relaxed), weight);
        self.inner.open.fetch_add(1, Ordering::SeqCst);
        QueryScope::new(&self.inner, &options, tenant, weight, start_vtime)
    }

    /// Closes `scope` when the returned guard is dropped, so a query that
    /// unwinds still leaves the scheduler.
    pub fn close_on_drop<'a>(&'a self, scope: &'a Arc<QueryScope>) -> CloseOnDrop<'a> {
        CloseOnDrop { pool: self, scope }
    }

    /// Removes a finished query from the scheduler (again: no effect).
    pub fn close_scope(&self, scope: &Arc<QueryScope>) {
        scope.opener_leaves();
        let was = scope.listed.swap(CLOSED, Ordering::SeqCst);
        if was == CLOSED {
            return;
        }
        self.inner.open.fetch_sub(1, Ordering::SeqCst);
        if was == LISTED {
            self.inner.unlist(scope);
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "../scheduler_yield_tests.rs"]
mod yield_tests;
