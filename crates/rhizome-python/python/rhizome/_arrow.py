"""Arrow arrays of result columns that have no native Arrow type
(entities, lists, maps, mixed values): called by the native module."""

from __future__ import annotations

from typing import Any, List


def _array(values: List[Any]) -> Any:
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        # mixed types: keep each value's text
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
