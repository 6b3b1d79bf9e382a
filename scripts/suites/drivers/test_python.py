"""The official Python driver (neo4j 6.x) against `rhizome serve`.

The suite script starts the server on the demo graph and passes its address
in RHIZOME_BOLT (host:port).
"""

import datetime
import os
import threading
import time
import uuid

import neo4j
import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import ClientError, ConstraintError, CypherSyntaxError
from neo4j.graph import Node, Path, Relationship
from neo4j.time import Date, DateTime, Duration, Time

ADDRESS = os.environ["RHIZOME_BOLT"]


@pytest.fixture(scope="module", params=["bolt", "neo4j"])
def driver(request):
    d = GraphDatabase.driver(f"{request.param}://{ADDRESS}", auth=None)
    d.scheme = request.param
    yield d
    d.close()


@pytest.fixture(scope="module")
def bolt_driver():
    """A bolt:// driver alone, for tests whose outcome does not depend on the
    URI scheme and that are too slow to run twice."""
    d = GraphDatabase.driver(f"bolt://{ADDRESS}", auth=None)
    yield d
    d.close()


@pytest.fixture
def tag():
    """A label no other test (or earlier run) uses."""
    return "T" + uuid.uuid4().hex[:12]


def test_connects_and_reports_a_neo4j_5_server(driver):
    driver.verify_connectivity()
    info = driver.get_server_info()
    assert info.agent.startswith("Neo4j/5")
    assert info.protocol_version == (5, 4)


