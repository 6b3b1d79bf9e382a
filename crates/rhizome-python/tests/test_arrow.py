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
