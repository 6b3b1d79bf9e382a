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

/// A node of the scope tree below a query: cancelling it cancels every token
/// created from it.
#[derive(Debug, Default)]
pub struct CancelToken {
    cancelled: AtomicBool,
    parent: Option<Arc<CancelToken>>,
}

impl CancelToken {
    /// A root token.
    pub fn root() -> Arc<CancelToken> {
        Arc::new(CancelToken::default())
    }

    /// A child: cancelled when it or any ancestor is.
    pub fn child(self: &Arc<CancelToken>) -> Arc<CancelToken> {
        Arc::new(CancelToken {
            cancelled: AtomicBool::new(false),
            parent: Some(self.clone()),
        })
    }

    /// Cancels this token and all its descendants.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }

    /// True if this token or an ancestor was cancelled.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        let mut token = self;
        loop {
            if token.cancelled.load(Ordering::Acquire) {
                return true;
            }
            match &token.parent {
                Some(p) => token = p,
                None => return false,
            }
        }
    }
}

/// How long a task whose work can stop between any two chunks (a scan's
/// range of nodes) runs before it hands the rest back to its query's queue
/// ([`crate::operator::TaskCtx::quantum_spent`]), so that the worker
/// chooses again by virtual time: the bound on one quantum of a long scan.
pub const QUANTUM: Duration = Duration::from_millis(1);

/// A tenant of the pool: the queries of one user or group, which together
/// get CPU in proportion to the tenant's share against other tenants with
/// runnable work, however many queries each runs. Create one per user or
/// group ([`Tenant::new`]) and pass it to every query of theirs
/// ([`ScopeOptions::tenant`]); queries without one belong to the pool's
/// default tenant.
#[derive(Debug)]
pub struct Tenant {
    name: String,
    share: u64,
    /// CPU time consumed (ns) divided by the share.
    vtime: AtomicU64,
    /// The least virtual time of the tenant's runnable queries when a worker
    /// last picked among them (never decreases): a query of the tenant
    /// starts, or becomes runnable again, at no less than this.
    query_floor: AtomicU64,
    /// The least virtual time of the sessions of the tenant's runnable
    /// queries when a worker last picked among them (never decreases): a
    /// session's work is ordered at no less than this less
    /// [`START_CREDIT`] ([`ClientSession`]).
    session_floor: AtomicU64,
    busy_nanos: AtomicU64,
}

impl Tenant {
    /// A tenant named `name` (shown by `SHOW TRANSACTIONS`) with `share`
    /// (at least 1; relative to other tenants' shares).
    pub fn new(name: impl Into<String>, share: u64) -> Arc<Tenant> {
        Arc::new(Tenant {
            name: name.into(),
            share: share.max(1),
            vtime: AtomicU64::new(0),
            query_floor: AtomicU64::new(0),
            session_floor: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
        })
    }

    /// The tenant's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tenant's share.
    pub fn share(&self) -> u64 {
        self.share
    }

    /// Total worker time spent in the tenant's queries' tasks.
    pub fn busy_time(&self) -> Duration {
        Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed))
    }
}

/// A client's session (a server connection): the statements one client
/// runs, one after another. Within a tenant, sessions share the CPU by
/// virtual time (the CPU time of their queries) as tenants share the
/// process: a worker takes the queued job (a statement's start) of the
/// tenant's session that has used the least, and among the tenant's
/// runnable queries first one of that session, then by the queries' own
/// virtual times ([`ScopeOptions::session`], [`JobOptions::session`]). So
/// a client whose statements are short is served before other clients of
/// the same user that run heavy queries back to back, instead of queueing
/// behind their statements in arrival order. A session is ordered at no
/// less than its tenant's session floor (the least virtual time of the
/// sessions with runnable queries when a worker last picked) less
/// [`START_CREDIT`], so an idle session banks no more than that. Work with
/// no session counts as a session at that credited floor.
#[derive(Debug, Default)]
pub struct ClientSession {
    /// CPU time (ns) of the session's queries, raised to the credited
    /// floor when a worker picks work of the session below it.
    vtime: AtomicU64,
    busy_nanos: AtomicU64,
}

impl ClientSession {
    /// A new session that has used no CPU.
    pub fn new() -> Arc<ClientSession> {
        Arc::new(ClientSession::default())
    }

    /// Total worker time spent in the session's queries' tasks.
    pub fn busy_time(&self) -> Duration {
        Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed))
    }
}

/// Where work of `session` (none: a session just begun) stands among its
/// tenant's sessions whose floor is `session_floor`: its virtual time,
/// raised to the floor less [`START_CREDIT`].
fn session_key(session: Option<&Arc<ClientSession>>, session_floor: u64) -> u64 {
    let credited = session_floor.saturating_sub(START_CREDIT);
    session.map_or(credited, |s| s.vtime.load(Ordering::Relaxed).max(credited))
}

/// A session's identity in a job queue (0: none).
fn session_id(session: Option<&Arc<ClientSession>>) -> usize {
    session.map_or(0, |s| Arc::as_ptr(s) as usize)
}

/// Worker time (ns) charged to a query and its tenant when a worker picks
/// one of its tasks, ahead of the task's own time (charged when it ends,
/// less this advance). Without it a query or tenant whose long tasks run
/// keeps the floor's virtual time until they end and ties with one that
/// has nothing running, which lost the tie half the time (by position):
/// a foreground query waited behind background queries' long tasks.
const PICK_ADVANCE: u64 = 1_000;

/// Worker time (ns) a query may run ahead of its tenant's floor: a query
/// starts, or becomes runnable again, at no less than the floor less this
/// much of its own CPU time (in its weight's virtual time). A short
/// statement (a point read of a fraction of a millisecond) thus runs its
/// tasks before the long queries of its tenant instead of taking turns with
/// each of them — behind W running queries it waited about W/2 quanta per
/// task — while a query longer than the credit falls back to its fair
/// share, and idling banks no more than this.
const START_CREDIT: u64 = 4_000_000;

/// `query_floor` less [`START_CREDIT`] in the virtual time of a query of
/// `weight`: where such a query starts, and the least key it takes.
fn credited_floor(query_floor: u64, weight: u64) -> u64 {
    query_floor.saturating_sub(START_CREDIT.saturating_mul(100) / weight.max(1))
}

/// The name of the tenant of queries that name none ([`ScopeOptions::tenant`]).
pub const DEFAULT_TENANT: &str = "default";

/// A query's place in the scheduler.
pub struct QueryScope {
    queue: Injector<Task>,
    pending: AtomicUsize,
    running: AtomicUsize,
    max_parallel: usize,
    weight: u64,
    vtime: AtomicU64,
    tenant: Arc<Tenant>,
    /// The client session whose statement this is, if any.
    session: Option<Arc<ClientSession>>,
    /// Root of the query's cancellation tree.
    pub cancel: Arc<CancelToken>,
    deadline: Option<Instant>,
    error: Mutex<Option<Error>>,
    busy_nanos: AtomicU64,
    /// Threads waiting for this query that watch its queue ([`QueryScope::watch`]).
    watchers: AtomicUsize,
    /// The thread that opened the scope counts as awake until it closes it.
    opener_awake: AtomicBool,
    /// The thread that waits for the query runs its tasks too.
    caller_helps: bool,
    /// Its tasks yield and are nested at yield points ([`ScopeOptions::nestable`]).
    nestable: bool,
    /// No worker takes the query's tasks ([`QueryScope::hold`]).
    held: AtomicBool,
    /// When a hold ends with the query failing, and that error.
    hold_limit: Mutex<Option<(Instant, Error)>>,
    /// Whether the workers see the query ([`QueryScope::register`]):
    /// [`UNLISTED`], [`LISTING`] or [`LISTED`]; [`CLOSED`] once closed.
    listed: AtomicU8,
    /// The scope itself, for the pool's list ([`QueryScope::register`]).
    this: Weak<QueryScope>,
    pool: Arc<PoolInner>,
}

/// A scope not (yet) in the pool's list: it has never queued a task.
const UNLISTED: u8 = 0;
/// A scope being put in the pool's list by the thread queuing its first task.
const LISTING: u8 = 1;
/// A scope in the pool's list.
const LISTED: u8 = 2;
/// A closed scope (out of the list, never listed again).
const CLOSED: u8 = 3;

impl QueryScope {
    /// Puts the query in the list the workers pick from, before its first
    /// task is queued. A statement that never queues a task (a one-row
    /// write, a point read run on the calling thread) never enters the
    /// list: the list is an `ArcSwap` whose every update pays the debts of
    /// all the threads that read it, which cost 16 concurrent single-row
    /// writers about a fifth of their CPU when each statement entered and
    /// left it. A thread that finds another one listing the scope waits
    /// for it (a few instructions), so no task is queued before the list
    /// shows its query.
    fn register(&self) {
        loop {
            match self.listed.compare_exchange(
                UNLISTED,
                LISTING,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => break,
                Err(LISTING) => std::hint::spin_loop(),
                Err(_) => return,
            }
        }
        let Some(me) = self.this.upgrade() else {
            return;
        };
        self.pool.scopes.rcu(|scopes| {
            let mut next = (**scopes).clone();
            next.push(me.clone());
            next
        });
        if self
            .listed
            .compare_exchange(LISTING, LISTED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // Closed meanwhile (a task queued as its query ended): out again.
            self.pool.unlist(&me);
        }
    }

