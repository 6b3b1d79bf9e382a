"""Rhizome, an embedded graph database: Cypher in, tuples, pandas, Arrow
or polars out.

>>> import rhizome
>>> db = rhizome.Database("example.db")
>>> db.execute("CREATE (:Person {name: $name})", {"name": "Ada"}).counters["nodes_created"]
1
>>> db.execute("MATCH (p:Person) RETURN p.name").fetchall()
[('Ada',)]

See docs/python.md for the whole guide.
"""

from ._rhizome import (
    Connection,
    Database,
    Result,
    Transaction,
    __version__,
    import_csv,
)
from ._types import Duration, Node, Path, Position, Relationship
from .errors import (
    ArgumentError,
    ArithmeticError,
    ConstraintValidationFailed,
    ConstraintVerificationFailed,
    CorruptDatabase,
    EntityNotFound,
    Error,
    InputError,
    InternalError,
    IoError,
    MemoryLimitExceeded,
    ParameterMissing,
    ProcedureError,
    QueryAborted,
    SchemaError,
    SemanticError,
    SyntaxError,
    TransientError,
    TypeError,
)

__all__ = [
    "Database",
    "Connection",
    "Transaction",
    "Result",
    "import_csv",
    "Node",
    "Relationship",
    "Path",
    "Duration",
    "Position",
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
    "__version__",
]
