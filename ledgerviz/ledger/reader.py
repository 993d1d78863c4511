"""Read ledger sources into ``SessionLog``s, whole or block by block."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import chain, count
from pathlib import Path
from typing import Protocol, TypeVar

from ledgerviz.ledger.diagnostics import DiagnosticLog
from ledgerviz.ledger.events import CheckedEvents, CheckState, check_events, decode_lines
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.header import Header, read_header
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import Source, iter_source_chunks, iter_sources

PROGRESS_CHUNK = 8 << 20
"""Bytes read between two progress reports."""


def read_sessions(
    source: Source, *, strict: bool = False, progress: Callable[[int], None] | None = None
) -> list[SessionLog]:
    """Return one ``SessionLog`` per ledger file in ``source``, keys unique within the load.

    Lenient by default: every readable event is kept and every problem becomes a
    diagnostic. ``strict=True`` raises ``LedgerError`` at the first error-level problem.
    A source that cannot be read at all raises ``UnreadableSourceError``. ``progress``, if
    given, is called with the number of bytes read each time a chunk has been checked.
    """
    if progress is None:
        logs = [read_session(path, content, strict=strict)
                for path, content in iter_sources(source)]
    else:
        logs = []
        for path, chunks in iter_source_chunks(source, PROGRESS_CHUNK):
            scan = FileScan(path, strict=strict)
            logs.append(scan.session_log(list(scan.blocks(_reported(chunks, progress)))))
    return with_unique_keys(logs)


def _reported(chunks: Iterable[bytes], progress: Callable[[int], None]) -> Iterator[bytes]:
    """Yield ``chunks``, reporting each one's size once the reader asks for the next."""
    for chunk in chunks:
        yield chunk
        progress(len(chunk))


def read_session(path: str, content: bytes, *, strict: bool = False) -> SessionLog:
    """Return the session in one file's bytes (its key is the header id or the file stem)."""
    scan = FileScan(path, strict=strict)
    return scan.session_log(list(scan.blocks([content])))


class FileScan:
    """Reads one ledger file from its bytes in chunks, one block of checked events per chunk.

    Only the chunk being checked (and the next one, read ahead to know which is last) is
    held, so a file of any size can be read in bounded memory; the diagnostics are the
    ones reading the file whole gives, in the same order.
    """

    def __init__(self, path: str, *, strict: bool = False) -> None:
        self.path = path
        self.log = DiagnosticLog(path, strict=strict)
        self.header: Header | None = None
        """The header line, once read (None: no complete line yet)."""
        self.skipped = 0
        """Lines that gave no event so far: a torn tail, unreadable lines, rejected events."""
        self._state: CheckState | None = None  # None: no events to read
        self._lines = 0  # complete lines read so far

    @property
    def key(self) -> str:
        """Return the session key: the header's string id, else the file stem."""
        key = self.header.fields.get("id") if self.header else None
        return key if isinstance(key, str) else Path(self.path).stem

    @property
    def version(self) -> int | None:
        """Return the header's format version (None: v0, unknown or no header)."""
        return self.header.version if self.header else None

    def blocks(self, chunks: Iterable[bytes]) -> Iterator[CheckedEvents]:
        """Yield the checked events of each chunk's complete lines, in file order.

        A chunk's last partial line is joined to the next chunk; what follows the
        file's last newline is a torn tail, dropped with a warning.
        """
        pieces = _lines_of(_after_leading_blanks(chunks))
        current = next(pieces, None)
        if current is None:
            self.log.add(1, "empty_file", "file is empty: no header, no events", "warning")
        while current is not None:
            lines, tail = current
            following = next(pieces, None)
            torn = following is None and bool(tail.strip())
            if torn:
                self._torn_tail(self._lines + len(lines) + 1, len(tail))
            checked = self._check(lines, last_may_be_torn=following is None and not torn)
            if checked is not None:
                yield checked
            current = following

    def _torn_tail(self, line: int, size: int) -> None:
        """Record the bytes after the last newline: an interrupted append (listed first)."""
        self.skipped += 1
        message = f"last line has no newline ({size} bytes): an interrupted append, dropped"
        self.log.add(line, "torn_tail", message, "warning")
        self.log.items.insert(0, self.log.items.pop())

    def _check(self, lines: list[bytes], *, last_may_be_torn: bool) -> CheckedEvents | None:
        """Return the checked events of one block of complete lines (None: no events read)."""
        first_line = self._lines + 1
        self._lines += len(lines)
        if self.header is None:
            if not lines:
                return None
            self.header = read_header(lines[0], self.log)
            if not self.header.line_is_event:
                lines, first_line = lines[1:], first_line + 1
            if self.header.readable:
                self._state = CheckState()
        if self._state is None:
            self.skipped += sum(1 for raw in lines if raw.strip())
            return None
        with paused_gc():
            values = decode_lines(lines, first_line, self.log, last_may_be_torn=last_may_be_torn)
            checked = check_events(values, first_line, self.version, self.log, self._state)
        self.skipped += checked.rejected
        return checked

    def session_log(self, blocks: list[CheckedEvents]) -> SessionLog:
        """Return the ``SessionLog`` of the file from all of its blocks."""
        fields = self.header.fields if self.header else {}
        if self._state is None:
            return SessionLog(self.path, self.key, fields, None, [], self.log.items, self.skipped)
        if len(blocks) == 1:
            events, columns, lines = blocks[0].events, blocks[0].fields, blocks[0].lines
        else:
            events = list(chain.from_iterable(block.events for block in blocks))
            columns = EventFields.joined([block.fields for block in blocks])
            lines = list(chain.from_iterable(block.lines for block in blocks))
        return SessionLog(
            self.path,
            self.key,
            fields,
            self.version,
            events,
            self.log.items,
            self.skipped,
            lines,
            columns,
        )


def _after_leading_blanks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Yield the chunks, the leading whitespace-only ones joined to the first other one.

    A file of whitespace alone yields nothing (it reads as empty).
    """
    blanks: list[bytes] | None = []
    for chunk in chunks:
        if blanks is not None:
            if chunk.isspace() or not chunk:
                blanks.append(chunk)
                continue
            chunk = b"".join([*blanks, chunk])
            blanks = None
        yield chunk


def _lines_of(chunks: Iterable[bytes]) -> Iterator[tuple[list[bytes], bytes]]:
    """Yield ``(complete lines, what follows the last newline so far)`` per chunk."""
    carry = b""
    for chunk in chunks:
        lines = (carry + chunk if carry else chunk).split(b"\n")
        carry = lines.pop()
        yield lines, carry


class _Keyed(Protocol):
    """A dataclass naming one file's session: a ``SessionLog`` or a summary of one."""

    @property
    def key(self) -> str: ...

    @property
    def path(self) -> str: ...


KeyedT = TypeVar("KeyedT", bound=_Keyed)


def with_unique_keys(logs: list[KeyedT]) -> list[KeyedT]:
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