    /// Puts `task` in the query's queue, the query in the workers' list first.
    fn enqueue(&self, task: Task) {
        if self.listed.load(Ordering::Acquire) != LISTED {
            self.register();
        }
        self.queue.push(task);
        self.pending.fetch_add(1, Ordering::SeqCst);
    }

    /// Queues a task of this query.
    pub fn spawn(&self, task: Task) {
        self.enqueue(task);
        // A worker is woken only if the query may use one more now, it is
        // not held, and no thread waiting for the query watches its queue
        // (that one takes the task). A thread whose task ends looks for the
        // next one itself.
        if self.watchers.load(Ordering::SeqCst) == 0
            && self.running() < self.max_parallel
            && !self.is_held()
        {
            self.pool.wake_one();
        }
    }

    /// Queues the successor of the task this thread runs, which ends right
    /// after (an ordered pipeline's task that handed its work back,
    /// `crate::pipeline`): in a task a pool worker picked in its loop (not
    /// nested at a yield point) no other worker is woken, since this one
    /// looks for work as soon as the task ends (and takes the successor
    /// unless other work goes first). Waking one for
    /// every hand-back sent the pipeline from worker to worker each
    /// quantum, a wake-up and a cold cache each time (CQ1 at `$n` = 10⁴
    /// through the server took twice as long). Elsewhere (a task nested at
    /// a yield point, one run by a job or by a thread waiting for its
    /// query), as [`QueryScope::spawn`].
    pub fn spawn_successor(&self, task: Task) {
        let top_level_worker =
            LOOP_TASK.with(|t| t.get()) && SUSPENDED.with(|s| s.borrow().is_empty());
        if !top_level_worker {
            return self.spawn(task);
        }
        self.enqueue(task);
    }

    /// Holds the query: no worker takes its queued tasks, and its running
    /// tasks hand the rest of their work back to the queue at their next
    /// hand-back point, until [`QueryScope::resume`]. Used by a consumer of
    /// the query's output that has no room for more (a client that does not
    /// fetch), so that no worker waits for it. If the hold lasts past
    /// `until`, the query fails with `stalled` (the next worker that looks
    /// for work resumes it, and its tasks end). A cancelled query, or one
    /// past its deadline, is resumed the same way.
    pub fn hold(&self, until: Instant, stalled: Error) {
        *self.hold_limit.lock().unwrap_or_else(|p| p.into_inner()) = Some((until, stalled));
        self.held.store(true, Ordering::SeqCst);
    }

    /// Ends a hold: the query's queued tasks go to the workers again.
    pub fn resume(&self) {
        if !self.held.swap(false, Ordering::SeqCst) {
            return;
        }
        let wanted = self
            .pending
            .load(Ordering::SeqCst)
            .min(self.max_parallel.saturating_sub(self.running()));
        for _ in 0..wanted {
            self.pool.wake_one();
        }
    }

    /// True while the query is held ([`QueryScope::hold`]): a running task
    /// hands the rest of its work back to the queue and returns.
    #[inline]
    pub fn is_held(&self) -> bool {
        self.held.load(Ordering::Relaxed)
    }

    /// True if the waiting thread runs the query's tasks too
    /// ([`ScopeOptions::caller_helps`]).
    pub fn caller_helps(&self) -> bool {
        self.caller_helps
    }

    /// For a held query (seen by a worker looking for work): ends the hold
    /// if the query was cancelled or passed its deadline, or fails it and
    /// ends the hold if the hold lasted too long. True if it is still held.
    fn still_held(&self) -> bool {
        if !self.is_held() {
            return false;
        }
        if !self.is_cancelled() {
            let limit = self.hold_limit.lock().unwrap_or_else(|p| p.into_inner());
            match &*limit {
                Some((until, _)) if Instant::now() < *until => return true,
                Some((_, stalled)) => {
                    let stalled = stalled.clone();
                    drop(limit);
                    self.fail(stalled);
                }
                None => return true,
            }
        }
        self.resume();
        false
    }

