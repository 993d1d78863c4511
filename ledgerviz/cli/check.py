"""``ledgerviz check``: read ledgers, report diagnostics and call outcomes per session."""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from ledgerviz.cli.output import write_stdout
from ledgerviz.cli.source_format import add_format_argument
from ledgerviz.cli.text import say_error, shown_id, shown_message, terminal_safe
from ledgerviz.ledger.sources import valid_unicode
from ledgerviz.progress import BYTES_THRESHOLD, progress, source_size
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.recovery.runtime_values import js_string
from ledgerviz.recovery.vocab import NOT_STARTED_CODE, UNKNOWN_CODE
from ledgerviz.wording import counted

if TYPE_CHECKING:
    from ledgerviz.api import Ledger
    from ledgerviz.ledger import Diagnostic, SessionLog
    from ledgerviz.streams.summary import SessionSummary

STATUS_CODES = {"outcome_unknown": UNKNOWN_CODE, "not_started": NOT_STARTED_CODE}
"""The recovery code ``check`` reports for each unanswered call status."""

STREAM_ABOVE_BYTES = 32 << 20
"""Files larger than this are checked as a stream, in bounded memory."""

LISTED = 10
"""Unanswered calls and fork points a session's text lists; ``--json`` lists every one."""


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
    add_format_argument(parser)
    parser.add_argument(
        "--strict", action="store_true", help="stop reading a PATH at its first error"
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="read every file as a stream in bounded memory (files over "
        f"{STREAM_ABOVE_BYTES >> 20} MiB always are); fork points and provider pairing "
        "are reported as for a file read whole, except for a session whose surface is "
        "edited (rewinds, restores, replace ops); abandoned seqs are not listed",
    )
    parser.set_defaults(run=run)


def _json_call_id(call_id: Any) -> str | None:
    """Return a call id as a JSON summary shows it: a string or null as it is, any other
    value as the runtime's ``String(value)`` (a huge number, ``undefined``, ``true``)."""
    return call_id if call_id is None or call_id.__class__ is str else js_string(call_id)


def session_summary(ledger: Ledger, log: SessionLog) -> dict[str, Any]:
    """Return the JSON summary of ``log``, one of the sessions of ``ledger``."""
    key = log.key
    recorded = ledger.recovery("recorded").analyses[key]
    synthesized = ledger.recovery("synthesize").analyses[key]
    forked = ledger.recovery("fork").analyses[key]
    return {
        "path": valid_unicode(log.path),
        "id": valid_unicode(key),
        "format": log.format,
        "version": log.version,
        "events": len(log.events),
        "turns": log.event_fields().types.count("turn/start"),
        "lines_skipped": log.lines_skipped,
        "diagnostics": _diagnostics(log.diagnostics),
        "calls": dict(Counter(call.status for call in recorded.calls)),
        "unanswered": [
            {"call_id": _json_call_id(call.call_id), "code": STATUS_CODES[call.status]}
            for call in recorded.calls
            if call.status in STATUS_CODES
        ],
        "closers": len(synthesized.closers),
        "fork_points": list(forked.fork_points),
        "abandoned_seqs": list(forked.abandoned_seqs),
        "provider_valid": {
            policy: ledger.context(policy, session=key).valid for policy in POLICIES
        },
        "streamed": False,
        "surface_edited": None,
    }


def _read_as(summary: dict[str, Any]) -> str:
    """Return what a session was read as: a dsh ledger's version, another format's name."""
    if summary["format"] == "dsh":
        return f"version {summary['version']}"
    return f"format {summary['format']}"


def streamed_summary(summary: SessionSummary) -> dict[str, Any]:
    """Return the JSON summary of a session read as a stream (see ``session_summary``).

    ``abandoned_seqs`` (a list as long as the abandoned suffix) is None; so are
    ``fork_points`` and ``provider_valid`` for a session whose surface is edited
    (``surface_edited``: the line of the first edit).
    """
    return {
        "path": summary.path,
        "id": summary.key,
        "format": "dsh",
        "version": summary.version,
        "events": summary.events,
        "turns": summary.turns,
        "lines_skipped": summary.lines_skipped,
        "diagnostics": _diagnostics(summary.diagnostics),
        "calls": summary.calls,
        "unanswered": [
            {"call_id": _json_call_id(call_id), "code": STATUS_CODES[status]}
            for call_id, status in summary.unanswered
        ],
        "closers": summary.closers,
        "fork_points": summary.fork_points,
        "abandoned_seqs": None,
        "provider_valid": summary.provider_valid,
        "streamed": True,
        "surface_edited": summary.surface_edited,
    }


