"""Random parameter values round-trip through the engine; random junk is
refused with a Python exception, never a crash (a seeded smoke test)."""

import datetime as dt
import random

import pytest

import rhizome

SEED = 20261125


def random_value(rng, depth=0):
    kinds = ["none", "bool", "int", "float", "str", "date", "ldt", "dt", "time", "dur"]
    if depth < 3:
        kinds += ["list", "map"]
    kind = rng.choice(kinds)
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.randint(-(2**63), 2**63 - 1)
    if kind == "float":
        return rng.choice([0.0, -1.5, 1e300, rng.uniform(-1e6, 1e6)])
    if kind == "str":
        return "".join(rng.choice("aé😀'\"\\\n\t{}[]$ ") for _ in range(rng.randint(0, 12)))
    if kind == "date":
        return dt.date(1, 1, 1) + dt.timedelta(days=rng.randint(0, 3_000_000))
    if kind == "ldt":
        return dt.datetime(1900, 1, 1) + dt.timedelta(seconds=rng.randint(0, 10**10), microseconds=rng.randint(0, 999_999))
    if kind == "dt":
        offset = dt.timezone(dt.timedelta(minutes=rng.randint(-14 * 60, 14 * 60)))
        return (dt.datetime(1950, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=rng.randint(0, 10**9))).astimezone(offset)
    if kind == "time":
        return dt.time(rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999_999))
    if kind == "dur":
        return rhizome.Duration(rng.randint(-100, 100), rng.randint(-100, 100), rng.randint(-10**6, 10**6), 0)
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {f"k{i}": random_value(rng, depth + 1) for i in range(rng.randint(0, 4))}


def test_random_parameters_round_trip(db):
    rng = random.Random(SEED)
    for _ in range(300):
        value = random_value(rng)
        assert db.execute("RETURN $v AS v", {"v": value}).fetchone() == (value,)


def test_random_junk_parameters_are_refused(db):
    junk = [object(), {1, 2}, b"bytes", 1j, {"k": {"deeper": [object()]}}, {(1, 2): 3}, 2**70, -(2**70)]
    for value in junk:
        with pytest.raises((TypeError, OverflowError)):
            db.execute("RETURN $v", {"v": value})
    assert db.execute("RETURN 1").fetchone() == (1,)


def test_random_query_text_raises_rhizome_errors(db):
    rng = random.Random(SEED)
    pieces = ["MATCH", "(", ")", "-[", "]->", "RETURN", "n", ",", "WHERE", "=", "1", "'x", "{", "}", ":", "$p", "UNWIND", " "]
    for _ in range(300):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 10)))
        try:
            db.execute(text, timeout=5)
        except rhizome.Error as error:
            assert error.kind and error.message


def test_random_columns_fetch_and_arrow_alike(db):
    # Columns whose types change row by row (typed runs, nulls, a value of
    # another type) come back value for value, from tuples and from Arrow.
    rng = random.Random(SEED)
    for _ in range(20):
        kinds = rng.sample(["int", "float", "str", "bool", "none", "list"], rng.randint(1, 3))
        values = []
        for _ in range(rng.randint(0, 3000)):
            kind = rng.choice(kinds)
            values.append({
                "int": lambda: rng.randint(-(2**63), 2**63 - 1),
                "float": lambda: rng.uniform(-1e9, 1e9),
                "str": lambda: "".join(rng.choice("aé😀 ") for _ in range(rng.randint(0, 5))),
                "bool": lambda: rng.random() < 0.5,
                "none": lambda: None,
                "list": lambda: [rng.randint(0, 9)],
            }[kind]())
        query = "UNWIND range(0, size($vs) - 1) AS i RETURN $vs[i] AS v ORDER BY i"
        fetched = [v for (v,) in db.execute(query, {"vs": values}).fetchall()]
        assert fetched == values
        assert [type(v) for v in fetched] == [type(v) for v in values]
        table = db.execute(query, {"vs": values}).arrow()
        assert table.num_rows == len(values)
        if set(kinds) <= {"int", "none"} or set(kinds) <= {"str", "none"}:
            assert table.column("v").to_pylist() == values