    /// When the query's timeout ends, if it has one.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// True if the query was cancelled or failed; checks the deadline too.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        if self.cancel.is_cancelled() {
            return true;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.fail(Error::new(
                ErrorKind::QueryAborted,
                "the query exceeded its timeout and was stopped",
            ));
            return true;
        }
        false
    }

    /// Records the first error and cancels the query.
    pub fn fail(&self, error: Error) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(error);
        }
        self.cancel.cancel();
    }

    /// The first error recorded, if any.
    pub fn take_error(&self) -> Option<Error> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// The most workers this query may use at once.
    pub fn max_parallel(&self) -> usize {
        self.max_parallel
    }

    /// True if splitting work now would let another worker help: some worker
    /// is idle and this query may use more workers than it does.
    #[inline]
    pub fn wants_split(&self) -> bool {
        (self.pool.idle.load(Ordering::Relaxed) > 0
            || self.pool.spinning.load(Ordering::Relaxed) > 0
            || self.watchers.load(Ordering::Relaxed) > 0)
            && self.running.load(Ordering::Relaxed) + self.pending.load(Ordering::Relaxed)
                < self.max_parallel
    }

    /// Total worker time spent in this query's tasks.
    pub fn busy_time(&self) -> Duration {
        Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed))
    }

    /// The tenant the query belongs to.
    pub fn tenant(&self) -> &Arc<Tenant> {
        &self.tenant
    }

    /// True if a worker may take one of the query's tasks now: some are
    /// queued, it runs on fewer workers than it may, and it is not held.
    #[inline]
    fn runnable(&self) -> bool {
        self.pending.load(Ordering::SeqCst) > 0
            && self.running.load(Ordering::Relaxed) < self.max_parallel
            && !self.still_held()
    }

    /// Runs `task` on the calling thread (the thread that waits for the
    /// query) if the query may use one more worker now, else queues it.
    /// Starting a query's first task this way spares it a worker's wake-up.
    /// A query whose caller only waits ([`ScopeOptions::caller_helps`]
    /// false) queues it.
    pub fn run_here(&self, task: Task) {
        if self.caller_helps && !self.is_held() && self.try_reserve() {
            self.run_reserved(task, self.pool.threads);
        } else {
            self.spawn(task);
        }
    }

    /// Runs `task` at once on the calling thread if it is one of the pool's
    /// workers between tasks (a job started by [`WorkerPool::submit`]), the
    /// query may use one more worker now, no other job waits, and no other
    /// tenant with less virtual time has runnable work (a worker looking
    /// for work would pick this query's tenant); else queues it. A
    /// statement started by a job thus runs its first task without a
    /// hand-over, and a query of one task (one morsel) ends inside the
    /// job, while jobs stay short when others wait (a statement's job
    /// waits behind other statements' planning, not their first tasks,
    /// which may be long) and a tenant whose clients keep submitting
    /// statements gets no more than its share through the jobs.
    pub fn run_now(&self, task: Task) {
        match free_worker() {
            Some(worker)
                if !self.is_held()
                    && self.pool.jobs_pending.load(Ordering::SeqCst) == 0
                    && self.pool.first_in_line(&self.tenant)
                    && self.try_reserve() =>
            {
                self.run_reserved(task, worker)
            }
            _ => self.spawn(task),
        }
    }

    /// Runs this query's queued tasks on the calling thread for as long as
    /// there are some and the query may use one more worker; called by the
    /// thread that would otherwise wait for them. Does nothing for a query
    /// whose caller only waits, or while the query is held.
    pub fn help(&self) {
        if !self.caller_helps {
            return;
        }
        while self.pending.load(Ordering::SeqCst) > 0 && !self.is_held() && self.try_reserve() {
            match self.take() {
                Some(task) => self.run_reserved(task, self.pool.threads),
                None => {
                    self.running.fetch_sub(1, Ordering::AcqRel);
                    return;
                }
            }
        }
    }

    /// Watches this query's queue for up to the pool's spin time, running its tasks here
    /// (within the cap on workers) as they are queued, until `finished`
    /// holds. Returns whether it did; if not, the caller blocks
    /// ([`QueryScope::fall_asleep`]). While it
    /// watches, splits of running tasks count on this thread and queued
    /// tasks wake no worker. It does not watch while more threads are awake
    /// than there are workers (cores).
    pub fn watch(&self, finished: impl Fn() -> bool) -> bool {
        if self.pool.idle_spin.is_zero() || !self.caller_helps {
            self.help();
            return finished();
        }
        self.watchers.fetch_add(1, Ordering::SeqCst);
        let until = Instant::now() + self.pool.idle_spin;
        let mut rounds = 0u32;
        let done = loop {
            if finished() {
                break true;
            }
            if self.pending.load(Ordering::SeqCst) > 0
                && self.running() < self.max_parallel
                && !self.is_held()
            {
                self.help();
                continue;
            }
            rounds = rounds.wrapping_add(1);
            if rounds.is_multiple_of(64) && (Instant::now() >= until || self.pool.oversubscribed())
            {
                break false;
            }
            std::hint::spin_loop();
        };
        self.watchers.fetch_sub(1, Ordering::SeqCst);
        // Tasks queued while this thread still counted as watching woke nobody.
        self.help();
        done
    }

    /// For a caller that only waits ([`ScopeOptions::caller_helps`] false):
    /// polls `finished` for up to [`WAITER_SPIN`] (never longer than the
    /// pool's spin time) before the caller blocks, so the end of a short
    /// query is seen without a wake-up. It runs no task, and polls only
    /// while the threads running tasks and the waiters polling leave a core
    /// free (workers polling for work do not count: they would give their
    /// core up to the query's task, and the waiter's poll is short). It
    /// does not count as awake, so workers polling for the query's next
    /// task keep polling. Returns whether `finished` held.
    pub fn poll(&self, finished: impl Fn() -> bool) -> bool {
        let spin = self.pool.idle_spin.min(WAITER_SPIN);
        if spin.is_zero() || !self.pool.start_waiter_poll() {
            return finished();
        }
        let until = Instant::now() + spin;
        let mut rounds = 0u32;
        let done = loop {
            if finished() {
                break true;
            }
            rounds = rounds.wrapping_add(1);
            if rounds.is_multiple_of(64)
                && (Instant::now() >= until
                    || self.pool.working() + self.pool.waiters_polling.load(Ordering::SeqCst)
                        > self.pool.threads)
            {
                break finished();
            }
            std::hint::spin_loop();
        };
        self.pool.waiters_polling.fetch_sub(1, Ordering::SeqCst);
        done
    }

    /// Counts a thread of this query that is about to block (the caller
    /// waiting for its tasks) as asleep, so a worker may be woken in its
    /// place. Whoever wakes it calls [`QueryScope::woken`] first.
    pub fn fall_asleep(&self) {
        self.pool.fall_asleep();
    }

    /// Counts a thread put to sleep by [`QueryScope::fall_asleep`] awake
    /// again; called by the thread that wakes it, before it does, so threads
    /// polling for work see at once that they must leave it a core.
    pub fn woken(&self) {
        self.pool.active.fetch_add(1, Ordering::SeqCst);
    }

    /// The thread that opened the scope no longer counts as awake.
    fn opener_leaves(&self) {
        if self.opener_awake.swap(false, Ordering::SeqCst) {
            self.pool.fall_asleep();
        }
    }

    fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// One queued task, if any.
    fn take(&self) -> Option<Task> {
        loop {
            match self.queue.steal() {
                Steal::Success(task) => {
                    self.pending.fetch_sub(1, Ordering::SeqCst);
                    return Some(task);
                }
                Steal::Retry => continue,
                Steal::Empty => return None,
            }
        }
    }

    /// Runs a task for which a running slot was reserved, as `worker`, and
    /// charges its time to the query.
    fn run_reserved(&self, task: Task, worker: usize) {
        self.run_charged(task, worker, 0);
    }

    /// [`QueryScope::run_reserved`] for a task whose pick already charged
    /// `advance` ns ([`PICK_ADVANCE`]) to the query and its tenant.
    fn run_charged(&self, task: Task, worker: usize, advance: u64) {
        let executing = self.pool.executing.fetch_add(1, Ordering::SeqCst) + 1;
        self.pool
            .peak_executing
            .fetch_max(executing, Ordering::Relaxed);
        let may_yield =
            WORKER.with(|w| w.get()) == Some(worker) && FRAME.with(|f| f.get()).is_none();
        self.run_framed(task, worker, advance, may_yield.then_some(worker), 0);
        self.pool.executing.fetch_sub(1, Ordering::SeqCst);
        self.running.fetch_sub(1, Ordering::AcqRel);
    }

    /// Runs `task` as `worker` inside a frame of its own, and charges its
    /// time (what a yield point has not charged yet) to the query.
    fn run_framed(
        &self,
        task: Task,
        worker: usize,
        advance: u64,
        yield_as: Option<usize>,
        depth: usize,
    ) {
        let outer_in_task = IN_TASK.with(|t| t.replace(true));
        let frame = TaskFrame {
            since: Instant::now(),
            advance,
            yield_as,
            depth,
        };
        let outer_frame = FRAME.with(|f| f.replace(Some(frame)));
        task(&WorkerContext { worker });
        let frame = FRAME.with(|f| f.replace(outer_frame)).unwrap_or(frame);
        IN_TASK.with(|t| t.set(outer_in_task));
        self.account(frame.since.elapsed().as_nanos() as u64, frame.advance);
    }

    /// Charges `nanos` of a task's worker time to the query and its tenant
    /// (less the pick's `advance`, charged already).
    fn account(&self, nanos: u64, advance: u64) {
        self.busy_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.tenant.busy_nanos.fetch_add(nanos, Ordering::Relaxed);
        if let Some(session) = &self.session {
            session.busy_nanos.fetch_add(nanos, Ordering::Relaxed);
        }
        self.charge(nanos.saturating_sub(advance));
    }

    /// A yield point, for code deep inside a task that cannot hand its
    /// work back to the queue (an `EXISTS`, `OPTIONAL MATCH` or `CALL`
    /// instance running inline for one row, an ordered pipeline's task).
    /// Once the calling task has run a [`QUANTUM`] since it started or
    /// last looked, its time so far is charged to its query, and if the
    /// scheduler holds work the worker would pick before this query were
    /// the task to end now — a queued statement's job, or a queued task of
    /// another query whose tenant, or (same tenant) whose query, has less
    /// virtual time — the worker runs that one piece of work here, nested,
    /// then returns to the task. So a short query waits for at most a
    /// quantum, not for a long instance to end.
    ///
    /// Only a task a pool worker runs yields, and nesting is at most
    /// [`WorkerPool::yield_depth`] deep (a task nested that deep has no
    /// yield points); a nested job queues its query's first task rather
    /// than running it (it would be one more level). Work of a query whose
    /// task this thread runs or suspended is never nested (its per-worker
    /// state is in use). The caller
    /// must hold no lock another query could take (query-private state
    /// only). Returns the worker time spent in nested work (ns), also
    /// added to [`nested_nanos`].
    pub fn yield_now(&self) -> u64 {
        if !self.nestable {
            return 0;
        }
        let Some(frame) = FRAME.with(|f| f.get()) else {
            return 0;
        };
        let Some(worker) = frame.yield_as else {
            return 0;
        };
        let now = Instant::now();
        let span = now.saturating_duration_since(frame.since);
        if span < QUANTUM {
            return 0;
        }
        self.account(span.as_nanos() as u64, frame.advance);
        let mut frame = TaskFrame {
            since: now,
            advance: 0,
            ..frame
        };
        FRAME.with(|f| f.set(Some(frame)));
        if frame.depth >= self.pool.yield_depth {
            return 0;
        }
        let me = self as *const QueryScope as usize;
        let work = SUSPENDED.with(|s| {
            let mut suspended = s.borrow_mut();
            suspended.push(me);
            let work = self.pool.pick_before(self, &suspended);
            if work.is_none() {
                suspended.pop();
            }
            work
        });
        let Some(work) = work else {
            return 0;
        };
        let before = nested_nanos();
        let yielded_before = yielded_nanos();
        self.pool.nested_runs.fetch_add(1, Ordering::Relaxed);
        match work {
            Work::Job(job) => {
                FRAME.with(|f| {
                    f.set(Some(TaskFrame {
                        yield_as: None,
                        ..frame
                    }))
                });
                job(&WorkerContext { worker })
            }
            Work::Task(scope, task) => {
                let depth = frame.depth + 1;
                scope.run_framed(task, worker, PICK_ADVANCE, Some(worker), depth);
                scope.running.fetch_sub(1, Ordering::AcqRel);
            }
        }
        SUSPENDED.with(|s| s.borrow_mut().pop());
        let after = Instant::now();
        let nested = after.saturating_duration_since(now).as_nanos() as u64;
        // Set, not added to: deeper nested work is inside this span.
        NESTED_NANOS.with(|n| n.set(before.wrapping_add(nested)));
        YIELDED_NANOS.with(|n| n.set(yielded_before.wrapping_add(nested)));
        frame.since = after;
        FRAME.with(|f| f.set(Some(frame)));
        nested
    }

    /// Adds `nanos` of worker time to the query's and its tenant's virtual
    /// times.
    /// The least key this query takes among its tenant's: the tenant's
    /// query floor less [`START_CREDIT`] in this query's virtual time.
    fn floor_in(&self, query_floor: u64) -> u64 {
        credited_floor(query_floor, self.weight)
    }

    /// Where this query's session stands among its tenant's
    /// ([`session_key`]).
    fn session_key(&self, session_floor: u64) -> u64 {
        session_key(self.session.as_ref(), session_floor)
    }

    /// Raises the query's session to `key` (a worker picked its work at
    /// that key, the credited floor when it was below it).
    fn raise_session(&self, key: u64) {
        if let Some(session) = &self.session {
            session.vtime.fetch_max(key, Ordering::Relaxed);
        }
    }

    fn charge(&self, nanos: u64) {
        self.vtime.fetch_add(
            nanos.saturating_mul(100) / self.weight.max(1),
            Ordering::Relaxed,
        );
        if let Some(session) = &self.session {
            session.vtime.fetch_add(nanos, Ordering::Relaxed);
        }
        self.tenant
            .vtime
            .fetch_add(nanos / self.tenant.share, Ordering::Relaxed);
    }

    fn try_reserve(&self) -> bool {
        let mut running = self.running.load(Ordering::Relaxed);
        loop {
            if running >= self.max_parallel {
                return false;
            }
            match self.running.compare_exchange_weak(
                running,
                running + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => running = now,
            }
        }
    }
}

