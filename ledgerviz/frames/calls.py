"""The ``calls`` frame: one row per requested tool call, facts taken from the Analysis."""

from __future__ import annotations

from collections.abc import Callable
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
from ledgerviz.frames.events import TOOL_EVENTS
from ledgerviz.frames.view import SessionsView
from ledgerviz.recovery.analysis import CallFacts
from ledgerviz.recovery.vocab import BRANCHES, CALL_STATUSES

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
        "error_code": facts["error_code"],
        "is_error": facts["is_error"],
        "duration": result_times - dispatch_times,
        "arguments": facts["arguments"],
        "branch": facts["branch"],
        "settled": facts["settled"],
    }


def _tool_positions(view: SessionsView) -> Callable[[list[int], list[Any]], list[int]]:
    """Return what gives, per (session, seq) pair, the position of the tool/call or tool/result
    event with that seq in that session (-1: none; the last one when a seq repeats).

    A None seq (never dispatched, never answered) has no event, even though results
    recovery adds inside closed steps have no seq either. When every seq is an int, a pair
    is keyed as one int (``seq * sessions + session``, unique per pair and cheaper to make
    and hash than a tuple); otherwise as the tuple.
    """
    seqs, sessions, width = view.seqs, view.sessions, len(view.keys)
    tools = view.indices_of(TOOL_EVENTS)
    if set(map(type, map(seqs.__getitem__, tools))) <= {int, type(None)}:
        by_int = {seqs[i] * width + sessions[i]: i for i in tools if seqs[i] is not None}.get

        def positions(pair_sessions: list[int], pair_seqs: list[Any]) -> list[int]:
            return [-1 if seq is None or seq.__class__ is not int
                    else by_int(seq * width + session, -1)
                    for session, seq in zip(pair_sessions, pair_seqs, strict=True)]
        return positions
    by_pair = {(sessions[i], seqs[i]): i for i in tools}.get

    def positions_by_pair(pair_sessions: list[int], pair_seqs: list[Any]) -> list[int]:
        return [-1 if seq is None else by_pair((session, seq), -1)
                for session, seq in zip(pair_sessions, pair_seqs, strict=True)]
    return positions_by_pair
