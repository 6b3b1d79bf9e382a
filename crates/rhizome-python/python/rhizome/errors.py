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


def _kind(name: str, doc: str) -> Type[Error]:
    cls = type(name, (Error,), {"__doc__": doc, "kind": name, "__module__": "rhizome"})
    return cls


SyntaxError = _kind("SyntaxError", "The query text is not valid Cypher.")  # noqa: A001
SemanticError = _kind("SemanticError", "The query is valid Cypher but not meaningful.")
ParameterMissing = _kind("ParameterMissing", "A parameter the query uses was not supplied.")
TypeError = _kind("TypeError", "A value has the wrong type for an operation.")  # noqa: A001
ArgumentError = _kind("ArgumentError", "An argument has the right type but an invalid value.")
ArithmeticError = _kind("ArithmeticError", "Arithmetic failed (overflow, division by zero).")  # noqa: A001
EntityNotFound = _kind("EntityNotFound", "An entity the query refers to does not exist.")
ConstraintValidationFailed = _kind(
    "ConstraintValidationFailed", "A write would break a schema constraint."
)
ConstraintVerificationFailed = _kind(
    "ConstraintVerificationFailed", "A constraint cannot be created on the existing data."
)
ProcedureError = _kind("ProcedureError", "A procedure failed or does not exist.")
QueryAborted = _kind(
    "QueryAborted", "The query was cancelled, timed out or ran out of its memory budget."
)
InputError = _kind("InputError", "An input file (CSV, ...) is malformed.")
IoError = _kind("IoError", "Reading or writing a file failed.")
CorruptDatabase = _kind("CorruptDatabase", "A database directory is damaged or of an unknown format.")
TransientError = _kind(
    "TransientError", "A temporary condition (the writer lock is busy): retrying may succeed."
)
SchemaError = _kind("SchemaError", "A schema command conflicts with the schema.")
InternalError = _kind("InternalError", "A bug in Rhizome: an invariant did not hold.")

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


def _from_native(
    kind: str,
    message: str,
    code: Optional[str],
    position: Optional[tuple],
    source: Optional[str],
) -> Error:
    """The exception for an error of the native engine (called by it)."""
    cls = _BY_KIND.get(kind, Error)
    where = Position(*position) if position is not None else None
    return cls(message, code=code, position=where, source=source)
