"""The typed event table (``ledger.table``) read at a view's positions: numpy columns.

A view's events are each session's analysis events: the recorded ones (the rows of the
session's ``EventTable``, in order) with the few the policy computed between or after them
(tabled with ``EventTable.of``). A column is made on first read, at C speed: the int
columns zero-copy (``MISSING`` where absent), the text columns as object arrays.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain, compress
from operator import not_
from typing import Any, Protocol

import numpy as np
import pandas as pd

from ledgerviz.frames.columns import coded_category_column
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.table import MISSING, EventTable
from ledgerviz.recovery.analysis import Analysis

_NUMPY_TYPES = {"q": np.int64, "b": np.int8, "H": np.uint16}


def table_column(table: EventTable, name: str) -> np.ndarray:
    """Return column ``name`` of ``table`` as numpy (``EventTable.column``: a fact made for
    every row): an int column without a copy (a range of seqs: made), a text column as an
    object array."""
    values = table.column(name)
    if isinstance(values, array):
        return np.frombuffer(values, _NUMPY_TYPES[values.typecode])
    if isinstance(values, range):
        return np.arange(values.start, values.stop, dtype=np.int64)
    return np.fromiter(values, dtype=object, count=len(values))


def tables_column(tables: Sequence[EventTable], name: str) -> np.ndarray:
    """Return column ``name`` of ``tables`` laid one after another as one numpy array, made
    in one call however many tables there are (a fleet of small sessions: thousands)."""
    if len(tables) == 1:
        return table_column(tables[0], name)
    values = [table.column(name) for table in tables]
    if any(isinstance(value, range) for value in values):  # seqs a range holds in some
        return np.concatenate([table_column(table, name) for table in tables])
    if isinstance(values[0], array):  # a column has one type code in every table
        return np.frombuffer(bytearray().join(values), _NUMPY_TYPES[values[0].typecode])
    return np.fromiter(chain.from_iterable(values), dtype=object,
                       count=sum(map(len, values)))


class _Part(Protocol):
    """Some consecutive positions of a view: their columns and types."""

    def __len__(self) -> int: ...

    def column(self, name: str) -> np.ndarray: ...

    def types(self) -> tuple[np.ndarray, list[Any]]: ...


class _Rows:
    """The rows ``rows`` (None: all, in order) of tables laid one after another."""

    def __init__(self, tables: Sequence[EventTable], rows: np.ndarray | None) -> None:
        self._tables = tables
        self._rows = rows
        self._length = sum(map(len, tables)) if rows is None else len(rows)

    def __len__(self) -> int:
        return self._length

    @property
    def tables(self) -> Sequence[EventTable]:
        """The tables whose rows these are."""
        return self._tables

    @property
    def whole(self) -> bool:
        """Whether every row of the tables is taken, in order."""
        return self._rows is None

    def _taken(self, whole: np.ndarray) -> np.ndarray:
        return whole if self._rows is None else whole[self._rows]

    def column(self, name: str) -> np.ndarray:
        return self._taken(tables_column(self._tables, name))

    def types(self) -> tuple[np.ndarray, list[Any]]:
        tables = self._tables
        if len(tables) == 1:  # the table's own codes, not copied
            return self._taken(table_column(tables[0], "type_code")), tables[0].type_names
        counts = [len(table.type_names) for table in tables]
        offsets = np.cumsum([0, *counts[:-1]])  # each table's first code in ``names``
        codes = tables_column(tables, "type_code").astype(np.int64)
        codes += np.repeat(offsets, [len(table) for table in tables])
        return self._taken(codes), [name for table in tables for name in table.type_names]


class _Slice:
    """Positions ``start`` to ``stop`` of another view's table."""

    def __init__(self, whole: ViewTable, start: int, stop: int) -> None:
        self._whole, self._start, self._stop = whole, start, stop

    def __len__(self) -> int:
        return self._stop - self._start

    def column(self, name: str) -> np.ndarray:
        return self._whole.column(name)[self._start : self._stop]

    def types(self) -> tuple[np.ndarray, list[Any]]:
        kinds = self._whole.type_array()
        return kinds.codes[self._start : self._stop], kinds.categories.tolist()


