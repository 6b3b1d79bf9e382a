"""Values in results and parameters: entities, temporal types, collections."""

import datetime as dt

import pytest

import rhizome


def test_nodes_relationships_and_paths(people):
    rows = people.execute(
        "MATCH p = (a:Person {name: 'Ada'})-[r:KNOWS]->(b) RETURN a, r, b, p"
    ).fetchall()
    [(a, r, b, p)] = rows
    assert isinstance(a, rhizome.Node)
    assert a.labels == ["Person"]
    assert a.properties == {"name": "Ada", "born": dt.date(1815, 12, 10)}
    assert a["name"] == "Ada" and a.get("missing", 7) == 7
    assert sorted(b.labels) == ["Engineer", "Person"]
    assert isinstance(r, rhizome.Relationship)
    assert (r.type, r.start, r.end) == ("KNOWS", a.id, b.id)
    assert r.properties == {"since": 1833}
    assert isinstance(p, rhizome.Path)
    assert p.nodes == [a, b] and p.relationships == [r] and len(p) == 1
    assert p.start_node == a and p.end_node == b
    assert "Ada" in repr(a) and "KNOWS" in repr(r)
    assert {a, b, a} == {a, b}


def test_entities_created_in_a_transaction_resolve_there(db):
    with db.transaction() as tx:
        [(node,)] = tx.execute("CREATE (n:Fresh {v: 42}) RETURN n").fetchall()
        assert node.labels == ["Fresh"] and node["v"] == 42


def test_scalars_lists_and_maps(db):
    row = db.execute(
        "RETURN null AS n, true AS b, 42 AS i, -1.5 AS f, 'héllo' AS s, "
        "[1, 'two', [3]] AS l, {k: 1, m: {z: 'x'}} AS m"
    ).fetchone()
    assert row == (None, True, 42, -1.5, "héllo", [1, "two", [3]], {"k": 1, "m": {"z": "x"}})
    assert type(row[2]) is int and type(row[1]) is bool


def test_temporal_values_are_datetime_types(db):
    row = db.execute(
        "RETURN date('2024-02-29') AS d, localtime('13:14:15.123456') AS lt, "
        "time('13:14:15+02:00') AS t, localdatetime('2024-02-29T13:14:15.5') AS ldt, "
        "datetime('2024-02-29T13:14:15.000001Z') AS dtz, "
        "datetime({year: 2024, month: 7, day: 1, hour: 12, timezone: 'Europe/Stockholm'}) AS zoned, "
        "duration('P1Y2M3DT4H5M6.007S') AS dur"
    ).fetchone()
    d, lt, t, ldt, dtz, zoned, dur = row
    assert d == dt.date(2024, 2, 29)
    assert lt == dt.time(13, 14, 15, 123456)
    assert t == dt.time(13, 14, 15, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert ldt == dt.datetime(2024, 2, 29, 13, 14, 15, 500000) and ldt.tzinfo is None
    assert dtz == dt.datetime(2024, 2, 29, 13, 14, 15, 1, tzinfo=dt.timezone.utc)
    assert zoned.utcoffset() == dt.timedelta(hours=2)
    assert getattr(zoned.tzinfo, "key", None) == "Europe/Stockholm"
    assert (zoned.hour, zoned.day) == (12, 1)
    assert dur == rhizome.Duration(months=14, days=3, seconds=4 * 3600 + 5 * 60 + 6, nanoseconds=7_000_000)
    with pytest.raises(ValueError):
        dur.to_timedelta()
    assert rhizome.Duration(days=1, seconds=2).to_timedelta() == dt.timedelta(days=1, seconds=2)


def test_parameters_of_every_type_round_trip(db):
    stockholm = None
    try:
        import zoneinfo

        stockholm = zoneinfo.ZoneInfo("Europe/Stockholm")
    except Exception:  # pragma: no cover - no tz database
        pass
    params = {
        "none": None,
        "b": False,
        "i": -(2**63),
        "f": 2.25,
        "s": "text",
        "l": [1, "a", None, [2.5]],
        "t": (1, 2),
        "m": {"k": {"nested": True}},
        "d": dt.date(1999, 12, 31),
        "lt": dt.time(1, 2, 3, 4),
        "tz": dt.time(1, 2, 3, tzinfo=dt.timezone(dt.timedelta(hours=-3))),
        "ldt": dt.datetime(2000, 1, 2, 3, 4, 5, 6),
        "dt": dt.datetime(2000, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
        "td": dt.timedelta(days=2, seconds=7, microseconds=8),
        "dur": rhizome.Duration(months=3, days=1),
    }
    if stockholm:
        params["zoned"] = dt.datetime(2024, 7, 1, 12, tzinfo=stockholm)
    names = list(params)
    query = "RETURN " + ", ".join(f"${n} AS {n}" for n in names)
    row = dict(zip(names, db.execute(query, params).fetchone()))
    expected = dict(params)
    expected["t"] = [1, 2]
    expected["td"] = rhizome.Duration(days=2, seconds=7, nanoseconds=8000)
    assert row == expected
    if stockholm:
        assert row["zoned"].tzinfo.key == "Europe/Stockholm"
    # values go through the engine, not around it
    assert db.execute("RETURN $d + duration('P1D') AS x", {"d": dt.date(1999, 12, 31)}).fetchone() == (
        dt.date(2000, 1, 1),
    )


def test_unsupported_parameters_are_type_errors(db):
    with pytest.raises(TypeError, match=r"\$p\.k\[1\] has type object"):
        db.execute("RETURN $p", {"p": {"k": [1, object()]}})
    with pytest.raises(TypeError, match="dict of names"):
        db.execute("RETURN 1", [1, 2])
    with pytest.raises(TypeError, match="names must be strings"):
        db.execute("RETURN 1", {1: 2})
    with pytest.raises(OverflowError, match=r"\$big"):
        db.execute("RETURN $big", {"big": 2**64})


def test_missing_parameter_is_reported(db):
    with pytest.raises(rhizome.ParameterMissing):
        db.execute("RETURN $nope")


def test_entities_deleted_by_the_statement_keep_their_id(people):
    [(r,)] = people.execute("MATCH ()-[r:KNOWS]->() DELETE r RETURN r").fetchall()
    assert isinstance(r, rhizome.Relationship) and r.type is None and r.properties == {}
    [(n,)] = people.execute("MATCH (n:Note) DETACH DELETE n RETURN n").fetchall()
    assert isinstance(n, rhizome.Node) and n.labels == [] and n.properties == {}
    assert people.execute("MATCH ()-[r:KNOWS]->() RETURN count(r)").fetchall() == [(0,)]
