"""Read ledger sources into ``SessionLog``s, whole or block by block."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import chain, count
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from ledgerviz.ledger.checks import CheckedEvents, CheckState, check_events, joined_checks
from ledgerviz.ledger.decode import decode_lines
from ledgerviz.ledger.diagnostics import (
    Diagnostic,
    DiagnosticLog,
    DiagnosticSink,
    PendingDiagnostics,
    Severity,
    torn_tail_message,
)
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.header import Header, read_header
from ledgerviz.ledger.lineage import SeedCheck
from ledgerviz.ledger.numbers import may_hold_big_integers, number_marks
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import (
    UTF8_BOM,
    FileOrigin,
    SourceProblem,
    same_file,
    valid_unicode,
)
from ledgerviz.ledger.tabled import TableBlock, TableRows
from ledgerviz.ledger.typed import TypedBlock, typed_block
from ledgerviz.ledger.typed_stream import StreamBlock, stream_block
from ledgerviz.wording import counted

CHECK_LINES = 256
"""How many lines are decoded and then checked at a time: few enough that the values
decoded are still in the processor's caches when they are checked."""

READ_BYTES = 1 << 20
"""How many bytes of a file are split into lines, decoded and checked at a time (and read
at a time, by ``read.read_sessions``): the copies made per block (the lines, their number marks)
stay this small however large the file is; only the decoded events grow with it."""

MAX_LINE_UNITS = (1 << 29) - 24
"""The longest line the runtime can write, in UTF-16 code units: it writes each event as one
``JSON.stringify`` string, and V8 (Node.js, 64-bit) refuses a string longer than this
(``Invalid string length``). A longer line (or a torn tail longer than this) is no line of
the runtime's: it is counted, not held, and reported as ``line_too_long`` (its length
named), so a file without newlines costs at most this much memory, not its size. A line's
length in code units is at most its length in bytes (and at least a third of it)."""

COMPRESSION_MAGIC = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "Zstandard"}
"""Leading bytes of compressed files, and the format they announce."""

UTF16_BOMS = {b"\xff\xfe": "little", b"\xfe\xff": "big"}
"""UTF-16's byte order marks and the byte order each announces (a shell redirect on Windows
writes such files)."""

UNDECODABLE_KINDS = frozenset(
    {"bad_header", "invalid_json", "invalid_utf8", "blank_line", "torn_tail", "line_too_long",
     "more_diagnostics"}
)
"""Diagnostics of lines that decode to nothing; a file with only these is not a ledger."""


Chunk = bytes | SourceProblem


def reported_chunks(
    chunks: Iterator[Chunk], progress: Callable[[int], Any] | None
) -> Iterator[Chunk]:
    """Return ``chunks``, each one's size reported to ``progress`` once the reader asks for
    the next (``chunks`` itself when ``progress`` is None; the file they come from, a
    ``FileChunks.origin``, and how it ended, kept)."""
    if progress is None:
        return chunks
    return same_file(_reporting(chunks, progress), chunks)


def _reporting(chunks: Iterator[Chunk], progress: Callable[[int], Any]) -> Iterator[Chunk]:
    for chunk in chunks:
        yield chunk
        if isinstance(chunk, bytes):
            progress(len(chunk))


def read_chunks(
    path: str, chunks: Iterable[Chunk], *, strict: bool = False, duplicate_keys: bool = False,
    origin: FileOrigin | None = None,
) -> SessionLog:
    """Return the session of one dsh ledger file given as its chunks (options as in
    ``ledgerviz.ledger.read.read_sessions``), its events a typed table and the dicts
    decoded on demand (``ledger.tabled``) from ``origin``, the file the chunks are read
    from, or (None) from the chunks' bytes, then held."""
    scan = FileScan(path, strict=strict, duplicate_keys=duplicate_keys, tabled=True,
                    origin=origin)
    return scan.session_log(list(scan.blocks(chunks)))


