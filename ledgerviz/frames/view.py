"""Every session's events under one policy as one set of columns, so frames pay pandas once."""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames.columns import int_column, int_values, joined, joined_inferred, time_of
from ledgerviz.frames.view_table import ViewTable
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.fields import concatenated
from ledgerviz.ledger.table import MISSING
from ledgerviz.recovery.analysis import Analysis
from ledgerviz.recovery.analyze import joined_call_columns
from ledgerviz.recovery.result_columns import CallColumns


@dataclass(frozen=True, slots=True)
class SessionsView:
    """The events of every session (``analysis.events`` one session after another) as columns.

    A position is an index into these columns; ``sessions[position]`` is the index of
    its session in ``keys``. Frames are built in one pass over all sessions, so a
    session costs no fixed pandas work of its own. The events' own facts are read from
    ``table`` (the sessions' typed event tables); ``events`` (the dicts) only for a few.
    """

    keys: list[str]
    logs: list[SessionLog]
    analyses: list[Analysis]
    events: Sequence[dict[str, Any]]
    """Every event's dict, read only for a few (a session's may be decoded when read)."""
    table: ViewTable
    sessions: np.ndarray
    """The session index of every event (int64)."""
    seqs: list[Any]
    """Every event's seq (``analysis.seqs``)."""
    branch: np.ndarray
    """Every event's branch, codes into ``BRANCHES`` (int8; the analyses' marks)."""
    synthetic: np.ndarray
    """Whether each event is synthetic (bool)."""
    recorded: np.ndarray
    """Whether each event is recorded (bool)."""
    recovery_code: np.ndarray
    """Every event's recovery code, codes into ``RECOVERY_CODE_NAMES`` (int8)."""
    calls: CallColumns
    """The calls of every session, one session after another."""
    call_sessions: np.ndarray
    """The session index of every call in ``calls`` (int64)."""
    seq_array: pd.arrays.IntegerArray
    """``seqs`` as ``Int64``."""
    time_array: pd.api.extensions.ExtensionArray
    """Every event's time as ``datetime64[ms, UTC]``."""
    type_array: pd.Categorical
    """Every event's type as a categorical (its categories sorted)."""
    _names: pd.Index = field(repr=False)
    _call_ints: dict[str, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False)
    """The int call columns converted so far (``call_ints``; a ``replace``d view, which
    may hold other calls, starts anew)."""
    start: int = 0
    """The first position the frame builders read (:meth:`from_position`); every column
    still holds every event, so positions stay those of the whole view."""

    @classmethod
    def of(cls, sessions: Sequence[tuple[str, SessionLog, Analysis]]) -> SessionsView:
        """Return the view of ``(key, log, analysis)`` triples, in their order."""
        keys = [key for key, _, _ in sessions]
        logs = [log for _, log, _ in sessions]
        analyses = [analysis for _, _, analysis in sessions]
        table = ViewTable.of(logs, analyses)
        seqs = _joined([analysis.seqs for analysis in analyses])
        types = table.type_array()
        recorded = marks(analyses, "recorded")
        return cls(
            keys,
            logs,
            analyses,
            Chained([analysis.events for analysis in analyses]),
            table,
            np.repeat(np.arange(len(keys)), [len(a.events) for a in analyses]),
            seqs,
            *(recorded if name == "recorded" else marks(analyses, name) for name in MARKS),
            joined_call_columns(analyses),
            np.repeat(np.arange(len(keys)), [analysis.call_count() for analysis in analyses]),
            _seq_array(table, recorded, seqs),
            time_of(table.column("time")),
            types,
            types.categories,
        )

    @classmethod
    def joined(cls, views: Sequence[SessionsView]) -> SessionsView | None:
        """Return the view of the sessions of ``views`` one after another (what :meth:`of`
        gives for all their sessions); None when their type columns cannot be joined so."""
        types = views[0].type_array
        for view in views[1:]:
            types = joined_inferred(types, view.type_array)
            if types is None:
                return None
        counts = np.cumsum([0, *(len(view.keys) for view in views)])
        seq_array, time_array = views[0].seq_array, views[0].time_array
        for view in views[1:]:
            seq_array = joined(seq_array, view.seq_array)
            time_array = joined(time_array, view.time_array)

        def chained(name: str) -> list[Any]:
            return _joined([getattr(view, name) for view in views])

        sessions = np.concatenate([view.sessions + offset
                                   for view, offset in zip(views, counts, strict=False)])
        call_sessions = np.concatenate([view.call_sessions + offset
                                        for view, offset in zip(views, counts, strict=False)])
        return cls(chained("keys"), chained("logs"), chained("analyses"),
                   Chained([view.events for view in views]),
                   ViewTable.joined([view.table for view in views]), sessions,
                   chained("seqs"),
                   *(np.concatenate([getattr(view, name) for view in views]) for name in MARKS),
                   CallColumns.joined([view.calls for view in views]), call_sessions,
                   seq_array, time_array, types, types.categories)

    def continued(self, key: str, log: SessionLog, analysis: Analysis,
                  shared: int) -> SessionsView | None:
        """Return the view of one session whose analysis begins with the first ``shared``
        events of this one-session view's (a prefix of its session), columns sliced from
        these; None when a type column cannot be joined so (build it with :meth:`of`)."""
        tail = ViewTable.of_events(analysis.events[shared:])
        types = joined_inferred(self.type_array[:shared], tail.type_array())
        if types is None:
            return None
        return SessionsView(
            [key],
            [log],
            [analysis],
            analysis.events,
            self.table.head_then(shared, tail),
            np.zeros(len(analysis.events), dtype=np.int64),
            analysis.seqs,
            *(marks([analysis], name) for name in MARKS),
            _AnalysisCalls(analysis),  # type: ignore[arg-type]
            np.zeros(analysis.call_count(), dtype=np.int64),
            joined(self.seq_array[:shared], int_column(analysis.seqs[shared:])),
            joined(self.time_array[:shared], time_of(tail.column("time"))),
            types,
            types.categories,
        )

    def seq_at(self, positions: Sequence[int]) -> pd.arrays.IntegerArray:
        """Return the seqs of the events at ``positions`` (-1: no event, <NA>)."""
        return self.seq_array.take(positions, allow_fill=True)

    def time_at(self, positions: Sequence[int]) -> pd.api.extensions.ExtensionArray:
        """Return the times of the events at ``positions`` (-1: no event, NaT)."""
        return self.time_array.take(positions, allow_fill=True)

    def column(self, name: str) -> np.ndarray:
        """Return the table column ``name`` (see ``EventTable``) from the view's start on:
        event ``i``'s value is at ``i - start``."""
        return self.table.column_from(name, self.start)

    def values(self, name: str) -> np.ndarray | list[Any]:
        """Return :meth:`column` ``name``, as the table's own list where it holds every
        position of the view (see ``ViewTable.values``)."""
        return self.table.values(name, self.start)

    def call_ints(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Return the int column ``name`` of ``calls`` as (int64 values, missing mask), as
        ``int_column`` reads it (made once: the calls frame and the counts by turn and step
        read the same columns)."""
        made = self._call_ints.get(name)
        if made is None:
            made = self._call_ints[name] = int_values(getattr(self.calls, name))
        return made

    def call_int64(self, name: str) -> np.ndarray:
        """Return :meth:`call_ints` as one int64 array, ``MISSING`` where missing (what
        ``keys.int64_of`` makes of the list)."""
        values, missing = self.call_ints(name)
        return np.where(missing, MISSING, values)

    def kinds_at(self, positions: np.ndarray) -> np.ndarray:
        """Return the types of the events at ``positions`` as a numpy str array."""
        return self._names.to_numpy().astype(str)[self.type_array.codes[positions]]

    def type_at(self, position: int) -> Any:
        """Return the type of the event at ``position``."""
        code = self.type_array.codes[position]
        return None if code < 0 else self._names[code]

    def data_at(self, position: int) -> dict[str, Any]:
        """Return the ``data`` object of the event at ``position`` ({} when it has none)."""
        data = self.events[position].get("data")
        return data if data.__class__ is dict else {}

    def holds(self, kind: str) -> bool:
        """Return whether an event of type ``kind`` is among the view's."""
        return kind in self._names

    def positions_of(self, kinds: frozenset[str] | Sequence[str],
                     stop: int | None = None) -> np.ndarray:
        """Return the positions from ``start`` to ``stop`` (default: the end) of the events
        whose type is in ``kinds``, in log order (an int64 array)."""
        wanted = [code for code, name in enumerate(self._names) if name in kinds]
        codes = self.type_array.codes[self.start : stop]
        return np.flatnonzero(np.isin(codes, wanted)) + self.start

    def indices_of(self, kinds: frozenset[str] | Sequence[str],
                   stop: int | None = None) -> list[int]:
        """Return :meth:`positions_of` as a list."""
        return self.positions_of(kinds, stop).tolist()

    def from_position(self, start: int) -> SessionsView:
        """Return this view with the frame builders reading only the events from ``start`` on."""
        return replace(self, start=start)


class Chained(Sequence[Any]):
    """Sequences one after another, indexed without a copy of any (so no lazily decoded
    events are decoded but those read)."""

    def __init__(self, parts: Sequence[Sequence[Any]]) -> None:
        self._parts = list(parts)
        self._ends = list(accumulate(map(len, self._parts)))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __getitem__(self, index: Any) -> Any:
        index = operator.index(index)  # one position (no slices)
        if not 0 <= index < len(self):
            raise IndexError(f"Chained takes a position from 0 to {len(self) - 1}, not {index}")
        part = bisect_right(self._ends, index)
        return self._parts[part][index - (self._ends[part - 1] if part else 0)]


class _AnalysisCalls:
    """An analysis' ``call_columns``, made when first read: a cut's view (``continued``)
    seldom reads them (its frames slice the whole session's), and a cut's analysis holds
    ``CallFacts``, from which the columns cost a pass per field."""

    __slots__ = ("_analysis",)

    def __init__(self, analysis: Analysis) -> None:
        self._analysis = analysis

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not a column (a copy asking before ``_analysis`` is set)
            raise AttributeError(name)
        return getattr(self._analysis.call_columns, name)

    def __len__(self) -> int:
        return self._analysis.call_count()


MARKS = ("branch", "synthetic", "recorded", "recovery_code")
"""The ``EventMarks`` a view holds, in its fields' order."""
_FLAGS = frozenset({"synthetic", "recorded"})


def marks(analyses: Sequence[Analysis], name: str) -> np.ndarray:
    """Return the ``EventMarks`` column ``name`` of ``analyses`` one after another: int8
    codes, or bools for a 0/1 mark (one analysis' read without a copy; many joined as bytes
    first, so a fleet of small sessions makes one array, not one per session)."""
    parts = [getattr(analysis.marks, name) for analysis in analyses]
    codes = np.frombuffer(parts[0] if len(parts) == 1 else bytearray().join(parts), np.int8)
    return codes.view(bool) if name in _FLAGS else codes


def _seq_array(table: ViewTable, recorded: np.ndarray, seqs: list[Any]
               ) -> pd.arrays.IntegerArray:
    """Return the seqs as ``Int64``: the table's column when every event is recorded and
    holds an int64 seq (the scan's seqs are then that column's values), else ``seqs``."""
    if recorded.all():
        column = table.column("seq")
        missing = column == MISSING
        if not missing.any():
            return pd.arrays.IntegerArray(column.copy(), missing)
    return int_column(seqs)


def _joined(lists: list[list[Any]]) -> list[Any]:
    """Return one list of the sessions' lists (the list itself when there is one)."""
    return lists[0] if len(lists) == 1 else concatenated(lists)
