"""Results as pyarrow Tables, pandas and polars DataFrames."""

import datetime as dt
import tracemalloc

import pyarrow as pa
import pytest

import rhizome


def test_column_types(db):
    table = db.execute(
        "UNWIND range(1, 3) AS i RETURN i, i * 0.5 AS f, toString(i) AS s, i > 1 AS b, "
        "date('2024-01-01') + duration({days: i}) AS d, "
        "localdatetime('2024-01-01T00:00:00') AS ldt, "
        "datetime('2024-01-01T00:00:00+02:00') AS dtz, "
        "localtime('01:02:03') AS lt, duration({months: i, seconds: 1}) AS dur, null AS nothing "
        "ORDER BY i"
    ).arrow()
    assert isinstance(table, pa.Table)
    assert table.column_names == ["i", "f", "s", "b", "d", "ldt", "dtz", "lt", "dur", "nothing"]
    types = dict(zip(table.column_names, table.schema.types))
    assert types["i"] == pa.int64()
    assert types["f"] == pa.float64()
    assert types["s"] == pa.string()
    assert types["b"] == pa.bool_()
    assert types["d"] == pa.date32()
    assert types["ldt"] == pa.timestamp("ns")
    assert types["dtz"] == pa.timestamp("ns", tz="+02:00")
    assert types["lt"] == pa.time64("ns")
    assert types["dur"] == pa.month_day_nano_interval()
    assert types["nothing"] == pa.null()
    assert table.column("i").to_pylist() == [1, 2, 3]
    assert table.column("s").to_pylist() == ["1", "2", "3"]
    assert table.column("d").to_pylist()[0] == dt.date(2024, 1, 2)
    assert table.column("dtz").to_pylist()[0] == dt.datetime(2023, 12, 31, 22, tzinfo=dt.timezone.utc)
    assert table.column("dur").to_pylist()[1] == pa.MonthDayNano([2, 0, 1_000_000_000])


def test_nulls_and_mixed_numbers(db):
    table = db.execute(
        "UNWIND [1, null, 3] AS i RETURN i, CASE WHEN i = 3 THEN 1.5 ELSE i END AS f, "
        "CASE WHEN i IS NULL THEN null ELSE 'x' END AS s"
    ).arrow()
    assert table.schema.field("i").type == pa.int64()
    assert table.column("i").to_pylist() == [1, None, 3]
    assert table.column("f").type == pa.float64()
    assert table.column("f").to_pylist() == [1.0, None, 1.5]
    assert table.column("s").to_pylist() == ["x", None, "x"]


def test_entities_lists_and_mixed_columns(people):
    table = people.execute(
        "MATCH (a:Person {name: 'Ada'})-[r:KNOWS]->(b) "
        "RETURN a, r, [1, 2] AS l, {k: 'v'} AS m, 1 AS one"
    ).arrow()
    assert table.column_names == ["a", "r", "l", "m", "one"]
    a = table.column("a").to_pylist()[0]
    assert a["_labels"] == ["Person"] and a["name"] == "Ada"
    r = table.column("r").to_pylist()[0]
    assert r["_type"] == "KNOWS" and r["since"] == 1833
    assert table.column("l").to_pylist() == [[1, 2]]
    assert table.column("m").to_pylist() == [{"k": "v"}]
    mixed = people.execute("UNWIND [1, 'a', [2]] AS x RETURN x").arrow()
    assert mixed.column("x").to_pylist() == ["1", "a", "[2]"]


def test_no_rows_and_no_columns(db):
    empty = db.execute("MATCH (n:Nothing) RETURN n.x AS x").arrow()
    assert empty.num_rows == 0 and empty.column_names == ["x"]
    none = db.execute("CREATE (:A)").arrow()
    assert none.num_columns == 0


def test_arrow_takes_the_rows_not_fetched(db):
    result = db.execute("UNWIND range(1, 5) AS i RETURN i ORDER BY i")
    assert result.fetchmany(2) == [(1,), (2,)]
    assert result.arrow().column("i").to_pylist() == [3, 4, 5]
    assert result.fetchall() == []


def test_numeric_and_string_columns_make_no_python_objects(db):
    n = 200_000
    result = db.execute(
        "UNWIND range(1, $n) AS i RETURN i, i * 0.5 AS f, 'name' + toString(i) AS s, "
        "date('2020-01-01') AS d",
        {"n": n},
    )
    tracemalloc.start()
    try:
        table = result.arrow()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert table.num_rows == n
    assert sum(table.column("i").to_pylist()) == n * (n + 1) // 2
    assert set(table.column("s").to_pylist()) == {f"name{i}" for i in range(1, n + 1)}
    # One Python object per value would take well over 20 MB (200,000 ints
    # alone: 5.6 MB); the Arrow buffers live outside Python's allocator.
    assert peak < 1_000_000, f"Python allocated {peak} bytes"


def test_pandas_dataframe(db):
    import pandas as pd
    frame = db.execute(
        "UNWIND range(1, 4) AS i RETURN i, i / 2.0 AS f, toString(i) AS s, "
        "localdatetime('2024-01-01T00:00:00') AS t ORDER BY i"
    ).df()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["i", "f", "s", "t"]
    assert str(frame["i"].dtype) == "int64"
    assert str(frame["f"].dtype) == "float64"
    assert frame["s"].tolist() == ["1", "2", "3", "4"]
    assert str(frame["t"].dtype).startswith("datetime64")
    assert frame["i"].sum() == 10


def test_polars_dataframe(db):
    import polars as pl

    frame = db.execute("UNWIND range(1, 3) AS i RETURN i, toString(i) AS s").pl()
    assert isinstance(frame, pl.DataFrame)
    assert frame.schema["i"] == pl.Int64
    assert frame.schema["s"] == pl.String
    assert frame["i"].to_list() == [1, 2, 3]