class FileScan:
    """Reads one ledger file from its bytes in chunks, one block of checked events per
    ``READ_BYTES`` or less (a larger chunk is cut into pieces).

    Only the chunk being checked (and the next one, read ahead to know which is last) is
    held, so a file of any size can be read in bounded memory; the diagnostics are the
    ones reading the file whole gives, in the same order (line order, see
    ``_decode_and_check``), however the file is cut into chunks.
    """

    def __init__(
        self, path: str, *, strict: bool = False, duplicate_keys: bool = False,
        typed: bool = False, runtime: bool = False, max_line: int = MAX_LINE_UNITS,
        tabled: bool = False, origin: FileOrigin | None = None,
        compact_ids: bool = False,
    ) -> None:
        self.path = path
        self.max_line = max_line
        """The longest line read, in UTF-16 code units (see ``MAX_LINE_UNITS``)."""
        self.runtime = runtime
        """Whether events are checked as the runtime reads them (see ``CheckState``)."""
        self.duplicate_keys = duplicate_keys
        self.typed = (typed or tabled) and not duplicate_keys and not runtime
        """Whether blocks may be read by the typed decoder (``typed_stream.stream_block``), as
        ``StreamBlock``s without their dicts: for a reader that drops the events."""
        self.rows: TableRows | None = TableRows(path, origin, max_line) if tabled else None
        """With ``tabled``: the blocks come as ``tabled.TableBlock``s, their events a typed
        table, the dicts decoded on demand from ``origin`` (see ``tabled``)."""
        self.compact_ids = compact_ids or (self.typed and not tabled)
        """Whether the requested call ids are held as ``CallIds`` (a reader that drops the
        events: typed but not tabled, or given ``compact_ids``; a table holds every id
        already, so a set of them costs only its slots)."""
        self.log = DiagnosticLog(path, strict=strict)
        self.header: Header | None = None
        """The header line, once read (None: no complete line yet)."""
        self.skipped = 0
        """Lines that gave no event so far: a torn tail, unreadable lines, rejected events."""
        self._state: CheckState | None = None  # None: no events to read
        self._lines = 0  # complete lines read so far
        self._opening_text = ""  # the start of line 1, quoted when the file is not a ledger
        self._seed = SeedCheck()

    @property
    def key(self) -> str:
        """Return the session key: the header's string id, else the file stem."""
        return session_key(self.path, self.header_fields)

    @property
    def header_fields(self) -> dict[str, Any]:
        """Return the header line's fields ({} before it is read, or when it is no header)."""
        return self.header.fields if self.header else {}

    @property
    def readable(self) -> bool:
        """Return whether the file can give events: its first line was read and is a
        readable header, or an event of a file without one."""
        return self._state is not None

    @property
    def lines_read(self) -> int:
        """Return how many complete lines the blocks read so far hold."""
        return self._lines

    @property
    def version(self) -> int | None:
        """Return the header's format version (None: v0, unknown or no header)."""
        return self.header.version if self.header else None

    def blocks(self, chunks: Iterable[Chunk]) -> Iterator[CheckedEvents | StreamBlock]:
        """Yield the checked events of each chunk's complete lines, in file order (with
        ``typed``, a block that gives no diagnostic may come as a ``StreamBlock``; with
        ``tabled``, every block comes as a ``tabled.TableBlock``).

        A chunk's last partial line is joined to the next chunk; what follows the
        file's last newline is a torn tail, dropped with a warning. A leading UTF-8
        byte order mark is dropped with a warning; a compressed file, or a file that
        could not be read (a ``SourceProblem``), is one error and gives no events.
        """
        rows = self.rows
        opened = opened_chunks(iter(chunks) if rows is None else rows.kept(chunks), self.log)
        if opened is None:
            return
        leading = LeadingBlanks()
        pieces = line_blocks(opened, self.max_line, leading)
        current = next(pieces, None)
        if current is None:
            self._empty(leading)
        while current is not None:
            lines, tail, block, tail_size, too_long, cut = current
            following = next(pieces, None)
            if rows is not None:
                rows.lines_read(lines, cut + leading.lost, self._lines + 1)
                leading.lost = 0  # counted once
            if too_long:
                lines = self._too_long(lines, too_long)
            torn = following is None and bool(tail.strip())
            if torn:
                self._torn_tail(self._lines + len(lines) + 1, tail_size)
            checked = self._check(lines, block, last_may_be_torn=following is None and not torn)
            if checked is not None:
                columns = (checked if isinstance(checked, (StreamBlock, TypedBlock))
                           else checked.fields)
                self._seed.observe(columns.types, columns.seqs, columns.datas, checked.lines)
                yield checked if rows is None else rows.block(checked)
                del checked, columns  # not held while the next block is decoded
            current = following
        self._check_seed()

    def _empty(self, leading: LeadingBlanks) -> None:
        """Record a file with no line that is not blank (``empty_file``)."""
        self.skipped += empty_file(self.log, leading)

    def _check_seed(self) -> None:
        """Warn when the inherited prefix the lineage claims runs past the events it covers."""
        if self.header is None or self._state is None:
            return
        problem = self._seed.problem(self.header.fields, self.version)
        if problem is not None:
            self.log.add(problem[0], "seed_too_long", problem[1], "warning")

    def _too_long(self, lines: list[bytes], size: int) -> list[bytes]:
        """Record the first of ``lines`` (cut to its start) as longer than the runtime can
        write (an error, the line skipped); return the lines left to check (a header line
        stays, read from its start: it is then no header)."""
        self.skipped += 1
        message = (f"line is {size:,} bytes, longer than the {self.max_line:,} UTF-16 code "
                   "units a runtime can write as one line: skipped, not read")
        self.log.add(self._lines + 1, "line_too_long", message)
        if self.header is None:
            return lines
        self._lines += 1
        return lines[1:]

    def _torn_tail(self, line: int, size: int) -> None:
        """Record the bytes after the last newline: an interrupted append (listed first)."""
        self.skipped += 1
        self.log.add(line, "torn_tail", torn_tail_message(size, no_newline=True, no_json=False),
                     "warning")
        self.log.items.insert(0, self.log.items.pop())

    def _check(
        self, lines: list[bytes], block: bytes, *, last_may_be_torn: bool
    ) -> CheckedEvents | StreamBlock | TypedBlock | None:
        """Return the checked events of one block of complete lines (None: no events read).

        ``block`` holds the bytes the lines were split from (and what follows them).
        """
        first_line = self._lines + 1
        self._lines += len(lines)
        if self.header is None:
            if not lines:
                return None
            self._opening_text = lines[0][:40].decode("utf-8", "backslashreplace")
            self.header = read_header(lines[0], self.log)
            if not self.header.line_is_event:
                if not self.header.fields:  # neither a header nor an event: a line lost
                    self.skipped += 1
                lines, first_line = lines[1:], first_line + 1
            if self.header.readable:
                self._state = CheckState(runtime=self.runtime, compact_ids=self.compact_ids)
        if self._state is None:
            self.skipped += sum(1 for raw in lines if raw.strip())
            return None
        with paused_gc():
            marks = number_marks(block)  # what follows the lines only costs time
            big = may_hold_big_integers(block, marks)
            streamed: StreamBlock | TypedBlock | None = None
            if self.typed and not big:
                streamed = (stream_block(lines, block, marks, first_line, self._state, self.version)
                            if self.rows is None else  # a table needs no facts, reads replace ops
                            typed_block(lines, block, marks, first_line, self._state, self.version,
                                        replace_ops=True))
            del marks  # a copy of the block: not held while its lines are decoded
            if streamed is not None:
                return streamed
            checked = self._decode_and_check(lines, first_line, big, last_may_be_torn)
        self.skipped += checked.rejected
        return checked

    def _decode_and_check(
        self, lines: list[bytes], first_line: int, big_integers: bool, last_may_be_torn: bool
    ) -> CheckedEvents:
        """Return the checked events of a block of lines, decoded and checked in runs of
        ``CHECK_LINES`` lines.

        Each run is checked right after it is decoded, while its values are still in the
        processor's caches. The diagnostics of decoding and of the check are held back and
        added to the log in line order once the whole block is read, so neither the runs
        nor the blocks change their order (or which error strict mode raises first).
        """
        held = PendingDiagnostics()
        parts = []
        for start in range(0, max(len(lines), 1), CHECK_LINES):
            values = decode_lines(
                lines[start:start + CHECK_LINES], first_line + start, held,
                last_may_be_torn=last_may_be_torn and start + CHECK_LINES >= len(lines),
                big_integers=big_integers, duplicate_keys=self.duplicate_keys,
            )
            parts.append(check_events(values, first_line + start, self.version, held, self._state))
        held.replay(self.log)
        return joined_checks(parts)

    def session_log(self, blocks: list[CheckedEvents] | list[TableBlock]) -> SessionLog:
        """Return the ``SessionLog`` of the file from all of its blocks."""
        fields = self.header_fields
        diagnostics = self.diagnostics()
        if self._state is None:
            return SessionLog(self.path, self.key, fields, None, [], diagnostics, self.skipped)
        if self.rows is not None:
            events, table, lines = self.rows.session(blocks)  # type: ignore[arg-type]
            return SessionLog(self.path, self.key, fields, self.version, events, diagnostics,
                              self.skipped, lines, table=table)
        events, columns, lines, _ = joined_checks(blocks)  # a readable header gave a block
        return SessionLog(
            self.path,
            self.key,
            fields,
            self.version,
            events,
            diagnostics,
            self.skipped,
            lines,
            columns,
        )


    def diagnostics(self) -> list[Diagnostic]:
        """Return the file's diagnostics, with a count line for each kind that was capped.

        A file whose first line is no header and none of whose lines decodes to anything
        is not a ledger: that is said once, instead of once per line.
        """
        items = self.log.finish()
        kept = self._state.kept if self._state is not None else 0
        header = self.header
        if (header is None or header.fields or header.line_is_event or kept
                or any(d.kind not in UNDECODABLE_KINDS for d in items)):
            return items
        message = (f"not a ledger: no line is a JSON event (line 1: {self._opening_text!r}; "
                   f"{counted(self.skipped, 'line')} skipped)")
        return [Diagnostic(self.path, 1, "not_a_ledger", "error", message)]


