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

USAGE_COLUMNS = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_read_tokens": "cacheReadTokens",
    "reasoning_tokens": "reasoningTokens",
}

_TURN_EVENTS = frozenset({"turn/start", "turn/end", "step/start"})
_STEP_EVENTS = frozenset(
    {"step/start", "step/end", "assistant/message", "request/header", "request/context"}
)


def _new_row(columns: dict[str, list[Any]], defaults: dict[str, Any]) -> int:
    """Append one row of defaults (None where not given) and return its index."""
    for name, values in columns.items():
        values.append(defaults.get(name))
    return len(next(iter(columns.values()))) - 1


def turn_columns(view: SessionView) -> dict[str, list[Any]]:
    """Return the ``turns`` columns of one session as lists."""
    names = ("turn", "start_seq", "end_seq", "start_time", "end_time", "end_reason", "steps")
    columns: dict[str, list[Any]] = {name: [] for name in names}
    latest: dict[Any, int] = {}
    seqs, events = view.analysis.seqs, view.analysis.events
    for i in view.indices_of(_TURN_EVENTS):
        kind, turn = view.types[i], view.datas[i].get("turn")
        row = latest.get(turn)
        if kind == "turn/start" or row is None:
            row = latest[turn] = _new_row(columns, {"turn": turn, "steps": 0})
        if kind == "turn/start":
            columns["start_seq"][row], columns["start_time"][row] = seqs[i], view.times[i]
        elif kind == "turn/end":
            columns["end_seq"][row], columns["end_time"][row] = seqs[i], view.times[i]
            columns["end_reason"][row] = end_reason_kind(events[i])
        else:
            columns["steps"][row] += 1
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


def step_columns(view: SessionView) -> dict[str, list[Any]]:
    """Return the ``steps`` columns of one session as lists."""
    columns: dict[str, list[Any]] = {name: [] for name in STEP_SCHEMA if name != "calls"}
    latest: dict[tuple[Any, Any], int] = {}
    route: tuple[Any, Any] = (None, None)
    open_row: int | None = None
    seqs = view.analysis.seqs
    for i in view.indices_of(_STEP_EVENTS):
        kind, data = view.types[i], view.datas[i]
        if kind in ("request/header", "request/context"):
            route = _route(kind, data) or route
            if open_row is not None:
                columns["provider"][open_row], columns["model"][open_row] = route
            continue
        key = (data.get("turn"), data.get("step"))
        row = latest.get(key)
        if kind == "step/start" or row is None:
            provider, model = route
            defaults = {"turn": key[0], "step": key[1], "provider": provider, "model": model}
            row = latest[key] = _new_row(columns, defaults)
        if kind == "step/start":
            columns["start_seq"][row], columns["start_time"][row] = seqs[i], view.times[i]
            open_row = row
        elif kind == "step/end":
            columns["end_seq"][row], columns["end_time"][row] = seqs[i], view.times[i]
            open_row = None
        else:
            _add_assistant(columns, row, data)
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


def _add_assistant(columns: dict[str, list[Any]], row: int, data: dict[str, Any]) -> None:
    """Fold one assistant/message into its step row: model route and token usage."""
    message = data.get("message")
    source = message.get("source") if isinstance(message, dict) else None
    if isinstance(source, dict) and source.get("model") is not None:
        columns["provider"][row], columns["model"][row] = source.get("provider"), source["model"]
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return
    for column, key in USAGE_COLUMNS.items():
        count = usage.get(key)
        if type(count) is int:
            columns[column][row] = (columns[column][row] or 0) + count
