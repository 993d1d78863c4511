"""The facts an event table holds for some of its rows only, a group of columns per kind.

Most facts apply to one or a few event types (a tool/result's error code, a message's
text, an assistant message's usage). A group holds them for the rows they apply to alone:
``row``, the table rows it holds (int64, ascending), and one column per fact, parallel to
``row``: a list of objects, an ``array("q")`` of integers (``MISSING`` where absent) or
an ``array("b")`` of flags (-1 where absent). The group operations are written once, for
every group: rows of a range (``split``), rows appended (``extend``), a value put at a row
(``put``), a fact for every row of the table (``dense``) or read by row (``RowFacts``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise
from typing import Any, Self

from ledgerviz.recovery.vocab import MISSING

Column = list[Any] | array
"""A group's column: a list of objects or an ``array`` of ints or flags."""

_MISSING_OF = {"q": MISSING, "b": -1}
"""The value an ``array`` column holds where a row has none, by type code."""


def missing_of(column: Column) -> Any:
    """Return the value ``column`` holds for a row without the fact (None in a list)."""
    return _MISSING_OF[column.typecode] if isinstance(column, array) else None


def missing_values(column: Column, count: int) -> Column:
    """Return ``count`` missing values of ``column``'s kind (see ``missing_of``)."""
    if isinstance(column, array):
        return array(column.typecode, [missing_of(column)]) * count
    return [None] * count


_ints = partial(array, "q")
_flags = partial(array, "b")


