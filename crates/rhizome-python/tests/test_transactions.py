"""Explicit transactions: commit on success, roll back on error."""

import pytest

import rhizome


def count(db, label):
    return db.execute(f"MATCH (n:{label}) RETURN count(n)").fetchone()[0]


def test_with_block_commits(db):
    with db.transaction() as tx:
        tx.execute("CREATE (:T {i: 1})")
        tx.execute("CREATE (:T {i: 2})")
        # the transaction reads its own writes; others do not see them yet
        assert tx.execute("MATCH (t:T) RETURN count(t)").fetchone() == (2,)
        assert count(db, "T") == 0
    assert not tx.open
    assert count(db, "T") == 2


def test_with_block_rolls_back_on_exception(db):
    with pytest.raises(RuntimeError, match="boom"):
        with db.transaction() as tx:
            tx.execute("CREATE (:T)")
            raise RuntimeError("boom")
    assert count(db, "T") == 0


def test_failed_statement_rolls_the_transaction_back(db):
    with pytest.raises(rhizome.ArithmeticError):
        with db.transaction() as tx:
            tx.execute("CREATE (:T)")
            tx.execute("RETURN 1 / 0")
    assert count(db, "T") == 0


def test_after_a_failed_statement_only_rollback_remains(db):
    tx = db.transaction()
    tx.execute("CREATE (:T)")
    with pytest.raises(rhizome.SyntaxError):
        tx.execute("CREATE (")
    with pytest.raises(rhizome.TransientError):
        tx.execute("CREATE (:T)")
    with pytest.raises(rhizome.TransientError):
        tx.commit()
    tx.rollback()
    assert count(db, "T") == 0


def test_explicit_commit_and_rollback(db):
    tx = db.transaction()
    tx.execute("CREATE (:T)")
    tx.commit()
    with pytest.raises(rhizome.Error, match="closed"):
        tx.execute("CREATE (:T)")
    tx.rollback()  # no effect once closed
    tx = db.connect().transaction()
    tx.execute("CREATE (:T)")
    tx.rollback()
    assert count(db, "T") == 1


def test_autocommit_statements_wait_for_the_writer(db):
    tx = db.transaction()
    tx.execute("CREATE (:T)")
    # reads run beside an open write transaction
    assert count(db, "T") == 0
    tx.commit()
    db.execute("CREATE (:T)")
    assert count(db, "T") == 2
