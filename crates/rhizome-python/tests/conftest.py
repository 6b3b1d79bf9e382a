import pytest

import rhizome

# A query that runs for minutes unless something stops it (10^10 rows).
ENDLESS = (
    "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b "
    "WITH a, b WHERE a + b > 0 RETURN count(*)"
)


@pytest.fixture
def db(tmp_path):
    database = rhizome.Database(tmp_path / "db")
    yield database
    database.close()


@pytest.fixture
def people(db):
    db.execute(
        "CREATE (a:Person {name: 'Ada', born: date('1815-12-10')})"
        "-[:KNOWS {since: 1833}]->(b:Person:Engineer {name: 'Charles'}), "
        "(a)-[:WROTE]->(:Note {title: 'Note G'})"
    )
    return db
