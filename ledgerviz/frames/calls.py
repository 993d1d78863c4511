"""The ``calls`` frame: one row per requested tool call, facts taken from the Analysis."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from ledgerviz.frames.columns import (
    Column,
    bool_column,
    category_column,
    duration_column,
    int_column,
    string_column,
    time_column,
    transpose,
)
from ledgerviz.frames.events import TOOL_EVENTS
from ledgerviz.frames.keys import int64_of, last_with_key, one_key
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.table import MISSING
from ledgerviz.recovery.analysis import Analysis, CallFacts
from ledgerviz.recovery.payload import payload_end_reason_kind
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
    facts = transpose(view.calls, CallFacts._fields)
    positions = _tool_positions(view)
    dispatch_times = view.time_at(positions(view.call_sessions, facts["dispatched_seq"]))
    result_times = view.time_at(positions(view.call_sessions, facts["result_seq"]))
    return {
        "session": view.call_sessions,
        "call_id": facts["call_id"],
        "tool": facts["name"],
        "turn": facts["turn"],
        "step": facts["step"],
        "requested_seq": facts["requested_seq"],
        "dispatched_seq": facts["dispatched_seq"],
        "result_seq": facts["result_seq"],
        "dispatch_time": dispatch_times,
        "result_time": result_times,
        "status": facts["status"],
        "status_reason": view_status_reasons(view),
        "error_code": facts["error_code"],
        "is_error": facts["is_error"],
        "duration": result_times - dispatch_times,
        "arguments": facts["arguments"],
        "branch": facts["branch"],
        "settled": facts["settled"],
    }


def view_status_reasons(view: SessionsView) -> list[StatusReason]:
    """Return the ``status_reason`` of every call of ``view`` (see ``recovery.vocab``)."""
    bounds = np.searchsorted(np.asarray(view.call_sessions, dtype=np.int64),
                             np.arange(len(view.keys) + 1)).tolist()
    reasons: list[StatusReason] = []
    for session, (log, analysis) in enumerate(zip(view.logs, view.analyses, strict=True)):
        calls = view.calls[bounds[session] : bounds[session + 1]]
        reasons += StatusReasons(log.call_reasons, analysis).all_of(calls)
    return reasons


class StatusReasons:
    """Why the calls of one session's analysis have their status: the reason the session's
    reader gave for a call's recorded result, else one derived from the analysis."""

    __slots__ = ("_aborted", "_analysis", "_closed", "_computed", "_given")

    def __init__(self, given: Mapping[str, str], analysis: Analysis) -> None:
        self._given = given
        self._analysis = analysis
        self._closed = set(analysis.unanswered_in_closed_steps)
        self._computed = {event.get("seq") for event in analysis.closers}
        self._aborted: set[Any] | None = None

    def _aborted_turns(self) -> set[Any]:
        """Return the turns a recorded ``turn/end`` ends ``aborted`` (found on first use)."""
        if self._aborted is None:
            self._aborted = {
                event["data"].get("turn") for event, recorded
                in zip(self._analysis.events, self._analysis.recorded, strict=True)
                if recorded and event.get("type") == "turn/end"
                and isinstance(event.get("data"), dict)
                and payload_end_reason_kind(event["data"]) == "aborted"}
        return self._aborted

    def all_of(self, calls: Sequence[CallFacts]) -> list[StatusReason]:
        """Return the reasons of ``calls`` (of this session), in order. The reader's reason
        explains a recorded result, so a cut of the session before that result derives
        its own."""
        reasons: list[Any] = ["synthetic closer" if code in RECOVERY_CODES else "answered"
                              for code in map(_ERROR_CODE, calls)]
        if self._given:
            for i, given in enumerate(map(self._given.get, map(_CALL_ID, calls))):
                if given is not None:
                    reasons[i] = given
        computed = self._computed
        for i, seq in enumerate(map(_RESULT_SEQ, calls)):
            if seq is None or seq in computed:
                reasons[i] = self._unanswered(calls[i])
        return reasons

    def _unanswered(self, call: CallFacts) -> StatusReason:
        """Return the reason of a call without a recorded result."""
        if call.call_id in self._closed:
            return ("aborted" if call.turn is not None and call.turn in self._aborted_turns()
                    else "no result in a closed step")
        return "no result at end of file"


_CALL_ID, _RESULT_SEQ, _ERROR_CODE = (attrgetter(name)
                                      for name in ("call_id", "result_seq", "error_code"))


def _tool_positions(view: SessionsView) -> Callable[[list[int], list[Any]], np.ndarray]:
    """Return what gives, per (session, seq) pair, the position of the tool/call or tool/result
    event with that seq in that session (-1: none; the last one when a seq repeats).

    A None seq (never dispatched, never answered) has no event, even though results
    recovery adds inside closed steps have no seq either. When every seq is an int or
    None, the pairs are looked up as one int64 key each; otherwise as the pair.
    """
    tools = view.positions_of(TOOL_EVENTS)
    seqs = view.seq_array[tools]
    numbered = ~seqs.isna()
    if any(view.seqs[i] is not None for i in tools[~numbered].tolist()):  # not an int
        return _positions_by_pair(view, tools.tolist())
    tools, seqs = tools[numbered], seqs[numbered].to_numpy(dtype=np.int64)
    sessions = view.sessions[tools]

    def positions(pair_sessions: list[int], pair_seqs: list[Any]) -> np.ndarray:
        wanted = int64_of(pair_seqs)
        keys = one_key([np.concatenate([sessions, int64_of(pair_sessions)]),
                        np.concatenate([seqs, wanted])])
        found = last_with_key(keys[: len(tools)], keys[len(tools) :])
        found[wanted == MISSING] = -1
        return np.where(found >= 0, tools[found] if len(tools) else -1, -1)
    return positions


def _positions_by_pair(view: SessionsView, tools: list[int]
                       ) -> Callable[[list[int], list[Any]], np.ndarray]:
    """Return ``_tool_positions`` looking each pair up as it is (seqs of any hashable type)."""
    by_pair = {(view.sessions[i], view.seqs[i]): i for i in tools}.get

    def positions(pair_sessions: list[int], pair_seqs: list[Any]) -> np.ndarray:
        return np.array([-1 if seq is None else by_pair((session, seq), -1)
                         for session, seq in zip(pair_sessions, pair_seqs, strict=True)],
                        dtype=np.int64)
    return positions
