//! Tests of the cooperative yield ([`QueryScope::yield_now`]): a long task
//! that cannot hand its work back (an inline `EXISTS` instance) lets a
//! waiting query's work run within a quantum, nested no deeper than the
//! pool's yield depth, never its own query's.

use super::*;
use std::cell::RefCell;
use std::sync::mpsc;

thread_local! {
    /// The queries whose test tasks run on this thread, outermost first.
    static RUNNING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Runs `body` as query `id`'s task, checking that no task runs nested
/// deeper than `max_depth` (the pool's) nor inside a task of its own
/// query.
fn as_query(id: usize, max_depth: usize, violations: &Arc<AtomicUsize>, body: impl FnOnce()) {
    RUNNING.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() > max_depth || r.contains(&id) {
            violations.fetch_add(1, Ordering::SeqCst);
        }
        r.push(id);
    });
    body();
    RUNNING.with(|r| r.borrow_mut().pop());
}

fn server_scope(pool: &WorkerPool) -> Arc<QueryScope> {
    pool.open_scope(ScopeOptions {
        caller_helps: false,
        ..ScopeOptions::default()
    })
}

/// A long query: one task per worker, each spinning until `stop` (at most
/// 10 s) with a yield point every 20 µs when `yields`, as an inline
/// instance's pushes have. Returns once all of them run.
fn long_query(
    pool: &WorkerPool,
    yields: bool,
    stop: &Arc<AtomicBool>,
    violations: &Arc<AtomicUsize>,
) -> Arc<QueryScope> {
    let scope = server_scope(pool);
    let started = Arc::new(AtomicUsize::new(0));
    let pool_depth = pool.yield_depth();
    for _ in 0..pool.threads() {
        let (inner, stop, started, violations) = (
            scope.clone(),
            stop.clone(),
            started.clone(),
            violations.clone(),
        );
        scope.spawn(Box::new(move |_| {
            as_query(0, pool_depth, &violations, || {
                started.fetch_add(1, Ordering::SeqCst);
                let until = Instant::now() + Duration::from_secs(10);
                while !stop.load(Ordering::SeqCst) && Instant::now() < until {
                    let spin = Instant::now() + Duration::from_micros(20);
                    while Instant::now() < spin {
                        std::hint::spin_loop();
                    }
                    if yields {
                        inner.yield_now();
                    }
                }
            })
        }));
    }
    let until = Instant::now() + Duration::from_secs(10);
    while started.load(Ordering::SeqCst) < pool.threads() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(started.load(Ordering::SeqCst), pool.threads());
    // Let the long tasks use a few quanta, so their query's virtual time
    // is charged at their yield points.
    std::thread::sleep(Duration::from_millis(20));
    scope
}

/// How long a short query's task, queued while the long query's tasks
/// hold every worker, waits to run (`None`: not within 2 s).
fn short_query_wait(yields: bool) -> Option<Duration> {
    let pool = WorkerPool::with_spin(2, Duration::ZERO);
    let (stop, violations) = (Arc::new(AtomicBool::new(false)), Arc::default());
    let long = long_query(&pool, yields, &stop, &violations);
    let short = server_scope(&pool);
    let (tx, rx) = mpsc::channel();
    let queued = Instant::now();
    let v = violations.clone();
    short.spawn(Box::new(move |_| {
        as_query(1, DEFAULT_YIELD_DEPTH, &v, || {
            tx.send(queued.elapsed()).unwrap()
        })
    }));
    let waited = rx.recv_timeout(Duration::from_secs(2)).ok();
    let still_long = !stop.swap(true, Ordering::SeqCst);
    assert!(still_long);
    pool.close_scope(&short);
    pool.close_scope(&long);
    assert_eq!(violations.load(Ordering::SeqCst), 0);
    waited
}

#[test]
fn a_short_query_runs_within_quanta_of_long_tasks_on_every_worker() {
    // Without yield points the short query waits for a long task to end.
    assert_eq!(short_query_wait(false), None);
    // With them it runs nested in one of the long tasks: within a quantum
    // and a pick (a generous bound for a loaded machine).
    let waited = short_query_wait(true).expect("the short query ran");
    assert!(waited < Duration::from_millis(200), "waited {waited:?}");
}

#[test]
fn a_short_job_starts_nested_and_its_task_runs_nested_next() {
    let pool = WorkerPool::with_spin(2, Duration::ZERO);
    let (stop, violations) = (Arc::new(AtomicBool::new(false)), Arc::default());
    let long = long_query(&pool, true, &stop, &violations);
    let (tx, rx) = mpsc::channel();
    // A job that may block is never nested: it waits for a free worker.
    let sent = tx.clone();
    pool.submit_as(None, Box::new(move |_| sent.send("blocking job").unwrap()));
    // A short job starts its query nested; its first task is queued (a
    // second level) and runs nested at a later yield point.
    let short = server_scope(&pool);
    let (inner, sent, v) = (short.clone(), tx.clone(), violations.clone());
    let before = pool.nested_runs();
    pool.submit_short_as(
        None,
        Box::new(move |_| {
            let task_sent = sent.clone();
            let v2 = v.clone();
            inner.run_now(Box::new(move |_| {
                as_query(1, DEFAULT_YIELD_DEPTH, &v2, || {
                    task_sent.send("task").unwrap()
                })
            }));
            sent.send("short job").unwrap();
        }),
    );
    let seen: Vec<_> = (0..2)
        .map(|_| rx.recv_timeout(Duration::from_secs(2)).unwrap())
        .collect();
    assert_eq!(seen, ["short job", "task"]);
    assert!(pool.nested_runs() >= before + 2);
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    stop.store(true, Ordering::SeqCst);
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(5)),
        Ok("blocking job"),
        "the blocking job runs once a worker is free"
    );
    pool.close_scope(&short);
    pool.close_scope(&long);
    assert_eq!(violations.load(Ordering::SeqCst), 0);
}

