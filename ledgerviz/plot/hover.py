"""Hover labels for timeline items; every ledger-derived value is HTML-escaped here."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pandas as pd

from ledgerviz.html import plotly_lines, plotly_text, text_of
from ledgerviz.plot.style import STATUS_LABEL

ARGUMENT_PREVIEW = 300


def format_duration(value: Any) -> str:
    """Return a duration (Timedelta or milliseconds) as short text, e.g. ``512 ms``, ``3.2 s``."""
    if text_of(value) == "":
        return "n/a"
    ms = value / pd.Timedelta(milliseconds=1) if isinstance(value, pd.Timedelta) else float(value)
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"


def _seq(value: Any) -> str:
    return plotly_text(value) or "none"


def _rows(frame: pd.DataFrame, columns: tuple[str, ...]) -> Iterator[tuple[Any, ...]]:
    """Return an iterator over ``frame``'s rows as tuples of the values in ``columns``."""
    return zip(*(frame[c].tolist() for c in columns), strict=True)


def call_hover(calls: pd.DataFrame) -> list[str]:
    """Return one escaped hover label per row of a ``calls`` frame."""
    columns = ("tool", "call_id", "status", "turn", "step", "requested_seq", "dispatched_seq",
               "result_seq", "duration", "error_code", "arguments")
    rows = _rows(calls, columns)
    labels = []
    for tool, call_id, status, turn, step, req, disp, res, duration, code, arguments in rows:
        label = (
            f"<b>{plotly_text(tool, 80) or 'unnamed tool'}</b>"
            f" · {STATUS_LABEL.get(status, plotly_text(status))}"
            f"<br>call id: {plotly_text(call_id, 80)}"
            f"<br>turn {plotly_text(turn)} · step {plotly_text(step)}"
            f"<br>seqs: requested {_seq(req)} · dispatched {_seq(disp)} · result {_seq(res)}"
            f"<br>duration: {format_duration(duration)}"
        )
        if text_of(code):
            label += f"<br>error code: {plotly_text(code, 80)}"
        label += f"<br>arguments: {plotly_lines(arguments, ARGUMENT_PREVIEW) or 'none'}"
        labels.append(label)
    return labels


def event_hover(events: pd.DataFrame) -> list[str]:
    """Return one escaped hover label per row of an ``events`` frame."""
    columns = ("type", "seq", "turn", "step", "call_id", "branch", "synthetic", "recovery_code")
    rows = _rows(events, columns)
    labels = []
    for kind, seq, turn, step, call_id, branch, synthetic, code in rows:
        label = f"<b>{plotly_text(kind, 80)}</b> · seq {_seq(seq)}"
        if text_of(turn):
            label += f"<br>turn {plotly_text(turn)}"
            if text_of(step):
                label += f" · step {plotly_text(step)}"
        if text_of(call_id):
            label += f"<br>call id: {plotly_text(call_id, 80)}"
        label += f"<br>branch: {plotly_text(branch)}"
        if synthetic is True:
            label += "<br>added by recovery" + (f": {plotly_text(code)}" if text_of(code) else "")
        labels.append(label)
    return labels


def turn_hover(turns: pd.DataFrame) -> list[str]:
    """Return one escaped hover label per row of a ``turns`` frame."""
    columns = ("turn", "start_seq", "end_seq", "end_reason", "steps", "calls", "outcome_unknown",
               "not_started", "duration")
    rows = _rows(turns, columns)
    return [
        f"<b>turn {plotly_text(turn)}</b> · seqs {_seq(start)}–{_seq(end)}"
        f"<br>ended: {plotly_text(reason) or 'still open'}"
        f"<br>{plotly_text(steps)} steps · {plotly_text(calls)} calls"
        f" ({plotly_text(unknown)} outcome unknown, {plotly_text(not_started)} not started)"
        f"<br>duration: {format_duration(duration)}"
        for turn, start, end, reason, steps, calls, unknown, not_started, duration in rows
    ]


def step_hover(steps: pd.DataFrame) -> list[str]:
    """Return one escaped hover label per row of a ``steps`` frame."""
    columns = ("turn", "step", "start_seq", "end_seq", "provider", "model", "input_tokens",
               "output_tokens", "calls")
    rows = _rows(steps, columns)
    return [
        f"<b>turn {plotly_text(turn)} · step {plotly_text(step)}</b>"
        f" · seqs {_seq(start)}–{_seq(end)}"
        f"<br>model: {plotly_text(provider, 60) or '?'} / {plotly_text(model, 60) or '?'}"
        f"<br>tokens: {plotly_text(tokens_in) or '?'} in · {plotly_text(tokens_out) or '?'} out"
        f"<br>{plotly_text(calls)} tool calls"
        for turn, step, start, end, provider, model, tokens_in, tokens_out, calls in rows
    ]


def group_hover(what: str, turn: Any, count: int, names: Iterable[Any]) -> str:
    """Return the escaped label of an aggregate: ``count`` items of one turn and their names."""
    shown = sorted({text_of(n) for n in names if text_of(n)})
    listed = ", ".join(plotly_text(n, 60) for n in shown[:6]) + (", …" if len(shown) > 6 else "")
    turn_text = f"turn {plotly_text(turn)}" if text_of(turn) else "outside turns"
    return (f"<b>{count} {what}</b> · {turn_text}<br>{listed}"
            "<br>(grouped per turn: too many to draw one by one)")