class FactGroup:
    """The operations of every group: a frozen slots dataclass whose first field is
    ``row`` and whose other fields are its fact columns."""

    __slots__ = ()
    row: array

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Return the names of the fact columns, in order."""
        return cls.__slots__[1:]  # type: ignore[attr-defined]

    def columns(self) -> list[Column]:
        """Return the fact columns, in the order of ``names``."""
        return [getattr(self, name) for name in self.names()]

    def __len__(self) -> int:
        return len(self.row)

    def add(self, row: int, *values: Any) -> None:
        """Append ``row`` (after every row held) with its values, one per column."""
        self.row.append(row)
        for column, value in zip(self.columns(), values, strict=True):
            column.append(value)

    def split(self, bounds: Sequence[int]) -> list[Self]:
        """Return the rows from ``bounds[i]`` to ``bounds[i + 1]`` for each ``i``
        (``bounds`` ascending), each part's rows counted from its first bound; found by
        bisection, so many parts cost one pass."""
        cuts = [bisect_left(self.row, bound) for bound in bounds]
        columns = self.columns()
        parts = []
        for start, (first, last) in zip(bounds[:-1], pairwise(cuts), strict=True):
            rows = self.row[first:last]
            parts.append(type(self)(array("q", [row - start for row in rows]) if start else rows,
                                    *[column[first:last] for column in columns]))
        return parts

    def extend(self, part: Self, offset: int) -> None:
        """Append the rows of ``part`` (all after every row held once shifted by
        ``offset``)."""
        added = part.row
        self.row.extend(array("q", [row + offset for row in added]) if offset else added)
        for column, more in zip(self.columns(), part.columns(), strict=True):
            column.extend(more)

    def index(self, row: int) -> int:
        """Return where ``row`` is held (-1: not held)."""
        at = bisect_left(self.row, row)
        return at if at < len(self.row) and self.row[at] == row else -1

    def values_at(self, row: int) -> tuple[Any, ...]:
        """Return the values of ``row``, one per column (the missing values: not held)."""
        at = self.index(row)
        return tuple(column[at] if at >= 0 else missing_of(column) for column in self.columns())

    def hold(self, row: int) -> int:
        """Return where ``row`` is held, holding it (its facts missing) if it is not."""
        rows = self.row
        if rows and row <= rows[-1]:
            at = self.index(row)
            if at >= 0:
                return at
            at = bisect_left(rows, row)
        else:
            at = len(rows)
        rows.insert(at, row)
        for column in self.columns():
            column.insert(at, missing_of(column))
        return at

    def dense(self, name: str, count: int, into: Column | None = None) -> Column:
        """Return fact ``name`` for each of ``count`` rows, the missing value where the
        group holds no row (``into``: a dense column to put the values in, returned)."""
        column = getattr(self, name)
        if into is None:
            into = missing_values(column, count)
        deque(map(into.__setitem__, self.row, column), 0)
        return into


@dataclass(frozen=True, slots=True)
class Requests(FactGroup):
    """One row per ``tool-call`` block of an ``assistant/message`` (§4.2), in log order
    (a row per block: an assistant message's row can be held more than once)."""

    row: array = field(default_factory=_ints)
    """The table row of the assistant message."""
    call_id: list[Any] = field(default_factory=list)
    """The block's ``id``."""
    name: list[Any] = field(default_factory=list)
    """The block's ``name``."""
    arguments: list[Any] = field(default_factory=list)
    """The block's ``arguments`` (the raw JSON string the model wrote)."""


@dataclass(frozen=True, slots=True)
class Calls(FactGroup):
    """Every ``tool/call`` row (§4.4)."""

    row: array = field(default_factory=_ints)
    call_id: list[Any] = field(default_factory=list)
    """The call it dispatches (``callId``)."""
    tool_name: list[Any] = field(default_factory=list)
    """Its ``name``."""
    arguments: list[Any] = field(default_factory=list)
    """Its ``arguments``."""


@dataclass(frozen=True, slots=True)
class Results(FactGroup):
    """Every ``tool/result`` row (§4.4; ``payload_result_facts``)."""

    row: array = field(default_factory=_ints)
    call_id: list[Any] = field(default_factory=list)
    """The call it answers."""
    error_code: list[Any] = field(default_factory=list)
    """Its ``error.code``."""
    is_error: array = field(default_factory=_flags)
    """Its ``isError`` (either message form): 1 or 0."""
    synthetic: array = field(default_factory=_flags)
    """Whether recovery wrote it (an error code the recovery engine writes, or a message id
    it prefixes): 1 or 0."""


@dataclass(frozen=True, slots=True)
class Messages(FactGroup):
    """Every row of a message type (``table.MESSAGE_TYPES``, §4.2)."""

    row: array = field(default_factory=_ints)
    role: list[Any] = field(default_factory=list)
    """The message's ``role``."""
    source_kind: list[Any] = field(default_factory=list)
    """The message's ``source.kind``."""
    text: list[Any] = field(default_factory=list)
    """Its visible text: its text blocks (nested tool-result text included), joined by
    newlines ("" when none)."""


@dataclass(frozen=True, slots=True)
class Ends(FactGroup):
    """Every ``turn/end`` row (§4.1)."""

    row: array = field(default_factory=_ints)
    end_reason: list[Any] = field(default_factory=list)
    """Its ``reason.kind``."""


@dataclass(frozen=True, slots=True)
class Routes(FactGroup):
    """The rows naming a model: an ``assistant/message`` whose source names one, a
    request/header or request/context that names one (``table.route_of``)."""

    row: array = field(default_factory=_ints)
    provider: list[Any] = field(default_factory=list)
    model: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Usage(FactGroup):
    """The ``assistant/message`` rows with a ``usage`` object (§4.3): its counts (an int
    from 0 to 2**53 - 1, else ``MISSING``)."""

    row: array = field(default_factory=_ints)
    input_tokens: array = field(default_factory=_ints)
    output_tokens: array = field(default_factory=_ints)
    cache_read_tokens: array = field(default_factory=_ints)
    reasoning_tokens: array = field(default_factory=_ints)


GROUP_KINDS: dict[str, type[FactGroup]] = {
    "calls": Calls, "results": Results, "messages": Messages, "ends": Ends, "routes": Routes,
    "usage": Usage, "requests": Requests}
"""The fact groups of an event table (``table.EventTable``'s fields of those names)."""


class RowFacts:
    """One fact read by table row from the groups holding it (a row none holds: the
    missing value); reads in ascending rows cost O(1) each (a cursor per group: the row
    after the last one found is tried first), others a bisection. Not iterable: a reader
    wanting every row asks the table for the dense column."""

    __slots__ = ("_at", "_missing", "_more", "_name", "_rows", "_values")

    __iter__ = None

    def __init__(self, groups: Sequence[FactGroup], name: str) -> None:
        first, *more = groups
        self._rows, self._values, self._at = first.row, getattr(first, name), -1
        self._more = [RowFacts([group], name) for group in more]
        """The other groups holding the fact (a call id: the calls', then the results')."""
        self._missing = missing_of(self._values)
        self._name = name

    def _find(self, row: int) -> int:
        """Return where ``row`` is in the first group (-1: not held)."""
        rows, at = self._rows, self._at + 1
        if at < len(rows) and rows[at] == row:
            self._at = at
            return at
        if row < 0:
            raise IndexError(f"row {row}: a table's rows count from 0")
        at = bisect_left(rows, row)
        if at < len(rows) and rows[at] == row:
            self._at = at
            return at
        return -1

    def __getitem__(self, row: int) -> Any:
        rows, at = self._rows, self._at + 1
        if at < len(rows) and rows[at] == row:  # (the common read, inline)
            self._at = at
            return self._values[at]
        for more in self._more:  # the row after another group's cursor
            rows, at = more._rows, more._at + 1
            if at < len(rows) and rows[at] == row:
                more._at = at
                return more._values[at]
        for facts in (self, *self._more):
            if facts._find(row) >= 0:
                return facts._values[facts._at]
        return self._missing

    def __setitem__(self, row: int, value: Any) -> None:
        for facts in (self, *self._more):
            if facts._find(row) >= 0:
                facts._values[facts._at] = value
                return
        raise KeyError(f"row {row} holds no {self._name}")