def _diagnostics(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    """Return the diagnostics as JSON objects."""
    return [
        {"kind": d.kind, "severity": d.severity, "line": d.line,
         "message": valid_unicode(d.message)}
        for d in diagnostics
    ]


def _render(summary: dict[str, Any]) -> str:
    """Return the human-readable block for one session summary."""
    calls = ", ".join(f"{status} {n}" for status, n in sorted(summary["calls"].items()))
    unanswered = _listed([f"{shown_id(str(u['call_id']))} ({u['code']})"
                          for u in summary["unanswered"]])
    edited = summary.get("surface_edited")
    not_computed = f"not computed (streamed; surface edited at line {edited})"
    forks = not_computed if edited is not None else _seqs(summary["fork_points"])
    invalid = [
        f"{policy}/{provider}"
        for policy, checks in (summary["provider_valid"] or {}).items()
        for provider, valid in checks.items()
        if not valid
    ]
    unpaired = not_computed if edited is not None else ", ".join(invalid)
    lines = [
        f"{shown_id(summary['id'])}  ({summary['path']})",
        f"  {_read_as(summary)} · {counted(summary['events'], 'event')}"
        f" · {counted(summary['turns'], 'turn')}"
        f" · calls: {calls or 'none'}",
        f"  unanswered: {unanswered or 'none'} · crash closers: {summary['closers']}"
        f" · fork points: {forks}",
        f"  unpaired requests: {unpaired or 'none'}",
    ]
    if summary["lines_skipped"]:
        lines.append(f"  lines skipped: {summary['lines_skipped']}")
    lines = [terminal_safe(line) for line in lines]
    lines.extend(
        f"  line {d['line']}: {d['severity']} [{d['kind']}] {shown_message(d['message'])}"
        for d in summary["diagnostics"]
    )
    return "\n".join(lines)


def _seqs(seqs: list[int]) -> str:
    """Return ``seqs`` as seqs, never as a count: ``"seq 7"``, ``"seqs 7, 9"``, ``"none"``."""
    if not seqs:
        return "none"
    return f"{'seq' if len(seqs) == 1 else 'seqs'} {_listed(list(map(str, seqs)))}"


def _listed(items: list[str]) -> str:
    """Return the first :data:`LISTED` of ``items`` joined, then how many more there are."""
    more = len(items) - LISTED
    return ", ".join(items[:LISTED]) + (
        f" … and {more:,} more (--json lists every one)" if more > 0 else "")


def _has_errors(summary: dict[str, Any]) -> bool:
    """Return True when a session's summary lists an error-level diagnostic."""
    return any(d["severity"] == "error" for d in summary["diagnostics"])


def summary_line(summaries: list[dict[str, Any]], failures: list[str]) -> str:
    """Return the one line that ends ``check``'s text output: sessions, problems, verdict."""
    severities = Counter(d["severity"] for s in summaries for d in s["diagnostics"])
    with_errors = sum(map(_has_errors, summaries))
    parts = [
        counted(len(summaries), "session"),
        f"{with_errors} with errors",
        counted(severities["error"], "error"),
        counted(severities["warning"], "warning"),
    ]
    if failures:
        parts.append(f"{len(failures)} unreadable or stopped")
    verdict = "FAILED" if with_errors or failures else "ok"
    return f"checked {', '.join(parts)}: {verdict}"


def _summaries(
    path: str, *, stream: bool, strict: bool, step: Callable[[int], Any] | None = None,
    format: str | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Return ``(file, JSON summary)`` for every session of one PATH (a file's, then those
    it holds inline), each file read and summarised before the next is read: read whole
    (then dropped), or as a stream when large or ``stream``. Keys are the sessions' own;
    ``run`` makes them unique. ``step``, if given, is called with the size of each chunk
    read."""
    from ledgerviz.ledger.formats import FALLBACK, file_format
    from ledgerviz.ledger.formats.claude_code_siblings import ResumeFinder
    from ledgerviz.ledger.read import file_sessions, read_file, read_sessions
    from ledgerviz.ledger.reader import READ_BYTES, reported_chunks
    from ledgerviz.ledger.sources import iter_source_chunks
    from ledgerviz.streams.summary import summarize_file

    summaries = []
    resumes = ResumeFinder(lambda beside: read_sessions(beside, format="claude_code")[0])
    for name, found in iter_source_chunks(path, READ_BYTES):
        read_as, chunks = file_format(reported_chunks(found, step), format, name)
        if read_as.name == FALLBACK and (stream or _size(name) > STREAM_ABOVE_BYTES):
            summaries.append((name, streamed_summary(summarize_file(name, chunks,
                                                                    strict=strict))))
        else:
            from ledgerviz.api import Ledger  # pandas and the frames: not for a stream

            logs = file_sessions(resumes.linked(read_file(
                name, chunks, format=read_as.name, strict=strict, duplicate_keys=True)))
            ledger = Ledger(logs)  # a file's inline sessions are checked with it
            summaries.extend((name, session_summary(ledger, log)) for log in logs)
    return summaries


def _size(name: str) -> int:
    """Return the size of the file called ``name`` (0 for a stream or a vanished file)."""
    try:
        return os.stat(name).st_size
    except OSError:
        return 0


def run(args: argparse.Namespace) -> int:
    """Check every PATH and print the summary; return the exit code (0, 1 or 2)."""
    from ledgerviz.ledger import LedgerError, UnreadableSourceError
    from ledgerviz.ledger.reader import unique_keys

    read: list[tuple[str, dict[str, Any]]] = []
    failures, unreadable = [], False
    with progress(partial(source_size, list(args.paths)), BYTES_THRESHOLD, "checking",
                  unit="B") as step:
        for path in args.paths:
            try:
                read.extend(_summaries(path, stream=args.stream, strict=args.strict, step=step,
                                       format=args.format))
            except UnreadableSourceError as error:
                unreadable = True
                failures.append(str(error))
            except LedgerError as error:
                failures.append(str(error))
    keys = unique_keys([name for name, _ in read], [summary["id"] for _, summary in read])
    summaries = [{**summary, "id": valid_unicode(key)}
                 for (_, summary), key in zip(read, keys, strict=True)]
    if args.json:
        document = {"sessions": summaries, "failures": [valid_unicode(f) for f in failures]}
        write_stdout(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        blocks = [_render(summary) for summary in summaries]
        print("\n\n".join([*blocks, summary_line(summaries, failures)]))
    for failure in failures:
        say_error("check", failure)
    if unreadable:
        return 2
    has_errors = failures or any(_has_errors(summary) for summary in summaries)
    return 1 if has_errors else 0
