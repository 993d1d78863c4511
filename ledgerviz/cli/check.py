"""``ledgerviz check``: read ledgers, report diagnostics and call outcomes per session."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

import orjson

from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.recovery.events import NOT_STARTED_CODE, UNKNOWN_CODE

if TYPE_CHECKING:
    from ledgerviz.api import Ledger
    from ledgerviz.ledger import SessionLog

STATUS_CODES = {"outcome_unknown": UNKNOWN_CODE, "not_started": NOT_STARTED_CODE}
"""The recovery code ``check`` reports for each unanswered call status."""


def register(subparsers: Any) -> None:
    """Add the ``check`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "check",
        help="check ledgers: diagnostics, turns, calls by status, recovery facts",
        description="Read every ledger in PATH (files, folders, globs) and summarise each "
        "session. Exit 0: no error-level diagnostic; 1: errors found; 2: a PATH is unreadable.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="ledger files, folders or globs")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--strict", action="store_true", help="stop reading a PATH at its first error"
    )
    parser.set_defaults(run=run)


def session_summary(ledger: Ledger, log: SessionLog) -> dict[str, Any]:
    """Return the JSON summary of ``log``, one of the sessions of ``ledger``."""
    key = log.key
    recorded = ledger.recovery("recorded").analyses[key]
    synthesized = ledger.recovery("synthesize").analyses[key]
    forked = ledger.recovery("fork").analyses[key]
    return {
        "path": log.path,
        "id": key,
        "version": log.version,
        "events": len(log.events),
        "turns": log.event_fields().types.count("turn/start"),
        "lines_skipped": log.lines_skipped,
        "diagnostics": [
            {"kind": d.kind, "severity": d.severity, "line": d.line, "message": d.message}
            for d in log.diagnostics
        ],
        "calls": dict(Counter(call.status for call in recorded.calls)),
        "unanswered": [
            {"call_id": call.call_id, "code": STATUS_CODES[call.status]}
            for call in recorded.calls
            if call.status in STATUS_CODES
        ],
        "closers": len(synthesized.closers),
        "fork_points": list(forked.fork_points),
        "abandoned_seqs": list(forked.abandoned_seqs),
        "provider_valid": {
            policy: ledger.context(policy, session=key).valid for policy in POLICIES
        },
    }


def _render(summary: dict[str, Any]) -> str:
    """Return the human-readable block for one session summary."""
    calls = ", ".join(f"{status} {n}" for status, n in sorted(summary["calls"].items()))
    unanswered = ", ".join(f"{u['call_id']} ({u['code']})" for u in summary["unanswered"])
    forks = ", ".join(map(str, summary["fork_points"])) or "none"
    invalid = [
        f"{policy}/{provider}"
        for policy, checks in summary["provider_valid"].items()
        for provider, valid in checks.items()
        if not valid
    ]
    lines = [
        f"{summary['id']}  ({summary['path']})",
        f"  version {summary['version']} · {summary['events']} events · {summary['turns']} turns"
        f" · calls: {calls or 'none'}",
        f"  unanswered: {unanswered or 'none'} · crash closers: {summary['closers']}"
        f" · fork points: {forks}",
        f"  unpaired requests: {', '.join(invalid) or 'none'}",
    ]
    if summary["lines_skipped"]:
        lines.append(f"  lines skipped: {summary['lines_skipped']}")
    lines.extend(
        f"  line {d['line']}: {d['severity']} [{d['kind']}] {d['message']}"
        for d in summary["diagnostics"]
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Check every PATH and print the summary; return the exit code (0, 1 or 2)."""
    from ledgerviz.api import Ledger
    from ledgerviz.ledger import LedgerError, UnreadableSourceError, read_sessions
    from ledgerviz.ledger.reader import with_unique_keys

    sessions, failures, unreadable = [], [], False
    for path in args.paths:
        try:
            sessions.extend(read_sessions(path, strict=args.strict))
        except UnreadableSourceError as error:
            unreadable = True
            failures.append(str(error))
        except LedgerError as error:
            failures.append(str(error))
    ledger = Ledger(with_unique_keys(sessions))
    summaries = [session_summary(ledger, log) for log in ledger.sessions]
    if args.json:
        document = {"sessions": summaries, "failures": failures}
        sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print("\n\n".join(_render(summary) for summary in summaries))
    for failure in failures:
        print(f"ledgerviz check: {failure}", file=sys.stderr)
    if unreadable:
        return 2
    has_errors = failures or any(log.has_errors for log in ledger.sessions)
    return 1 if has_errors else 0
