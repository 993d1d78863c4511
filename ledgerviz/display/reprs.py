"""The notebook reprs of ``Ledger``, ``RecoveryView``, ``Frames`` and ``Context``: one compact
table each, drawn as HTML with a plain-text twin, bounded whatever the ledger."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ledgerviz.display.fragments import (
    Cell,
    Part,
    Table,
    cell,
    cell_html,
    empty_note,
    rich_block,
)
from ledgerviz.html import escape, short_text
from ledgerviz.recovery.analysis import POLICIES, Analysis
from ledgerviz.recovery.providers import PROVIDERS
from ledgerviz.recovery.vocab import OPEN_STATUSES
from ledgerviz.wording import counted

if TYPE_CHECKING:
    from ledgerviz.api import Context, Ledger, RecoveryView
    from ledgerviz.frames import Frames
    from ledgerviz.ledger import SessionLog

KEY_LIMIT = 80
"""Characters of a session key a title shows."""
ROW_LIMIT = 12
"""Sessions (or problems) a repr lists; the rest are counted in a footer."""
FRAME_BUILD_LIMIT = 200_000
"""Events up to which a ``Frames`` repr builds every frame to show its shape."""
STATUS_BADGES = (("ok", "ok"), ("error", "error"), ("outcome_unknown", "unknown"),
                 ("not_started", "not started"))
SEVERITIES = ("error", "warning", "info")
SEVERITY_BADGE = {"error": "invalid", "warning": "warning", "info": "info"}


def calls_cell(analysis: Analysis) -> Cell:
    """Return the calls of ``analysis`` counted by status, one badge per status present."""
    counts = Counter(call.status for call in analysis.calls)
    parts = [Part(f"{counts[s]} {label}", s) for s, label in STATUS_BADGES if counts[s]]
    return tuple(parts) or cell("none")


def fork_cell(analysis: Analysis) -> Cell:
    """Return the fork points of a fork-policy analysis as seqs (first five)."""
    points = analysis.fork_points
    if not points:
        return cell("none")
    shown = ", ".join(str(p) for p in points[:5])
    return cell(f"seq {shown}" + (f" (+{len(points) - 5})" if len(points) > 5 else ""))


def closers_cell(analysis: Analysis) -> Cell:
    """Return how many events the policy appends (synthetic closers)."""
    return cell(f"{len(analysis.closers)} synthetic" if analysis.closers else "none")


def diagnostics_cell(severities: Sequence[str]) -> Cell:
    """Return diagnostics counted by severity, or ``clean``."""
    counts = Counter(severities)
    parts = [Part(f"{counts[s]} {s}", SEVERITY_BADGE[s]) for s in SEVERITIES if counts[s]]
    return tuple(parts) or (Part("clean", "valid"),)


def validity_cell(context: Context) -> Cell:
    """Return one badge per provider: valid, or invalid with its problem count."""
    parts = []
    for provider in PROVIDERS:
        problems = len(context.problems[provider])
        if context.valid[provider]:
            parts.append(Part(f"{provider} valid", "valid"))
        else:
            parts.append(Part(f"{provider} invalid · {counted(problems, 'problem')}", "invalid"))
    return tuple(parts)


def _turns(events: Sequence[dict]) -> int:
    return sum(1 for event in events if event.get("type") == "turn/start")


def ledger_table(ledger: Ledger) -> Table:
    """Return one row per session (the first :data:`ROW_LIMIT`): events, turns, calls by
    status, fork points, diagnostics by severity, provider validity per policy."""
    rows = []
    for log in ledger.sessions[:ROW_LIMIT]:
        key = log.key
        rows.append((
            cell(key), cell(str(len(log.events))), cell(str(_turns(log.events))),
            calls_cell(ledger.recovery("recorded").analyses[key]),
            fork_cell(ledger.recovery("fork").analyses[key]),
            diagnostics_cell([d.severity for d in log.diagnostics]),
            *(validity_cell(ledger.context(policy, session=key)) for policy in POLICIES),
        ))
    return Table(("session", "events", "turns", "calls (as recorded)", "fork points",
                  "diagnostics", *(f"next request · {p}" for p in POLICIES)),
                 rows, hidden=max(0, len(ledger) - ROW_LIMIT), noun="session")


def ledger_title(ledger: Ledger) -> str:
    """Return the one-line plain-text summary of a ledger (also its ``__repr__``)."""
    events = sum(len(log.events) for log in ledger.sessions)
    errors = sum(log.has_errors for log in ledger.sessions)
    count = len(ledger)
    return (f"Ledger: {counted(count, 'session')}, {counted(events, 'event', ',')}"
            + (f", {errors} with read errors" if errors else ""))


def ledger_html(ledger: Ledger) -> str:
    """Return the notebook display of a ledger."""
    if not len(ledger):
        return rich_block(escape(ledger_title(ledger)), empty_note("no sessions were read"),
                          ledger_title(ledger))
    table = ledger_table(ledger)
    return rich_block(escape(ledger_title(ledger)), table.html(),
                      f"{ledger_title(ledger)}\n{table.text()}")


def recovery_table(view: RecoveryView) -> Table:
    """Return one row per session of a recovery view: closers, fork points, abandoned events,
    calls by status (first :data:`ROW_LIMIT` sessions)."""
    rows = [(cell(key), cell(str(len(analysis.events))), closers_cell(analysis),
             fork_cell(analysis), cell(str(len(analysis.abandoned_seqs))),
             calls_cell(analysis))
            for key, analysis in list(view.analyses.items())[:ROW_LIMIT]]
    return Table(("session", "events (incl. synthetic)", "appended by the policy",
                  "fork points", "abandoned events", "calls"),
                 rows, hidden=max(0, len(view.analyses) - ROW_LIMIT), noun="session")


def recovery_title(view: RecoveryView) -> str:
    """Return the one-line summary of a recovery view (also its ``__repr__``)."""
    closers = sum(len(a.closers) for a in view.analyses.values())
    return (f"RecoveryView: policy {view.policy}, {counted(len(view.analyses), 'session')}, "
            f"{counted(closers, 'synthetic closer')}")


def recovery_html(view: RecoveryView) -> str:
    """Return the notebook display of a recovery view."""
    table = recovery_table(view)
    title = recovery_title(view)
    return rich_block(escape(title), table.html() + empty_note(
        "frames: .frames (events, turns, steps, calls, messages, lineage)"),
        f"{title}\n{table.text()}")


def frames_table(frames: Frames) -> Table:
    """Return one row per frame: rows × columns when built (all are built for ledgers up to
    :data:`FRAME_BUILD_LIMIT` events), else the columns and a note."""
    small = frames.event_count <= FRAME_BUILD_LIMIT
    rows = []
    for name, columns in frames.schemas().items():
        frame = frames.built(name) if not small else getattr(frames, name)
        shape = (f"{counted(len(frame), 'row', ',')} × {counted(len(frame.columns), 'column')}"
                 if frame is not None
                 else f"not built yet · {len(columns) + 1} columns")
        rows.append((cell(f".{name}"), cell(shape), cell(", ".join(["session", *columns]))))
    return Table(("frame", "shape", "columns"), rows, limit=120)


def frames_title(frames: Frames) -> str:
    """Return the one-line summary of a ``Frames``."""
    return (f"Frames: {counted(frames.session_count, 'session')}, "
            f"{counted(frames.event_count, 'event', ',')} read")


def frames_html(frames: Frames) -> str:
    """Return the notebook display of a ``Frames``."""
    table = frames_table(frames)
    return rich_block(escape(frames_title(frames)), table.html(),
                      f"{frames_title(frames)}\n{table.text()}")


def problems_table(context: Context) -> Table:
    """Return the pairing problems of a context, every provider (first :data:`ROW_LIMIT`)."""
    problems = [p for provider in PROVIDERS for p in context.problems[provider]]
    rows = [(cell(p.provider), cell(p.kind),
             cell(", ".join("not logged" if s is None else str(s) for s in p.seqs) or "—"),
             cell(p.detail)) for p in problems[:ROW_LIMIT]]
    return Table(("provider", "problem", "seqs", "detail"), rows,
                 hidden=max(0, len(problems) - ROW_LIMIT), noun="problem", limit=200)


def context_title(context: Context) -> str:
    """Return the one-line summary of a context (also its ``__repr__``)."""
    count = len(context.messages)
    verdicts = ", ".join(f"{p} {'valid' if context.valid[p] else 'invalid'}" for p in PROVIDERS)
    return (f"Context: session {short_text(context.session, KEY_LIMIT)}, policy {context.policy}, "
            f"{counted(count, 'message')}; {verdicts}")


def validity_html(context: Context) -> str:
    """Return the provider badges of a context (shared by its repr and the explorer pane)."""
    return cell_html(validity_cell(context))


def context_repr_html(context: Context) -> str:
    """Return the notebook display of a context: verdicts, then its problems."""
    table = problems_table(context)
    body = validity_html(context) + (table.html() if table.rows else empty_note(
        "no pairing problems: every tool call is answered exactly once"))
    text = f"{context_title(context)}\n{table.text()}" if table.rows else context_title(context)
    return rich_block(escape(f"Next model request · session "
                             f"{short_text(context.session, KEY_LIMIT)} · policy "
                             f"{context.policy} · {counted(len(context.messages), 'message')}"),
                      body, text)


def session_html(log: SessionLog) -> str:
    """Return the notebook display of one ledger file: its facts, then its first diagnostics."""
    facts = Table(("file", "key", "format version", "events", "turns", "lines skipped",
                   "diagnostics"),
                  [(cell(log.path), cell(log.key), cell(str(log.version)),
                    cell(str(len(log.events))), cell(str(_turns(log.events))),
                    cell(str(log.lines_skipped)),
                    diagnostics_cell([d.severity for d in log.diagnostics]))], limit=120)
    listed = Table(("line", "severity", "kind", "message"),
                   [(cell(str(d.line)), (Part(d.severity, SEVERITY_BADGE[d.severity]),),
                     cell(d.kind), cell(d.message)) for d in log.diagnostics[:ROW_LIMIT]],
                   hidden=max(0, len(log.diagnostics) - ROW_LIMIT), noun="diagnostic",
                   limit=200)
    body = facts.html() + (listed.html() if listed.rows else "")
    text = facts.text() + (f"\n{listed.text()}" if listed.rows else "")
    return rich_block(escape(f"Session {short_text(log.key, KEY_LIMIT)}"), body, text)


def analysis_html(analysis: Analysis) -> str:
    """Return the notebook display of one Analysis: its outcome, then its unsettled calls."""
    facts = Table(("policy", "events (incl. synthetic)", "appended by the policy",
                   "fork points", "abandoned events", "calls"),
                  [(cell(analysis.policy), cell(str(len(analysis.events))),
                    closers_cell(analysis), fork_cell(analysis),
                    cell(str(len(analysis.abandoned_seqs))), calls_cell(analysis))])
    open_calls = [c for c in analysis.calls if c.status in OPEN_STATUSES]
    listed = Table(("call id", "tool", "status", "settled", "branch", "requested seq"),
                   [(cell(c.call_id), cell(c.name or ""), (Part(c.status, c.status),),
                     cell("yes" if c.settled else "no"), cell(c.branch),
                     cell(str(c.requested_seq))) for c in open_calls[:ROW_LIMIT]],
                   hidden=max(0, len(open_calls) - ROW_LIMIT), noun="unanswered call")
    body = facts.html() + (listed.html() if listed.rows else empty_note(
        "every requested tool call has a recorded result"))
    text = facts.text() + (f"\n{listed.text()}" if listed.rows else "")
    return rich_block(escape(f"Analysis under {analysis.policy}"), body, text)