/// Options of a new query scope.
#[derive(Debug, Clone)]
pub struct ScopeOptions {
    /// Most workers at once (at least 1).
    pub max_parallel: usize,
    /// Share relative to the other queries of its tenant (default 100).
    pub weight: u64,
    /// The tenant the query belongs to (default: the pool's default tenant,
    /// [`DEFAULT_TENANT`]).
    pub tenant: Option<Arc<Tenant>>,
    /// The client session whose statement the query is (default: none,
    /// which counts as a session just begun; [`ClientSession`]).
    pub session: Option<Arc<ClientSession>>,
    /// When the query must be stopped.
    pub deadline: Option<Instant>,
    /// An outside token (API cancel, Ctrl-C) whose cancellation stops the query.
    pub parent: Option<Arc<CancelToken>>,
    /// The thread that opens the scope runs the query's first task and
    /// helps with its queued ones while it waits (default; an embedded
    /// caller). False: it only waits and every task runs on the pool's
    /// workers (a server, where a thread per running statement must not
    /// compute).
    pub caller_helps: bool,
    /// The query's tasks may yield, and be run nested, at yield points
    /// ([`QueryScope::yield_now`]; default). False for a query over a
    /// graph source, whose tasks wait for its backend and may hold its
    /// connections across a push.
    pub nestable: bool,
}

