//! A query's place in the scheduler: its task queue, virtual time, cap on
//! workers, hold and cancellation.

use super::*;

/// A query's place in the scheduler.
pub struct QueryScope {
    queue: Injector<Task>,
    pub(super) pending: AtomicUsize,
    pub(super) running: AtomicUsize,
    max_parallel: usize,
    pub(super) weight: u64,
    pub(super) vtime: AtomicU64,
    pub(super) tenant: Arc<Tenant>,
    /// The client session whose statement this is, if any.
    session: Option<Arc<ClientSession>>,
    /// Root of the query's cancellation tree.
    pub cancel: Arc<CancelToken>,
    deadline: Option<Instant>,
    error: Mutex<Option<Error>>,
    pub(super) busy_nanos: AtomicU64,
    /// Threads waiting for this query that watch its queue ([`QueryScope::watch`]).
    watchers: AtomicUsize,
    /// The thread that opened the scope counts as awake until it closes it.
    opener_awake: AtomicBool,
    /// The thread that waits for the query runs its tasks too.
    caller_helps: bool,
    /// Its tasks yield and are nested at yield points ([`ScopeOptions::nestable`]).
    pub(super) nestable: bool,
    /// No worker takes the query's tasks ([`QueryScope::hold`]).
    held: AtomicBool,
    /// When a hold ends with the query failing, and that error.
    hold_limit: Mutex<Option<(Instant, Error)>>,
    /// Whether the workers see the query ([`QueryScope::register`]):
    /// [`UNLISTED`], [`LISTING`] or [`LISTED`]; [`CLOSED`] once closed.
    pub(super) listed: AtomicU8,
    /// The scope itself, for the pool's list ([`QueryScope::register`]).
    this: Weak<QueryScope>,
    pool: Arc<PoolInner>,
}

/// A scope not (yet) in the pool's list: it has never queued a task.
pub(super) const UNLISTED: u8 = 0;
/// A scope being put in the pool's list by the thread queuing its first task.
pub(super) const LISTING: u8 = 1;
/// A scope in the pool's list.
pub(super) const LISTED: u8 = 2;
/// A closed scope (out of the list, never listed again).
pub(super) const CLOSED: u8 = 3;

impl QueryScope {
    /// A new scope of `pool` for a query with `options`, of `tenant`, with
    /// `weight` (at least 1), starting at virtual time `start_vtime`
    /// ([`WorkerPool::open_scope`]).
    pub(super) fn new(
        pool: &Arc<PoolInner>,
        options: &ScopeOptions,
        tenant: Arc<Tenant>,
        weight: u64,
        start_vtime: u64,
    ) -> Arc<QueryScope> {
        Arc::new_cyclic(|this| QueryScope {
            queue: Injector::new(),
            pending: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            max_parallel: options.max_parallel.clamp(1, pool.threads),
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
            pool: pool.clone(),
        })
    }

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
    pub(super) fn runnable(&self) -> bool {
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
    pub(super) fn opener_leaves(&self) {
        if self.opener_awake.swap(false, Ordering::SeqCst) {
            self.pool.fall_asleep();
        }
    }

    pub(super) fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// One queued task, if any.
    pub(super) fn take(&self) -> Option<Task> {
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
    pub(super) fn run_charged(&self, task: Task, worker: usize, advance: u64) {
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
    pub(super) fn floor_in(&self, query_floor: u64) -> u64 {
        credited_floor(query_floor, self.weight)
    }

    /// Where this query's session stands among its tenant's
    /// ([`session_key`]).
    pub(super) fn session_key(&self, session_floor: u64) -> u64 {
        session_key(self.session.as_ref(), session_floor)
    }

    /// Raises the query's session to `key` (a worker picked its work at
    /// that key, the credited floor when it was below it).
    pub(super) fn raise_session(&self, key: u64) {
        if let Some(session) = &self.session {
            session.vtime.fetch_max(key, Ordering::Relaxed);
        }
    }

    pub(super) fn charge(&self, nanos: u64) {
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

    pub(super) fn try_reserve(&self) -> bool {
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
