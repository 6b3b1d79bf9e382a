"""The GIL is released while a query runs; Ctrl-C cancels a query."""

import os
import signal
import threading
import time

import pytest

import rhizome
from conftest import ENDLESS

# Seconds of work in a debug or release build (9 million filtered rows).
SLOW = (
    "UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b "
    "WITH a, b WHERE a + b > 0 RETURN count(*)"
)


def test_python_runs_while_a_query_runs(db):
    done = threading.Event()
    outcome = []

    def query():
        outcome.append(db.execute(SLOW).fetchone())
        done.set()

    worker = threading.Thread(target=query)
    worker.start()
    spins = 0
    while not done.is_set():
        spins += 1
    worker.join()
    assert outcome == [(9_000_000,)]
    # with the GIL held by the query this loop would hardly run at all
    assert spins > 10_000


def test_threads_run_queries_in_parallel(db):
    db.execute("UNWIND range(1, 1000) AS i CREATE (:N {i: i})")
    errors = []
    totals = []

    def work(k):
        try:
            conn = db.connect()
            for _ in range(20):
                [(total,)] = conn.execute(
                    "MATCH (n:N) WHERE n.i % $k = 0 RETURN sum(n.i)", {"k": k}
                ).fetchall()
                totals.append((k, total))
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(totals) == 160
    for k, total in totals:
        assert total == sum(i for i in range(1, 1001) if i % k == 0)


def test_two_slow_queries_overlap(db):
    """Two threads' queries are in the engine at the same time: each
    thread's query interval overlaps the other's."""
    spans = {}

    def run(name):
        start = time.perf_counter()
        db.execute(SLOW).fetchall()
        spans[name] = (start, time.perf_counter())

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = spans["a"], spans["b"]
    assert a0 < b1 and b0 < a1


# If the query ignored the signal, this stops it, so the test fails
# instead of running for hours.
BACKSTOP = 120


@pytest.fixture
def python_handles_ctrl_c():
    """Python's own Ctrl-C handler, as in an interactive session.

    A process started in the background by a non-interactive shell (`cmd &`,
    as CI runners and `setsid … &` do) inherits SIGINT as ignored, and Python
    then installs no KeyboardInterrupt handler: the SIGINT below would be
    dropped. These tests are about what Rhizome does when Ctrl-C reaches a
    Python that handles it, so they install that handler themselves.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals")
def test_ctrl_c_cancels_a_running_query(db, python_handles_ctrl_c):
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        db.execute(ENDLESS, timeout=BACKSTOP)
    elapsed = time.perf_counter() - start
    timer.join()
    # the query alone would run for minutes
    assert elapsed < 20, elapsed
    assert db.execute("RETURN 1").fetchall() == [(1,)]


def test_ctrl_c_cancels_a_statement_in_a_transaction(db, python_handles_ctrl_c):
    tx = db.transaction()
    tx.execute("CREATE (:T)")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        tx.execute(ENDLESS, timeout=BACKSTOP)
    timer.join()
    tx.rollback()
    assert db.execute("MATCH (t:T) RETURN count(t)").fetchall() == [(0,)]
