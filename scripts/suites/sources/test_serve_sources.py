"""The official Python driver (neo4j 6.x) against `rhizome serve` with two
graph sources: `--source pg=roads-postgres.json --source redis=roads-redis.json`
over a native import of the same Luxembourg network (the default database).

The suite script (scripts/suites/50-sources.sh) starts PostgreSQL, Redis and
the server and passes RHIZOME_BOLT and RHIZOME_HTTP (host:port). The same
statements must give the same answers on the three databases.
"""

import base64
import json
import os
import urllib.request

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import Forbidden

BOLT = os.environ["RHIZOME_BOLT"]
HTTP = os.environ["RHIZOME_HTTP"]
SOURCES = ["pg", "redis"]

STATEMENTS = [
    "MATCH (j:Junction {id: 1})-[r:ROAD]->(k) RETURN k.id AS id, r.distance AS d ORDER BY id, d",
    "MATCH (j:Junction {id: 17})<-[r:ROAD]-(k) RETURN k.id AS id, r.distance AS d ORDER BY id, d",
    "MATCH (j:Junction) WHERE j.id IN [5, 17, 1000, 114599] RETURN j.id AS id, j.lat AS lat, j.lon AS lon ORDER BY id",
    "MATCH (j:Junction {id: 90001})-[:ROAD*1..3]->(k) RETURN count(*) AS paths, count(DISTINCT k.id) AS reached",
    "MATCH p = (j:Junction {id: 17})-[:ROAD*2]->(k) RETURN [n IN nodes(p) | n.id] AS ids, "
    "reduce(s = 0, r IN relationships(p) | s + r.distance) AS d ORDER BY ids",
    "UNWIND [17, 40000, 90001] AS x MATCH (j:Junction {id: x})-[:ROAD]->(k) RETURN x, count(k) AS degree ORDER BY x",
    "MATCH (a:Junction {id: 17}), (b:Junction {id: 67627}) "
    "CALL apoc.algo.dijkstra(a, b, 'ROAD>', 'distance') YIELD path, weight "
    "RETURN weight, length(path) AS hops, [n IN nodes(path) | n.id][..5] AS first",
    "MATCH (j:Junction {id: 999999999}) RETURN j.id AS id",
]


@pytest.fixture(scope="module")
def driver():
    d = GraphDatabase.driver(f"bolt://{BOLT}", auth=None)
    yield d
    d.close()


def rows(driver, database, query, **params):
    records, _, _ = driver.execute_query(query, params, database_=database)
    return [r.data() for r in records]


@pytest.mark.parametrize("query", STATEMENTS)
def test_autocommit_answers_equal_the_native_database(driver, query):
    want = rows(driver, "neo4j", query)
    for source in SOURCES:
        assert rows(driver, source, query) == want, source


def test_distinct_endpoints_run_over_the_sources(driver):
    """Counting distinct nodes reached from a label scan is planned as
    DistinctEndpoints (frontiers, not paths) on all three databases."""
    query = (
        "PROFILE MATCH (a:Junction)-[:ROAD]->()-[:ROAD]->(c) WHERE a.lat > 50.15 "
        "RETURN count(DISTINCT c) AS k, min(c.id) AS m, max(c.id) AS x"
    )

    def operators(plan):
        return [plan["operatorType"]] + [o for c in plan["children"] for o in operators(c)]

    answers = {}
    for database in ["neo4j"] + SOURCES:
        records, summary, _ = driver.execute_query(query, database_=database)
        assert "DistinctEndpoints" in operators(summary.profile), (database, summary.profile)
        answers[database] = [r.data() for r in records]
    assert answers["neo4j"][0]["k"] > 0
    assert answers["pg"] == answers["neo4j"] and answers["redis"] == answers["neo4j"], answers


def entity(value):
    """A node or relationship as comparable data (ids differ by store)."""
    if hasattr(value, "labels"):
        return ("node", sorted(value.labels), dict(value))
    return ("rel", value.type, dict(value))


def test_entities_render_with_their_labels_and_properties(driver):
    query = "MATCH (j:Junction {id: 17})-[r:ROAD]->(k) RETURN j, r, k ORDER BY k.id, r.distance"
    want = [[entity(v) for v in r.values()] for r in driver.execute_query(query, database_="neo4j")[0]]
    assert want and want[0][0][2]["id"] == 17
    for source in SOURCES:
        got = [[entity(v) for v in r.values()] for r in driver.execute_query(query, database_=source)[0]]
        assert got == want, source


def test_a_managed_read_transaction_reads_the_source(driver):
    def work(tx):
        first = tx.run("MATCH (j:Junction {id: 17})-[:ROAD]->(k) RETURN k.id AS id ORDER BY id").values()
        second = tx.run("MATCH (j:Junction {id: $id}) RETURN j.lat AS lat", id=first[0][0]).single()
        return first, second["lat"]

    with driver.session(database="neo4j") as session:
        want = session.execute_read(work)
    for source in SOURCES:
        with driver.session(database=source) as session:
            assert session.execute_read(work) == want, source


def test_an_explicit_transaction_commits_and_rolls_back(driver):
    for source in SOURCES:
        with driver.session(database=source) as session:
            tx = session.begin_transaction()
            assert tx.run("MATCH (j:Junction {id: 1}) RETURN j.id AS id").single()["id"] == 1
            tx.commit()
            tx = session.begin_transaction()
            assert tx.run("RETURN 1 AS one").single()["one"] == 1
            tx.rollback()


