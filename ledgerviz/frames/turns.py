"""The ``turns`` and ``steps`` frames: one row per turn / per (turn, step)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ledgerviz.frames.columns import (
    bool_column,
    category_column,
    duration_column,
    elapsed,
    int_column,
    time_column,
)
from ledgerviz.frames.view import SessionView
from ledgerviz.recovery.events import end_reason_kind

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

USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens")
"""The ``usage`` keys behind the four token columns of ``STEP_SCHEMA``, in schema order."""

_TURN_EVENTS = frozenset({"turn/start", "turn/end", "step/start"})
_STEP_EVENTS = frozenset(
    {"step/start", "step/end", "assistant/message", "request/header", "request/context"}
)

# A turn row under construction is a plain list (cheap to make); these name its slots.
_TURN_ROW = ("turn", "start_seq", "end_seq", "start_time", "end_time", "end_reason", "steps")
_T_START_SEQ, _T_END_SEQ, _T_START_TIME, _T_END_TIME, _T_REASON, _T_STEPS = range(1, 7)
# The same for a step row: every STEP_SCHEMA column but ``calls``.
_STEP_ROW = tuple(name for name in STEP_SCHEMA if name != "calls")
_S_START_SEQ, _S_END_SEQ, _S_START_TIME, _S_END_TIME, _S_PROVIDER, _S_MODEL = range(2, 8)
_S_USAGE = range(8, 8 + len(USAGE_KEYS))


def _as_columns(rows: list[list[Any]], names: tuple[str, ...]) -> dict[str, list[Any]]:
    """Return row lists as columns named ``names``."""
    if not rows:
        return {name: [] for name in names}
    return dict(zip(names, map(list, zip(*rows, strict=True)), strict=True))


def _turn_rows(view: SessionView) -> list[list[Any]]:
    """Return one row per turn from the turn/start, turn/end and step/start events."""
    rows: list[list[Any]] = []
    latest: dict[Any, list[Any]] = {}
    types, turns, times = view.types, view.fields.turns, view.times
    seqs, events = view.analysis.seqs, view.analysis.events
    for i in view.indices_of(_TURN_EVENTS):
        kind, turn = types[i], turns[i]
        row = latest.get(turn)
        if kind == "turn/start" or row is None:
            row = latest[turn] = [turn, None, None, None, None, None, 0]
            rows.append(row)
        if kind == "turn/start":
            row[_T_START_SEQ], row[_T_START_TIME] = seqs[i], times[i]
        elif kind == "turn/end":
            row[_T_END_SEQ], row[_T_END_TIME] = seqs[i], times[i]
            row[_T_REASON] = end_reason_kind(events[i])
        else:
            row[_T_STEPS] += 1
    return rows


def turn_columns(view: SessionView) -> dict[str, list[Any]]:
    """Return the ``turns`` columns of one session as lists."""
    columns = _as_columns(_turn_rows(view), _TURN_ROW)
    calls = view.analysis.calls
    per_turn = Counter(call.turn for call in calls)
    by_status = Counter((call.turn, call.status) for call in calls)
    turns = columns["turn"]
    columns["duration"] = elapsed(columns["start_time"], columns["end_time"])
    columns["calls"] = [per_turn[turn] for turn in turns]
    columns["outcome_unknown"] = [by_status[turn, "outcome_unknown"] for turn in turns]
    columns["not_started"] = [by_status[turn, "not_started"] for turn in turns]
    columns["forked"] = [
        reason == "forked" or any(_within(point, start, end) for point in view.analysis.fork_points)
        for reason, start, end in zip(
            columns["end_reason"], columns["start_seq"], columns["end_seq"], strict=True
        )
    ]
    return columns


def _within(seq: int, start: Any, end: Any) -> bool:
    """Return whether ``seq`` lies in the turn spanning ``start``..``end`` (open end: no limit)."""
    return (start is None or seq >= start) and (end is None or seq <= end)


def _step_rows(view: SessionView) -> list[list[Any]]:
    """Return one row per (turn, step) from the step, assistant and request events."""
    rows: list[list[Any]] = []
    latest: dict[tuple[Any, Any], list[Any]] = {}
    route: tuple[Any, Any] = (None, None)
    open_row: list[Any] | None = None
    types, datas, times = view.types, view.datas, view.times
    turns, steps, seqs = view.fields.turns, view.fields.steps, view.analysis.seqs
    for i in view.indices_of(_STEP_EVENTS):
        kind = types[i]
        if kind in ("request/header", "request/context"):
            route = _route(kind, datas[i]) or route
            if open_row is not None:
                open_row[_S_PROVIDER], open_row[_S_MODEL] = route
            continue
        key = (turns[i], steps[i])
        row = latest.get(key)
        if kind == "step/start" or row is None:
            row = latest[key] = [*key, None, None, None, None, *route, None, None, None, None]
            rows.append(row)
        if kind == "step/start":
            row[_S_START_SEQ], row[_S_START_TIME] = seqs[i], times[i]
            open_row = row
        elif kind == "step/end":
            row[_S_END_SEQ], row[_S_END_TIME] = seqs[i], times[i]
            open_row = None
        else:
            _add_assistant(row, datas[i])
    return rows


def step_columns(view: SessionView) -> dict[str, list[Any]]:
    """Return the ``steps`` columns of one session as lists."""
    columns = _as_columns(_step_rows(view), _STEP_ROW)
    per_step = Counter((call.turn, call.step) for call in view.analysis.calls)
    columns["calls"] = [
        per_step[turn, step] for turn, step in zip(columns["turn"], columns["step"], strict=True)
    ]
    return columns


def _route(kind: str, data: dict[str, Any]) -> tuple[Any, Any] | None:
    """Return ``(provider, model)`` named by a request/header or request/context event."""
    if kind == "request/context":
        config = data
    else:
        header = data.get("header")
        config = header.get("config") if isinstance(header, dict) else None
    if isinstance(config, dict) and config.get("model") is not None:
        return config.get("provider"), config.get("model")
    return None


def _add_assistant(row: list[Any], data: dict[str, Any]) -> None:
    """Fold one assistant/message into its step row: model route and token usage."""
    message = data.get("message")
    source = message.get("source") if isinstance(message, dict) else None
    if isinstance(source, dict) and source.get("model") is not None:
        row[_S_PROVIDER], row[_S_MODEL] = source.get("provider"), source["model"]
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return
    for slot, key in zip(_S_USAGE, USAGE_KEYS, strict=True):
        count = usage.get(key)
        if type(count) is int:
            row[slot] = (row[slot] or 0) + count