#[test]
fn nested_work_yields_no_further_and_never_nests_its_own_query() {
    nesting_stays_within(1);
    nesting_stays_within(DEFAULT_YIELD_DEPTH);
    nesting_stays_within(3);
}

fn nesting_stays_within(depth: usize) {
    let pool = WorkerPool::with_yield_depth(2, Duration::ZERO, depth);
    let (stop, violations) = (Arc::new(AtomicBool::new(false)), Arc::default());
    let long = long_query(&pool, true, &stop, &violations);
    // The long query queues more of its own tasks, and three more queries
    // queue tasks that yield themselves: each runs at top level or nested
    // one level deep in another query's task, never deeper.
    let done = Arc::new(AtomicUsize::new(0));
    let mut scopes = Vec::new();
    for id in 1..=3 {
        let scope = server_scope(&pool);
        for _ in 0..4 {
            let (inner, v, done) = (scope.clone(), violations.clone(), done.clone());
            scope.spawn(Box::new(move |_| {
                as_query(id, depth, &v, || {
                    let until = Instant::now() + Duration::from_millis(3);
                    while Instant::now() < until {
                        inner.yield_now();
                    }
                });
                done.fetch_add(1, Ordering::SeqCst);
            }));
        }
        scopes.push(scope);
    }
    for _ in 0..4 {
        let (inner, v, done) = (long.clone(), violations.clone(), done.clone());
        long.spawn(Box::new(move |_| {
            as_query(0, depth, &v, || {
                inner.yield_now();
            });
            done.fetch_add(1, Ordering::SeqCst);
        }));
    }
    let until = Instant::now() + Duration::from_secs(10);
    while done.load(Ordering::SeqCst) < 12 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(done.load(Ordering::SeqCst), 12, "the other queries ran");
    stop.store(true, Ordering::SeqCst);
    let until = Instant::now() + Duration::from_secs(10);
    while done.load(Ordering::SeqCst) < 16 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
    for scope in &scopes {
        pool.close_scope(scope);
    }
    pool.close_scope(&long);
    assert_eq!(violations.load(Ordering::SeqCst), 0);
}

#[test]
fn a_yield_charges_the_task_s_time_so_far_and_not_the_nested_work() {
    let pool = WorkerPool::with_spin(1, Duration::ZERO);
    let long = server_scope(&pool);
    let other = server_scope(&pool);
    let (tx, rx) = mpsc::channel();
    let (inner, other_inner) = (long.clone(), other.clone());
    long.spawn(Box::new(move |_| {
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(3) {
            std::hint::spin_loop();
        }
        let charged_before = inner.busy_time();
        // The other query's task, queued now, spins 30 ms nested.
        other_inner.spawn(Box::new(|_| {
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(30) {
                std::hint::spin_loop();
            }
        }));
        let nested = inner.yield_now();
        tx.send((charged_before, inner.busy_time(), nested, nested_nanos()))
            .unwrap();
    }));
    let (before, after, nested, total_nested) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(before, Duration::ZERO, "nothing charged before the yield");
    assert!(after >= Duration::from_millis(3), "charged {after:?}");
    assert!(after < Duration::from_millis(20), "charged {after:?}");
    assert!(nested >= 30_000_000 && total_nested >= nested);
    let until = Instant::now() + Duration::from_secs(5);
    while other.busy_time() < Duration::from_millis(30) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(other.busy_time() >= Duration::from_millis(30));
    pool.close_scope(&long);
    pool.close_scope(&other);
}

#[test]
fn a_query_that_may_not_nest_neither_yields_nor_runs_nested() {
    let pool = WorkerPool::with_spin(2, Duration::ZERO);
    let (stop, violations) = (Arc::new(AtomicBool::new(false)), Arc::default());
    let long = long_query(&pool, true, &stop, &violations);
    // A query over a graph source: its task must wait for a free worker.
    let source = pool.open_scope(ScopeOptions {
        caller_helps: false,
        nestable: false,
        ..ScopeOptions::default()
    });
    let (tx, rx) = mpsc::channel();
    let inner = source.clone();
    source.spawn(Box::new(move |_| {
        // Nor does it yield: a yield point inside it runs nothing.
        tx.send(inner.yield_now()).unwrap();
    }));
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
    stop.store(true, Ordering::SeqCst);
    assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(0));
    pool.close_scope(&source);
    pool.close_scope(&long);
}
