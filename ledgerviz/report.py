"""A self-contained HTML report of a ledger: per session summary, timeline, recovery facts."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ledgerviz import __version__
from ledgerviz.display.fragments import (
    badge,
    empty_note,
    expandable,
    html_table,
    palette,
    stylesheet,
)
from ledgerviz.display.reprs import validity_html
from ledgerviz.display.results import call_result, result_texts
from ledgerviz.html import escape, seq_text, text_of
from ledgerviz.plot import style, timeline_figure
from ledgerviz.plot.axis import Axis
from ledgerviz.progress import EVENTS_THRESHOLD, progress
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, CallFacts, Policy
from ledgerviz.recovery.providers import PROVIDERS, Problem

if TYPE_CHECKING:
    import pandas as pd

    from ledgerviz.api import Ledger

ARGUMENT_LIMIT = 2_000
TEXT_PREVIEW = 300
"""Characters of a call's arguments or result shown before "show all"."""
CALL_LIMIT = 200
"""Calls a calls table lists; the rest are counted."""
OPEN_STATUSES = ("outcome_unknown", "not_started")

def _summary(view: Ledger, policy: str) -> str:
    frames = view.recovery(policy).frames
    counts = frames.calls["status"].value_counts()
    recorded = int(frames.events["recorded"].fillna(False).astype(bool).sum())
    cards = [("events", recorded, "recorded events"), ("turns", len(frames.turns), "turns"),
             ("calls", len(frames.calls), "tool calls")]
    cards += [(s, int(counts.get(s, 0)), s.replace("_", " ")) for s in style.STATUS_ORDER]
    return '<div class="cards">' + "".join(
        f'<div class="card {cls}"><b>{value}</b><span>{label}</span></div>'
        for cls, value, label in cards) + "</div>"


def _unanswered(view: Ledger) -> str:
    calls = view.frames.calls
    open_calls = calls[calls["status"].isin(OPEN_STATUSES)]
    if not len(open_calls):
        return empty_note("None: every requested tool call has a recorded result.")
    rows = [
        (escape(row.tool), f"<code>{escape(row.call_id)}</code>", badge(str(row.status)),
         f"{escape(row.turn)} / {escape(row.step)}", escape(row.requested_seq),
         escape(row.dispatched_seq) or "never",
         expandable(text_of(row.arguments), ARGUMENT_LIMIT))
        for row in open_calls.itertuples(index=False)
    ]
    return html_table(("tool", "call id", "status", "turn / step", "requested seq",
                   "dispatched seq", "arguments"), rows)


def _calls_table(calls: Sequence[CallFacts], texts: dict[int, str]) -> str:
    """Return a table of ``calls`` (first :data:`CALL_LIMIT`) with arguments and results."""
    rows = [
        (escape(call.name), f"<code>{escape(call.call_id)}</code>", badge(call.status),
         f"{escape(call.turn)} / {escape(call.step)}",
         expandable(text_of(call.arguments), TEXT_PREVIEW),
         expandable(call_result(call, texts), TEXT_PREVIEW))
        for call in calls[:CALL_LIMIT]
    ]
    more = len(calls) - CALL_LIMIT
    return (html_table(("tool", "call id", "status", "turn / step", "arguments", "result"), rows)
            + (empty_note(f"… {more} more calls not shown") if more > 0 else ""))


def _tool_results(view: Ledger, key: str) -> str:
    """Return what each call of the turns with unanswered calls returned, then every call of
    the session on demand (collapsed)."""
    analysis = view.recovery("recorded").analyses[key]
    texts = result_texts(analysis)
    open_turns = {call.turn for call in analysis.calls if call.status in OPEN_STATUSES}
    crashed = [call for call in analysis.calls if call.turn in open_turns]
    head = (_calls_table(crashed, texts) if crashed
            else empty_note("No turn has an unanswered call."))
    return (head + f'<details class="lv-more"><summary>every tool call of the session '
            f"({len(analysis.calls)}), with what it returned</summary>"
            f"{_calls_table(analysis.calls, texts)}</details>")


def _fork_points(view: Ledger, key: str) -> str:
    fork = view.recovery("fork")
    points = fork.analyses[key].fork_points
    if not points:
        return empty_note("None: no dispatched call lacks a durable result, "
                     "so the fork policy abandons nothing.")
    events, calls = fork.frames.events, fork.frames.calls
    abandoned_events = int((events["branch"] == "abandoned").sum())
    abandoned_calls = calls[calls["branch"] == "abandoned"]
    names = ", ".join(escape(n, 60) for n in abandoned_calls["tool"].dropna().unique()[:8])
    rows = [(f"<b>{p}</b>", escape(_event_type(events, p))) for p in points]
    return (html_table(("fork point seq", "event at the fork point"), rows)
            + f'<p class="meta">Under the fork policy {abandoned_events} events and '
              f"{len(abandoned_calls)} tool calls ({names or 'none'}) are abandoned: they stay "
              "in the ledger for audit but leave the model's context.</p>")