impl Default for ScopeOptions {
    fn default() -> ScopeOptions {
        ScopeOptions {
            max_parallel: usize::MAX,
            weight: 100,
            tenant: None,
            session: None,
            deadline: None,
            parent: None,
            caller_helps: true,
            nestable: true,
        }
    }
}

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
    /// virtual time of its own. The tenant's query and session floors
    /// become the least of its runnable queries' and sessions' keys.
    fn pick_in_tenant(scopes: &[Arc<QueryScope>], tenant: &Arc<Tenant>) -> Option<Work> {
        let floor = tenant.query_floor.load(Ordering::Relaxed);
        let session_floor = tenant.session_floor.load(Ordering::Relaxed);
        type Key = (u64, u64, usize);
        let mut tried: Option<Key> = None;
        for round in 0..scopes.len() {
            let mut best: Option<(Key, &Arc<QueryScope>)> = None;
            // The least query and session keys of the runnable queries.
            let mut least = (u64::MAX, u64::MAX);
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
            }
            tried = Some(key);
            if !scope.try_reserve() {
                continue;
            }
            if let Some(task) = scope.take() {
                scope.vtime.fetch_max(key.1, Ordering::Relaxed);
                scope.raise_session(key.0);
                // A running task's time is charged when it ends; the
                // advance puts its query and tenant above the floor now, so
                // that they lose ties to those with nothing running (a
                // query just started, a tenant back from a pause) while
                // the task runs.
                scope.charge(PICK_ADVANCE);
                return Some(Work::Task(scope.clone(), task));
            }
            scope.running.fetch_sub(1, Ordering::AcqRel);
        }
        None
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
                scope.tenant.name,
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
        Arc::new_cyclic(|this| QueryScope {
            queue: Injector::new(),
            pending: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            max_parallel: options.max_parallel.clamp(1, self.inner.threads),
            weight,
            vtime: AtomicU64::new(start_vtime),
            tenant,
            session: options.session.clone(),
            cancel: match &options.parent {
                Some(parent) => parent.child(),
                None => CancelToken::root(),
            },
            deadline: options.deadline,
            error: Mutex::new(None),
            busy_nanos: AtomicU64::new(0),
            watchers: AtomicUsize::new(0),
            opener_awake: AtomicBool::new(options.caller_helps),
            caller_helps: options.caller_helps,
            nestable: options.nestable,
            held: AtomicBool::new(false),
            hold_limit: Mutex::new(None),
            listed: AtomicU8::new(UNLISTED),
            this: this.clone(),
            pool: self.inner.clone(),
        })
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
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_query_enters_the_workers_list_only_when_it_queues_a_task() {
        let pool = WorkerPool::new(2);
        let quiet = pool.open_scope(ScopeOptions::default());
        assert_eq!(pool.open_queries(), 1);
        assert!(
            pool.inner.scopes.load().is_empty(),
            "listed before any task"
        );
        pool.close_scope(&quiet);
        let busy = pool.open_scope(ScopeOptions::default());
        let (tx, rx) = mpsc::channel();
        busy.spawn(Box::new(move |_| tx.send(()).unwrap()));
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(pool.inner.scopes.load().len(), 1);
        pool.close_scope(&busy);
        pool.close_scope(&busy);
        assert_eq!(pool.open_queries(), 0);
        assert!(pool.inner.scopes.load().is_empty());
        // A task queued after its query closed lists nothing again.
        busy.spawn(Box::new(|_| {}));
        assert!(pool.inner.scopes.load().is_empty());
    }

    #[test]
    fn set_worker_nice_lowers_every_worker_and_nothing_else() {
        let pool = WorkerPool::new(2);
        let me = rustix::process::getpriority_process(None).unwrap();
        let nice = (me + 3).min(19);
        pool.set_worker_nice(nice).unwrap();
        for tid in pool.worker_tids.iter() {
            let pid = rustix::process::Pid::from_raw(tid.load(Ordering::SeqCst)).unwrap();
            assert_eq!(
                rustix::process::getpriority_process(Some(pid)).unwrap(),
                nice
            );
        }
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), me);
        let scope = pool.open_scope(ScopeOptions::default());
        let (tx, rx) = mpsc::channel();
        scope.spawn(Box::new(move |_| tx.send(()).unwrap()));
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        pool.close_scope(&scope);
    }

    #[test]
    fn the_task_trace_threshold_is_read_in_microseconds() {
        assert_eq!(parse_task_trace(None), None);
        assert_eq!(parse_task_trace(Some("x")), None);
        assert_eq!(
            parse_task_trace(Some(" 1500 ")),
            Some(Duration::from_micros(1500))
        );
    }

    #[test]
    fn tasks_run_and_tokens_cascade() {
        let pool = WorkerPool::new(2);
        let scope = pool.open_scope(ScopeOptions::default());
        let (tx, rx) = mpsc::channel();
        for i in 0..100 {
            let tx = tx.clone();
            scope.spawn(Box::new(move |_| tx.send(i).unwrap()));
        }
        let mut got: Vec<i32> = received(&rx, 100);
        got.sort();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
        pool.close_scope(&scope);

        let root = CancelToken::root();
        let child = root.child();
        let sibling = root.child();
        child.cancel();
        assert!(child.is_cancelled() && !sibling.is_cancelled() && !root.is_cancelled());
        root.cancel();
        assert!(sibling.is_cancelled());
    }

    #[test]
    fn max_parallel_is_respected() {
        let pool = WorkerPool::new(2);
        let scope = pool.open_scope(ScopeOptions {
            max_parallel: 1,
            ..ScopeOptions::default()
        });
        let active = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        for _ in 0..20 {
            let (active, peak, tx) = (active.clone(), peak.clone(), tx.clone());
            scope.spawn(Box::new(move |_| {
                let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(1));
                active.fetch_sub(1, Ordering::SeqCst);
                tx.send(()).unwrap();
            }));
        }
        for _ in 0..20 {
            rx.recv_timeout(Duration::from_secs(5)).unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 1);
        pool.close_scope(&scope);
    }

    #[test]
    fn the_waiting_thread_runs_tasks_within_the_cap() {
        let pool = WorkerPool::new(1);
        let scope = pool.open_scope(ScopeOptions {
            max_parallel: 1,
            ..ScopeOptions::default()
        });
        // Nothing runs: the task runs here, as worker `threads`.
        let (tx, rx) = mpsc::channel();
        let here = std::thread::current().id();
        scope.run_here(Box::new(move |w| {
            tx.send((w.worker, std::thread::current().id())).unwrap()
        }));
        assert_eq!(rx.try_recv().unwrap(), (1, here));
        // The only slot is taken by a task on the worker: queued, not run here.
        let (release, released) = mpsc::channel::<()>();
        let (started, has_started) = mpsc::channel();
        scope.spawn(Box::new(move |_| {
            started.send(()).unwrap();
            released.recv().unwrap();
        }));
        has_started.recv_timeout(Duration::from_secs(5)).unwrap();
        let (tx, rx) = mpsc::channel();
        scope.run_here(Box::new(move |w| tx.send(w.worker).unwrap()));
        scope.help();
        assert!(rx.try_recv().is_err());
        release.send(()).unwrap();
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        pool.close_scope(&scope);
    }

    /// Waits up to 5 s for `done`.
    fn soon(done: impl Fn() -> bool) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while !done() {
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// The next `n` messages of `rx`, each within 5 s.
    fn received<T>(rx: &mpsc::Receiver<T>, n: usize) -> Vec<T> {
        (0..n)
            .map(|_| rx.recv_timeout(Duration::from_secs(5)).unwrap())
            .collect()
    }

    fn waiting_caller() -> ScopeOptions {
        ScopeOptions {
            caller_helps: false,
            ..ScopeOptions::default()
        }
    }

    /// A chain of `n` tasks, each queuing the next with
    /// [`QueryScope::spawn_successor`] after about 200 µs of work; sends
    /// the last one's worker when it ends.
    fn successor_chain(scope: Arc<QueryScope>, n: usize, done: mpsc::Sender<usize>) -> Task {
        Box::new(move |w| {
            let start = Instant::now();
            while start.elapsed() < Duration::from_micros(200) {
                std::hint::spin_loop();
            }
            if n == 0 {
                done.send(w.worker).unwrap();
            } else {
                let next = successor_chain(scope.clone(), n - 1, done);
                scope.spawn_successor(next);
            }
        })
    }

    #[test]
    fn a_successor_task_wakes_no_worker() {
        // An ordered pipeline's task that hands its work back queues its
        // successor and ends: the worker takes it next, and no sleeping
        // worker is woken for it (each wake-up cost a core's spin on a
        // loaded machine and moved the pipeline to a cold cache). With a
        // plain spawn the chain wakes the idle worker dozens of times.
        let mut wakes = Vec::new();
        for _ in 0..3 {
            let pool = WorkerPool::with_spin(2, Duration::ZERO);
            let scope = pool.open_scope(waiting_caller());
            // Both workers asleep first.
            std::thread::sleep(Duration::from_millis(50));
            let before = *pool.inner.sleep_lock.lock().unwrap();
            let (tx, rx) = mpsc::channel();
            scope.spawn(successor_chain(scope.clone(), 100, tx));
            received(&rx, 1);
            let after = *pool.inner.sleep_lock.lock().unwrap();
            pool.close_scope(&scope);
            // The first spawn wakes one worker; sleeping workers' own
            // looks every 10 ms change nothing here.
            wakes.push(after - before);
            if after - before <= 3 {
                return;
            }
        }
        panic!("successors woke workers: {wakes:?}");
    }

    #[test]
    fn a_caller_that_only_waits_runs_no_task() {
        let pool = WorkerPool::new(1);
        let scope = pool.open_scope(waiting_caller());
        let (tx, rx) = mpsc::channel();
        let here = std::thread::current().id();
        let sent = tx.clone();
        scope.run_here(Box::new(move |w| {
            sent.send((w.worker, std::thread::current().id())).unwrap()
        }));
        scope.spawn(Box::new(move |w| {
            tx.send((w.worker, std::thread::current().id())).unwrap()
        }));
        scope.help();
        assert!(!scope.watch(|| false));
        for _ in 0..2 {
            let (worker, thread) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
            assert_eq!(worker, 0);
            assert_ne!(thread, here);
        }
        pool.close_scope(&scope);
        // It never counted as awake.
        assert_eq!(awake_once_workers_sleep(&pool), 0);
    }

    #[test]
    fn a_held_query_keeps_its_tasks_queued_until_it_resumes() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let scope = pool.open_scope(waiting_caller());
        let far = Instant::now() + Duration::from_secs(3600);
        scope.hold(far, Error::new(ErrorKind::QueryAborted, "stalled"));
        assert!(scope.is_held());
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            let ran = ran.clone();
            scope.spawn(Box::new(move |_| {
                ran.fetch_add(1, Ordering::SeqCst);
            }));
        }
        // The worker's periodic looks (every 10 ms) pass it by.
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert_eq!(pool.executing(), 0);
        scope.resume();
        assert!(soon(|| ran.load(Ordering::SeqCst) == 3));
        assert!(scope.take_error().is_none());
        pool.close_scope(&scope);
    }

    #[test]
    fn a_held_query_that_is_cancelled_or_stalls_is_resumed_by_a_worker() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        for stall in [false, true] {
            let scope = pool.open_scope(waiting_caller());
            let until = match stall {
                true => Instant::now() + Duration::from_millis(30),
                false => Instant::now() + Duration::from_secs(3600),
            };
            scope.hold(until, Error::new(ErrorKind::QueryAborted, "stalled"));
            let (tx, rx) = mpsc::channel();
            let inner = scope.clone();
            scope.spawn(Box::new(move |_| tx.send(inner.is_cancelled()).unwrap()));
            if !stall {
                scope.cancel.cancel();
            }
            // The task runs (and sees the query stopped) without a resume.
            assert!(rx.recv_timeout(Duration::from_secs(5)).unwrap());
            assert!(!scope.is_held());
            let error = scope.take_error();
            assert_eq!(error.is_some(), stall, "{error:?}");
            pool.close_scope(&scope);
        }
    }

    #[test]
    fn peak_executing_counts_threads_in_tasks() {
        let pool = WorkerPool::new(2);
        pool.reset_peak_executing();
        let scope = pool.open_scope(ScopeOptions::default());
        let (tx, rx) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let released = Arc::new(Mutex::new(released));
        for _ in 0..2 {
            let (tx, released) = (tx.clone(), released.clone());
            scope.spawn(Box::new(move |_| {
                tx.send(()).unwrap();
                let _ = released.lock().unwrap().recv();
            }));
        }
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        rx.recv_timeout(Duration::from_secs(5)).unwrap_or(());
        assert!(pool.executing() >= 1);
        release.send(()).unwrap();
        release.send(()).unwrap();
        assert!(soon(|| pool.executing() == 0));
        assert!((1..=2).contains(&pool.peak_executing()));
        pool.close_scope(&scope);
    }

    #[test]
    fn a_job_runs_its_query_s_first_task_itself_and_a_task_queues() {
        let pool = WorkerPool::with_spin(2, Duration::ZERO);
        assert_eq!(free_worker(), None, "the test thread is no worker");
        let scope = pool.open_scope(waiting_caller());
        let (tx, rx) = mpsc::channel();
        let inner = scope.clone();
        pool.submit(Box::new(move |w| {
            let job = (std::thread::current().id(), free_worker());
            assert_eq!(job.1, Some(w.worker));
            let tx2 = tx.clone();
            let nested = inner.clone();
            // Run at once, on this thread: nothing else of the query runs.
            inner.run_now(Box::new(move |_| {
                let here = std::thread::current().id();
                // Inside a task the thread is not free: a task queues.
                assert_eq!(free_worker(), None);
                let tx3 = tx2.clone();
                nested.run_now(Box::new(move |_| {
                    tx3.send(("nested", std::thread::current().id())).unwrap()
                }));
                tx2.send(("first", here)).unwrap();
            }));
            tx.send(("job", job.0)).unwrap();
        }));
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(rx.recv_timeout(Duration::from_secs(5)).unwrap());
        }
        // The first task ran inside the job (before the job went on), on
        // the job's thread; the nested one was queued for a worker.
        let at = |what| seen.iter().position(|(w, _)| *w == what).unwrap();
        assert!(at("first") < at("job"), "{seen:?}");
        assert_eq!(seen[at("first")].1, seen[at("job")].1);
        assert_ne!(seen[at("nested")].1, std::thread::current().id());
        pool.close_scope(&scope);
    }

    /// A query whose long task runs is charged a little at once, so a
    /// query just started (at the same virtual time) goes first on the
    /// other worker instead of losing the tie by position.
    #[test]
    fn a_new_query_goes_before_one_whose_task_runs() {
        let pool = WorkerPool::with_spin(2, Duration::ZERO);
        let x = pool.open_scope(waiting_caller());
        let (tx, rx) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let sent = tx.clone();
        x.spawn(Box::new(move |_| {
            sent.send("x long").unwrap();
            released.recv().unwrap();
        }));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok("x long"));
        // The other worker runs a job while X's and Y's tasks are queued.
        let (queued, has_queued) = mpsc::channel::<()>();
        let (in_job, job_started) = mpsc::channel::<()>();
        pool.submit(Box::new(move |_| {
            in_job.send(()).unwrap();
            has_queued.recv().unwrap();
        }));
        job_started.recv_timeout(Duration::from_secs(5)).unwrap();
        let y = pool.open_scope(waiting_caller());
        let sent = tx.clone();
        x.spawn(Box::new(move |_| sent.send("x").unwrap()));
        let sent = tx.clone();
        y.spawn(Box::new(move |_| sent.send("y").unwrap()));
        queued.send(()).unwrap();
        let first = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        release.send(()).unwrap();
        let second = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!([first, second], ["y", "x"]);
        pool.close_scope(&x);
        pool.close_scope(&y);
    }

    /// Queued jobs go by their tenant's virtual time, not their order: a
    /// tenant behind in CPU whose statement comes after a flood of another
    /// tenant's goes first.
    #[test]
    fn jobs_go_by_their_tenant_s_virtual_time() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let (a, b) = (Tenant::new("a", 1), Tenant::new("b", 1));
        let scope_a = pool.open_scope(ScopeOptions {
            tenant: Some(a.clone()),
            ..waiting_caller()
        });
        let (tx, rx) = mpsc::channel();
        let sent = tx.clone();
        let (release, released) = mpsc::channel::<()>();
        scope_a.spawn(Box::new(move |_| {
            std::thread::sleep(Duration::from_millis(5));
            sent.send("a busy").unwrap();
            released.recv().unwrap();
        }));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok("a busy"));
        for name in ["a1", "a2"] {
            let sent = tx.clone();
            pool.submit_as(Some(a.clone()), Box::new(move |_| sent.send(name).unwrap()));
        }
        let sent = tx.clone();
        pool.submit_as(Some(b.clone()), Box::new(move |_| sent.send("b").unwrap()));
        release.send(()).unwrap();
        let seen: Vec<_> = received(&rx, 3);
        assert_eq!(seen, ["b", "a1", "a2"]);
        pool.close_scope(&scope_a);
    }

    /// A job runs its query's first task itself only while no other job
    /// waits: the waiting statement must not wait for that task too.
    #[test]
    fn a_job_queues_its_first_task_while_another_job_waits() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let scope = pool.open_scope(waiting_caller());
        let (tx, rx) = mpsc::channel();
        let (inner, pool2) = (scope.clone(), pool.clone());
        pool.submit(Box::new(move |_| {
            let sent = tx.clone();
            pool2.submit(Box::new(move |_| sent.send("second job").unwrap()));
            let sent = tx.clone();
            inner.run_now(Box::new(move |_| sent.send("task").unwrap()));
            tx.send("first job").unwrap();
        }));
        let seen: Vec<_> = received(&rx, 3);
        // Tasks come first after a job, so the queued task runs next.
        assert_eq!(seen, ["first job", "task", "second job"]);
        pool.close_scope(&scope);
    }

    /// A job starting a query of a tenant that has used more than another
    /// tenant with queued work queues the query's first task instead of
    /// running it: tenant A's clients resubmitting statements must not get
    /// A more than its share through the jobs.
    #[test]
    fn a_job_queues_its_first_task_behind_a_tenant_with_less_time() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let (a, b) = (Tenant::new("a", 1), Tenant::new("b", 1));
        let scope_a = pool.open_scope(ScopeOptions {
            tenant: Some(a.clone()),
            ..waiting_caller()
        });
        // A has used 5 ms; B none.
        let (tx, rx) = mpsc::channel();
        let sent = tx.clone();
        scope_a.spawn(Box::new(move |_| {
            std::thread::sleep(Duration::from_millis(5));
            sent.send("warm").unwrap();
        }));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok("warm"));
        let scope_b = pool.open_scope(ScopeOptions {
            tenant: Some(b.clone()),
            ..waiting_caller()
        });
        let (inner_a, inner_b) = (scope_a.clone(), scope_b.clone());
        pool.submit(Box::new(move |_| {
            // B's task is queued while this job runs on the only worker.
            let to_b = tx.clone();
            inner_b.spawn(Box::new(move |_| to_b.send("b").unwrap()));
            let to_a = tx.clone();
            inner_a.run_now(Box::new(move |_| to_a.send("a").unwrap()));
            tx.send("job").unwrap();
        }));
        let seen: Vec<_> = received(&rx, 3);
        assert_eq!(seen, ["job", "b", "a"]);
        pool.close_scope(&scope_a);
        pool.close_scope(&scope_b);
    }

    /// A job of a tenant that has used more than another tenant with work
    /// queued waits behind that work; a job of a tenant first in line runs.
    #[test]
    fn a_job_waits_behind_a_tenant_with_less_time() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let (a, b) = (Tenant::new("a", 1), Tenant::new("b", 1));
        let scope_a = pool.open_scope(ScopeOptions {
            tenant: Some(a.clone()),
            ..waiting_caller()
        });
        let scope_b = pool.open_scope(ScopeOptions {
            tenant: Some(b.clone()),
            ..waiting_caller()
        });
        let (tx, rx) = mpsc::channel();
        let sent = tx.clone();
        scope_a.spawn(Box::new(move |_| {
            std::thread::sleep(Duration::from_millis(60));
            sent.send("warm").unwrap();
        }));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok("warm"));
        // A has used 60 ms. The only worker is busy with B's first task
        // (B's ~20 ms) while A's job and B's second task are queued.
        let (release, released) = mpsc::channel::<()>();
        let sent = tx.clone();
        scope_b.spawn(Box::new(move |_| {
            released.recv().unwrap();
            sent.send("b1").unwrap();
        }));
        std::thread::sleep(Duration::from_millis(20));
        let sent = tx.clone();
        pool.submit_as(
            Some(a.clone()),
            Box::new(move |_| sent.send("job a").unwrap()),
        );
        let sent = tx.clone();
        scope_b.spawn(Box::new(move |_| sent.send("b2").unwrap()));
        release.send(()).unwrap();
        let seen: Vec<_> = received(&rx, 3);
        assert_eq!(seen, ["b1", "b2", "job a"]);
        pool.close_scope(&scope_a);
        pool.close_scope(&scope_b);
    }

    /// Sessions of one tenant that have each used `tasks` × `busy` of
    /// worker time (a query of theirs ran `tasks` tasks that long), one
    /// after another on `pool`.
    fn used_sessions(
        pool: &WorkerPool,
        count: usize,
        tasks: usize,
        busy: Duration,
    ) -> Vec<Arc<ClientSession>> {
        (0..count)
            .map(|_| {
                let session = ClientSession::new();
                let scope = pool.open_scope(ScopeOptions {
                    session: Some(session.clone()),
                    ..waiting_caller()
                });
                let (tx, rx) = mpsc::channel();
                for _ in 0..tasks {
                    let sent = tx.clone();
                    scope.spawn(Box::new(move |_| {
                        std::thread::sleep(busy);
                        sent.send(()).unwrap();
                    }));
                }
                for _ in 0..tasks {
                    rx.recv_timeout(Duration::from_secs(5)).unwrap();
                }
                assert!(soon(|| scope.running() == 0));
                pool.close_scope(&scope);
                assert!(session.busy_time() >= busy * tasks as u32);
                session
            })
            .collect()
    }

    /// Blocks the only worker of `pool` with a job until the returned
    /// sender is used (or dropped).
    fn block_the_worker(pool: &WorkerPool) -> mpsc::Sender<()> {
        let (release, released) = mpsc::channel::<()>();
        let (started, has_started) = mpsc::channel::<()>();
        pool.submit(Box::new(move |_| {
            started.send(()).unwrap();
            let _ = released.recv();
        }));
        has_started.recv_timeout(Duration::from_secs(5)).unwrap();
        release
    }

    /// Four sessions of a tenant that have used CPU (clients running heavy
    /// queries back to back) have statements' jobs queued; a light
    /// session's job, queued last, is taken first. Taken in order (first
    /// in, first out), the light session's statement waited behind all
    /// four.
    #[test]
    fn a_light_session_s_job_goes_before_heavy_sessions_jobs() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let heavy = used_sessions(&pool, 4, 1, Duration::from_millis(6));
        let light = ClientSession::new();
        let release = block_the_worker(&pool);
        let (tx, rx) = mpsc::channel();
        let sessions = heavy
            .iter()
            .map(|h| ("heavy", h))
            .chain([("light", &light)]);
        for (i, (name, session)) in sessions.enumerate() {
            let sent = tx.clone();
            pool.submit_with(
                JobOptions {
                    session: Some(session.clone()),
                    short: true,
                    ..JobOptions::default()
                },
                Box::new(move |_| sent.send((name, i)).unwrap()),
            );
        }
        release.send(()).unwrap();
        let seen: Vec<_> = received(&rx, 5);
        // The heavy sessions follow by the CPU each used (about the same).
        assert_eq!(seen[0], ("light", 4), "{seen:?}");
        assert!(seen[1..].iter().all(|(name, _)| *name == "heavy"));
    }

    /// After a job a worker looks at the queries' tasks first, but a light
    /// session's job (one at least the credit behind its tenant's session
    /// floor) goes before a busier session's task even then: otherwise
    /// the light client's statement waited for one more task.
    #[test]
    fn a_light_session_s_job_goes_before_tasks_after_a_job() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let heavy = used_sessions(&pool, 1, 1, Duration::from_millis(6)).remove(0);
        let heavy_scope = pool.open_scope(ScopeOptions {
            session: Some(heavy),
            ..waiting_caller()
        });
        let light = ClientSession::new();
        let (tx, rx) = mpsc::channel();
        let (inner, pool2) = (heavy_scope.clone(), pool.clone());
        pool.submit(Box::new(move |_| {
            let sent = tx.clone();
            inner.spawn(Box::new(move |_| sent.send("heavy task").unwrap()));
            let sent = tx.clone();
            pool2.submit_with(
                JobOptions {
                    session: Some(light),
                    short: true,
                    ..JobOptions::default()
                },
                Box::new(move |_| sent.send("light job").unwrap()),
            );
            tx.send("job").unwrap();
        }));
        let seen: Vec<_> = received(&rx, 3);
        assert_eq!(seen, ["job", "light job", "heavy task"]);
        pool.close_scope(&heavy_scope);
    }

    /// Queries just started by four sessions that have used CPU and by a
    /// light session, in that order, each with a task queued: the light
    /// session's task runs first. By the queries alone (every one just
    /// started, with the same start credit) they tie and go in order.
    #[test]
    fn a_light_session_s_task_goes_before_heavy_sessions_tasks() {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let heavy = used_sessions(&pool, 4, 1, Duration::from_millis(6));
        let light = ClientSession::new();
        let release = block_the_worker(&pool);
        let (tx, rx) = mpsc::channel();
        let sessions = heavy
            .iter()
            .map(|h| ("heavy", h))
            .chain([("light", &light)]);
        let scopes: Vec<_> = sessions
            .enumerate()
            .map(|(i, (name, session))| {
                let scope = pool.open_scope(ScopeOptions {
                    session: Some(session.clone()),
                    ..waiting_caller()
                });
                let sent = tx.clone();
                scope.spawn(Box::new(move |_| sent.send((name, i)).unwrap()));
                scope
            })
            .collect();
        release.send(()).unwrap();
        let seen: Vec<_> = received(&rx, 5);
        assert_eq!(seen[0], ("light", 4), "{seen:?}");
        for scope in &scopes {
            pool.close_scope(scope);
        }
    }

    /// A session that idled while another worked banks no more than
    /// [`START_CREDIT`]: after session A's query has run 20 tasks of 5 ms
    /// while B idled, B's work goes first only until B has used about the
    /// credit (and A's last task), then they take turns. A task's time is
    /// its wall time, so a loaded machine that stretches A's last task
    /// lets B run more first: the scenario is tried up to three times.
    #[test]
    fn an_idle_session_banks_no_more_than_the_credit() {
        let mut tries = Vec::new();
        for _ in 0..3 {
            let b_first = idle_session_runs_first();
            // Without the floor B runs all 40 of its 1 ms tasks first (it
            // is 100 ms behind); with it, about 9.
            if b_first <= 20 {
                return;
            }
            tries.push(b_first);
        }
        panic!("the idle session ran {tries:?} tasks first");
    }

    /// How many of its 40 tasks of 1 ms session B runs before session A's
    /// first, after A has used 100 ms while B idled.
    fn idle_session_runs_first() -> usize {
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let a = used_sessions(&pool, 1, 20, Duration::from_millis(5)).remove(0);
        let b = ClientSession::new();
        let release = block_the_worker(&pool);
        let (tx, rx) = mpsc::channel();
        let mut scopes = Vec::new();
        for (name, session) in [("a", &a), ("b", &b)] {
            let scope = pool.open_scope(ScopeOptions {
                session: Some(session.clone()),
                ..waiting_caller()
            });
            for _ in 0..40 {
                let sent = tx.clone();
                scope.spawn(Box::new(move |_| {
                    spin(1_000);
                    sent.send(name).unwrap();
                }));
            }
            scopes.push(scope);
        }
        release.send(()).unwrap();
        let seen: Vec<_> = received(&rx, 80);
        for scope in &scopes {
            pool.close_scope(scope);
        }
        seen.iter().take_while(|&&n| n == "b").count()
    }

    /// Clients that submit a new statement as soon as theirs ends keep the
    /// job queue full; a query's queued task must still run.
    #[test]
    fn a_stream_of_jobs_does_not_starve_a_queued_task() {
        let pool = Arc::new(WorkerPool::with_spin(2, Duration::ZERO));
        let stop = Arc::new(AtomicBool::new(false));
        fn resubmit(pool: &Arc<WorkerPool>, stop: &Arc<AtomicBool>) {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            let (next_pool, next_stop) = (pool.clone(), stop.clone());
            pool.submit(Box::new(move |_| {
                std::thread::sleep(Duration::from_micros(200));
                resubmit(&next_pool, &next_stop);
            }));
        }
        for _ in 0..4 {
            resubmit(&pool, &stop);
        }
        let scope = pool.open_scope(waiting_caller());
        let (tx, rx) = mpsc::channel();
        scope.spawn(Box::new(move |_| tx.send(()).unwrap()));
        let ran = rx.recv_timeout(Duration::from_secs(5));
        stop.store(true, Ordering::SeqCst);
        assert!(ran.is_ok(), "the task waited behind jobs for 5 s");
        pool.close_scope(&scope);
    }

    /// Keeps the thread busy for `micros` microseconds.
    fn spin(micros: u64) {
        let until = Instant::now() + Duration::from_micros(micros);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }

    /// A task that spins for 200 us and queues itself again, until `stop`.
    fn busy_task(scope: Arc<QueryScope>, stop: Arc<AtomicBool>) -> Task {
        counted_task(scope, stop, Arc::new(AtomicUsize::new(0)))
    }

    /// A query of `tenant` keeping `tasks` busy tasks queued or running
    /// until its stop flag is set ([`stop_queries`]).
    fn busy_query(
        pool: &WorkerPool,
        tenant: &Arc<Tenant>,
        tasks: usize,
    ) -> (Arc<QueryScope>, Arc<AtomicBool>) {
        let scope = pool.open_scope(ScopeOptions {
            tenant: Some(tenant.clone()),
            ..waiting_caller()
        });
        let stop = Arc::new(AtomicBool::new(false));
        for _ in 0..tasks {
            scope.spawn(busy_task(scope.clone(), stop.clone()));
        }
        (scope, stop)
    }

    /// Stops the queries, waits for their tasks to drain and closes them.
    fn stop_queries(pool: &WorkerPool, queries: &[(Arc<QueryScope>, Arc<AtomicBool>)]) {
        for (_, stop) in queries {
            stop.store(true, Ordering::SeqCst);
        }
        for (scope, _) in queries {
            assert!(soon(|| scope.pending.load(Ordering::SeqCst) == 0
                && scope.running.load(Ordering::SeqCst) == 0));
            pool.close_scope(scope);
        }
    }

    /// Runs a fairness scenario (which returns the share it measured) alone
    /// among these tests, up to three times, until the share is in `want`;
    /// panics with every share seen if it never is. The shares are of the
    /// time the scheduler charged, so a loaded machine mostly cancels out,
    /// but a worker preempted for tens of milliseconds inside one task can
    /// still throw a single window off; a scheduler that is unfair misses in
    /// every try.
    fn fair(what: &str, want: std::ops::RangeInclusive<f64>, scenario: impl Fn() -> f64) {
        static ALONE: Mutex<()> = Mutex::new(());
        let _alone = ALONE.lock().unwrap_or_else(|p| p.into_inner());
        let mut seen = Vec::new();
        for _ in 0..3 {
            let share = scenario();
            if want.contains(&share) {
                return;
            }
            seen.push(format!("{share:.2}"));
        }
        panic!("{what} got shares {seen:?}, want {want:?}");
    }

    /// The share of worker time `of` gets beside `other` over `window`:
    /// what the scheduler charged each (time inside their tasks), so a
    /// loaded machine that slows every thread does not change it.
    fn share_over(
        window: Duration,
        of: impl Fn() -> Duration,
        other: impl Fn() -> Duration,
    ) -> f64 {
        let (of0, other0) = (of(), other());
        std::thread::sleep(window);
        let got = (of() - of0).as_secs_f64();
        let rest = (other() - other0).as_secs_f64();
        assert!(got + rest > 0.0, "nothing ran in {window:?}");
        got / (got + rest)
    }

    #[test]
    fn a_tenant_with_one_query_gets_half_against_one_with_32() {
        let pool = WorkerPool::new(2);
        fair("tenant b (1 query against 32)", 0.4..=0.6, || {
            let (a, b) = (Tenant::new("a", 1), Tenant::new("b", 1));
            let mut queries: Vec<_> = (0..32).map(|_| busy_query(&pool, &a, 2)).collect();
            queries.push(busy_query(&pool, &b, 4));
            std::thread::sleep(Duration::from_millis(30));
            let share = share_over(
                Duration::from_millis(300),
                || b.busy_time(),
                || a.busy_time(),
            );
            stop_queries(&pool, &queries);
            share
        });
    }

    #[test]
    fn tenants_get_time_in_proportion_to_their_shares() {
        let pool = WorkerPool::new(2);
        fair("the tenant of share 2 (against 1)", 0.58..=0.75, || {
            let (a, b) = (Tenant::new("a", 2), Tenant::new("b", 1));
            let queries = vec![busy_query(&pool, &a, 4), busy_query(&pool, &b, 4)];
            std::thread::sleep(Duration::from_millis(30));
            let share = share_over(
                Duration::from_millis(300),
                || a.busy_time(),
                || b.busy_time(),
            );
            stop_queries(&pool, &queries);
            share
        });
    }

    #[test]
    fn a_query_s_time_does_not_grow_with_its_queued_tasks() {
        let pool = WorkerPool::new(2);
        fair("the query of 2 tasks (against 64)", 0.4..=0.6, || {
            let tenant = Tenant::new("t", 1);
            let many = busy_query(&pool, &tenant, 64);
            let few = busy_query(&pool, &tenant, 2);
            std::thread::sleep(Duration::from_millis(30));
            let share = share_over(
                Duration::from_millis(300),
                || few.0.busy_time(),
                || many.0.busy_time(),
            );
            stop_queries(&pool, &[many, few]);
            share
        });
    }

    /// A task that spins for 100 us, `left` times in a row (each queues
    /// the next), then says so on `done`.
    fn chain(scope: Arc<QueryScope>, left: usize, done: mpsc::Sender<()>) -> Task {
        Box::new(move |_| {
            spin(100);
            if left <= 1 {
                let _ = done.send(());
            } else {
                let next = chain(scope.clone(), left - 1, done);
                scope.spawn(next);
            }
        })
    }

    /// A task that spins for 200 us, counts itself in `ran` and queues
    /// itself again, until `stop`.
    fn counted_task(scope: Arc<QueryScope>, stop: Arc<AtomicBool>, ran: Arc<AtomicUsize>) -> Task {
        Box::new(move |_| {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            spin(200);
            ran.fetch_add(1, Ordering::SeqCst);
            let next = counted_task(scope.clone(), stop, ran);
            scope.spawn(next);
        })
    }

    /// A short query (13 tasks in a row, 1.2 ms of CPU, well within the
    /// start credit) of a tenant whose 4 long queries keep the one worker
    /// busy runs each of its tasks as soon as the worker is free: at most a
    /// few long tasks run between its first and its last. Starting at the
    /// floor, it took turns: long queries' tasks ran between its tasks (11–23
    /// in between, measured). A task's charged time is its wall time,
    /// so a worker preempted inside the short query's tasks can spend the
    /// credit; like [`fair`], the scenario is tried up to three times, and
    /// a scheduler without the credit misses every time.
    #[test]
    fn a_short_query_runs_ahead_of_its_tenant_s_long_queries() {
        static ALONE: Mutex<()> = Mutex::new(());
        let _alone = ALONE.lock().unwrap_or_else(|p| p.into_inner());
        let pool = WorkerPool::new(1);
        let mut seen = Vec::new();
        for _ in 0..3 {
            let between = short_behind_long(&pool);
            if between <= 8 {
                return;
            }
            seen.push(between);
        }
        panic!("long tasks ran between the short query's first and last task: {seen:?}");
    }

    /// How many tasks of 4 long queries ran between the first and the last
    /// task of a short query of their tenant, on `pool`'s workers.
    fn short_behind_long(pool: &WorkerPool) -> usize {
        let tenant = Tenant::new("t", 1);
        let ran = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let long: Vec<_> = (0..4)
            .map(|_| {
                let scope = pool.open_scope(ScopeOptions {
                    tenant: Some(tenant.clone()),
                    ..waiting_caller()
                });
                scope.spawn(counted_task(scope.clone(), stop.clone(), ran.clone()));
                (scope, stop.clone())
            })
            .collect();
        // The long queries run well past the credit first.
        assert!(soon(|| ran.load(Ordering::SeqCst) >= 100));
        let short = pool.open_scope(ScopeOptions {
            tenant: Some(tenant.clone()),
            ..waiting_caller()
        });
        let (started, first) = mpsc::channel();
        let (done, finished) = mpsc::channel();
        let at_first = ran.clone();
        let chain_of_12 = chain(short.clone(), 12, done);
        let scope = short.clone();
        short.spawn(Box::new(move |_| {
            started.send(at_first.load(Ordering::SeqCst)).unwrap();
            scope.spawn(chain_of_12);
        }));
        let before = first.recv_timeout(Duration::from_secs(10)).unwrap();
        finished.recv_timeout(Duration::from_secs(10)).unwrap();
        let between = ran.load(Ordering::SeqCst) - before;
        stop_queries(pool, &long);
        pool.close_scope(&short);
        between
    }

    #[test]
    fn a_tenant_back_from_idle_does_not_monopolise() {
        let pool = WorkerPool::new(2);
        fair("tenant b back from idle", 0.35..=0.65, || {
            let (a, b) = (Tenant::new("a", 1), Tenant::new("b", 1));
            let busy_a = busy_query(&pool, &a, 4);
            let first_b = busy_query(&pool, &b, 4);
            std::thread::sleep(Duration::from_millis(50));
            stop_queries(&pool, &[first_b]);
            // `a` alone for a while: `b`'s virtual time falls far behind.
            std::thread::sleep(Duration::from_millis(300));
            let back_b = busy_query(&pool, &b, 4);
            let share = share_over(
                Duration::from_millis(150),
                || b.busy_time(),
                || a.busy_time(),
            );
            stop_queries(&pool, &[busy_a, back_b]);
            share
        });
    }

    #[test]
    fn a_query_back_from_a_hold_does_not_monopolise() {
        let pool = WorkerPool::new(2);
        fair("a query resumed after a hold", 0.35..=0.65, || {
            let tenant = Tenant::new("t", 1);
            let steady = busy_query(&pool, &tenant, 4);
            let paused = busy_query(&pool, &tenant, 4);
            std::thread::sleep(Duration::from_millis(50));
            let far = Instant::now() + Duration::from_secs(3600);
            paused
                .0
                .hold(far, Error::new(ErrorKind::QueryAborted, "stalled"));
            std::thread::sleep(Duration::from_millis(300));
            paused.0.resume();
            let share = share_over(
                Duration::from_millis(150),
                || paused.0.busy_time(),
                || steady.0.busy_time(),
            );
            stop_queries(&pool, &[steady, paused]);
            share
        });
    }

    #[test]
    fn deadline_cancels() {
        let pool = WorkerPool::new(1);
        let scope = pool.open_scope(ScopeOptions {
            deadline: Some(Instant::now()),
            ..ScopeOptions::default()
        });
        assert!(scope.is_cancelled());
        assert_eq!(scope.take_error().unwrap().kind, ErrorKind::QueryAborted);
    }

    /// Waits until every worker of `pool` sleeps; then returns how many
    /// threads still count as awake.
    fn awake_once_workers_sleep(pool: &WorkerPool) -> usize {
        let until = Instant::now() + Duration::from_secs(10);
        while pool.inner.idle.load(Ordering::SeqCst) < pool.threads() {
            assert!(Instant::now() < until, "the workers never went to sleep");
            std::thread::sleep(Duration::from_millis(1));
        }
        pool.inner.active.load(Ordering::SeqCst)
    }

    #[test]
    fn awake_threads_are_counted_back_down() {
        for spin in [Duration::ZERO, DEFAULT_SPIN] {
            let pool = WorkerPool::with_spin(2, spin);
            // Queries whose callers wait (block) for tasks on the workers.
            for _ in 0..20 {
                let scope = pool.open_scope(ScopeOptions::default());
                let (tx, rx) = mpsc::channel();
                for i in 0..10 {
                    let tx = tx.clone();
                    scope.spawn(Box::new(move |_| tx.send(i).unwrap()));
                }
                scope.watch(|| false);
                scope.fall_asleep();
                let got = (0..10)
                    .filter(|_| rx.recv_timeout(Duration::from_secs(5)).is_ok())
                    .count();
                scope.woken();
                assert_eq!(got, 10);
                pool.close_scope(&scope);
            }
            assert_eq!(awake_once_workers_sleep(&pool), 0, "spin {spin:?}");
            // A query that unwinds closes its scope through the guard.
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let scope = pool.open_scope(ScopeOptions::default());
                let _closer = pool.close_on_drop(&scope);
                panic!("a query fails badly");
            }));
            assert!(unwound.is_err());
            assert_eq!(awake_once_workers_sleep(&pool), 0);
            assert!(pool.inner.scopes.load().is_empty());
        }
    }

    #[test]
    fn a_worker_keeps_polling_while_the_queued_work_is_capped() {
        let pool = WorkerPool::with_spin(2, Duration::from_secs(2));
        // A worker that ran a task polls for the next one, while the other
        // sleeps. It sleeps too if more threads were awake than cores when
        // it finished (this thread, still in the task's query, or the other
        // worker starting late); then the warm-up is repeated.
        let settled = || {
            pool.inner.spinning.load(Ordering::SeqCst) == 1
                && pool.inner.idle.load(Ordering::SeqCst) == 1
        };
        // One try: settle, then queue capped work and look whether the
        // polling worker still polls 50 ms later.
        let polls_while_capped = || {
            let mut attempts = 0;
            while !settled() {
                attempts += 1;
                assert!(attempts <= 100, "no worker ever polled after a task");
                let warm = pool.open_scope(ScopeOptions::default());
                let (tx, rx) = mpsc::channel();
                warm.spawn(Box::new(move |_| tx.send(()).unwrap()));
                rx.recv_timeout(Duration::from_secs(5)).unwrap();
                pool.close_scope(&warm);
                std::thread::sleep(Duration::from_millis(5));
            }
            // A one-worker query on its caller queues tasks no worker may take.
            let capped = pool.open_scope(ScopeOptions {
                max_parallel: 1,
                ..ScopeOptions::default()
            });
            let (queued, has_queued) = mpsc::channel();
            let (release, released) = mpsc::channel::<()>();
            let caller = {
                let capped = capped.clone();
                std::thread::spawn(move || {
                    let inner = capped.clone();
                    capped.run_here(Box::new(move |_| {
                        for _ in 0..4 {
                            inner.spawn(Box::new(|_| {}));
                        }
                        queued.send(()).unwrap();
                        released.recv().unwrap();
                    }));
                    capped.help();
                })
            };
            has_queued.recv_timeout(Duration::from_secs(5)).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            let spinning = pool.inner.spinning.load(Ordering::SeqCst);
            release.send(()).unwrap();
            caller.join().unwrap();
            pool.close_scope(&capped);
            spinning == 1
        };
        // Threads of other processes can delay this one past a moment when
        // more threads were awake than cores, which rightly sends the worker
        // to sleep; so a few tries, and one must show it polling.
        let polled = (0..5).any(|_| polls_while_capped());
        assert!(polled, "the polling worker went to sleep in every try");
    }

    #[test]
    fn a_blocked_caller_lets_a_worker_take_its_tasks() {
        // One worker: while the caller counts as awake no worker is woken
        // (the caller would run the tasks itself); once it blocks, one is.
        let pool = WorkerPool::with_spin(1, Duration::ZERO);
        let scope = pool.open_scope(ScopeOptions::default());
        let (tx, rx) = mpsc::channel();
        scope.spawn(Box::new(move |w| tx.send(w.worker).unwrap()));
        scope.fall_asleep();
        let worker = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        scope.woken();
        assert_eq!(worker, 0, "run by the pool's worker, not the caller");
        pool.close_scope(&scope);
    }
}

#[cfg(test)]
#[path = "scheduler_yield_tests.rs"]
mod yield_tests;