def session_key(path: str, header: dict[str, Any]) -> str:
    """Return the key of the session a file at ``path`` with header fields ``header`` holds:
    the header's string id, else the file stem."""
    key = header.get("id")
    return key if isinstance(key, str) else valid_unicode(Path(path).stem)


BOM_NOTE: tuple[str, Severity] = (
    "file starts with a UTF-8 byte order mark: read past it, but the runtime refuses the file",
    "error")
"""What a dsh ledger's byte order mark is: read past, an error (the runtime refuses it)."""


def opened_chunks(chunks: Iterator[Chunk], log: DiagnosticLog,
                  bom: tuple[str, Severity] = BOM_NOTE) -> Iterator[bytes] | None:
    """Return a file's chunks with a leading byte order mark dropped (``bom``: the message
    and severity it is reported with), or None (with its diagnostic in ``log``) for a file
    that gives no lines: unreadable, compressed or UTF-16."""
    first = next(chunks, b"")
    if isinstance(first, SourceProblem):
        log.add(1, first.kind, first.message)
        return None
    if first.startswith(UTF8_BOM):
        log.add(1, "byte_order_mark", *bom)
        first = first[len(UTF8_BOM):]
    elif order := UTF16_BOMS.get(first[:2]):
        message = (f"file is UTF-16 ({order}-endian byte order mark), not UTF-8: not read; "
                   "convert it first (e.g. iconv -f UTF-16 -t UTF-8)")
        log.add(1, "byte_order_mark", message)
        return None
    for magic, name in COMPRESSION_MAGIC.items():
        if first.startswith(magic):
            message = f"{name}-compressed file: decompress it first (ledgerviz reads JSONL)"
            log.add(1, "compressed_file", message)
            return None
    return chain([first], chunks)  # type: ignore[list-item]


