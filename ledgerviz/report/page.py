"""A self-contained HTML report of a ledger: per session summary, timeline, recovery facts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from ledgerviz import __version__
from ledgerviz.api import Context, Ledger
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
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.overwrite import refuse_ledger
from ledgerviz.plot import style
from ledgerviz.plot.axis import Axis
from ledgerviz.plot.timeline import fork_story_spec, session_timeline_specs
from ledgerviz.progress import EVENTS_THRESHOLD, progress
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, Analysis, CallFacts, Policy
from ledgerviz.recovery.pairing import Problem
from ledgerviz.recovery.providers import PROVIDERS
from ledgerviz.recovery.vocab import OPEN_STATUSES
from ledgerviz.report.anchors import PARTS, part_anchor, session_anchor
from ledgerviz.report.figures import (
    figure_height,
    figure_html,
    page_scripts,
    plotlyjs_label,
    trace_types,
)
from ledgerviz.report.lineage import fork_children, grouped_trees
from ledgerviz.report.pack import PAGE_NO_SCRIPT, BodyPacker
from ledgerviz.report.sessions import LedgerFiles, LoadedSessions, ReportSessions, batches
from ledgerviz.wording import counted

ARGUMENT_LIMIT = 2_000
TEXT_PREVIEW = 300
"""Characters of a call's arguments or result shown before "show all"."""
ROW_LIMIT = 200
"""Rows a table of calls or of fork points lists; the rest are counted."""
PROBLEM_LIMIT = 20
"""Pairing problems listed per policy and provider; the rest are counted."""
KEY_SHOWN = 200
"""Characters of a session id shown in a section's heading and meta line (the whole id is
the heading's title): a 20,000-character id would otherwise fill thousands of pixels above
the section's body, and the body unpacks and draws only as it nears the view."""
OVERVIEW_KEY_SHOWN = 80
"""Characters of a session id shown in the overview's table."""


FILTERS = {
    "": "every session",
    "outcome_unknown": "with a call of unknown outcome",
    "not_started": "with a call never started",
    "error": "with a tool error",
    "fork": "with a fork point",
    "invalid": "whose next request is invalid",
    "diagnostics": "with diagnostics",
}
"""The overview's filter: the flag a session's row must carry, and what it says."""


FIND_FORM = ('<form class="find" hidden><input type="search" name="find" '
             'placeholder="call id, tool or text" aria-label="find in every session">'
             '<button>Find</button> <span class="found"></span><ol></ol></form>')
"""The page's find box (shown by the page script, which searches the packed bodies)."""


class SessionFacts(NamedTuple):
    """The counts one session shows in its summary cards and its overview row."""

    events: int
    turns: int
    calls: int
    by_status: dict[str, int]
    fork_points: int
    invalid_providers: tuple[str, ...]
    path: str
    diagnostics: int

    def flags(self) -> list[str]:
        """Return the :data:`FILTERS` keys this session matches (its row's ``data-flags``)."""
        found = [s for s in ("outcome_unknown", "not_started", "error") if self.by_status[s]]
        return found + [name for name, held in (("fork", self.fork_points),
                                                ("invalid", self.invalid_providers),
                                                ("diagnostics", self.diagnostics)) if held]


class _Ledgerwide:
    """What the sections of one batch of sessions read over all of them: their ledger, the
    report's policy, and each session's contexts (built on first use)."""

    def __init__(self, ledger: Ledger, policy: Policy) -> None:
        self.ledger = ledger
        self.policy = policy
        self._contexts: dict[tuple[Policy, str], Context] = {}

    def context(self, policy: Policy, key: str) -> Context:
        """Return the next-request context of session ``key`` under ``policy`` (cached)."""
        found = self._contexts.get((policy, key))
        if found is None:
            found = self._contexts[policy, key] = self.ledger.context(policy, session=key)
        return found

    def facts(self) -> dict[str, SessionFacts]:
        """Return the facts of every session of the batch, counted over all their frames at once."""
        frames = self.ledger.recovery(self.policy).frames
        recorded = frames.events["recorded"].fillna(False).astype(bool)
        events = recorded.groupby(frames.events["session"], observed=False).sum().to_dict()
        turns = frames.turns["session"].value_counts().to_dict()
        calls = frames.calls["session"].value_counts().to_dict()
        by_status = pd.crosstab(frames.calls["session"], frames.calls["status"].astype(object)
                                ).to_dict("index")  # plain dicts: read once per session
        fork = self.ledger.recovery("fork").analyses
        logs = {log.key: log for log in self.ledger.sessions}
        facts = {}
        for key in self.ledger.keys:
            valid = self.context(self.policy, key).valid
            status_row = by_status.get(key, {})
            facts[key] = SessionFacts(
                events=int(events.get(key, 0)),
                turns=int(turns.get(key, 0)),
                calls=int(calls.get(key, 0)),
                by_status={s: int(status_row.get(s, 0)) for s in style.STATUS_ORDER},
                fork_points=len(fork[key].fork_points),
                invalid_providers=tuple(p for p in PROVIDERS if not valid[p]),
                path=str(logs[key].path),
                diagnostics=len(logs[key].diagnostics),
            )
        return facts


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


