"""Values of query results that Python has no type for: graph entities,
durations, error positions; and the conversions of temporal values between
Rhizome's representation (integers since the epoch) and :mod:`datetime`.

The native module calls the ``_``-prefixed functions; they are not public API.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

__all__ = ["Node", "Relationship", "Path", "Duration", "Position"]

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_NANOS_PER_SECOND = 1_000_000_000


class Node:
    """A node of a query result: its ``id``, ``labels`` and ``properties``
    as they were right after the statement (a node deleted by the statement
    that returns it has no labels and no properties).

    ``node["name"]`` and ``node.get("name")`` read a property. Two nodes are
    equal when their ids are.
    """

    __slots__ = ("id", "labels", "properties")

    def __init__(self, id: int, labels: List[str], properties: Dict[str, Any]) -> None:
        self.id = id
        self.labels = labels
        self.properties = properties

    def __getitem__(self, key: str) -> Any:
        return self.properties[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The property ``key``, or ``default`` if the node has none."""
        return self.properties.get(key, default)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("node", self.id))

    def __repr__(self) -> str:
        return f"Node(id={self.id}, labels={self.labels!r}, properties={self.properties!r})"


class Relationship:
    """A relationship of a query result: ``id``, ``type``, ``start`` and
    ``end`` (node ids) and ``properties``. A relationship deleted by the
    statement that returns it has only its id (``type``, ``start`` and
    ``end`` are ``None``)."""

    __slots__ = ("id", "type", "start", "end", "properties")

    def __init__(
        self,
        id: int,
        type: Optional[str],
        start: Optional[int],
        end: Optional[int],
        properties: Dict[str, Any],
    ) -> None:
        self.id = id
        self.type = type
        self.start = start
        self.end = end
        self.properties = properties

    def __getitem__(self, key: str) -> Any:
        return self.properties[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The property ``key``, or ``default`` if the relationship has none."""
        return self.properties.get(key, default)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Relationship) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("relationship", self.id))

    def __repr__(self) -> str:
        return (
            f"Relationship(id={self.id}, type={self.type!r}, start={self.start}, "
            f"end={self.end}, properties={self.properties!r})"
        )


class Path:
    """A path: ``nodes`` and the ``relationships`` between them
    (``len(path)`` is the number of relationships)."""

    __slots__ = ("nodes", "relationships")

    def __init__(self, nodes: List[Node], relationships: List[Relationship]) -> None:
        self.nodes = nodes
        self.relationships = relationships

    @property
    def start_node(self) -> Node:
        """The first node."""
        return self.nodes[0]

    @property
    def end_node(self) -> Node:
        """The last node."""
        return self.nodes[-1]

    def __len__(self) -> int:
        return len(self.relationships)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Path)
            and other.nodes == self.nodes
            and other.relationships == self.relationships
        )

    def __hash__(self) -> int:
        return hash((tuple(n.id for n in self.nodes), tuple(r.id for r in self.relationships)))

    def __repr__(self) -> str:
        return f"Path(nodes={self.nodes!r}, relationships={self.relationships!r})"


class Duration(NamedTuple):
    """A Cypher duration. Months, days and seconds are kept apart because
    their lengths vary with the calendar (``timedelta`` cannot hold months)."""

    months: int = 0
    days: int = 0
    seconds: int = 0
    nanoseconds: int = 0

    def to_timedelta(self) -> _dt.timedelta:
        """The duration as a ``timedelta`` (nanoseconds rounded down to
        microseconds); ``ValueError`` if it has months."""
        if self.months:
            raise ValueError("a duration with months has no fixed length")
        return _dt.timedelta(
            days=self.days, seconds=self.seconds, microseconds=self.nanoseconds // 1000
        )


class Position(NamedTuple):
    """Where in the query text an error is: byte ``offset`` and 1-based
    ``line`` and ``column`` (in characters)."""

    offset: int
    line: int
    column: int


# --- conversions called by the native module --------------------------------


def _date(days: int) -> _dt.date:
    return _EPOCH_DATE + _dt.timedelta(days=days)


def _local_time(nanos: int) -> _dt.time:
    micros = nanos // 1000
    seconds, micro = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return _dt.time(hour, minute, second, micro)


def _offset(seconds: int) -> _dt.timezone:
    return _dt.timezone(_dt.timedelta(seconds=seconds))


def _time(nanos: int, offset_seconds: int) -> _dt.time:
    return _local_time(nanos).replace(tzinfo=_offset(offset_seconds))


def _local_datetime(seconds: int, nanos: int) -> _dt.datetime:
    return _EPOCH + _dt.timedelta(seconds=seconds, microseconds=nanos // 1000)


def _zone(name: str) -> Optional[_dt.tzinfo]:
    try:
        import zoneinfo

        return zoneinfo.ZoneInfo(name)
    except Exception:  # unknown zone or no tz database: keep the offset
        return None


def _datetime(seconds: int, nanos: int, offset_seconds: int, zone: Optional[str]) -> _dt.datetime:
    instant = _EPOCH_UTC + _dt.timedelta(seconds=seconds, microseconds=nanos // 1000)
    tz = _zone(zone) if zone else None
    return instant.astimezone(tz if tz is not None else _offset(offset_seconds))


def _duration(months: int, days: int, seconds: int, nanos: int) -> Duration:
    return Duration(months, days, seconds, nanos)


def _time_of_day_nanos(t: _dt.time) -> int:
    return ((t.hour * 60 + t.minute) * 60 + t.second) * _NANOS_PER_SECOND + t.microsecond * 1000


def _temporal_parts(value: Any) -> Optional[Tuple[Any, ...]]:
    """The parts of a temporal parameter value, tagged by kind, or ``None``
    if ``value`` is not temporal."""
    if isinstance(value, _dt.datetime):
        offset = value.utcoffset()
        if offset is None:
            delta = value - _EPOCH
            return ("localdatetime", delta.days * 86400 + delta.seconds, delta.microseconds * 1000)
        delta = value - _EPOCH_UTC
        key = getattr(value.tzinfo, "key", None)
        return (
            "datetime",
            delta.days * 86400 + delta.seconds,
            delta.microseconds * 1000,
            int(offset.total_seconds()),
            key if isinstance(key, str) else None,
        )
    if isinstance(value, _dt.date):
        return ("date", (value - _EPOCH_DATE).days)
    if isinstance(value, _dt.time):
        offset = value.utcoffset()
        if offset is None:
            return ("localtime", _time_of_day_nanos(value))
        return ("time", _time_of_day_nanos(value), int(offset.total_seconds()))
    if isinstance(value, Duration):
        return ("duration", value.months, value.days, value.seconds, value.nanoseconds)
    if isinstance(value, _dt.timedelta):
        return ("duration", 0, value.days, value.seconds, value.microseconds * 1000)
    return None