def line_blocks(chunks: Iterable[bytes], max_line: int = MAX_LINE_UNITS,
                leading: LeadingBlanks | None = None) -> Iterator[Piece]:
    """Yield a ``Piece`` (complete lines, what follows the last newline, the bytes split)
    per block of at most ``READ_BYTES`` that ends a line (leading blank lines held as
    counted, see ``_after_leading_blanks``), then once more if the file does not end with a
    newline. A line longer than ``max_line`` UTF-16 code units (at least ``READ_BYTES``)
    is cut to its start (see ``Piece.too_long``). ``leading``, if given, is told how many
    bytes of leading whitespace were not given back (see ``LeadingBlanks.lost``)."""
    if max_line < READ_BYTES:
        raise ValueError(f"max_line must be at least {READ_BYTES:,}, got {max_line:,}")
    return _lines_of(_after_leading_blanks(_bounded(chunks), leading), max_line)


def _after_leading_blanks(chunks: Iterable[bytes], leading: LeadingBlanks | None = None
                          ) -> Iterator[bytes]:
    """Yield the chunks once one that is not whitespace comes (a file of whitespace alone
    yields nothing: it reads as empty).

    The leading whitespace is held in one block's room however long it is: its first
    chunk and its first and last lines are kept as they are, the blank lines between
    them only counted, and given back as bare newlines (nothing reads a blank line's
    whitespace: it is reported as a blank line).
    """
    chunks = iter(chunks)
    leading = LeadingBlanks() if leading is None else leading
    for chunk in chunks:
        if chunk.isspace() or not chunk:
            leading.hold(chunk)
            continue
        yield from leading.given_back(chunk)
        yield from chunks
        return


