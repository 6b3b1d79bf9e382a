"""Type stubs of the native module (see docs/python.md)."""

from __future__ import annotations

import os
import pathlib
from types import TracebackType
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Type, Union

__version__: str

_Path = Union[str, os.PathLike[str]]
_Files = Union[Mapping[str, Union[_Path, Sequence[_Path]]], Sequence[str], str, None]

class Result:
    """The outcome of one statement; rows are consumed as they are fetched.

    ``fetchone`` / ``fetchmany`` / ``fetchall`` and iteration read rows from
    a cursor; ``arrow`` / ``df`` / ``pl`` take every row from the cursor on
    and leave none (a second call gives an empty table).
    """

    @property
    def columns(self) -> List[str]: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def plan(self) -> Optional[str]: ...
    @property
    def profile(self) -> Optional[str]: ...
    @property
    def counters(self) -> Dict[str, int]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Tuple[Any, ...]]: ...
    def __next__(self) -> Tuple[Any, ...]: ...
    def fetchone(self) -> Optional[Tuple[Any, ...]]: ...
    def fetchmany(self, size: int = 1) -> List[Tuple[Any, ...]]: ...
    def fetchall(self) -> List[Tuple[Any, ...]]: ...
    def arrow(self) -> Any:
        """The rows not fetched yet as a ``pyarrow.Table``."""
    def df(self) -> Any:
        """The rows not fetched yet as a ``pandas.DataFrame``."""
    def pl(self) -> Any:
        """The rows not fetched yet as a ``polars.DataFrame``."""

class Transaction:
    """An explicit write transaction (a context manager)."""

    @property
    def open(self) -> bool: ...
    def execute(
        self,
        query: str,
        parameters: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Result: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def __enter__(self) -> Transaction: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]] = None,
        exc: Optional[BaseException] = None,
        traceback: Optional[TracebackType] = None,
    ) -> bool: ...

class Connection:
    """A connection to a database."""

    def execute(
        self,
        query: str,
        parameters: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Result: ...
    def transaction(self) -> Transaction: ...
    def close(self) -> None: ...
    def __enter__(self) -> Connection: ...
    def __exit__(self, *args: Any) -> bool: ...

class Database:
    """A database directory opened in this process."""

    def __init__(
        self,
        path: _Path,
        read_only: bool = False,
        *,
        memory_limit: Union[int, str, None] = None,
    ) -> None: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def memory_limit(self) -> Optional[int]:
        """Most bytes one statement may hold (default: half the memory)."""
    @property
    def read_only(self) -> bool: ...
    def execute(
        self,
        query: str,
        parameters: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
    ) -> Result: ...
    def connect(self) -> Connection: ...
    def transaction(self) -> Transaction: ...
    def close(self) -> None: ...
    def __enter__(self) -> Database: ...
    def __exit__(self, *args: Any) -> bool: ...

def import_csv(
    path: _Path,
    nodes: _Files = None,
    relationships: _Files = None,
    *,
    delimiter: str = ",",
    array_delimiter: str = ";",
    quote: str = '"',
    id_type: str = "string",
    ignore_empty_strings: bool = False,
    skip_bad_relationships: bool = False,
    skip_duplicate_nodes: bool = False,
    overwrite: bool = False,
    threads: int = 0,
) -> Dict[str, Any]: ...
