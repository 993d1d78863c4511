"""What the runtime's recoverable reader makes of a file (format §1.2), to append safely.

The runtime reads a log up to its first unusable line (one that does not parse, has a
malformed envelope or breaks the seq numbering) and refuses the whole log when a later
line holds a ``turn/end``, the proof that the damaged region had been committed. It
never uses a last line without a newline. Anything appended to the file must therefore
come after the bytes the runtime uses; :func:`runtime_read` says which bytes those are.

The file is read as a stream (``FileScan``): the events the runtime uses are handed on
a block at a time and not kept, so a ledger of any size is read in bounded memory (what
grows is the reader's requested call ids, held as ``CallIds``: about 40 bytes per call).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from ledgerviz.ledger.checks import CheckedEvents
from ledgerviz.ledger.diagnostics import Diagnostic
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.formats import FALLBACK, file_format
from ledgerviz.ledger.reader import Chunk, FileScan

STOP_KINDS = frozenset(
    {"invalid_json", "invalid_utf8", "blank_line", "invalid_event", "seq_gap", "second_header",
     "line_too_long", "missing_seq"}
)
"""Line diagnostics after which the runtime's recoverable reader uses nothing (``missing_seq``:
the loader's name for an event without ``seq``, which a runtime read calls ``invalid_event``)."""

TAIL_KINDS = frozenset({"torn_tail"})
"""Diagnostics of a last line the runtime drops silently (and that must be cut)."""

HEADER_REFUSALS = {
    "byte_order_mark": "the runtime parses line 1 as it is, and a byte order mark is no JSON",
    "unknown_header_key": "the runtime's header check refuses a key outside the released ones",
}
"""Header diagnostics ledgerviz reads past (warnings) but the runtime refuses the log for."""


class Fragment(NamedTuple):
    """Bytes at the end of a file that must be cut before anything is appended."""

    line: int
    """The 1-based line it starts on."""
    offset: int
    """Its byte offset: the file's size once it is cut."""
    size: int
    """How many bytes it holds (to the end of the file)."""


class RuntimeRead(NamedTuple):
    """Where the runtime stops reading a file, and whether anything may be appended to it."""

    used: int
    """How many events the runtime uses (those handed to ``use``)."""
    stop: Diagnostic | None
    """The first line (after line 1) the runtime cannot use, if any."""
    refusal: str | None
    """Why the runtime would refuse the whole log (then nothing may be appended)."""
    cut: Fragment | None
    """The bytes to cut before appending (from ``stop``, or the torn last line); None
    when the log is refused."""
    version: int | None
    """The header's format version (None: v0, unknown or no header)."""
    diagnostics: list[Diagnostic]
    """Every diagnostic of the file, as ``ledgerviz.load`` gives them."""


class LoadedRead(NamedTuple):
    """What the runtime makes of a file, judged from its load (``loaded_read``)."""

    used: int
    """How many of the loaded events come before the line the runtime stops at (all of them
    when it reads to the end)."""
    stop: Diagnostic | None
    """The first line the runtime cannot use, if any."""
    refusal: str | None
    """Why the runtime would refuse the whole log, if it would."""


def runtime_read(
    path: str, chunks: Iterable[Chunk], use: Callable[[EventFields], None],
    seen: Callable[[FileScan, CheckedEvents], object] | None = None,
) -> RuntimeRead:
    """Read one ledger file, given as its chunks, the way the runtime's recoverable reader
    does; hand the columns of the events it uses to ``use``, one run at a time, in order,
    and every block the reader reads (past where the runtime stops too) to ``seen``, with
    the scan reading it (its header), so a caller needs no second read.

    Keys repeated within a line are looked for, as the runtime's reader refuses them. A file
    another agent's format claims (a Claude Code, Codex or Gemini transcript) is refused
    unread: it is no log of the runtime's, and its lines are no events to diagnose.
    """
    found, chunks = file_format(chunks, path=path)
    if found.name != FALLBACK:
        refusal = f"a {found.name} transcript, not a dsh ledger: the runtime reads only its own"
        return RuntimeRead(0, None, refusal, None, None, [])
    scan = FileScan(path, duplicate_keys=True, runtime=True, compact_ids=True)
    offsets = LineOffsets(chunks, lambda: scan.lines_read)
    used = 0
    stop: Diagnostic | None = None
    stop_offset = 0
    committed: int | None = None  # the line of the first turn/end after the stop
    for block in scan.blocks(offsets):
        if seen is not None:
            seen(scan, block)
        fields, lines = block.fields, block.lines
        if stop is None:
            stop = first_stop(scan.log.items)
            count = len(lines) if stop is None else bisect_left(lines, stop.line)
            if count:
                use(fields if count == len(lines) else fields[:count])
                used += count
            if stop is not None:
                stop_offset = offsets.offset_of(stop.line)
                offsets.close()
        if stop is not None and committed is None:
            committed = _turn_end_after(stop.line, fields.types, lines)
    diagnostics = scan.diagnostics()
    refusal = refusal_of(diagnostics, scan.header_fields, stop, committed)
    cut = None
    if refusal is None and stop is not None:
        cut = Fragment(stop.line, stop_offset, offsets.size - stop_offset)
    elif refusal is None:
        tail = next((d for d in diagnostics if d.kind in TAIL_KINDS), None)
        if tail is not None:
            offset = offsets.offset_of(tail.line)
            cut = Fragment(tail.line, offset, offsets.size - offset)
    return RuntimeRead(used, stop, refusal, cut, scan.version, diagnostics)


