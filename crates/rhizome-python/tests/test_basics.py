"""Opening databases, running statements, fetching rows."""

import pytest

import rhizome


def test_new_directory_becomes_an_empty_database(tmp_path):
    db = rhizome.Database(tmp_path / "fresh")
    assert db.execute("MATCH (n) RETURN count(n) AS c").fetchall() == [(0,)]
    assert db.path == tmp_path / "fresh"


def test_writes_are_durable_across_reopening(tmp_path):
    path = tmp_path / "db"
    db = rhizome.Database(path)
    db.execute("CREATE (:Person {name: $name})", {"name": "Ada"})
    db.close()
    again = rhizome.Database(str(path))
    assert again.execute("MATCH (p:Person) RETURN p.name").fetchall() == [("Ada",)]


def test_fetching_rows_consumes_them(db):
    result = db.execute("UNWIND range(1, 10) AS i RETURN i, i * i AS sq ORDER BY i")
    assert result.columns == ["i", "sq"]
    assert len(result) == 10
    assert result.fetchone() == (1, 1)
    assert result.fetchmany(3) == [(2, 4), (3, 9), (4, 16)]
    assert result.fetchmany() == [(5, 25)]
    assert next(iter(result)) == (6, 36)
    assert [row for row in result] == [(7, 49), (8, 64), (9, 81), (10, 100)]
    assert result.fetchone() is None
    assert result.fetchall() == []
    assert result.fetchmany(5) == []


def test_fetchall_and_iteration(db):
    rows = db.execute("UNWIND ['a', 'b'] AS x RETURN x").fetchall()
    assert rows == [("a",), ("b",)]
    assert list(db.execute("UNWIND [1, 2, 3] AS x RETURN x")) == [(1,), (2,), (3,)]


def test_counters_of_a_write(db):
    result = db.execute("CREATE (a:A {x: 1})-[:R]->(b:B) RETURN a")
    counters = result.counters
    assert counters["nodes_created"] == 2
    assert counters["relationships_created"] == 1
    assert counters["properties_set"] == 1
    assert result.elapsed >= 0


def test_explain_gives_a_plan_and_no_rows(db):
    result = db.execute("EXPLAIN MATCH (n) RETURN n")
    assert isinstance(result.plan, str) and result.plan
    assert result.profile is None
    assert result.fetchall() == []


def test_profile_gives_rows_and_counters(db):
    db.execute("UNWIND range(1, 10) AS i CREATE (:N {i: i})")
    result = db.execute("PROFILE MATCH (n:N) RETURN count(n)")
    assert result.fetchall() == [(10,)]
    assert isinstance(result.profile, str) and "rows" in result.profile.lower()
    assert result.plan is None


def test_connection_runs_statements(db):
    conn = db.connect()
    conn.execute("CREATE (:X {v: 1})")
    assert db.execute("MATCH (x:X) RETURN x.v").fetchall() == [(1,)]
    assert conn.execute("MATCH (x:X) RETURN x.v").fetchall() == [(1,)]
    conn.close()
    with pytest.raises(rhizome.Error, match="connection is closed"):
        conn.execute("RETURN 1")
    assert db.execute("RETURN 1 AS one").fetchall() == [(1,)]


def test_closed_database_refuses_statements(tmp_path):
    with rhizome.Database(tmp_path / "db") as db:
        assert db.execute("RETURN 1").fetchall() == [(1,)]
    with pytest.raises(rhizome.Error, match="database is closed"):
        db.execute("RETURN 1")


def test_read_only_refuses_writes(tmp_path):
    rhizome.Database(tmp_path / "db").execute("CREATE (:A)")
    db = rhizome.Database(tmp_path / "db", read_only=True)
    assert db.read_only
    assert db.execute("MATCH (a:A) RETURN count(a)").fetchall() == [(1,)]
    with pytest.raises(rhizome.SemanticError) as info:
        db.execute("CREATE (:B)")
    assert info.value.code == "AccessMode"
    with pytest.raises(rhizome.SemanticError):
        db.execute("CREATE INDEX FOR (a:A) ON (a.x)")
    with pytest.raises(rhizome.SemanticError):
        db.transaction()
    assert db.execute("MATCH (n) RETURN count(n)").fetchall() == [(1,)]


def test_read_only_needs_an_existing_database(tmp_path):
    with pytest.raises(rhizome.IoError):
        rhizome.Database(tmp_path / "missing", read_only=True)
    assert not (tmp_path / "missing").exists()


def test_not_a_database_is_an_error(tmp_path):
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file.txt").write_text("hello")
    with pytest.raises(rhizome.Error):
        rhizome.Database(tmp_path / "junk")


def test_version_and_public_names():
    assert rhizome.__version__
    for name in rhizome.__all__:
        assert hasattr(rhizome, name), name
