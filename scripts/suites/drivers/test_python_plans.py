"""EXPLAIN and PROFILE plans reach the Python driver as `summary.plan` /
`summary.profile` (the server at RHIZOME_BOLT, no authentication)."""

import os

from neo4j import GraphDatabase

URI = f"bolt://{os.environ['RHIZOME_BOLT']}"


def operators(plan):
    yield plan["operatorType"]
    for child in plan["children"]:
        yield from operators(child)


def test_explain_gives_a_plan_tree():
    with GraphDatabase.driver(URI, auth=("neo4j", "unused")) as d, d.session() as s:
        summary = s.run("EXPLAIN MATCH (p:Person) WHERE p.born > 1960 RETURN p.name").consume()
        assert summary.plan is not None and summary.profile is None
        assert "LabelScan" in list(operators(summary.plan)), summary.plan
        assert isinstance(summary.plan["args"]["EstimatedRows"], float)

        def all_identifiers(plan):
            yield from plan["identifiers"]
            for child in plan["children"]:
                yield from all_identifiers(child)

        assert "p" in set(all_identifiers(summary.plan))


def test_profile_gives_rows_per_operator():
    with GraphDatabase.driver(URI, auth=("neo4j", "unused")) as d, d.session() as s:
        result = s.run("PROFILE MATCH (p:Person) RETURN p.name AS name")
        names = [r["name"] for r in result]
        profile = result.consume().profile
        assert profile is not None

        def find(plan, name):
            if plan["operatorType"] == name:
                return plan
            for c in plan["children"]:
                hit = find(c, name)
                if hit:
                    return hit
            return None

        scan = find(profile, "LabelScan")
        assert scan is not None, profile
        assert scan["rows"] == len(names)
        assert scan["time"] >= 0 and scan["dbHits"] == 0
