"""Every session's events under one policy as one set of columns, so frames pay pandas once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames.columns import (
    category_column,
    int_column,
    joined,
    joined_inferred,
    time_column,
)
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.fields import EventFields, concatenated
from ledgerviz.recovery.analysis import Analysis, Branch, CallFacts


@dataclass(frozen=True, slots=True)
class SessionsView:
    """The events of every session (``analysis.events`` one session after another) as columns.

    A position is an index into these columns; ``sessions[position]`` is the index of
    its session in ``keys``. Frames are built in one pass over all sessions, so a
    session costs no fixed pandas work of its own.
    """

    keys: list[str]
    logs: list[SessionLog]
    analyses: list[Analysis]
    events: list[dict[str, Any]]
    fields: EventFields
    sessions: list[int]
    """The session index of every event."""
    seqs: list[Any]
    """Every event's seq (``analysis.seqs``)."""
    branch: list[Branch]
    synthetic: list[bool]
    recorded: list[bool]
    recovery_code: list[str | None]
    calls: list[CallFacts]
    call_sessions: list[int]
    """The session index of every call in ``calls``."""
    seq_array: pd.arrays.IntegerArray
    """``seqs`` as ``Int64``."""
    time_array: pd.api.extensions.ExtensionArray
    """Every event's time as ``datetime64[ms, UTC]``."""
    type_array: pd.Categorical
    """Every event's type as a categorical (its categories sorted)."""
    _names: pd.Index = field(repr=False)
    start: int = 0
    """The first position the frame builders read (:meth:`from_position`); every column
    still holds every event, so positions stay those of the whole view."""

    @classmethod
    def of(cls, sessions: Sequence[tuple[str, SessionLog, Analysis]]) -> SessionsView:
        """Return the view of ``(key, log, analysis)`` triples, in their order."""
        keys = [key for key, _, _ in sessions]
        logs = [log for _, log, _ in sessions]
        analyses = [analysis for _, _, analysis in sessions]
        parts = [analysis_fields(log, analysis) for _, log, analysis in sessions]
        fields = EventFields.joined(parts)
        lengths = [len(part) for part in parts]
        seqs = _joined([analysis.seqs for analysis in analyses])
        types = category_column(fields.types)
        return cls(
            keys,
            logs,
            analyses,
            _joined([analysis.events for analysis in analyses]),
            fields,
            np.repeat(np.arange(len(keys)), lengths).tolist(),
            seqs,
            _joined([analysis.branch for analysis in analyses]),
            _joined([analysis.synthetic for analysis in analyses]),
            _joined([analysis.recorded for analysis in analyses]),
            _joined([analysis.recovery_code for analysis in analyses]),
            _joined([analysis.calls for analysis in analyses]),
            np.repeat(np.arange(len(keys)), [len(a.calls) for a in analyses]).tolist(),
            int_column(seqs),
            time_column(fields.times),
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

        def shifted(name: str) -> list[int]:
            return _joined([[session + int(offset) for session in getattr(view, name)]
                            for view, offset in zip(views, counts, strict=False)])

        return cls(chained("keys"), chained("logs"), chained("analyses"), chained("events"),
                   EventFields.joined([view.fields for view in views]), shifted("sessions"),
                   chained("seqs"), chained("branch"), chained("synthetic"), chained("recorded"),
                   chained("recovery_code"), chained("calls"), shifted("call_sessions"),
                   seq_array, time_array, types, types.categories)

    def continued(self, key: str, log: SessionLog, analysis: Analysis,
                  shared: int) -> SessionsView | None:
        """Return the view of one session whose analysis begins with the first ``shared``
        events of this one-session view's (a prefix of its session), columns sliced from
        these; None when a type column cannot be joined so (build it with :meth:`of`)."""
        tail = EventFields.of(analysis.events[shared:], start=shared)
        types = joined_inferred(self.type_array[:shared], category_column(tail.types))
        if types is None:
            return None
        return SessionsView(
            [key],
            [log],
            [analysis],
            analysis.events,
            self.fields.prefix_then(shared, tail),
            [0] * len(analysis.events),
            analysis.seqs,
            analysis.branch,
            analysis.synthetic,
            analysis.recorded,
            analysis.recovery_code,
            analysis.calls,
            [0] * len(analysis.calls),
            joined(self.seq_array[:shared], int_column(analysis.seqs[shared:])),
            joined(self.time_array[:shared], time_column(tail.times)),
            types,
            types.categories,
        )

    def seq_at(self, positions: Sequence[int]) -> pd.arrays.IntegerArray:
        """Return the seqs of the events at ``positions`` (-1: no event, <NA>)."""
        return self.seq_array.take(positions, allow_fill=True)

    def time_at(self, positions: Sequence[int]) -> pd.api.extensions.ExtensionArray:
        """Return the times of the events at ``positions`` (-1: no event, NaT)."""
        return self.time_array.take(positions, allow_fill=True)

    @property
    def types(self) -> list[Any]:
        """Return each event's ``type``."""
        return self.fields.types

    @property
    def datas(self) -> list[dict[str, Any]]:
        """Return each event's ``data`` object ({} when it has none)."""
        return self.fields.datas

    def rows(self, name: str) -> list[Any]:
        """Return the field column ``name`` (see ``EventFields``) from the view's start on:
        event ``i``'s value is at ``i - start``."""
        return self.fields.rows(name, self.start)

    def field_at(self, name: str, position: int) -> Any:
        """Return the field ``name`` of the event at ``position``."""
        return self.fields.rows(name, position, position + 1)[0]

    def holds(self, kind: str) -> bool:
        """Return whether an event of type ``kind`` is among the view's."""
        return kind in self._names

    def indices_of(self, kinds: frozenset[str], stop: int | None = None) -> list[int]:
        """Return the positions from ``start`` to ``stop`` (default: the end) of the events
        whose type is in ``kinds``, in log order."""
        wanted = [code for code, name in enumerate(self._names) if name in kinds]
        codes = self.type_array.codes[self.start : stop]
        return (np.flatnonzero(np.isin(codes, wanted)) + self.start).tolist()

    def from_position(self, start: int) -> SessionsView:
        """Return this view with the frame builders reading only the events from ``start`` on."""
        return replace(self, start=start)


def _joined(lists: list[list[Any]]) -> list[Any]:
    """Return one list of the sessions' lists (the list itself when there is one)."""
    return lists[0] if len(lists) == 1 else concatenated(lists)


def analysis_fields(log: SessionLog, analysis: Analysis) -> EventFields:
    """Return the envelope columns of ``analysis.events``.

    When the analysis starts with the whole recorded log (always under ``recorded``;
    under the other policies unless results were inserted into closed steps) the
    log's columns are reused and only the appended events are visited.
    """
    recorded, events = log.events, analysis.events
    n = len(recorded)
    keeps_log = (
        len(events) >= n
        and all(analysis.recorded[:n])
        and (n == 0 or events[n - 1] is recorded[n - 1])
    )
    if not keeps_log:
        return _fields_around_computed(log.event_fields(), analysis)
    if len(events) == n:
        return log.event_fields()
    return log.event_fields() + EventFields.of(events[n:], start=n)


def _fields_around_computed(logged: EventFields, analysis: Analysis) -> EventFields:
    """Return the columns of ``analysis.events`` from the log's columns ``logged`` (the
    recorded events, in order) and those of the few events recovery computed between them."""
    recorded, events = analysis.recorded, analysis.events
    parts: list[EventFields] = []
    position = taken = 0
    while position < len(events):
        try:
            computed = recorded.index(False, position)
        except ValueError:
            computed = len(events)
        parts.append(logged[taken : taken + computed - position])
        taken += computed - position
        position = computed
        while position < len(events) and not recorded[position]:
            position += 1
        if position > computed:
            parts.append(EventFields.of(events[computed:position], start=computed))
    return EventFields.joined(parts) if parts else EventFields.empty()
