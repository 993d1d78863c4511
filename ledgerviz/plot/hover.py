"""Hover labels for timeline items; every ledger-derived value is HTML-escaped here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from ledgerviz.html import escape, escape_lines, text_of
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
    text = text_of(value)
    return text if text else "none"


def call_hover(calls: pd.DataFrame) -> list[str]:
    """Return one escaped hover label per row of a ``calls`` frame."""
    columns = ("tool", "call_id", "status", "turn", "step", "requested_seq", "dispatched_seq",
               "result_seq", "duration", "error_code", "arguments")
    rows = zip(*(calls[c].tolist() for c in columns), strict=True)
    labels = []
    for tool, call_id, status, turn, step, req, disp, res, duration, code, arguments in rows:
        label = (
            f"<b>{escape(tool, 80) or 'unnamed tool'}</b>"
            f" · {STATUS_LABEL.get(status, escape(status))}"
            f"<br>call id: {escape(call_id, 80)}"
            f"<br>turn {escape(turn)} · step {escape(step)}"
            f"<br>seqs: requested {_seq(req)} · dispatched {_seq(disp)} · result {_seq(res)}"
            f"<br>duration: {format_duration(duration)}"
        )
        if text_of(code):
            label += f"<br>error code: {escape(code, 80)}"
        label += f"<br>arguments: {escape_lines(arguments, ARGUMENT_PREVIEW) or 'none'}"
        labels.append(label)
    return labels


def event_hover(events: pd.DataFrame) -> list[str]:
    """Return one escaped hover label per row of an ``events`` frame."""
    columns = ("type", "seq", "turn", "step", "call_id", "branch", "synthetic", "recovery_code")
    rows = zip(*(events[c].tolist() for c in columns), strict=True)
    labels = []
    for kind, seq, turn, step, call_id, branch, synthetic, code in rows:
        label = f"<b>{escape(kind, 80)}</b> · seq {_seq(seq)}"
        if text_of(turn):
            label += f"<br>turn {escape(turn)}"
            if text_of(step):
                label += f" · step {escape(step)}"
        if text_of(call_id):
            label += f"<br>call id: {escape(call_id, 80)}"
        label += f"<br>branch: {escape(branch)}"
        if synthetic is True:
            label += "<br>added by recovery" + (f": {escape(code)}" if text_of(code) else "")
        labels.append(label)
    return labels


def turn_hover(turns: pd.DataFrame) -> list[str]:
    """Return one escaped hover label per row of a ``turns`` frame."""
    columns = ("turn", "start_seq", "end_seq", "end_reason", "steps", "calls", "outcome_unknown",
               "not_started", "duration")
    rows = zip(*(turns[c].tolist() for c in columns), strict=True)
    return [
        f"<b>turn {escape(turn)}</b> · seqs {_seq(start)}–{_seq(end)}"
        f"<br>ended: {escape(reason) or 'still open'}"
        f"<br>{escape(steps)} steps · {escape(calls)} calls"
        f" ({escape(unknown)} outcome unknown, {escape(not_started)} not started)"
        f"<br>duration: {format_duration(duration)}"
        for turn, start, end, reason, steps, calls, unknown, not_started, duration in rows
    ]


def step_hover(steps: pd.DataFrame) -> list[str]:
    """Return one escaped hover label per row of a ``steps`` frame."""
    columns = ("turn", "step", "start_seq", "end_seq", "provider", "model", "input_tokens",
               "output_tokens", "calls")
    rows = zip(*(steps[c].tolist() for c in columns), strict=True)
    return [
        f"<b>turn {escape(turn)} · step {escape(step)}</b> · seqs {_seq(start)}–{_seq(end)}"
        f"<br>model: {escape(provider, 60) or '?'} / {escape(model, 60) or '?'}"
        f"<br>tokens: {escape(tokens_in) or '?'} in · {escape(tokens_out) or '?'} out"
        f"<br>{escape(calls)} tool calls"
        for turn, step, start, end, provider, model, tokens_in, tokens_out, calls in rows
    ]


def group_hover(what: str, turn: Any, count: int, names: Iterable[Any]) -> str:
    """Return the escaped label of an aggregate: ``count`` items of one turn and their names."""
    shown = sorted({text_of(n) for n in names if text_of(n)})
    listed = ", ".join(escape(n, 60) for n in shown[:6]) + (", …" if len(shown) > 6 else "")
    turn_text = f"turn {escape(turn)}" if text_of(turn) else "outside turns"
    return (f"<b>{count} {what}</b> · {turn_text}<br>{listed}"
            "<br>(grouped per turn: too many to draw one by one)")