def _overview(rows_of: Sequence[tuple[str, SessionFacts]]) -> str:
    """Return the sortable, filterable overview table: one row per ``(key, facts)``
    of a session, linked to its section (numbers sort by their ``data-sort`` value, the
    session column by its text; the page script filters rows by their ``data-flags`` and
    by text, the session id or file, with the controls it shows)."""
    headers = ("session", "events", "turns", "calls", *(s.replace("_", " ") for s in
               style.STATUS_ORDER), "fork points", "next request")
    rows = []
    for key, fact in rows_of:
        validity, validity_key = _validity(fact)
        cells = [f'<td><a href="#{escape(session_anchor(key))}" title="{escape(fact.path)}">'
                 f"{escape(key, OVERVIEW_KEY_SHOWN)}</a></td>",
                 *(f'<td data-sort="{n}">{n}</td>' for n in (
                     fact.events, fact.turns, fact.calls, *fact.by_status.values(),
                     fact.fork_points)),
                 f'<td data-sort="{validity_key}">{validity}</td>']
        rows.append(f'<tr data-flags="{" ".join(fact.flags())}" '
                    f'data-text="{escape(f"{key} {fact.path}".lower())}">'
                    + "".join(cells) + "</tr>")
    head = "".join(f'<th title="sort">{h}</th>' for h in headers)
    options = "".join(f'<option value="{name}">{label}</option>'
                      for name, label in FILTERS.items())
    controls = ('<div class="filter" hidden><label>Show sessions <select name="flag">'
                f'{options}</select></label> <label>matching <input type="search" '
                'name="text" placeholder="session id or file"></label> '
                '<span class="shown"></span></div>')
    return (f'<section class="overview"><h2>Overview</h2><p class="meta">One '
            "row per session; click a column to sort, a session to jump to it.</p>"
            f'{controls}<table class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></section>")


def _unanswered(recorded: Analysis) -> str:
    """Return the table of the calls without a recorded result."""
    open_calls = [call for call in recorded.calls if call.status in OPEN_STATUSES]
    if not open_calls:
        return empty_note("None: every requested tool call has a recorded result.")
    rows = [
        (escape(call.name), f"<code>{escape(call.call_id)}</code>", badge(call.status),
         f"{escape(call.turn)} / {escape(call.step)}", escape(call.requested_seq),
         escape(call.dispatched_seq) or "never",
         expandable(text_of(call.arguments), ARGUMENT_LIMIT))
        for call in open_calls[:ROW_LIMIT]
    ]
    return html_table(("tool", "call id", "status", "turn / step", "requested seq",
                   "dispatched seq", "arguments"), rows) + _more(len(open_calls), ROW_LIMIT,
                                                                 "unanswered call")


def rows_around(count: int, focus: int | None, limit: int) -> range:
    """Return the positions of the at most ``limit`` rows of ``count`` a table lists: those
    around row ``focus`` (the incident's; a quarter of them before it), else the first:
    ``rows_around(1000, 500, 200)`` is ``range(450, 650)``."""
    if focus is None or count <= limit:
        return range(min(count, limit))
    start = min(max(0, focus - limit // 4), count - limit)
    return range(start, start + limit)


def _calls_table(calls: Sequence[CallFacts], analysis: Analysis) -> str:
    """Return a table of ``calls`` with their arguments and the results ``analysis`` holds
    for them: the :data:`ROW_LIMIT` around the first call without a result (else the
    first), with a count of those left out before and after."""
    focus = next((i for i, call in enumerate(calls) if call.status in OPEN_STATUSES), None)
    listed = rows_around(len(calls), focus, ROW_LIMIT)
    shown = calls[listed.start:listed.stop]
    texts = result_texts(analysis, [call.result_seq for call in shown])
    rows = [
        (escape(call.name), f"<code>{escape(call.call_id)}</code>", badge(call.status),
         f"{escape(call.turn)} / {escape(call.step)}",
         expandable(text_of(call.arguments), TEXT_PREVIEW),
         expandable(call_result(call, texts), TEXT_PREVIEW))
        for call in shown
    ]
    before = (empty_note(f"… {counted(listed.start, 'earlier call')} not shown")
              if listed.start else "")
    return (before
            + html_table(("tool", "call id", "status", "turn / step", "arguments", "result"),
                         rows)
            + _more(len(calls) - listed.start, len(listed), "call"))


def _more(count: int, shown: int, noun: str) -> str:
    """Return the note under a list of ``count`` items (``noun``, singular) of which the first
    ``shown`` are shown (nothing when all are)."""
    return empty_note(f"… {counted(count - shown, f'more {noun}')} not shown"
                      ) if count > shown else ""


def _tool_results(analysis: Analysis) -> str:
    """Return what each call of the turns with unanswered calls returned (``analysis``: the
    record's), then every call of the session on demand (collapsed)."""
    open_turns = {call.turn for call in analysis.calls if call.status in OPEN_STATUSES}
    crashed = [call for call in analysis.calls if call.turn in open_turns]
    head = (_calls_table(crashed, analysis) if crashed
            else empty_note("No turn has an unanswered call."))
    return (head + f'<details class="lv-more"><summary>every tool call of the session '
            f"({len(analysis.calls)}), with what it returned</summary>"
            f"{_calls_table(analysis.calls, analysis)}</details>")


def _fork_points(fork: Analysis) -> str:
    """Return the fork points of the fork policy's ``fork`` analysis and what they abandon."""
    points = fork.fork_points
    if not points:
        return empty_note("None: no dispatched call lacks a durable result, "
                     "so the fork policy abandons nothing.")
    tools = [call.name for call in fork.calls if call.branch == "abandoned"]
    named = [tool for tool in dict.fromkeys(tools) if tool is not None]
    names = ", ".join(escape(name, 60) for name in named[:8])
    shown = points[:ROW_LIMIT]
    types = _types_at(fork, shown)
    rows = [(f"<b>{p}</b>", escape(types.get(p, "?"))) for p in shown]
    abandoned_events = fork.branch.count("abandoned")
    return (html_table(("fork point seq", "event at the fork point"), rows)
            + _more(len(points), ROW_LIMIT, "fork point")
            + f'<p class="meta">Under the fork policy {counted(abandoned_events, "event")} and '
              f"{counted(len(tools), 'tool call')} ({names or 'none'}) are abandoned: they stay "
              "in the ledger for audit but leave the model's context.</p>")


def _types_at(analysis: Analysis, seqs: Sequence[int]) -> dict[int, Any]:
    """Return the type of the first event of ``analysis`` with each of ``seqs`` (one pass)."""
    wanted = set(seqs)
    types: dict[int, Any] = {}
    for seq, event in zip(analysis.seqs, analysis.events, strict=True):
        if seq in wanted and seq not in types:
            types[seq] = event.get("type")
    return types


def _problem_html(problem: Problem) -> str:
    seqs = ", ".join(seq_text(s) for s in problem.seqs)
    return (f"<li><code>{escape(problem.kind)}</code> {escape(problem.detail, 400)}"
            f"{f' (seq {seqs})' if seqs else ''}</li>")


def _providers(wide: _Ledgerwide, key: str) -> str:
    rows = []
    problems_html = []
    for policy in POLICIES:
        context = wide.context(policy, key)
        rows.append((f"<b>{policy}</b>", validity_html(context)))
        problems_html += [
            f"<li><b>{policy} × {provider}</b><ul class='problems'>"
            + "".join(map(_problem_html, context.problems[provider][:PROBLEM_LIMIT])) + "</ul>"
            + _more(len(context.problems[provider]), PROBLEM_LIMIT, "problem") + "</li>"
            for provider in PROVIDERS if not context.valid[provider]]
    listed = f"<ul class='problems'>{''.join(problems_html)}</ul>" if problems_html else ""
    return html_table(("policy", "verdict per provider"), rows) + listed


def _diagnostics(log: SessionLog) -> str:
    diagnostics = log.diagnostics
    if not diagnostics:
        return empty_note("None: the file read cleanly.")
    rows = [(escape(d.line), badge(d.severity if d.severity != "error" else "invalid",
                                    d.severity),
             f"<code class='kind'>{escape(d.kind)}</code>", escape(d.message, 600))
            for d in diagnostics]
    return html_table(("line", "severity", "kind", "message"), rows)


def _story_figures(parent: SessionLog, children: Sequence[SessionLog], policy: Policy,
                   axis: Axis) -> list[tuple[str, dict[str, Any]]]:
    """Return, for each fork child of ``parent``, its key and the one-story timeline of the
    parent and that child (``plot.story``); none where the pair makes no story."""
    stories = []
    for child in children:
        story = Ledger([parent, child])
        spec = fork_story_spec(story, policy, axis, name_session=False)
        if spec is not None:
            stories.append((story.keys[1], spec))
    return stories


class _Section(NamedTuple):
    """One session's section: its heading (always in the page) and its body (summary,
    timelines, tables: packed unless the report is built without packing)."""

    head: str
    body: str
    figures_px: int
    traces: frozenset[str]


def _session_section(wide: _Ledgerwide, log: SessionLog, index: int, axis: Axis,
                     facts: SessionFacts, spec: dict[str, Any],
                     children: Sequence[SessionLog] = ()) -> _Section:
    """Return the section of session ``log``, the report's ``index``-th (heading, and body
    without the closing tag): its timeline ``spec``, or with fork ``children`` loaded (under
    the fork policy) one story of the session and each child instead."""
    key = log.key
    recorded = wide.ledger.recovery("recorded").analyses[key]
    read_as = (f"format version {escape(log.version)}" if log.format == "dsh"
               else f"format {escape(log.format)}")
    meta = (f"file <code>{escape(log.path)}</code> · {read_as}"
            f" · timeline policy: <b>{escape(wide.policy)}</b>")
    stories = _story_figures(log, children, wide.policy, axis)
    if stories:
        named = ", ".join(f"<b>{escape(child, KEY_SHOWN)}</b>" for child, _ in stories)
        meta += f" · drawn with its fork child{'ren' if len(stories) > 1 else ''} {named}"
        figures = "".join(
            (f'<p class="meta">with fork child <b>{escape(child, KEY_SHOWN)}</b></p>'
             if len(stories) > 1 else "")
            + f'<div class="figure">{figure_html(story, _figure_name(index, j))}</div>'
            for j, (child, story) in enumerate(stories))
        figures_px = sum(figure_height(story) for _, story in stories)
        traces = frozenset().union(*(trace_types(story) for _, story in stories))
    else:
        figures = f'<div class="figure">{figure_html(spec, str(index))}</div>'
        figures_px = figure_height(spec)
        traces = frozenset(trace_types(spec))
    head = (f'<section class="session" id="{escape(session_anchor(key))}">'
            f'<h2 title="{escape(key)}">Session {escape(key, KEY_SHOWN)}</h2>'
            f'<p class="meta">{meta}</p>')

    def heading(part: str) -> str:
        return f'<h3 id="{escape(part_anchor(key, part))}">{PARTS[part]}</h3>'

    body = (
        f"{_summary(facts)}"
        f'<div id="{escape(part_anchor(key, "timeline"))}">{figures}</div>'
        f"{heading('unanswered')}{_unanswered(recorded)}"
        f"{heading('results')}{_tool_results(recorded)}"
        f"{heading('fork-points')}{_fork_points(wide.ledger.recovery('fork').analyses[key])}"
        f"{heading('providers')}{_providers(wide, key)}"
        f"{heading('diagnostics')}{_diagnostics(log)}"
    )
    return _Section(head, body, figures_px, traces)


def _figure_name(index: int, story: int) -> str:
    """Return the element name of a section's figure: the session index, then ``-N`` for
    its second and later stories."""
    return str(index) if story == 0 else f"{index}-{story}"


def render_report(ledger: Ledger | LedgerFiles, policy: Policy = DEFAULT_POLICY,
                  axis: Axis = "order", packed: bool = True) -> str:
    """Return the report as one self-contained HTML document (plotly.js inlined once: the
    smallest bundle that draws every figure, :mod:`ledgerviz.report.plotlyjs`).

    It opens with an overview table (one row per session), then one section per session;
    a child session (``frames.lineage``) follows its parent, and under the fork policy a
    parent loaded with fork children is drawn as one story per child (``plot.story``).
    Timelines are drawn under ``policy`` on ``axis`` (event order by default: crash
    closers share the last timestamp, and idle gaps between turns would squeeze the rest),
    each only when it scrolls into view. Sessions are drawn in batches of whole lineage trees
    (``sessions.BATCH_EVENTS``): each batch's facts and timelines come from one pass
    over the frames of all its sessions, and its analyses, frames and contexts are dropped
    before the next, so a report of many sessions holds those of one batch at a time. Given
    ``LedgerFiles`` (what ``ledgerviz report`` reads) instead of a loaded ledger, a batch's
    files are read only when it is drawn. The same input gives the same bytes.

    When ``packed`` (the default), each session's body (summary, timelines, tables) and
    plotly.js are stored compressed and unpacked by the page script as they scroll near
    (:mod:`ledgerviz.report.pack`): a report of many sessions opens on its overview at once.
    Without packing, the bodies are plain HTML that reads without JavaScript.
    """
    return "".join(report_pieces(ledger, policy, axis, packed))


def report_pieces(ledger: Ledger | LedgerFiles, policy: Policy = DEFAULT_POLICY,
                  axis: Axis = "order", packed: bool = True) -> list[str]:
    """Return the text of :func:`render_report` as its pieces, in order (the head, the
    overview, each session's section, each packed block, the foot): written one after
    another, the page is never held as one string, nor encoded all at once."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    sessions = ledger if isinstance(ledger, LedgerFiles) else LoadedSessions(ledger)
    children = fork_children(sessions.lineage) if policy == "fork" else {}
    drawing = _Drawing(sessions, policy, axis, children, BodyPacker() if packed else None)
    with progress(sum(sessions.sizes), EVENTS_THRESHOLD, "reporting") as step:
        for batch in batches(grouped_trees(sessions.lineage), sessions.sizes):
            drawing.draw(batch, step)
    facts = drawing.facts
    rows = [(key, facts[key]) for key in sessions.keys]
    blocks = [] if drawing.packer is None else drawing.packer.finish()
    drawn = frozenset(drawing.traces)
    head = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ledgerviz report</title><style>{palette()}{stylesheet('fragments.css')}"
        f"{stylesheet('report.css', __package__)}</style></head><body class='lv'>"
        '<header class="top"><h1>ledgerviz report</h1>'
        f"<p>{counted(len(sessions.keys), 'session')} · timelines drawn under the "
        f"<b>{policy}</b> policy"
        f"</p>{PAGE_NO_SCRIPT if packed else ''}{FIND_FORM}</header>"
    )
    foot = (f"<footer>ledgerviz {__version__} · works offline (plotly.js embedded: "
            f"{plotlyjs_label(drawn)})</footer>{page_scripts(drawn)}</body></html>")
    return [head, f"<main>{_overview(rows)}", *drawing.sections, "</main>", *blocks, foot]


class _Drawing:
    """The report's sections as its batches of sessions are drawn, and what the page needs
    besides: every session's facts (for the overview) and the trace types drawn."""

    def __init__(self, sessions: ReportSessions, policy: Policy, axis: Axis,
                 children: dict[int, list[int]], packer: BodyPacker | None) -> None:
        self.sessions = sessions
        self.policy = policy
        self.axis = axis
        self.children = children
        self.packer = packer
        self.facts: dict[str, SessionFacts] = {}
        self.sections: list[str] = []
        self.traces: set[str] = set()

    def draw(self, batch: Sequence[int], step: Callable[[int], None] | None) -> None:
        """Add the sections of the sessions ``batch`` (indices into the report's sessions)."""
        part, keys, policy = self.sessions.part(batch), self.sessions.keys, self.policy
        logs = {log.key: log for log in part.sessions}
        wide = _Ledgerwide(part, policy)
        recovery = part.recovery(policy)
        specs = dict(zip(batch, session_timeline_specs(
            recovery.frames, [keys[i] for i in batch], policy=policy, axis=self.axis,
            name_session=False, packed=True,
            fork_points={key: a.fork_points for key, a in recovery.analyses.items()}),
            strict=True))
        facts = wide.facts()
        self.facts.update(facts)
        for i in batch:
            log = logs[keys[i]]
            children = [logs[keys[c]] if keys[c] in logs else self.sessions.part([c]).sessions[0]
                        for c in self.children.get(i, ())]
            section = _session_section(wide, log, i, self.axis, facts[log.key],
                                       specs.pop(i),  # its arrays and texts go once drawn
                                       children)
            body = section.body if self.packer is None else self.packer.add(
                section.body, section.figures_px)
            self.sections.append(f"{section.head}{body}</section>")
            self.traces |= section.traces
            if step is not None:
                step(len(log.events))


def write_report(ledger: Ledger | LedgerFiles, path: str | Path, policy: Policy = DEFAULT_POLICY,
                 axis: Axis = "order", packed: bool = True) -> Path:
    """Write the report of ``ledger`` (:func:`render_report`) to ``path``; return the path.
    Raises ``FileExistsError`` if ``path`` holds a ledger (one of ``ledger``'s own, say)."""
    target = Path(path)
    refuse_ledger(target)
    target.write_text(render_report(ledger, policy, axis, packed), encoding="utf-8")
    return target
