"""The Python driver against `rhizome serve --auth basic`: logins, roles.

The suite script starts this server with `--initial-password admin-pw` on a
database of its own and passes its address in RHIZOME_BOLT_AUTH.
"""

import ast
import os
import pathlib

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, ClientError, Forbidden

ADDRESS = os.environ["RHIZOME_BOLT_AUTH"]
URI = f"neo4j://{ADDRESS}"


@pytest.fixture(scope="module")
def admin():
    d = GraphDatabase.driver(URI, auth=("neo4j", "admin-pw"))
    with d.session() as s:
        s.run("CREATE USER reader_py IF NOT EXISTS SET PASSWORD 'r-pw' CHANGE NOT REQUIRED").consume()
        s.run("GRANT ROLE reader TO reader_py").consume()
        s.run("CREATE USER editor_py IF NOT EXISTS SET PASSWORD 'e-pw' CHANGE NOT REQUIRED").consume()
        s.run("GRANT ROLE editor TO editor_py").consume()
    yield d
    d.close()


def test_a_wrong_password_is_refused():
    with GraphDatabase.driver(URI, auth=("neo4j", "wrong")) as d:
        with pytest.raises(AuthError):
            d.verify_connectivity()


def test_no_credentials_are_refused():
    with GraphDatabase.driver(URI, auth=None) as d:
        with pytest.raises(AuthError):
            d.verify_connectivity()


def test_a_reader_reads_but_may_not_write(admin):
    with GraphDatabase.driver(URI, auth=("reader_py", "r-pw")) as d:
        with d.session() as s:
            assert s.run("RETURN 1 AS x").single()["x"] == 1
            with pytest.raises(Forbidden):
                s.run("CREATE (:ReaderWrite)").consume()
            user = s.run("SHOW CURRENT USER").single()
            assert user["username"] == "reader_py" and user["roles"] == ["reader"]


def test_an_editor_writes_but_may_not_manage_users(admin):
    with GraphDatabase.driver(URI, auth=("editor_py", "e-pw")) as d:
        with d.session() as s:
            s.execute_write(lambda tx: tx.run("CREATE (:EditorWrite)").consume())
            with pytest.raises(Forbidden):
                s.run("CREATE USER nope SET PASSWORD 'x'").consume()


def test_the_admin_sees_users_and_roles(admin):
    with admin.session() as s:
        users = {r["user"]: r["roles"] for r in s.run("SHOW USERS")}
        assert users["neo4j"] == ["admin"] and users["reader_py"] == ["reader"]
        assert {r["role"] for r in s.run("SHOW ROLES")} == {"reader", "editor", "admin"}


def test_the_readmes_python_example_runs(admin, capsys):
    """README's "Connect with the Python driver" snippet, run as it is
    written but for the address and the password of this server."""
    readme = pathlib.Path(__file__).resolve().parents[3] / "README.md"
    text = readme.read_text()
    section = text[text.index("## Connect with the Python driver"):]
    snippet = section[section.index("```python\n") + len("```python\n"):]
    snippet = snippet[:snippet.index("```")]
    assert 'GraphDatabase.driver("neo4j://127.0.0.1:7687", auth=("neo4j", "choose-one"))' in snippet
    snippet = snippet.replace("127.0.0.1:7687", ADDRESS).replace("choose-one", "admin-pw")
    exec(compile(snippet, "README.md", "exec"), {})
    printed = capsys.readouterr().out.strip()
    names = ast.literal_eval(printed)
    assert "Keanu Reeves" in names and len(names) >= 3, printed
