"""The ``calls`` frame: one row per requested tool call, facts taken from the Analysis."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames.columns import (
    Column,
    bool_column,
    category_column,
    duration_column,
    int_column,
    string_column,
    time_column,
)
from ledgerviz.frames.events import TOOL_EVENTS, branch_column
from ledgerviz.frames.keys import last_with_key, one_key
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.table import MISSING
from ledgerviz.recovery.analysis import Analysis
from ledgerviz.recovery.vocab import (
    BRANCHES,
    CALL_STATUSES,
    RECOVERY_CODES,
    STATUS_REASONS,
    StatusReason,
)

CALL_SCHEMA = {
    "call_id": string_column,
    "tool": category_column,
    "turn": int_column,
    "step": int_column,
    "requested_seq": int_column,
    "dispatched_seq": int_column,
    "result_seq": int_column,
    "dispatch_time": time_column,
    "result_time": time_column,
    "status": lambda values: category_column(values, CALL_STATUSES),
    "status_reason": lambda values: category_column(values, STATUS_REASONS),
    "error_code": category_column,
    "is_error": bool_column,
    "duration": duration_column,
    "arguments": string_column,
    "branch": lambda values: category_column(values, BRANCHES),
    "settled": bool_column,
}


def call_columns(view: SessionsView) -> dict[str, Column]:
    """Return the ``calls`` columns of every session."""
    calls = view.calls
    dispatches, results = _tool_positions(view, ("dispatched_seq", "result_seq"))
    dispatch_times = view.time_at(dispatches)
    result_times = view.time_at(results)
    return {
        "session": view.call_sessions,
        "call_id": calls.call_id,
        "tool": calls.name,
        **{name: pd.arrays.IntegerArray(*view.call_ints(name)) for name in CALL_INTS},
        "dispatch_time": dispatch_times,
        "result_time": result_times,
        "status": pd.Categorical.from_codes(codes(calls.status), categories=_STATUSES),
        "status_reason": view_status_reasons(view),
        "error_code": calls.error_code,
        "is_error": codes(calls.is_error).view(bool),
        "duration": result_times - dispatch_times,
        "arguments": calls.arguments,
        "branch": branch_column(codes(calls.branch)),
        "settled": codes(calls.settled).view(bool),
    }


_STATUSES = pd.Index(CALL_STATUSES)
CALL_INTS = ("turn", "step", "requested_seq", "dispatched_seq", "result_seq")
"""The ``Int64`` columns of the calls frame, converted once per view (``call_ints``)."""


def codes(column: array) -> np.ndarray:
    """Return a one-byte column of the engine's (``CallColumns``) as int8, not copied."""
    return np.frombuffer(column, np.int8)


def view_status_reasons(view: SessionsView) -> list[StatusReason]:
    """Return the ``status_reason`` of every call of ``view`` (see ``recovery.vocab``)."""
    bounds = np.searchsorted(view.call_sessions, np.arange(len(view.keys) + 1)).tolist()
    calls = view.calls
    aborted = _AbortedTurns(view)
    reasons: list[StatusReason] = []
    for session, (log, analysis) in enumerate(zip(view.logs, view.analyses, strict=True)):
        part = slice(bounds[session], bounds[session + 1])
        reasons += StatusReasons(log.call_reasons, analysis, partial(aborted.of, session)).all_of(
            calls.call_id[part], calls.turn[part], calls.result_seq[part],
            calls.error_code[part])
    return reasons


class _AbortedTurns:
    """The turns a recorded ``turn/end`` of a view's session ends ``aborted``, found for
    every session on first use."""

    def __init__(self, view: SessionsView) -> None:
        self._view = view
        self._found: dict[int, set[Any]] | None = None

    def of(self, session: int) -> set[Any]:
        """Return the aborted turns of the view's session ``session``."""
        if self._found is None:
            self._found = aborted_turns(self._view)
        return self._found.get(session, set())


