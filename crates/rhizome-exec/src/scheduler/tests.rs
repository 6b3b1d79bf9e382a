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
fn share_over(window: Duration, of: impl Fn() -> Duration, other: impl Fn() -> Duration) -> f64 {
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

/// The queries (0 or 1) whose 200 us tasks one worker ran, in order,
/// over `window`, with both queries of one tenant busy all along.
fn run_order(window: Duration) -> Vec<u8> {
    let pool = WorkerPool::new(1);
    let tenant = Tenant::new("t", 1);
    let order = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    fn logged(
        scope: Arc<QueryScope>,
        which: u8,
        order: Arc<Mutex<Vec<u8>>>,
        stop: Arc<AtomicBool>,
    ) -> Task {
        Box::new(move |_| {
            spin(200);
            order.lock().unwrap().push(which);
            if !stop.load(Ordering::SeqCst) {
                let next = logged(scope.clone(), which, order, stop);
                scope.spawn(next);
            }
        })
    }
    let queries: Vec<_> = (0..2u8)
        .map(|which| {
            let scope = pool.open_scope(ScopeOptions {
                tenant: Some(tenant.clone()),
                ..waiting_caller()
            });
            scope.spawn(logged(scope.clone(), which, order.clone(), stop.clone()));
            (scope, stop.clone())
        })
        .collect();
    std::thread::sleep(window);
    stop_queries(&pool, &queries);
    let order = order.lock().unwrap().clone();
    order
}

#[test]
fn a_worker_runs_a_few_quanta_of_one_query_in_a_row_and_stays_fair() {
    // One quantum of slack (AFFINITY_SLACK) lets a query run about 1 ms
    // ahead of the other before the worker turns to it: streaks of about
    // five 200 us tasks, where strict turns by virtual time would make
    // streaks of one.
    let order = run_order(Duration::from_millis(200));
    let streaks = 1 + order.windows(2).filter(|w| w[0] != w[1]).count();
    let mean = order.len() as f64 / streaks as f64;
    let share = order.iter().filter(|&&q| q == 0).count() as f64 / order.len() as f64;
    assert!(order.len() >= 20, "too few tasks ran: {order:?}");
    assert!(mean >= 2.5, "mean streak {mean:.2}: {order:?}");
    assert!((0.3..=0.7).contains(&share), "share {share:.2}: {order:?}");
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
