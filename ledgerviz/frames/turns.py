"""The ``turns`` and ``steps`` frames: one row per turn / per (turn, step)."""

from __future__ import annotations

from collections import Counter
from itertools import repeat
from operator import attrgetter, eq
from typing import Any

import numpy as np

from ledgerviz.frames.columns import (
    Column,
    bool_column,
    category_column,
    duration_column,
    int_column,
    time_column,
    transpose,
)
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.shapes import MAX_INTEGER
from ledgerviz.ledger.table import route_of
from ledgerviz.recovery.events import payload_end_reason_kind

TURN_SCHEMA = {
    "turn": int_column,
    "start_seq": int_column,
    "end_seq": int_column,
    "start_time": time_column,
    "end_time": time_column,
    "duration": duration_column,
    "end_reason": category_column,
    "steps": int_column,
    "calls": int_column,
    "outcome_unknown": int_column,
    "not_started": int_column,
    "forked": bool_column,
}

STEP_SCHEMA = {
    "turn": int_column,
    "step": int_column,
    "start_seq": int_column,
    "end_seq": int_column,
    "start_time": time_column,
    "end_time": time_column,
    "provider": category_column,
    "model": category_column,
    "input_tokens": int_column,
    "output_tokens": int_column,
    "cache_read_tokens": int_column,
    "reasoning_tokens": int_column,
    "calls": int_column,
}

USAGE_COLUMNS = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_read_tokens": "cacheReadTokens",
    "reasoning_tokens": "reasoningTokens",
}
"""The token columns of ``STEP_SCHEMA`` and the ``usage`` key each one sums."""

TURN_EVENTS = frozenset({"turn/start", "turn/end", "step/start"})
ROUTE_EVENTS = frozenset({"request/header", "request/context"})
STEP_EVENTS = frozenset({"step/start", "step/end", "assistant/message"}) | ROUTE_EVENTS

# A row under construction is a plain list (cheap to make); these name its slots. The
# first slot is the session index; the start and end slots hold the position of the
# event in the view (-1: none yet); the last two, the positions of the first and the latest
# event that changed the row (``EXTENT``: a prefix of the view changes only the rows it
# reaches).
EXTENT = ("first", "last")
_TURN_ROW = ("session", "turn", "start", "end", "end_reason", "steps", *EXTENT)
_T_START, _T_END, _T_REASON, _T_STEPS, _T_LAST = (2, 3, 4, 5, 7)
STEP_ROW = ("session", "turn", "step", "start", "end", "provider", "model", *USAGE_COLUMNS,
             *EXTENT)
STEP_FACTS = ("provider", "model", *USAGE_COLUMNS)
"""The ``steps`` columns read from the step's own events (besides its seqs, times, calls)."""
_S_START, _S_END, _S_PROVIDER, _S_MODEL = range(3, 7)
_S_USAGE = tuple(enumerate(USAGE_COLUMNS.values(), start=7))
_S_LAST = 8 + len(USAGE_COLUMNS)
NO_ROUTE: tuple[Any, Any] = (None, None)
_CALL_TURN, _CALL_STEP, _CALL_STATUS = (attrgetter(name) for name in ("turn", "step", "status"))


def turn_rows(view: SessionsView) -> dict[str, list[Any]]:
    """Return the turn rows of the view's events (from ``view.start`` on), one list per slot
    of ``_TURN_ROW`` (the positions of each row's first and latest event included)."""
    return transpose(_turn_rows(view), _TURN_ROW)


def _turn_rows(view: SessionsView) -> list[list[Any]]:
    """Return one row per turn from the turn/start, turn/end and step/start events."""
    rows: list[list[Any]] = []
    latest: dict[tuple[int, Any], list[Any]] = {}
    start, sessions = view.start, view.sessions
    types, turns, datas = view.rows("types"), view.rows("turns"), view.rows("datas")
    for i in view.indices_of(TURN_EVENTS):
        kind, key = types[i - start], (sessions[i], turns[i - start])
        row = latest.get(key)
        if kind == "turn/start" or row is None:
            row = latest[key] = [*key, -1, -1, None, 0, i, i]
            rows.append(row)
        if kind == "turn/start":
            row[_T_START] = i
        elif kind == "turn/end":
            row[_T_END], row[_T_REASON] = i, payload_end_reason_kind(datas[i - start])
        else:
            row[_T_STEPS] += 1
        row[_T_LAST] = i
    return rows


def _spans(view: SessionsView, starts: list[int], ends: list[int]) -> dict[str, Column]:
    """Return the seq and time columns of rows spanning event positions ``starts``..``ends``."""
    return {
        "start_seq": view.seq_at(starts),
        "end_seq": view.seq_at(ends),
        "start_time": view.time_at(starts),
        "end_time": view.time_at(ends),
    }


def turn_columns(view: SessionsView, rows: dict[str, list[Any]] | None = None
                 ) -> dict[str, Column]:
    """Return the ``turns`` columns of every session (``rows``: its :func:`turn_rows`, when
    made already)."""
    rows = turn_rows(view) if rows is None else rows
    spans = _spans(view, rows["start"], rows["end"])
    return {
        "session": rows["session"],
        "turn": rows["turn"],
        **spans,
        "duration": spans["end_time"] - spans["start_time"],
        "end_reason": rows["end_reason"],
        "steps": rows["steps"],
        **turn_outcomes(view, rows["session"], rows["turn"], rows["end_reason"], spans),
    }