def test_large_results_convert_in_parts(db):
    # above the size converted on several threads: the parts must agree
    n = 600_000
    result = db.execute(
        "UNWIND range(1, $n) AS i RETURN i, toString(i) AS s, "
        "CASE WHEN i > $n - 10 THEN 0.5 ELSE i END AS late_float, "
        "CASE WHEN i = $n THEN 'x' ELSE i END AS late_string",
        {"n": n},
    )
    assert len(result) == n
    table = result.arrow()
    assert len(result) == n and result.fetchone() is None
    assert table.num_rows == n
    types = dict(zip(table.column_names, table.schema.types))
    assert types["i"] == pa.int64() and types["s"] == pa.string()
    assert types["late_float"] == pa.float64()
    assert types["late_string"] == pa.string()
    ints = table.column("i").to_pylist()
    assert sorted(ints) == list(range(1, n + 1))
    by_i = dict(zip(ints, table.column("late_string").to_pylist()))
    assert by_i[n] == "x" and by_i[1] == "1"
    assert dict(zip(ints, table.column("late_float").to_pylist()))[n] == 0.5


def test_arrow_then_fetch_and_arrow_again(db):
    result = db.execute("UNWIND range(1, 5) AS i RETURN i, toString(i) AS s ORDER BY i")
    assert result.arrow().column("s").to_pylist() == ["1", "2", "3", "4", "5"]
    assert result.fetchone() is None and list(result) == []
    again = result.arrow()
    assert again.num_rows == 0 and again.column_names == ["i", "s"]
    assert len(result) == 5


def test_fetching_everything_leaves_an_empty_table(db):
    result = db.execute("UNWIND [1, 2] AS i RETURN i")
    assert result.fetchall() == [(1,), (2,)]
    table = result.arrow()
    assert table.num_rows == 0 and table.column_names == ["i"]


def test_typed_columns_fetch_as_python_values(db):
    rows = db.execute(
        "UNWIND [1, null, 3] AS i RETURN i, i * 1.5 AS f, i > 1 AS b, "
        "CASE WHEN i IS NULL THEN null ELSE 'é' + toString(i) END AS s, '' AS empty"
    ).fetchall()
    assert rows == [(1, 1.5, False, "é1", ""), (None, None, None, None, ""), (3, 4.5, True, "é3", "")]
    assert type(rows[0][0]) is int and type(rows[0][1]) is float and type(rows[0][2]) is bool


def test_mixed_columns_keep_each_value_when_fetched(db):
    # integers then floats, then strings: fetched values keep their types,
    # Arrow widens (numbers) or falls back to text (mixed)
    query = (
        "UNWIND range(1, 5000) AS i RETURN "
        "CASE WHEN i > 4990 THEN i + 0.5 ELSE i END AS num, "
        "CASE WHEN i = 2500 THEN 'x' WHEN i % 2 = 0 THEN null ELSE i END AS mix, "
        "CASE WHEN i < 4000 THEN null ELSE i END AS late ORDER BY i"
    )
    rows = db.execute(query).fetchall()
    assert rows[0] == (1, 1, None) and type(rows[0][0]) is int
    assert rows[4999] == (5000.5, None, 5000)
    assert rows[2499][1] == "x" and rows[1][1] is None
    table = db.execute(query).arrow()
    assert table.schema.field("num").type == pa.float64()
    assert table.schema.field("mix").type == pa.string()
    assert table.schema.field("late").type == pa.int64()
    assert table.column("mix").to_pylist()[:3] == ["1", None, "3"]
    assert table.column("late").null_count == 3999


def test_columns_built_on_many_workers(db):
    # A scan split over the workers (no defined order): tuples and Arrow
    # hold every row once, the columns of a row stay together; with ORDER
    # BY the order is kept across the workers' pieces.
    n = 200_000
    db.execute(
        "UNWIND range(0, $n - 1) AS i CREATE (:N {id: i, s: toString(i), "
        "v: CASE WHEN i % 1000 = 7 THEN 'x' + toString(i) ELSE i END})",
        {"n": n},
    )
    query = "MATCH (n:N) RETURN n.id AS id, n.s AS s, n.v AS v"
    fetched = db.execute(query).fetchall()
    assert sorted(r[0] for r in fetched) == list(range(n))
    assert all(s == str(i) for i, s, _ in fetched)
    assert all(v == (f"x{i}" if i % 1000 == 7 else i) for i, _, v in fetched)
    table = db.execute(query).arrow()
    ids = table.column("id").to_pylist()
    assert sorted(ids) == list(range(n))
    assert table.column("s").to_pylist() == [str(i) for i in ids]
    assert table.schema.field("v").type == pa.string()
    ordered = db.execute(query + " ORDER BY id DESC")
    assert ordered.fetchmany(70_000)[-1] == (n - 70_000, str(n - 70_000), n - 70_000)
    rest = ordered.arrow()
    assert rest.column("id").to_pylist() == list(range(n - 70_001, -1, -1))


def test_writing_statements_and_transactions_return_columns(db):
    created = db.execute("UNWIND range(1, 3) AS i CREATE (n:W {i: i}) RETURN n.i AS i")
    assert created.arrow().column("i").to_pylist() == [1, 2, 3]
    with db.transaction() as tx:
        assert tx.execute("MATCH (n:W) RETURN n.i ORDER BY n.i DESC").fetchall() == [(3,), (2,), (1,)]
        assert tx.execute("MATCH (n:W) RETURN sum(n.i) AS s").arrow().column("s").to_pylist() == [6]