def aborted_turns(view: SessionsView) -> dict[int, set[Any]]:
    """Return, per session index, the turns a recorded ``turn/end`` ends ``aborted`` (read
    from the table's columns; an event's own ``turn`` where the column cannot hold it)."""
    ends = view.from_position(0).positions_of(frozenset({"turn/end"}))
    ends = ends[view.recorded[ends]]
    ends = ends[view.table.column("end_reason")[ends] == "aborted"]
    found: dict[int, set[Any]] = {}
    turns = view.table.column("turn")[ends].tolist()
    for position, session, turn in zip(ends.tolist(), view.sessions[ends].tolist(), turns,
                                       strict=True):
        held = view.data_at(position).get("turn") if turn == MISSING else turn
        found.setdefault(session, set()).add(held)
    return found


class StatusReasons:
    """Why the calls of one session's analysis have their status: the reason the session's
    reader gave for a call's recorded result, else one derived from the analysis (``aborted``:
    gives the turns a recorded ``turn/end`` of the session ends ``aborted``)."""

    __slots__ = ("_aborted", "_closed", "_computed", "_given")

    def __init__(self, given: Mapping[str, str], analysis: Analysis,
                 aborted: Callable[[], set[Any]]) -> None:
        self._given = given
        self._closed = set(analysis.unanswered_in_closed_steps)
        self._computed = {event.get("seq") for event in analysis.closers}
        self._aborted = aborted

    def all_of(self, call_ids: Sequence[Any], turns: Sequence[Any], result_seqs: Sequence[Any],
               error_codes: Sequence[Any]) -> list[StatusReason]:
        """Return the reasons of calls (of this session, one fact per argument, in order).
        The reader's reason explains a recorded result, so a cut of the session before that
        result derives its own."""
        reasons: list[Any] = ["synthetic closer" if code in RECOVERY_CODES else "answered"
                              for code in error_codes]
        if self._given:
            for i, given in enumerate(map(self._given.get, call_ids)):
                if given is not None:
                    reasons[i] = given
        computed = self._computed
        for i, seq in enumerate(result_seqs):
            if seq is None or seq in computed:
                reasons[i] = self._unanswered(call_ids[i], turns[i])
        return reasons

    def _unanswered(self, call_id: Any, turn: Any) -> StatusReason:
        """Return the reason of a call without a recorded result."""
        if call_id in self._closed:
            return ("aborted" if turn is not None and turn in self._aborted()
                    else "no result in a closed step")
        return "no result at end of file"


def _tool_positions(view: SessionsView, names: Sequence[str]) -> list[np.ndarray]:
    """Return, for each seq column of the calls ``names`` (``dispatched_seq``,
    ``result_seq``), the position of the tool/call or tool/result event with each call's
    session and seq (-1: none; the last one when a seq repeats).

    A None seq (never dispatched, never answered) has no event, even though results
    recovery adds inside closed steps have no seq either. When every seq is an int or
    None, the pairs are looked up as one int64 key each, every column's at once (one
    sort of the events' keys); otherwise as the pair.
    """
    tools = view.positions_of(TOOL_EVENTS)
    seqs = view.seq_array[tools]
    numbered = ~seqs.isna()
    if any(view.seqs[i] is not None for i in tools[~numbered].tolist()):  # not an int
        return _positions_by_pair(view, tools.tolist(), names)
    tools, seqs = tools[numbered], seqs[numbered].to_numpy(dtype=np.int64)
    wanted = np.concatenate([view.call_int64(name) for name in names])
    keys = one_key([np.concatenate([view.sessions[tools], *[view.call_sessions] * len(names)]),
                    np.concatenate([seqs, wanted])])
    found = last_with_key(keys[: len(tools)], keys[len(tools) :])
    found[wanted == MISSING] = -1
    at = np.where(found >= 0, tools[found] if len(tools) else -1, -1)
    return np.split(at, len(names))


def _positions_by_pair(view: SessionsView, tools: list[int], names: Sequence[str]
                       ) -> list[np.ndarray]:
    """Return ``_tool_positions`` looking each pair up as it is (seqs of any hashable type)."""
    by_pair = {(view.sessions[i], view.seqs[i]): i for i in tools}.get
    sessions = view.call_sessions.tolist()
    return [np.array([-1 if seq is None else by_pair((session, seq), -1)
                      for session, seq in zip(sessions, getattr(view.calls, name), strict=True)],
                     dtype=np.int64) for name in names]
