"""Exceptions raised by Rhizome, one class per error kind.

Every exception is a :class:`rhizome.Error` with ``kind`` (the openCypher /
Neo4j classification, e.g. ``"SyntaxError"``), ``code`` (a detail code such
as ``"UndefinedVariable"``, or ``None``), ``message`` and ``position`` (a
:class:`rhizome.Position` in the query text, or ``None``).
"""

from __future__ import annotations

from typing import Dict, Optional, Type

from ._types import Position

__all__ = [
    "Error",
    "SyntaxError",
    "SemanticError",
    "ParameterMissing",
    "TypeError",
    "ArgumentError",
    "ArithmeticError",
    "EntityNotFound",
    "ConstraintValidationFailed",
    "ConstraintVerificationFailed",
    "ProcedureError",
    "QueryAborted",
    "MemoryLimitExceeded",
    "InputError",
    "IoError",
    "CorruptDatabase",
    "TransientError",
    "SchemaError",
    "InternalError",
]


class Error(Exception):
    """Base class of every error Rhizome raises."""

    kind: str = "Error"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        position: Optional[Position] = None,
        source: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.position = position
        self.source = source

    def __str__(self) -> str:
        text = f"{self.kind}: {self.message}"
        if self.code:
            text += f" [{self.code}]"
        if self.position is not None:
            where = f"{self.position.line}:{self.position.column}"
            text += f" at {self.source}:{where}" if self.source else f" at {where}"
        return text


class SyntaxError(Error):  # noqa: A001
    """The query text is not valid Cypher."""

    kind = "SyntaxError"


class SemanticError(Error):
    """The query is valid Cypher but not meaningful."""

    kind = "SemanticError"


class ParameterMissing(Error):
    """A parameter the query uses was not supplied."""

    kind = "ParameterMissing"


class TypeError(Error):  # noqa: A001
    """A value has the wrong type for an operation."""

    kind = "TypeError"


class ArgumentError(Error):
    """An argument has the right type but an invalid value."""

    kind = "ArgumentError"


class ArithmeticError(Error):  # noqa: A001
    """Arithmetic failed (overflow, division by zero)."""

    kind = "ArithmeticError"


class EntityNotFound(Error):
    """An entity the query refers to does not exist."""

    kind = "EntityNotFound"


class ConstraintValidationFailed(Error):
    """A write would break a schema constraint."""

    kind = "ConstraintValidationFailed"


class ConstraintVerificationFailed(Error):
    """A constraint cannot be created on the existing data."""

    kind = "ConstraintVerificationFailed"


class ProcedureError(Error):
    """A procedure failed or does not exist."""

    kind = "ProcedureError"


class QueryAborted(Error):
    """The query was cancelled, timed out or ran out of its memory budget."""

    kind = "QueryAborted"


class MemoryLimitExceeded(QueryAborted):
    """The query needed more memory than its limit (``Database(memory_limit=...)``)
    and was stopped; ``code`` is ``"MemoryPoolOutOfMemoryError"``."""

    kind = "QueryAborted"


class InputError(Error):
    """An input file (CSV, ...) is malformed."""

    kind = "InputError"


class IoError(Error):
    """Reading or writing a file failed."""

    kind = "IoError"


class CorruptDatabase(Error):
    """A database directory is damaged or of an unknown format."""

    kind = "CorruptDatabase"


class TransientError(Error):
    """A temporary condition (the writer lock is busy): retrying may succeed."""

    kind = "TransientError"


class SchemaError(Error):
    """A schema command conflicts with the schema."""

    kind = "SchemaError"


class InternalError(Error):
    """A bug in Rhizome: an invariant did not hold."""

    kind = "InternalError"


_BY_KIND: Dict[str, Type[Error]] = {
    cls.kind: cls
    for cls in (
        SyntaxError,
        SemanticError,
        ParameterMissing,
        TypeError,
        ArgumentError,
        ArithmeticError,
        EntityNotFound,
        ConstraintValidationFailed,
        ConstraintVerificationFailed,
        ProcedureError,
        QueryAborted,
        InputError,
        IoError,
        CorruptDatabase,
        TransientError,
        SchemaError,
        InternalError,
    )
}


#: Detail codes with a class of their own (a subclass of the kind's class).
_BY_CODE: Dict[str, Type[Error]] = {"MemoryPoolOutOfMemoryError": MemoryLimitExceeded}


for _cls in (Error, *_BY_KIND.values(), *_BY_CODE.values()):
    _cls.__module__ = "rhizome"  # shown as rhizome.SyntaxError, where users import it


def _from_native(
    kind: str,
    message: str,
    code: Optional[str],
    position: Optional[tuple],
    source: Optional[str],
) -> Error:
    """The exception for an error of the native engine (called by it)."""
    cls = _BY_CODE.get(code or "") or _BY_KIND.get(kind, Error)
    if not issubclass(cls, _BY_KIND.get(kind, Error)):
        cls = _BY_KIND.get(kind, Error)
    where = Position(*position) if position is not None else None
    return cls(message, code=code, position=where, source=source)