def empty_file(log: DiagnosticSink, leading: LeadingBlanks) -> int:
    """Record, in every format, a file in which no line is other than blank (``leading``
    took all it holds): empty, or its whitespace measured; return its blank lines, each a
    line skipped."""
    blank = leading.blank_lines()
    holds = (f"holds only whitespace: {counted(blank, 'blank line', ',')}, "
             f"{counted(leading.held, 'byte', ',')}" if leading.held else "is empty")
    log.add(1, "empty_file", f"file {holds}: no header, no events", "warning")
    return blank


class LeadingBlanks:
    """The whitespace before a file's first other byte, in bounded memory (see
    ``_after_leading_blanks``)."""

    def __init__(self) -> None:
        self.first: bytes | None = None
        self.head: list[bytes] = []  # what follows ``first`` up to the first newline
        self.newlines = 0  # from that newline on
        self.tail: list[bytes] = []  # what follows the last newline
        self.held = 0  # bytes taken
        self.line_ends = 0  # newlines taken
        self.open = False  # whether bytes follow the last newline taken
        self.lost = 0
        """How many bytes taken were not given back (blank lines given back shortened):
        known once the first chunk that is not whitespace comes."""

    def hold(self, chunk: bytes) -> None:
        """Take one more whitespace-only chunk."""
        self.held += len(chunk)
        self.line_ends += chunk.count(b"\n")
        if chunk:
            self.open = not chunk.endswith(b"\n")
        if self.first is None:
            self.first = chunk
            return
        newline = chunk.find(b"\n")
        if newline == -1:
            (self.tail if self.newlines else self.head).append(chunk)
            return
        if not self.newlines:
            self.head.append(chunk[:newline])
        self.newlines += chunk.count(b"\n")
        self.tail = [chunk[chunk.rfind(b"\n") + 1:]]

    def blank_lines(self) -> int:
        """Return how many lines the whitespace taken holds (a last one that no newline
        ends counted)."""
        return self.line_ends + self.open

    def given_back(self, chunk: bytes) -> Iterator[bytes]:
        """Yield the whitespace held, then ``chunk`` (the first one that is not)."""
        self.lost = self.held - len(self.first or b"") - sum(map(len, self.head)) - (
            self.newlines + sum(map(len, self.tail)) if self.newlines else 0)
        if self.first is not None:
            yield self.first
        if not self.newlines:
            yield b"".join([*self.head, chunk])
            return
        yield b"".join(self.head)
        for start in range(0, self.newlines, READ_BYTES):
            yield b"\n" * min(READ_BYTES, self.newlines - start)
        yield b"".join([*self.tail, chunk])


