"""Read ledger sources into ``SessionLog``s."""

from __future__ import annotations

from dataclasses import replace
from itertools import chain, count
from pathlib import Path

from ledgerviz.ledger.diagnostics import DiagnosticLog
from ledgerviz.ledger.events import check_events, decode_lines
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.header import read_header
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import Source, iter_sources


def read_sessions(source: Source, *, strict: bool = False) -> list[SessionLog]:
    """Return one ``SessionLog`` per ledger file in ``source``, keys unique within the load.

    Lenient by default: every readable event is kept and every problem becomes a
    diagnostic. ``strict=True`` raises ``LedgerError`` at the first error-level problem.
    A source that cannot be read at all raises ``UnreadableSourceError``.
    """
    logs = [read_session(path, content, strict=strict) for path, content in iter_sources(source)]
    return with_unique_keys(logs)


def read_session(path: str, content: bytes, *, strict: bool = False) -> SessionLog:
    """Return the session in one file's bytes (its key is the header id or the file stem)."""
    log = DiagnosticLog(path, strict=strict)
    stem = Path(path).stem
    if not content or content.isspace():  # not strip(): that would copy the whole file
        log.add(1, "empty_file", "file is empty: no header, no events", "warning")
        return SessionLog(path, stem, {}, None, [], log.items)
    raw_lines = content.split(b"\n")
    tail = raw_lines.pop()
    skipped = 0
    if tail.strip():
        skipped = 1
        log.add(
            len(raw_lines) + 1,
            "torn_tail",
            f"last line has no newline ({len(tail)} bytes): an interrupted append, dropped",
            "warning",
        )
    if not raw_lines:
        return SessionLog(path, stem, {}, None, [], log.items, skipped)
    header = read_header(raw_lines[0], log)
    first_line = 1 if header.line_is_event else 2
    event_lines = raw_lines[first_line - 1 :]
    key = header.fields.get("id")
    key = key if isinstance(key, str) else stem
    if not header.readable:
        skipped += sum(1 for raw in event_lines if raw.strip())
        return SessionLog(path, key, header.fields, None, [], log.items, skipped)
    with paused_gc():
        values = decode_lines(event_lines, first_line, log, last_may_be_torn=not skipped)
        checked = check_events(values, first_line, header.version, log)
    return SessionLog(
        path,
        key,
        header.fields,
        header.version,
        checked.events,
        log.items,
        skipped + checked.rejected,
        checked.lines,
        checked.fields,
    )


def with_unique_keys(logs: list[SessionLog]) -> list[SessionLog]:
    """Return the logs with unique keys: a clashing id falls back to the file name, then path."""
    taken: set[str] = set()
    unique = []
    for log in logs:
        candidates = [log.key, Path(log.path).name, log.path]
        numbered = (f"{log.path}#{n}" for n in count(2))
        key = next(c for c in chain(candidates, numbered) if c not in taken)
        taken.add(key)
        unique.append(log if key == log.key else replace(log, key=key))
    return unique