def _event_type(events: pd.DataFrame, seq: int) -> str:
    match = events.loc[events["seq"] == seq, "type"]
    return text_of(match.iloc[0]) if len(match) else "?"


def _problem_html(problem: Problem) -> str:
    seqs = ", ".join(seq_text(s) for s in problem.seqs)
    return (f"<li><code>{escape(problem.kind)}</code> {escape(problem.detail, 400)}"
            f"{f' (seq {seqs})' if seqs else ''}</li>")


def _providers(view: Ledger, key: str) -> str:
    rows = []
    problems_html = []
    for policy in POLICIES:
        context = view.context(policy, session=key)
        rows.append((f"<b>{policy}</b>", validity_html(context)))
        problems_html += [
            f"<li><b>{policy} × {provider}</b><ul class='problems'>"
            + "".join(_problem_html(p) for p in context.problems[provider]) + "</ul></li>"
            for provider in PROVIDERS if not context.valid[provider]]
    listed = f"<ul class='problems'>{''.join(problems_html)}</ul>" if problems_html else ""
    return html_table(("policy", "verdict per provider"), rows) + listed


def _diagnostics(view: Ledger) -> str:
    diagnostics = view.diagnostics
    if not diagnostics:
        return empty_note("None: the file read cleanly.")
    rows = [(escape(d.line), badge(d.severity if d.severity != "error" else "invalid",
                                    d.severity),
             escape(d.kind), escape(d.message, 600)) for d in diagnostics]
    return html_table(("line", "severity", "kind", "message"), rows)


def _figure(view: Ledger, policy: str, axis: Axis, include_plotlyjs: bool) -> str:
    figure = timeline_figure(view.recovery(policy).frames, session=view.keys[0], policy=policy,
                             fork_points=view.recovery(policy).analyses[view.keys[0]].fork_points,
                             axis=axis, name_session=False)
    return figure.to_html(full_html=False, include_plotlyjs=include_plotlyjs,
                          config={"displaylogo": False, "responsive": True})


def _session_section(view: Ledger, index: int, policy: str, axis: Axis,
                     include_plotlyjs: bool) -> str:
    log = view.sessions[0]
    key = view.keys[0]
    meta = (f"file <code>{escape(log.path)}</code> · format version {escape(log.version)}"
            f" · timeline policy: <b>{escape(policy)}</b>")
    return (
        f'<section class="session" id="session-{index}"><h2>Session {escape(key)}</h2>'
        f'<p class="meta">{meta}</p>'
        f"{_summary(view, policy)}"
        f'<div class="figure">{_figure(view, policy, axis, include_plotlyjs)}</div>'
        f"<h3>Unanswered tool calls</h3>{_unanswered(view)}"
        f"<h3>What the tools returned</h3>{_tool_results(view, key)}"
        f"<h3>Fork points</h3>{_fork_points(view, key)}"
        f"<h3>Provider validity of the next request</h3>{_providers(view, key)}"
        f"<h3>Diagnostics</h3>{_diagnostics(view)}"
        "</section>"
    )


def render_report(ledger: Ledger, policy: Policy = DEFAULT_POLICY, axis: Axis = "order") -> str:
    """Return the report as one self-contained HTML document (plotly.js inlined once).

    Timelines are drawn under ``policy`` on ``axis`` (event order by default: crash
    closers share the last timestamp, and idle gaps between turns would squeeze the rest).
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    total = sum(len(log.events) for log in ledger.sessions)
    sections = []
    with progress(total, EVENTS_THRESHOLD, "reporting") as step:
        for i, log in enumerate(ledger.sessions):
            sections.append(_session_section(ledger.session(i), i, policy, axis,
                                             include_plotlyjs=(i == 0)))
            if step is not None:
                step(len(log.events))
    nav = "".join(f'<a href="#session-{i}">{escape(key, 60)}</a>'
                  for i, key in enumerate(ledger.keys))
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ledgerviz report</title><style>{palette()}{stylesheet('fragments.css')}"
        f"{stylesheet('report.css')}</style></head><body class='lv'>"
        '<header class="top"><h1>ledgerviz report</h1>'
        f"<p>{len(ledger.keys)} sessions · timelines drawn under the <b>{policy}</b> policy · "
        f"generated {stamp}</p><nav>{nav}</nav></header>"
        f"<main>{''.join(sections)}</main>"
        f"<footer>ledgerviz {__version__} · works offline (plotly.js embedded)</footer>"
        "</body></html>"
    )


def write_report(ledger: Ledger, path: str | Path, policy: Policy = DEFAULT_POLICY,
                 axis: Axis = "order") -> Path:
    """Write the report of ``ledger`` to ``path`` and return the path written."""
    target = Path(path)
    target.write_text(render_report(ledger, policy, axis), encoding="utf-8")
    return target
