"""Exceptions mirror the engine's error kinds and carry positions."""

import pytest

import rhizome


def test_syntax_error_with_position(db):
    with pytest.raises(rhizome.SyntaxError) as info:
        db.execute("MATCH (n)\nRETURN n +")
    error = info.value
    assert isinstance(error, rhizome.Error)
    assert error.kind == "SyntaxError"
    assert error.position is not None
    assert isinstance(error.position, rhizome.Position)
    assert error.position.line == 2
    assert error.position.column >= 9
    assert error.position.offset == len("MATCH (n)\n") + error.position.column - 1
    assert "at 2:" in str(error)


def test_compile_time_error_with_code_and_position(db):
    # the openCypher TCK classifies an undefined variable as a SyntaxError
    with pytest.raises(rhizome.SyntaxError) as info:
        db.execute("RETURN missing")
    assert info.value.code == "UndefinedVariable"
    assert info.value.position == rhizome.Position(7, 1, 8)
    assert "UndefinedVariable" in str(info.value)


def test_runtime_errors(db):
    with pytest.raises(rhizome.ArithmeticError):
        db.execute("RETURN 1 / 0")
    with pytest.raises(rhizome.TypeError):
        db.execute("RETURN toInteger([1])")
    with pytest.raises(rhizome.ArgumentError):
        db.execute("RETURN range(1, 3, 0)")
    with pytest.raises(rhizome.ProcedureError):
        db.execute("CALL no.such.procedure()")


def test_exception_classes_form_one_hierarchy():
    kinds = [
        rhizome.SyntaxError,
        rhizome.SemanticError,
        rhizome.ParameterMissing,
        rhizome.TypeError,
        rhizome.ArgumentError,
        rhizome.ArithmeticError,
        rhizome.EntityNotFound,
        rhizome.ConstraintValidationFailed,
        rhizome.ConstraintVerificationFailed,
        rhizome.ProcedureError,
        rhizome.QueryAborted,
        rhizome.InputError,
        rhizome.IoError,
        rhizome.CorruptDatabase,
        rhizome.TransientError,
        rhizome.SchemaError,
        rhizome.InternalError,
    ]
    for cls in kinds:
        assert issubclass(cls, rhizome.Error) and issubclass(cls, Exception)
        assert cls.kind == cls.__name__
    # our TypeError is not Python's: catching one never hides the other
    assert not issubclass(rhizome.TypeError, TypeError)


def test_constraint_violation(db):
    db.execute("CREATE CONSTRAINT FOR (p:P) REQUIRE p.id IS UNIQUE")
    db.execute("CREATE (:P {id: 1})")
    with pytest.raises(rhizome.ConstraintValidationFailed):
        db.execute("CREATE (:P {id: 1})")
    assert db.execute("MATCH (p:P) RETURN count(p)").fetchall() == [(1,)]


def test_timeout_aborts_the_query(db):
    from conftest import ENDLESS

    with pytest.raises(rhizome.QueryAborted):
        db.execute(ENDLESS, timeout=0.2)
    with pytest.raises(ValueError):
        db.execute("RETURN 1", timeout=-1)
    assert db.execute("RETURN 1").fetchall() == [(1,)]
