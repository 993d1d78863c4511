"""The ``calls`` frame: one row per requested tool call, facts taken from the Analysis."""

from __future__ import annotations

from typing import Any

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
from ledgerviz.frames.events import BRANCHES, TOOL_EVENTS
from ledgerviz.frames.view import SessionsView
from ledgerviz.recovery.analysis import CallFacts

STATUSES = ("ok", "error", "outcome_unknown", "not_started")

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
    "status": lambda values: category_column(values, STATUSES),
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
    seqs, sessions, call_sessions = view.seqs, view.sessions, view.call_sessions
    position_of = {(sessions[i], seqs[i]): i for i in view.indices_of(TOOL_EVENTS)}
    dispatch_times = view.time_at(_positions(position_of, call_sessions, facts["dispatched_seq"]))
    result_times = view.time_at(_positions(position_of, call_sessions, facts["result_seq"]))
    return {
        "session": call_sessions,
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
        "error_code": facts["error_code"],
        "is_error": facts["is_error"],
        "duration": result_times - dispatch_times,
        "arguments": facts["arguments"],
        "branch": facts["branch"],
        "settled": facts["settled"],
    }


def _positions(
    position_of: dict[tuple[int, Any], int], sessions: list[int], seqs: list[Any]
) -> list[int]:
    """Return the position of the event with each (session, seq), -1 where there is none.

    A None seq (never dispatched, never answered) has no event, even though results
    recovery adds inside closed steps have no seq either.
    """
    find = position_of.get
    return [
        -1 if seq is None else find((session, seq), -1)
        for session, seq in zip(sessions, seqs, strict=True)
    ]