def turn_outcomes(view: SessionsView, sessions: list[int], turns: list[Any],
                  reasons: list[Any], spans: dict[str, Column]) -> dict[str, Column]:
    """Return the columns of turn rows that depend on the policy's analysis (their calls by
    status, and whether they forked), given the rows' sessions, turns, reasons and spans."""
    return {**turn_call_counts(view, sessions, turns),
            "forked": forked(view, sessions, np.fromiter(map(eq, reasons, repeat("forked")),
                                                         dtype=bool, count=len(reasons)), spans)}


TURN_CALL_COUNTS = ("calls", "outcome_unknown", "not_started")
"""The ``turns`` columns that count the turn's calls (all, and by status)."""


def turn_call_counts(view: SessionsView, sessions: list[int], turns: list[Any]
                     ) -> dict[str, list[int]]:
    """Return the :data:`TURN_CALL_COUNTS` columns of turn rows (their sessions and turns)."""
    call_turns = list(map(_CALL_TURN, view.calls))
    per_turn = Counter(zip(view.call_sessions, call_turns, strict=True))
    by_status = Counter(zip(view.call_sessions, call_turns, map(_CALL_STATUS, view.calls),
                            strict=True))
    keys = list(zip(sessions, turns, strict=True))
    return {
        "calls": list(map(per_turn.__getitem__, keys)),
        **{status: [by_status[(session, turn, status)] for session, turn in keys]
           for status in TURN_CALL_COUNTS[1:]},
    }


def forked(view: SessionsView, sessions: list[int] | np.ndarray, ended_forked: np.ndarray,
           spans: dict[str, Column]) -> np.ndarray:
    """Return per turn whether it ended ``forked`` (``ended_forked``) or spans a fork point
    of its session (open ends: no limit)."""
    starts = spans["start_seq"].to_numpy(dtype=float, na_value=-np.inf)
    ends = spans["end_seq"].to_numpy(dtype=float, na_value=np.inf)
    out = ended_forked.copy()
    row_sessions = np.asarray(sessions, dtype=np.int64)
    for session, analysis in enumerate(view.analyses):
        for point in analysis.fork_points:
            out |= (row_sessions == session) & (starts <= point) & (point <= ends)
    return out


def step_rows(view: SessionsView, route: tuple[Any, Any] = NO_ROUTE) -> dict[str, list[Any]]:
    """Return the step rows of the view's events (from ``view.start`` on, where ``route``,
    the provider and model, holds), one list per slot of ``STEP_ROW``."""
    return transpose(_step_rows(view, route), STEP_ROW)


def route_before(view: SessionsView, position: int) -> tuple[Any, Any]:
    """Return the (provider, model) route the request events before ``position`` set."""
    for i in reversed(view.from_position(0).indices_of(ROUTE_EVENTS, stop=position)):
        route = route_of(view.field_at("types", i), view.field_at("datas", i))
        if route is not None:
            return route
    return NO_ROUTE


def _step_rows(view: SessionsView, route: tuple[Any, Any]) -> list[list[Any]]:
    """Return one row per (turn, step) from the step, assistant and request events."""
    rows: list[list[Any]] = []
    latest: dict[tuple[int, Any, Any], list[Any]] = {}
    open_row: list[Any] | None = None
    start, sessions = view.start, view.sessions
    types, datas = view.rows("types"), view.rows("datas")
    turns, steps = view.rows("turns"), view.rows("steps")
    session = -1
    for i in view.indices_of(STEP_EVENTS):
        kind = types[i - start]
        if sessions[i] != session:  # a new session: no open step yet
            if session != -1:  # and no route
                route = NO_ROUTE
            session, open_row = sessions[i], None
        if kind in ("request/header", "request/context"):
            route = route_of(kind, datas[i - start]) or route
            if open_row is not None:
                open_row[_S_PROVIDER], open_row[_S_MODEL] = route
                open_row[_S_LAST] = i
            continue
        key = (session, turns[i - start], steps[i - start])
        row = latest.get(key)
        if kind == "step/start" or row is None:
            row = latest[key] = [*key, -1, -1, *route, None, None, None, None, i, i]
            rows.append(row)
        row[_S_LAST] = i
        if kind == "step/start":
            row[_S_START] = i
            open_row = row
        elif kind == "step/end":
            row[_S_END] = i
            open_row = None
        else:
            add_assistant(row, datas[i - start])
    return rows


def step_columns(view: SessionsView, rows: dict[str, list[Any]] | None = None
                 ) -> dict[str, Column]:
    """Return the ``steps`` columns of every session (``rows``: its :func:`step_rows`, when
    made already)."""
    rows = {name: column for name, column in (step_rows(view) if rows is None else rows).items()
            if name not in EXTENT}
    spans = _spans(view, rows.pop("start"), rows.pop("end"))
    return {**rows, **spans,
            "calls": step_calls(view, rows["session"], rows["turn"], rows["step"])}


def step_calls(view: SessionsView, sessions: list[int], turns: list[Any],
               steps: list[Any]) -> list[int]:
    """Return how many of the analysis' calls each (session, turn, step) row holds."""
    calls = view.calls
    per_step = Counter(zip(view.call_sessions, map(_CALL_TURN, calls), map(_CALL_STEP, calls),
                           strict=True))
    return list(map(per_step.__getitem__, zip(sessions, turns, steps, strict=True)))


def add_assistant(row: list[Any], data: dict[str, Any]) -> None:
    """Fold one assistant/message into its step row: model route and token usage."""
    message = data.get("message")
    source = message.get("source") if isinstance(message, dict) else None
    if isinstance(source, dict) and source.get("model") is not None:
        row[_S_PROVIDER], row[_S_MODEL] = source.get("provider"), source["model"]
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return
    for slot, key in _S_USAGE:
        count = usage.get(key)
        if type(count) is int and 0 <= count <= MAX_INTEGER:
            row[slot] = (row[slot] or 0) + count
