"""A self-contained HTML report of a ledger: per session summary, timeline, recovery facts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ledgerviz import __version__
from ledgerviz.api import Ledger
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
from ledgerviz.plot import style
from ledgerviz.plot.axis import Axis
from ledgerviz.plot.timeline import fork_story_spec, ledger_timeline_spec
from ledgerviz.progress import EVENTS_THRESHOLD, progress
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, CallFacts, Policy
from ledgerviz.recovery.providers import PROVIDERS, Problem
from ledgerviz.report_figures import figure_html, page_scripts
from ledgerviz.report_lineage import fork_children, grouped_order

if TYPE_CHECKING:
    import pandas as pd

ARGUMENT_LIMIT = 2_000
TEXT_PREVIEW = 300
"""Characters of a call's arguments or result shown before "show all"."""
CALL_LIMIT = 200
"""Calls a calls table lists; the rest are counted."""
OPEN_STATUSES = ("outcome_unknown", "not_started")


class SessionFacts(NamedTuple):
    """The counts one session shows in its summary cards and its overview row."""

    events: int
    turns: int
    calls: int
    by_status: dict[str, int]
    fork_points: int
    invalid_providers: tuple[str, ...]


def _facts(view: Ledger, key: str, policy: Policy) -> SessionFacts:
    frames = view.recovery(policy).frames
    counts = frames.calls["status"].value_counts()
    valid = view.context(policy, session=key).valid
    return SessionFacts(
        events=int(frames.events["recorded"].fillna(False).astype(bool).sum()),
        turns=len(frames.turns),
        calls=len(frames.calls),
        by_status={s: int(counts.get(s, 0)) for s in style.STATUS_ORDER},
        fork_points=len(view.recovery("fork").analyses[key].fork_points),
        invalid_providers=tuple(p for p in PROVIDERS if not valid[p]),
    )


def _summary(facts: SessionFacts) -> str:
    cards = [("events", facts.events, "recorded events"), ("turns", facts.turns, "turns"),
             ("calls", facts.calls, "tool calls")]
    cards += [(s, facts.by_status[s], s.replace("_", " ")) for s in style.STATUS_ORDER]
    return '<div class="cards">' + "".join(
        f'<div class="card {cls}"><b>{value}</b><span>{label}</span></div>'
        for cls, value, label in cards) + "</div>"


def _validity(facts: SessionFacts) -> tuple[str, str]:
    """Return the overview's provider cell and its sort key (the number of invalid providers)."""
    if not facts.invalid_providers:
        return badge("valid"), "0"
    names = ", ".join(facts.invalid_providers)
    return badge("invalid", f"invalid: {names}"), str(len(facts.invalid_providers))


def _overview(rows_of: Sequence[tuple[int, str, SessionFacts]]) -> str:
    """Return the sortable overview table: one row per ``(index, key, facts)`` of a session,
    linked to its section (numbers sort by their ``data-sort`` value, the session column by
    its text)."""
    headers = ("session", "events", "turns", "calls", *(s.replace("_", " ") for s in
               style.STATUS_ORDER), "fork points", "next request")
    rows = []
    for index, key, fact in rows_of:
        validity, validity_key = _validity(fact)
        cells = [f'<td><a href="#session-{index}">{escape(key, 80)}</a></td>',
                 *(f'<td data-sort="{n}">{n}</td>' for n in (
                     fact.events, fact.turns, fact.calls, *fact.by_status.values(),
                     fact.fork_points)),
                 f'<td data-sort="{validity_key}">{validity}</td>']
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(f'<th title="sort">{h}</th>' for h in headers)
    return (f'<section class="overview"><h2>Overview</h2><p class="meta">One row per session;'
            f" click a column to sort, a session to jump to it.</p>"
            f'<table class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></section>")


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


def _session_section(view: Ledger, index: int, policy: Policy, axis: Axis,
                     facts: SessionFacts, story: Ledger | None = None) -> str:
    """Return one session's section; ``story`` (the session and its fork child) is drawn as
    one timeline instead of the session alone."""
    log = view.sessions[0]
    key = view.keys[0]
    meta = (f"file <code>{escape(log.path)}</code> · format version {escape(log.version)}"
            f" · timeline policy: <b>{escape(policy)}</b>")
    spec = None if story is None else fork_story_spec(story, policy, axis, name_session=False)
    if spec is not None:
        meta += f" · drawn with its fork child <b>{escape(story.keys[1])}</b>"
    else:
        spec = ledger_timeline_spec(view, policy, axis=axis, name_session=False)
    figure = figure_html(spec, str(index))
    return (
        f'<section class="session" id="session-{index}"><h2>Session {escape(key)}</h2>'
        f'<p class="meta">{meta}</p>'
        f"{_summary(facts)}"
        f'<div class="figure">{figure}</div>'
        f"<h3>Unanswered tool calls</h3>{_unanswered(view)}"
        f"<h3>What the tools returned</h3>{_tool_results(view, key)}"
        f"<h3>Fork points</h3>{_fork_points(view, key)}"
        f"<h3>Provider validity of the next request</h3>{_providers(view, key)}"
        f"<h3>Diagnostics</h3>{_diagnostics(view)}"
        "</section>"
    )


def render_report(ledger: Ledger, policy: Policy = DEFAULT_POLICY, axis: Axis = "order") -> str:
    """Return the report as one self-contained HTML document (plotly.js inlined once).

    It opens with an overview table (one row per session), then one section per session;
    a child session (``frames.lineage``) follows its parent, and under the fork policy a
    parent loaded with its fork child is drawn as one story (``plot.story``).
    Timelines are drawn under ``policy`` on ``axis`` (event order by default: crash
    closers share the last timestamp, and idle gaps between turns would squeeze the rest),
    each only when it scrolls into view. The same input gives the same bytes.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    total = sum(len(log.events) for log in ledger.sessions)
    rows, sections = [], []
    lineage = ledger.frames.lineage
    children = fork_children(lineage) if policy == "fork" else {}
    with progress(total, EVENTS_THRESHOLD, "reporting") as step:
        for i in grouped_order(lineage):
            log, key, view = ledger.sessions[i], ledger.keys[i], ledger.session(i)
            story = (Ledger([log, ledger.sessions[children[i]]]) if i in children else None)
            rows.append((i, key, _facts(view, key, policy)))
            sections.append(_session_section(view, i, policy, axis, rows[-1][2], story))
            if step is not None:
                step(len(log.events))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ledgerviz report</title><style>{palette()}{stylesheet('fragments.css')}"
        f"{stylesheet('report.css')}</style></head><body class='lv'>"
        '<header class="top"><h1>ledgerviz report</h1>'
        f"<p>{len(ledger.keys)} sessions · timelines drawn under the <b>{policy}</b> policy"
        "</p></header>"
        f"<main>{_overview(sorted(rows, key=lambda row: row[0]))}{''.join(sections)}</main>"
        f"<footer>ledgerviz {__version__} · works offline (plotly.js embedded)</footer>"
        f"{page_scripts()}</body></html>"
    )


def write_report(ledger: Ledger, path: str | Path, policy: Policy = DEFAULT_POLICY,
                 axis: Axis = "order") -> Path:
    """Write the report of ``ledger`` to ``path`` and return the path written."""
    target = Path(path)
    target.write_text(render_report(ledger, policy, axis), encoding="utf-8")
    return target