def _bounded(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Yield the chunks, each one longer than ``READ_BYTES`` in pieces of that length."""
    for chunk in chunks:
        if len(chunk) <= READ_BYTES:
            yield chunk
            continue
        for start in range(0, len(chunk), READ_BYTES):
            yield chunk[start:start + READ_BYTES]


class Piece(NamedTuple):
    """What ``_lines_of`` yields for each chunk that ends a line (and for a torn tail)."""

    lines: list[bytes]
    """The complete lines."""
    tail: bytes
    """What follows the last newline (of a line known not to be JSON: its start)."""
    block: bytes
    """The bytes the lines were split from."""
    tail_size: int
    """How many bytes follow the last newline (more than ``tail`` holds when cut)."""
    too_long: int = 0
    """The size in bytes of the first line when it is longer than the line cap (then only
    its start is in ``lines``), else 0."""
    cut: int = 0
    """How many bytes of the first line are not in ``lines`` (too long, or cut at a control
    byte), so the file offsets of the lines after it are known."""


_NOT_JSON = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""A control byte that is not JSON whitespace: never in a JSON text, even in a string."""

_CONTINUATION = bytes(range(0x80, 0xC0))
_FOUR_BYTE_LEADS = [bytes([lead]) for lead in range(0xF0, 0xF5)]
START_KEPT = 64
"""Bytes kept of a line longer than the cap: its start, which its diagnostic may quote."""


def utf16_units(data: bytes) -> int:
    """Return how many UTF-16 code units the UTF-8 ``data`` decodes to (one per character
    and two for one outside the BMP), counted by byte class, so a character cut between two
    chunks counts once: ``utf16_units("aé😀".encode()) == 4``."""
    return (len(data.translate(None, _CONTINUATION))
            + sum(data.count(lead) for lead in _FOUR_BYTE_LEADS))


def _lines_of(chunks: Iterable[bytes], max_line: int = MAX_LINE_UNITS) -> Iterator[Piece]:
    """Yield the complete lines per chunk that ends a line, then once more if the file
    does not end with one (see ``Piece``).

    The chunks of a line longer than a chunk are joined once, when the line ends (joining
    them one by one would copy the line once per chunk). A line longer than
    ``READ_BYTES`` that holds a control byte (a tail of NUL bytes left by a crash) is
    known not to be JSON once that byte is read: only its bytes up to that one are held
    (they give its diagnostic), the rest is counted, not held. So is a line longer than
    ``max_line`` code units once that many are read, but for its first ``START_KEPT``
    bytes.
    """
    carry: list[bytes] = []
    carried = searched = dropped = 0  # bytes held, chunks searched, bytes counted only
    units = counted = 0  # code units of the first ``counted`` chunks held
    too_long = False  # the line held is longer than max_line: its start is held
    pending = False  # chunks were taken since the last yield
    for chunk in chunks:
        newline = chunk.find(b"\n")
        pending = newline == -1
        if pending:
            if dropped:
                dropped += len(chunk)
                continue
            carry.append(chunk)
            carried += len(chunk)
            if carried > READ_BYTES:
                cut, searched = _cut_at_control_byte(carry, searched)
                if cut is None and carried > max_line:
                    units += sum(utf16_units(held) for held in carry[counted:])
                    counted = len(carry)
                    if units > max_line:
                        cut, too_long = _start(carry), True
                if cut is not None:
                    dropped, carry, searched = carried - len(cut), [cut], 1
            continue
        cut = False
        if dropped:
            size = len(carry[0]) + dropped + newline  # carry is the line's start
            chunk = chunk[newline:]  # the end of the line cut, counted, is not held
            cut = True
        elif carried + newline > max_line:  # the line's last chunk may take it past the cap
            size = carried + newline
            too_long = cut = utf16_units(b"".join([*carry, chunk[:newline]])) > max_line
            if too_long:
                carry, chunk = [_start([*carry, chunk[:newline]])], chunk[newline:]
        block = b"".join([*carry, chunk])
        lines = block.split(b"\n")
        tail = lines.pop()
        yield Piece(lines, tail, block, len(tail), size if too_long else 0,
                    size - len(lines[0]) if cut else 0)
        carry, carried, searched, dropped = [tail], len(tail), 0, 0
        units = counted = 0
        too_long = False
    if pending:
        tail = b"".join(carry)
        yield Piece([], tail, tail, len(tail) + dropped)


def _start(chunks: list[bytes]) -> bytes:
    """Return the first ``START_KEPT`` bytes of the ``chunks`` joined (without joining all)."""
    start = b""
    for chunk in chunks:
        start += chunk[:START_KEPT - len(start)]
        if len(start) == START_KEPT:
            break
    return start


def _cut_at_control_byte(carry: list[bytes], searched: int) -> tuple[bytes | None, int]:
    """Return the held start of a line up to its first control byte (None: none yet) and
    how many chunks of ``carry`` are searched."""
    for index in range(searched, len(carry)):
        found = _NOT_JSON.search(carry[index])
        if found:
            return b"".join([*carry[:index], carry[index][:found.end()]]), len(carry)
    return None, len(carry)


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
        if log.key not in taken:  # the usual case: the first candidate is free
            taken.add(log.key)
            unique.append(log)
            continue
        name, path = valid_unicode(Path(log.path).name), valid_unicode(log.path)
        numbered = (f"{path}#{n}" for n in count(2))
        key = next(c for c in chain([name, path], numbered) if c not in taken)
        taken.add(key)
        unique.append(replace(log, key=key))
    return unique


def with_distinct_keys(logs: list[SessionLog]) -> list[SessionLog]:
    """Return the logs with unique keys (as ``with_unique_keys``), each one whose key was
    another's before given a warning that names that other file and its new key."""
    unique = with_unique_keys(logs)
    if all(log is was for log, was in zip(unique, logs, strict=True)):
        return unique  # the usual case: every key was free
    holder = {log.key: log.path for log in unique}
    return [log if log is was else replace(log, diagnostics=[*log.diagnostics, Diagnostic(
        log.path, 1, "duplicate_session_key", "warning",
        f"session key {was.key!r} is also the key of {valid_unicode(holder[was.key])}: this "
        f"session is {log.key!r} here")])
        for log, was in zip(unique, logs, strict=True)]


def unique_keys(paths: Sequence[str], natural_keys: Sequence[str]) -> list[str]:
    """Return the session keys of files ``paths``, whose own keys are ``natural_keys``,
    made unique exactly as a load does (see ``with_unique_keys``)."""
    pairs = zip(paths, natural_keys, strict=True)
    stubs = [SessionLog(path, key, {}, None, []) for path, key in pairs]
    return [log.key for log in with_unique_keys(stubs)]
