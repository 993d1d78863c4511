"""A self-contained HTML report of a ledger: per session summary, timeline, recovery facts."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ledgerviz import __version__
from ledgerviz.html import escape, seq_text, text_of
from ledgerviz.plot import style, timeline
from ledgerviz.plot.axis import Axis
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.recovery.providers import PROVIDERS, Problem

if TYPE_CHECKING:
    import pandas as pd

    from ledgerviz.api import Ledger

ARGUMENT_LIMIT = 2_000

PALETTE = (
    f":root {{ --ok: {style.STATUS_COLOR['ok']}; --error: {style.STATUS_COLOR['error']};"
    f" --unknown: {style.STATUS_COLOR['outcome_unknown']};"
    f" --notstarted: {style.STATUS_COLOR['not_started']}; --font: {style.FONT}; }}"
)

CSS = """
:root { --ink: #1f2933; --muted: #616e7c; --line: #e4e7eb; --bg: #f7f8fa; --card: #fff; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.5 var(--font); }
header.top { background: #102a43; color: #f0f4f8; padding: 22px 32px; }
header.top h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; }
header.top p { margin: 0; color: #bcccdc; }
nav { margin-top: 12px; display: flex; flex-wrap: wrap; gap: 8px; }
nav a { color: #f0f4f8; background: #243b53; padding: 3px 10px; border-radius: 12px;
  text-decoration: none; font-size: 13px; }
main { max-width: 1280px; margin: 0 auto; padding: 8px 24px 48px; }
section.session { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 18px 24px; margin: 24px 0; box-shadow: 0 1px 2px rgba(16, 42, 67, 0.05); }
h2 { margin: 0 0 2px; font-size: 19px; word-break: break-all; }
h3 { margin: 22px 0 8px; font-size: 15px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; }
.meta { color: var(--muted); margin: 0 0 12px; font-size: 13px; word-break: break-all; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0 6px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 6px 14px; min-width: 104px;
  border-top: 4px solid #9fb3c8; }
.card b { display: block; font-size: 20px; }
.card span { color: var(--muted); font-size: 12px; }
.card.ok { border-top-color: var(--ok); } .card.error { border-top-color: var(--error); }
.card.outcome_unknown { border-top-color: var(--unknown); }
.card.not_started { border-top-color: var(--notstarted); }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: #f0f4f8; font-weight: 600; }
td.args pre { margin: 0; max-height: 180px; overflow: auto; white-space: pre-wrap;
  word-break: break-all; background: #f7f8fa; padding: 4px 6px; border-radius: 4px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px;
  font-weight: 600; color: #fff; white-space: nowrap; }
td code { white-space: nowrap; }
.badge.ok { background: var(--ok); } .badge.error { background: var(--error); }
.badge.outcome_unknown { background: var(--unknown); }
.badge.not_started { background: var(--notstarted); }
.badge.valid { background: var(--ok); } .badge.invalid { background: var(--error); }
.badge.warning { background: var(--unknown); } .badge.info { background: var(--notstarted); }
.none { color: var(--muted); font-style: italic; margin: 4px 0; }
ul.problems { margin: 4px 0 0; padding-left: 18px; color: var(--muted); font-size: 12px; }
.figure { margin: 8px -8px 0; }
footer { color: var(--muted); text-align: center; font-size: 12px; padding: 12px; }
"""


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Return an HTML table; ``headers`` are trusted text, cells are already-escaped HTML."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td{_cell_class(c)}>{c}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell_class(cell: str) -> str:
    return ' class="args"' if cell.startswith("<pre>") else ""


def _badge(status: str, text: str | None = None) -> str:
    return f'<span class="badge {escape(status)}">{escape(text or status.replace("_", " "))}</span>'


def _none(text: str) -> str:
    return f'<p class="none">{text}</p>'


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
    open_calls = calls[calls["status"].isin(["outcome_unknown", "not_started"])]
    if not len(open_calls):
        return _none("None: every requested tool call has a recorded result.")
    rows = [
        (escape(row.tool), f"<code>{escape(row.call_id)}</code>", _badge(str(row.status)),
         f"{escape(row.turn)} / {escape(row.step)}", escape(row.requested_seq),
         escape(row.dispatched_seq) or "never",
         f"<pre>{escape(row.arguments, ARGUMENT_LIMIT)}</pre>")
        for row in open_calls.itertuples(index=False)
    ]
    return _table(("tool", "call id", "status", "turn / step", "requested seq",
                   "dispatched seq", "arguments"), rows)


def _fork_points(view: Ledger, key: str) -> str:
    fork = view.recovery("fork")
    points = fork.analyses[key].fork_points
    if not points:
        return _none("None: no dispatched call lacks a durable result, "
                     "so the fork policy abandons nothing.")
    events, calls = fork.frames.events, fork.frames.calls
    abandoned_events = int((events["branch"] == "abandoned").sum())
    abandoned_calls = calls[calls["branch"] == "abandoned"]
    names = ", ".join(escape(n, 60) for n in abandoned_calls["tool"].dropna().unique()[:8])
    rows = [(f"<b>{p}</b>", escape(_event_type(events, p))) for p in points]
    return (_table(("fork point seq", "event at the fork point"), rows)
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
        cells = [f"<b>{policy}</b>"]
        for provider in PROVIDERS:
            problems = context.problems[provider]
            if context.valid[provider]:
                cells.append(_badge("valid"))
            else:
                cells.append(_badge("invalid", f"invalid: {len(problems)} problems"))
                problems_html.append(
                    f"<li><b>{policy} × {provider}</b><ul class='problems'>"
                    + "".join(_problem_html(p) for p in problems) + "</ul></li>")
        rows.append(cells)
    listed = f"<ul class='problems'>{''.join(problems_html)}</ul>" if problems_html else ""
    return _table(("policy", *PROVIDERS), rows) + listed


def _diagnostics(view: Ledger) -> str:
    diagnostics = view.diagnostics
    if not diagnostics:
        return _none("None: the file read cleanly.")
    rows = [(escape(d.line), _badge(d.severity if d.severity != "error" else "invalid",
                                    d.severity),
             escape(d.kind), escape(d.message, 600)) for d in diagnostics]
    return _table(("line", "severity", "kind", "message"), rows)


def _figure(view: Ledger, policy: str, axis: Axis, include_plotlyjs: bool) -> str:
    figure = timeline(view, policy=policy, axis=axis)
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
        f"<h3>Fork points</h3>{_fork_points(view, key)}"
        f"<h3>Provider validity of the next request</h3>{_providers(view, key)}"
        f"<h3>Diagnostics</h3>{_diagnostics(view)}"
        "</section>"
    )


def render_report(ledger: Ledger, policy: str = "fork", axis: Axis = "order") -> str:
    """Return the report as one self-contained HTML document (plotly.js inlined once).

    Timelines are drawn under ``policy`` on ``axis`` (event order by default: crash
    closers share the last timestamp, and idle gaps between turns would squeeze the rest).
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    sections = [_session_section(ledger.session(i), i, policy, axis, include_plotlyjs=(i == 0))
                for i in range(len(ledger.keys))]
    nav = "".join(f'<a href="#session-{i}">{escape(key, 60)}</a>'
                  for i, key in enumerate(ledger.keys))
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ledgerviz report</title><style>{PALETTE}{CSS}</style></head><body>"
        '<header class="top"><h1>ledgerviz report</h1>'
        f"<p>{len(ledger.keys)} sessions · timelines drawn under the <b>{policy}</b> policy · "
        f"generated {stamp}</p><nav>{nav}</nav></header>"
        f"<main>{''.join(sections)}</main>"
        f"<footer>ledgerviz {__version__} · works offline (plotly.js embedded)</footer>"
        "</body></html>"
    )


def write_report(ledger: Ledger, path: str | Path, policy: str = "fork",
                 axis: Axis = "order") -> Path:
    """Write the report of ``ledger`` to ``path`` and return the path written."""
    target = Path(path)
    target.write_text(render_report(ledger, policy, axis), encoding="utf-8")
    return target