def test_parameters_of_every_type_round_trip(driver):
    values = {
        "null": None,
        "bool": True,
        "int": -(2**62),
        "float": 2.5,
        "string": "héllo, wörld",
        "list": [1, "two", 3.0, None, [4]],
        "map": {"a": 1, "b": {"c": [True]}},
        "date": Date(2024, 2, 29),
        "local_time": Time(13, 14, 15, 123456789),
        "local_datetime": DateTime(2020, 1, 2, 3, 4, 5, 6),
        "datetime_offset": DateTime(2020, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
        "datetime_utc": datetime.datetime(2021, 6, 1, 12, 0, tzinfo=datetime.timezone.utc),
        "duration": Duration(months=14, days=3, seconds=7, nanoseconds=9),
    }
    with driver.session() as session:
        for name, value in values.items():
            got = session.run("RETURN $v AS v", v=value).single()["v"]
            assert got == value, name
        # A zoned time (the driver cannot send one with a fixed-offset tzinfo).
        t = session.run("RETURN time('13:14:15+02:00') AS t").single()["t"]
        assert (t.hour, t.minute, t.second) == (13, 14, 15)
        assert t.utc_offset() == datetime.timedelta(hours=2)
        assert session.run("RETURN $t = time('13:14:15+02:00') AS same", t=t).single()["same"]


def test_a_zoned_datetime_keeps_its_zone(driver):
    import pytz  # installed by 30-drivers.sh: a missing one fails, never skips
    zoned = pytz.timezone("Europe/Stockholm").localize(datetime.datetime(2022, 7, 1, 9, 30))
    with driver.session() as session:
        record = session.run("RETURN $v AS v, toString($v) AS s", v=zoned).single()
        assert record["s"] == "2022-07-01T09:30+02:00[Europe/Stockholm]"
        assert record["v"].to_native() == zoned
        assert str(record["v"].tzinfo) == "Europe/Stockholm"


def test_entities_come_back_as_the_drivers_own_types(driver):
    with driver.session() as session:
        record = session.run(
            "MATCH p = (a:Person)-[r:ACTED_IN]->(m:Movie {title: 'The Matrix'}) "
            "RETURN a, r, m, p ORDER BY a.name LIMIT 1"
        ).single()
        a, r, m, p = record["a"], record["r"], record["m"], record["p"]
        assert isinstance(a, Node) and "Person" in a.labels and isinstance(a["name"], str)
        assert isinstance(r, Relationship) and r.type == "ACTED_IN"
        assert r.start_node.element_id == a.element_id and r.end_node.element_id == m.element_id
        assert isinstance(p, Path) and p.start_node == a and p.end_node == m
        assert len(p.relationships) == 1 and p.relationships[0].type == "ACTED_IN"
        element_id = session.run("MATCH (n:Movie {title: 'The Matrix'}) RETURN elementId(n) AS e").single()["e"]
        assert element_id == m.element_id


def test_explicit_transactions_commit_and_roll_back(driver, tag):
    with driver.session() as session:
        with session.begin_transaction() as tx:
            tx.run(f"CREATE (:{tag} {{k: 'committed'}})")
            assert tx.run(f"MATCH (n:{tag} {{k: 'committed'}}) RETURN count(n) AS c").single()["c"] == 1
            tx.commit()
        with session.begin_transaction() as tx:
            tx.run(f"CREATE (:{tag} {{k: 'rolled back'}})")
            tx.rollback()
        counts = session.run(f"MATCH (n:{tag}) RETURN n.k AS k, count(*) AS c").data()
        assert {"k": "committed", "c": 1} in counts
        assert all(row["k"] != "rolled back" for row in counts)


def test_managed_transactions(driver):
    def create(tx, name):
        return tx.run("CREATE (n:PyManaged {name: $name}) RETURN n.name AS name", name=name).single()["name"]

    with driver.session() as session:
        assert session.execute_write(create, "m1") == "m1"
        count = session.execute_read(lambda tx: tx.run("MATCH (n:PyManaged) RETURN count(n) AS c").single()["c"])
        assert count >= 1
    records, summary, keys = driver.execute_query("MATCH (n:PyManaged {name: 'm1'}) RETURN n.name AS name")
    assert keys == ["name"] and records[0]["name"] == "m1"


def test_a_lock_timeout_is_retried_by_execute_write(bolt_driver):
    driver = bolt_driver
    holder = driver.session()
    tx = holder.begin_transaction()
    tx.run("CREATE (:PyLock)").consume()

    def release_later():
        time.sleep(6)  # longer than the server's 5 s lock wait
        tx.commit()
        holder.close()

    threading.Thread(target=release_later).start()
    started = time.monotonic()
    with driver.session() as session:
        session.execute_write(lambda t: t.run("CREATE (:PyLock)").consume())
    assert time.monotonic() - started > 5
    with driver.session() as session:
        assert session.run("MATCH (n:PyLock) RETURN count(n) AS c").single()["c"] >= 2


def test_errors_raise_the_right_exceptions(driver, tag):
    with driver.session() as session:
        with pytest.raises(CypherSyntaxError) as e:
            session.run("MATCH (n RETURN n").consume()
        assert "1:" in e.value.message
        with pytest.raises(ClientError) as e:
            session.run("RETURN $missing").consume()
        assert e.value.code == "Neo.ClientError.Statement.ParameterMissing"
        session.run(f"CREATE CONSTRAINT {tag}_unique FOR (n:{tag}) REQUIRE n.k IS UNIQUE").consume()
        session.run(f"CREATE (:{tag} {{k: 1}})").consume()
        with pytest.raises(ConstraintError):
            session.run(f"CREATE (:{tag} {{k: 1}})").consume()


def test_a_million_rows_stream_with_a_small_fetch_size(bolt_driver):
    driver = bolt_driver  # once: the pure-Python driver takes ~40 s per million records
    with driver.session(fetch_size=1000) as session:
        result = session.run("UNWIND range(1, 1000000) AS i RETURN i")
        count = 0
        total = 0
        for record in result:
            count += 1
            total += record[0]
        assert count == 1_000_000
        assert total == 1_000_000 * 1_000_001 // 2


def test_closing_the_session_cancels_the_query(driver):
    session = driver.session(fetch_size=100)
    result = session.run("UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN a * b AS x")
    first = [next(iter(result))["x"] for _ in range(3)]
    assert all(isinstance(x, int) and x > 0 for x in first)
    started = time.monotonic()
    session.close()
    assert time.monotonic() - started < 5
    # The server is free for the next query at once.
    started = time.monotonic()
    with driver.session() as other:
        assert other.run("RETURN 42 AS x").single()["x"] == 42
    assert time.monotonic() - started < 5


def test_procedures_tools_call_on_connect(driver):
    with driver.session() as session:
        components = session.run("CALL dbms.components() YIELD name, versions, edition").single()
        assert components["versions"][0].startswith("5.")
        assert session.run("SHOW DATABASES").data()[0]["name"] == "neo4j"
        assert session.run("CALL dbms.showCurrentUser()").single()["username"] == "neo4j"
        labels = {r["label"] for r in session.run("CALL db.labels()")}
        assert {"Person", "Movie"} <= labels
        assert session.run("CALL db.relationshipTypes()").data()
        assert session.run("CALL db.propertyKeys()").data()
    with driver.session(database="neo4j") as session:
        assert session.run("RETURN 1 AS x").single()["x"] == 1


def test_show_and_terminate_transactions(bolt_driver):
    driver = bolt_driver
    holder = driver.session()
    tx = holder.begin_transaction()
    tx.run("CREATE (:PyTerminated)").consume()
    with driver.session() as admin:
        rows = admin.run("SHOW TRANSACTIONS").data()
        assert set(rows[0]) >= {
            "database", "transactionId", "currentQueryId", "connectionId", "clientAddress",
            "username", "currentQuery", "startTime", "status", "elapsedTime",
        }
        idle = [r for r in rows if r["currentQuery"] == ""]
        assert len(idle) == 1, rows
        assert idle[0]["status"] == "Running" and idle[0]["username"] == "neo4j"
        assert isinstance(idle[0]["elapsedTime"], Duration)
        answer = admin.run("TERMINATE TRANSACTION $id", id=idle[0]["transactionId"]).single()
        assert answer["message"] == "Transaction terminated."
        # Rolled back at once: the write is gone and the writer lock free.
        started = time.monotonic()
        admin.run("CREATE (:PyAfterTerminate)").consume()
        assert time.monotonic() - started < 3
        assert admin.run("MATCH (n:PyTerminated) RETURN count(n) AS c").single()["c"] == 0
    with pytest.raises(neo4j.exceptions.Neo4jError) as e:
        tx.run("RETURN 1").consume()
    assert e.value.code.endswith("Transaction.Terminated"), e.value.code
    holder.close()


def test_a_terminated_managed_transaction_is_not_retried(bolt_driver):
    """`Terminated` is a client error to the drivers: `execute_write` gives
    up at once instead of running the work again."""
    driver = bolt_driver
    marker = uuid.uuid4().hex
    attempts = []

    def terminate_when_listed():
        deadline = time.monotonic() + 20
        with driver.session() as admin:
            while time.monotonic() < deadline:
                ids = admin.run(
                    "SHOW TRANSACTIONS YIELD transactionId, currentQuery "
                    "WHERE currentQuery CONTAINS $marker AND NOT currentQuery STARTS WITH 'SHOW' "
                    "RETURN transactionId",
                    marker=marker,
                ).value()
                if ids:
                    admin.run("TERMINATE TRANSACTIONS $ids", ids=ids).consume()
                    return
                time.sleep(0.05)

    def work(tx):
        attempts.append(time.monotonic())
        threading.Thread(target=terminate_when_listed).start()
        tx.run("CREATE (:PyNotRetried)").consume()
        tx.run(
            f"UNWIND range(1, 2000000000) AS i WITH i WHERE i < 0 AND '{marker}' <> '' RETURN count(*) AS c"
        ).consume()

    with driver.session() as session:
        with pytest.raises(neo4j.exceptions.Neo4jError) as e:
            session.execute_write(work)
    # The server sends Neo.TransientError.Transaction.Terminated; the driver
    # reclassifies it as a client error (so it is not retried).
    assert e.value.code.endswith("Transaction.Terminated"), e.value.code
    assert not e.value.is_retryable()
    assert len(attempts) == 1, f"the work ran {len(attempts)} times"
    with driver.session() as session:
        assert session.run("MATCH (n:PyNotRetried) RETURN count(n) AS c").single()["c"] == 0


def test_a_query_over_the_memory_limit_fails_and_the_server_carries_on(bolt_driver):
    # The suite's server runs with --memory-limit 256MiB.
    with bolt_driver.session() as session:
        with pytest.raises(neo4j.exceptions.TransientError) as e:
            session.run("UNWIND range(1, 50000000) AS i RETURN collect(i) AS all").consume()
        assert e.value.code == "Neo.TransientError.General.MemoryPoolOutOfMemoryError"
        assert "memory limit" in e.value.message
        assert session.run("RETURN 1 AS x").single()["x"] == 1


def test_the_schema_visualization_shows_labels_and_relationship_types(driver):
    with driver.session() as session:
        record = session.run("CALL db.schema.visualization()").single()
        nodes = {n["name"]: n for n in record["nodes"]}
        assert {"Person", "Movie"} <= set(nodes)
        assert all(isinstance(n, Node) and n.labels == {name} for name, n in nodes.items())
        patterns = {
            (next(iter(r.start_node.labels)), r.type, next(iter(r.end_node.labels)))
            for r in record["relationships"]
        }
        assert ("Person", "ACTED_IN", "Movie") in patterns