def loaded_read(diagnostics: list[Diagnostic], header: dict[str, Any], lines: Sequence[int],
                types: Callable[[], Sequence[object]]) -> LoadedRead:
    """Judge a loaded file as ``runtime_read`` judges its read, by the same rules: from its
    diagnostics, header fields, and the line and type of each event loaded (those after the
    stop too; ``types`` asked for only where the runtime stops). The loader leaves out lines
    the runtime reads (an ``unusual_payload`` whose event was not kept): ``used`` counts
    none of them."""
    stop = first_stop(diagnostics)
    if stop is None:
        return LoadedRead(len(lines), None, refusal_of(diagnostics, header, None, None))
    committed = _turn_end_after(stop.line, types(), lines)
    return LoadedRead(bisect_left(lines, stop.line), stop,
                      refusal_of(diagnostics, header, stop, committed))


def first_stop(diagnostics: Iterable[Diagnostic]) -> Diagnostic | None:
    """Return the first diagnostic after which the runtime uses nothing (infos do not stop it)."""
    return next((d for d in diagnostics if d.kind in STOP_KINDS and d.severity != "info"), None)


def _turn_end_after(line: int, types: Sequence[object], lines: Sequence[int]) -> int | None:
    """Return the line of the first turn/end after ``line`` among a run of events, or None."""
    for kind, at in zip(types, lines, strict=True):
        if at > line and kind == "turn/end":
            return at
    return None


def refusal_of(
    diagnostics: list[Diagnostic],
    header: dict[str, Any],
    stop: Diagnostic | None,
    committed: int | None,
) -> str | None:
    """Return why the runtime refuses the log outright, or None.

    It refuses a log whose damage was committed (a turn/end after the stop), one with an
    error before the stop, one whose header it does not accept, and one without a header.
    """
    for diagnostic in diagnostics:
        why = HEADER_REFUSALS.get(diagnostic.kind)
        if why is not None:
            return f"{refusal_line(diagnostic)}: {why}, so it refuses this log"
    if stop is not None and committed is not None:
        return (
            f"line {stop.line}: {stop.message}; line {committed} after it holds a "
            "turn/end, so the damaged region had been committed: the runtime refuses "
            "this log (repair it by hand; nothing can be appended safely)"
        )
    for diagnostic in diagnostics:
        if diagnostic.severity != "error" or diagnostic.kind in STOP_KINDS:
            continue
        if stop is not None and diagnostic.line >= stop.line:
            continue
        return refusal_line(diagnostic)
    if not header:
        return "line 1 is not a session header: the runtime refuses this log"
    return None


def refusal_line(diagnostic: Diagnostic) -> str:
    """Return how a refusal names the diagnostic it is for (its line, message and kind)."""
    return f"line {diagnostic.line}: {diagnostic.message} [{diagnostic.kind}]"


class LineOffsets:
    """Passes a file's chunks on and finds the byte offset of a line start in them.

    Only the chunks that may hold the start of a line not yet read are kept (none
    without a newline, so a torn tail of any length is not held): ``lines_read`` tells
    how many lines the reader has taken (an offset is asked for a later line only),
    so the chunks held are the reader's own few, whatever the size of the file. Of a
    chunk of whitespace only its first line is kept, so that a file that begins with
    any amount of it (which the reader holds in one block's room) is no exception: the
    runtime stops at the first blank line, which starts after the first newline of
    such a chunk at the latest, and a chunk of whitespace with one newline holds no
    blank line.
    """

    def __init__(self, chunks: Iterable[Chunk], lines_read: Callable[[], int]) -> None:
        self._chunks = chunks
        self._lines_read = lines_read
        self._held: deque[tuple[int, int, int, bytes]] = deque()
        """Each chunk held: its offset, the newlines before it, the newlines in it, its bytes
        (of whitespace: its first line)."""
        self._holding = True
        self.size = 0
        """The bytes passed on so far (the whole file's, once read)."""
        self._newlines = 0

    def __iter__(self) -> Iterator[Chunk]:
        for chunk in self._chunks:
            if isinstance(chunk, bytes):
                self._forget_read()
                newlines = chunk.count(b"\n")
                if self._holding and newlines:  # no line starts in a chunk without one
                    kept = chunk[: chunk.find(b"\n") + 1] if chunk.isspace() else chunk
                    self._held.append((self.size, self._newlines, newlines, kept))
                self.size += len(chunk)
                self._newlines += newlines
            yield chunk

    def offset_of(self, line: int) -> int:
        """Return the byte offset at which 1-based ``line`` starts (the file's size for a
        line past its end), for a line after those read when the last chunk was passed on."""
        newline = line - 1  # the newline that ends the line before it
        if newline <= 0:
            return 0
        if newline > self._newlines:
            return self.size
        for offset, before, newlines, chunk in self._held:
            if before < newline <= before + newlines:
                position = -1
                for _ in range(newline - before):
                    position = chunk.find(b"\n", position + 1)
                    if position < 0:  # past the first line of a chunk of whitespace
                        break
                else:
                    return offset + position + 1
                break
        raise ValueError(f"line {line} starts in bytes no longer held")

    def close(self) -> None:
        """Drop every chunk held and hold no more (no offset will be asked again)."""
        self._holding = False
        self._held.clear()

    def _forget_read(self) -> None:
        """Drop the chunks before the one holding the newline that ends the last line read:
        only a line after it is asked for."""
        newline = self._lines_read()
        held = self._held
        while held and held[0][1] + held[0][2] < newline:
            held.popleft()