def test_writes_are_refused_with_forbidden(driver):
    for source in SOURCES:
        with driver.session(database=source) as session:
            with pytest.raises(Forbidden) as refused:
                session.run("CREATE (:Junction {id: -1})").consume()
            assert refused.value.code == "Neo.ClientError.General.ReadOnly"
            assert "read-only" in refused.value.message
            tx = session.begin_transaction()
            with pytest.raises(Forbidden):
                tx.run("MATCH (j:Junction {id: 17}) SET j.lat = 0").consume()
            tx.close()
            # A managed write fails at once: the error is not retried.
            with pytest.raises(Forbidden):
                session.execute_write(lambda tx: tx.run("CREATE INDEX FOR (j:Junction) ON (j.lat)").consume())
    assert rows(driver, "neo4j", "MATCH (j:Junction {id: -1}) RETURN count(*) AS n") == [{"n": 0}]


def test_show_databases_lists_the_sources(driver):
    got = {r["name"]: r for r in rows(driver, "neo4j", "SHOW DATABASES")}
    for source, backend in [("pg", "PostgreSQL"), ("redis", "Redis")]:
        assert got[source]["type"] == "source"
        assert got[source]["access"] == "read-only"
        assert backend in got[source]["statusMessage"]
    native = [r for r in got.values() if r["default"]]
    assert len(native) == 1 and native[0]["access"] == "read-write"


def test_schema_procedures_answer_from_the_mapping(driver):
    for source in SOURCES:
        assert rows(driver, source, "CALL db.labels() YIELD label RETURN label") == [{"label": "Junction"}]
        assert rows(driver, source, "CALL db.relationshipTypes()") == [{"relationshipType": "ROAD"}]
        keys = {r["propertyKey"] for r in rows(driver, source, "CALL db.propertyKeys()")}
        assert {"id", "lat", "lon", "distance"} <= keys
        records = driver.execute_query("CALL db.schema.visualization()", database_=source)[0]
        nodes, rels = records[0]["nodes"], records[0]["relationships"]
        assert [sorted(n.labels) for n in nodes] == [["Junction"]]
        assert [r.type for r in rels] == ["ROAD"]


def test_explain_and_profile_name_the_source(driver):
    query = "MATCH (j:Junction {id: 17})-[r:ROAD]->(k) RETURN k.id"
    for source, backend in [("pg", "PostgreSQL"), ("redis", "Redis")]:
        summary = driver.execute_query("EXPLAIN " + query, database_=source)[1]
        assert backend in summary.plan["args"]["SourceReads"], summary.plan
        summary = driver.execute_query("PROFILE " + query, database_=source)[1]
        assert "round trips" in summary.profile["args"]["SourceCounters"], summary.profile
    summary = driver.execute_query("EXPLAIN " + query, database_="neo4j")[1]
    assert "SourceReads" not in summary.plan["args"]


def test_source_procedures_work_per_source(driver):
    for source in SOURCES:
        rows(driver, source, "MATCH (j:Junction {id: 17})-[:ROAD]->(k) RETURN k.id")
        assert rows(driver, source, "CALL db.source.clear() YIELD cleared RETURN cleared > 0 AS some")[0]["some"]
        counters = rows(driver, source, "CALL db.source.counters()")[0]
        assert counters["cachedEntries"] == 0
        assert counters["source"].startswith("luxembourg")


def http(method, path, body=None):
    request = urllib.request.Request(
        f"http://{HTTP}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    with urllib.request.urlopen(request) as answer:
        return answer.status, json.loads(answer.read() or b"{}")


def test_the_http_query_api_serves_the_sources():
    query = {"statement": "MATCH (j:Junction {id: 1})-[r:ROAD]->(k) RETURN k.id AS id ORDER BY id"}
    _, want = http("POST", "/db/neo4j/query/v2", query)
    assert want["data"]["values"], want
    for source in SOURCES:
        status, got = http("POST", f"/db/{source}/query/v2", query)
        assert status in (200, 202) and got["data"] == want["data"], (source, got)
        # An explicit transaction: open with a statement, then commit.
        status, opened = http("POST", f"/db/{source}/query/v2/tx", query)
        assert status in (200, 202) and opened["data"] == want["data"], opened
        tx = opened["transaction"]["id"]
        status, _ = http("POST", f"/db/{source}/query/v2/tx/{tx}/commit", {"statement": "RETURN 1"})
        assert status in (200, 202)
        try:
            http("POST", f"/db/{source}/query/v2", {"statement": "CREATE (n)"})
            raise AssertionError("a write ran over HTTP on a source")
        except urllib.error.HTTPError as refused:
            error = json.loads(refused.read())["errors"][0]
            assert error["code"] == "Neo.ClientError.General.ReadOnly", error


def test_zz_a_backend_that_goes_down_fails_its_queries_only(driver):
    """Last (by name): stops Redis (its pid in RHIZOME_REDIS_PID_FILE)."""
    with open(os.environ["RHIZOME_REDIS_PID_FILE"]) as f:
        pid = int(f.read().strip())
    os.kill(pid, 15)
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        __import__("time").sleep(0.1)
    rows(driver, "redis", "CALL db.source.clear()")
    with driver.session(database="redis") as session:
        with pytest.raises(Exception) as failed:
            session.run("MATCH (j:Junction {id: 5})-[:ROAD]->(k) RETURN k.id").consume()
    assert "redis" in str(failed.value).lower(), failed.value
    assert rows(driver, "neo4j", "MATCH (j:Junction {id: 1}) RETURN j.id AS id") == [{"id": 1}]
    assert rows(driver, "pg", "MATCH (j:Junction {id: 1}) RETURN j.id AS id") == [{"id": 1}]
