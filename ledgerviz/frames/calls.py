"""The ``calls`` frame: one row per requested tool call, facts taken from the Analysis."""

from __future__ import annotations

from typing import Any

from ledgerviz.frames.columns import (
    bool_column,
    category_column,
    duration_column,
    elapsed,
    int_column,
    string_column,
    time_column,
)
from ledgerviz.frames.events import BRANCHES
from ledgerviz.frames.view import SessionView

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

_TOOL_EVENTS = frozenset({"tool/call", "tool/result"})


def call_columns(view: SessionView) -> dict[str, list[Any]]:
    """Return the ``calls`` columns of one session as lists."""
    calls = view.analysis.calls
    seqs = view.analysis.seqs
    time_at = {seqs[i]: view.times[i] for i in view.indices_of(_TOOL_EVENTS)}
    dispatch_times = [time_at.get(call.dispatched_seq) for call in calls]
    result_times = [time_at.get(call.result_seq) for call in calls]
    return {
        "call_id": [call.call_id for call in calls],
        "tool": [call.name for call in calls],
        "turn": [call.turn for call in calls],
        "step": [call.step for call in calls],
        "requested_seq": [call.requested_seq for call in calls],
        "dispatched_seq": [call.dispatched_seq for call in calls],
        "result_seq": [call.result_seq for call in calls],
        "dispatch_time": dispatch_times,
        "result_time": result_times,
        "status": [call.status for call in calls],
        "error_code": [call.error_code for call in calls],
        "is_error": [call.is_error for call in calls],
        "duration": elapsed(dispatch_times, result_times),
        "arguments": [call.arguments for call in calls],
        "branch": [call.branch for call in calls],
        "settled": [call.settled for call in calls],
    }