class ViewTable:
    """The table columns of a view's events, one after another as its positions run."""

    def __init__(self, parts: Sequence[_Part]) -> None:
        self._parts = list(parts) or [_Rows([EventTable.of([])], None)]  # typed, if empty
        self._made: dict[str, Any] = {}

    @classmethod
    def of(cls, logs: Sequence[SessionLog], analyses: Sequence[Analysis]) -> ViewTable:
        """Return the table of each session's analysis events, one session after another:
        the logs' tables, with the events the policy computed tabled apart, all sessions'
        together (in a fleet of small sessions, once, not once per session), and put in
        their places."""
        if not logs:
            return cls([])
        tables, own, computed = [], bytearray(), []
        for log, analysis in zip(logs, analyses, strict=True):
            table, recorded = log.event_table(), analysis.marks.recorded
            added = recorded.count(0)
            if len(recorded) - added != len(table):  # not the log's events: table them
                tables.append(EventTable.of(analysis.events))
                own += b"\x01" * len(recorded)
                continue
            tables.append(table)
            own += recorded
            if added:
                events = analysis.events
                computed.extend([events[i] for i in compress(range(len(recorded)),
                                                             map(not_, recorded))])
        if not computed:
            return cls([_Rows(tables, None)])
        held = np.frombuffer(own, np.int8).view(bool)
        rows = np.empty(len(held), dtype=np.int64)
        rows[held] = np.arange(len(held) - len(computed))
        rows[~held] = np.arange(len(held) - len(computed), len(held))
        return cls([_Rows([*tables, EventTable.of(computed)], rows)])

    @classmethod
    def joined(cls, tables: Sequence[ViewTable]) -> ViewTable:
        """Return the positions of ``tables`` one after another."""
        return cls([_Slice(table, 0, len(table)) for table in tables])

    @classmethod
    def of_events(cls, events: Sequence[dict[str, Any]]) -> ViewTable:
        """Return the table of a few events (tabled from their dicts)."""
        return cls([_Rows([EventTable.of(events)], None)])

    def head_then(self, count: int, tail: ViewTable) -> ViewTable:
        """Return the first ``count`` positions followed by those of ``tail``."""
        return ViewTable([_Slice(self, 0, count), *tail._parts])

    def __len__(self) -> int:
        return sum(map(len, self._parts))

    def values(self, name: str, start: int = 0) -> np.ndarray | list[Any]:
        """Return column ``name`` from position ``start`` on: the table's list
        (``EventTable.column``) when one whole table holds every position (a text column read
        once, by pyarrow, costs half as much from the list as from an object array made of
        it), else :meth:`column_from`."""
        part = self._parts[0]
        if len(self._parts) == 1 and isinstance(part, _Rows) and part.whole:
            tables = part.tables
            if len(tables) == 1 and isinstance(values := tables[0].column(name), list):
                return values[start:] if start else values
        return self.column_from(name, start)

    def column(self, name: str) -> np.ndarray:
        """Return the ``EventTable`` column ``name`` at every position (made once)."""
        if name not in self._made:
            columns = [part.column(name) for part in self._parts if len(part)] or [
                self._parts[0].column(name)]  # (typed, if every part is empty)
            self._made[name] = columns[0] if len(columns) == 1 else np.concatenate(columns)
        return self._made[name]

    def column_from(self, name: str, start: int) -> np.ndarray:
        """Return :meth:`column` ``name`` from position ``start`` on: a view of it once it
        is made, else joined from the parts holding those positions alone (a fork child's
        few own events after its inherited ones read no copy of the inherited)."""
        if not start or name in self._made:
            return self.column(name)[start:]
        pieces, offset = [], 0
        for part in self._parts:
            if len(part) and offset + len(part) > start:
                pieces.append(part.column(name)[max(start - offset, 0):])
            offset += len(part)
        if not pieces:
            return self.column(name)[start:]
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def take(self, name: str, positions: np.ndarray | Sequence[int]) -> np.ndarray:
        """Return ``column(name)[positions]`` (-1: the last position), reading only the parts
        holding ``positions`` when the column is not made (a fork child's rows from its own
        few events on read no copy of its inherited column)."""
        if name in self._made or len(self._parts) == 1:
            return self.column(name)[positions]
        wanted = np.asarray(positions, dtype=np.int64)
        wanted = np.where(wanted < 0, wanted + len(self), wanted)
        out, offset = None, 0
        for part in self._parts:
            inside = (wanted >= offset) & (wanted < offset + len(part))
            if len(part) and inside.any():
                values = part.column(name)[wanted[inside] - offset]
                if out is None:
                    out = np.empty(len(wanted), dtype=values.dtype)
                out[inside] = values
            offset += len(part)
        return self._parts[-1].column(name)[wanted] if out is None else out

    def ints(self, name: str, start: int = 0) -> pd.arrays.IntegerArray:
        """Return the int column ``name`` from position ``start`` on as ``Int64``."""
        return integer_array(self.column_from(name, start))

    def type_array(self) -> pd.Categorical:
        """Return every position's type as a categorical, its categories sorted (as
        ``category_column`` makes it from the type strings)."""
        if "type" not in self._made:
            self._made["type"] = self._type_array()
        return self._made["type"]

    def _type_array(self) -> pd.Categorical:
        if len(self._parts) == 1:
            return coded_category_column(*self._parts[0].types())
        pieces, names = [], []
        for part in self._parts:
            codes, part_names = part.types()
            pieces.append(np.asarray(codes, dtype=np.int64) + len(names))
            names.extend(part_names)
        return coded_category_column(np.concatenate(pieces), names)


def integer_array(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Return an int64 table column (``MISSING`` where absent) as ``Int64``."""
    missing = values == MISSING
    return pd.arrays.IntegerArray(np.where(missing, 0, values), missing)
