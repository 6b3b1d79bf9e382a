"""Database(memory_limit=...): what one statement may hold."""

import pathlib

import pytest

import rhizome

BIG = "UNWIND range(1, 1000000) AS x RETURN x, x + 1 AS y"
SORT = "UNWIND range(1, 300000) AS x WITH x ORDER BY -x RETURN count(x)"


def machine_memory():
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def test_default_is_half_the_memory(db):
    total = machine_memory()
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            total = min(total, int(pathlib.Path(path).read_text().strip()))
        except (OSError, ValueError):
            pass
    assert db.memory_limit == pytest.approx(total // 2, rel=0.01)


def test_a_statement_over_the_limit_is_stopped_cleanly(tmp_path):
    with rhizome.Database(tmp_path / "db", memory_limit="4MiB") as db:
        assert db.memory_limit == 4 << 20
        for query in (BIG, SORT):
            with pytest.raises(rhizome.MemoryLimitExceeded) as caught:
                db.execute(query)
            error = caught.value
            assert isinstance(error, rhizome.QueryAborted) and isinstance(error, rhizome.Error)
            assert error.kind == "QueryAborted"
            assert error.code == "MemoryPoolOutOfMemoryError"
            assert "memory limit of 4.0 MiB" in error.message
        # the database is fine afterwards, small statements run
        assert db.execute("UNWIND range(1, 1000) AS x RETURN sum(x)").fetchone() == (500500,)
        assert db.execute(SORT.replace("300000", "1000")).fetchall() == [(1000,)]


def test_connections_and_transactions_have_the_limit(tmp_path):
    with rhizome.Database(tmp_path / "db", memory_limit=4 << 20) as db:
        with db.connect() as conn:
            with pytest.raises(rhizome.MemoryLimitExceeded):
                conn.execute(BIG)
        tx = db.transaction()
        with pytest.raises(rhizome.MemoryLimitExceeded):
            tx.execute(BIG)
        tx.rollback()


def test_a_larger_limit_lets_it_through(tmp_path):
    with rhizome.Database(tmp_path / "db", memory_limit="1GiB") as db:
        result = db.execute(BIG)
        assert len(result) == 1_000_000
        assert max(result.arrow().column("y").to_pylist()) == 1_000_001


@pytest.mark.parametrize(
    "bad, error",
    [("lots", ValueError), ("0", ValueError), (0, ValueError), (-5, ValueError),
     (True, TypeError), (1.5, TypeError), ([1], TypeError)],
)
def test_bad_limits_are_refused(tmp_path, bad, error):
    with pytest.raises(error, match="memory_limit"):
        rhizome.Database(tmp_path / "db", memory_limit=bad)
