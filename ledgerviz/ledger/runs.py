"""Small dsh ledgers read in runs: a folder of thousands of sessions, checked and tabled
as a few large blocks.

A file of one session pays, per file, what a large file pays per block: the typed check's
and the table's fixed passes, and the reader's plumbing around them. ``RunReader`` holds
each file that is whole in one chunk and simple (``_simple``: a dsh ledger starting with a
header that gives no diagnostic, ending in a newline or a torn tail, and decoded by the
typed schema as ``reader.FileScan`` would decode it); a run of them (``RUN_FILES`` or
``RUN_BYTES``, one format version) is checked at once (``typed_runs.typed_run``), tabled
at once (``typed_table.table_of``) and split by file (``EventTable.split``). A run the
check refuses is halved until the files refused are alone; those, and every other file,
are read by ``read.read_file`` (given back its bytes, as it would have read them), so
every session, diagnostic and skipped line is that route's, in file order
(tests/ledger/test_runs.py).

Only a lenient read without the duplicate-key search takes runs: in strict mode the first
error raised must be the first file's, which reading a later file before an earlier one is
checked could change.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate, chain, islice, repeat
from operator import add
from typing import Any, NamedTuple

import orjson

from ledgerviz.ledger.diagnostics import Diagnostic, DiagnosticLog, torn_tail_message
from ledgerviz.ledger.formats import FALLBACK, Chunk, detect_format
from ledgerviz.ledger.header import Header, read_header
from ledgerviz.ledger.lazy_events import LazyEvents
from ledgerviz.ledger.lineage import LINEAGE_EVENTS, SeedCheck
from ledgerviz.ledger.numbers import may_hold_big_integers, number_marks
from ledgerviz.ledger.reader import READ_BYTES, session_key
from ledgerviz.ledger.reread import END_KEPT, LineSource
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import FileChunks, FileOrigin
from ledgerviz.ledger.table import EventTable
from ledgerviz.ledger.typed import TypedBlock
from ledgerviz.ledger.typed_runs import typed_run
from ledgerviz.ledger.typed_schema import decoded, schema_of
from ledgerviz.ledger.typed_table import table_of

RUN_FILES = 32
"""The most files checked and tabled as one run."""
RUN_BYTES = READ_BYTES
"""The most bytes of files held for one run."""

FIRST_LINE = 2
"""The file line of a simple file's first event (its header is line 1)."""

ReadFile = Callable[[str, Iterator[Chunk]], list[SessionLog]]
"""Reads one file given as its chunks (a ``sources.FileChunks``) into its sessions."""


class _Simple(NamedTuple):
    """A file read whole that a run may take (see ``_simple``)."""

    path: str
    content: bytes
    origin: FileOrigin
    header: Header
    lines: list[bytes]
    """Its complete lines, the header first."""
    tail: bytes
    """What follows its last newline."""
    events: list[Any]
    """Its events as the typed schema decoded them."""


class RunReader:
    """Reads the files of one load in order, small simple ones in runs (see the module
    docstring): ``take`` each file, then ``finish``; each gives the sessions ready, in file
    order."""

    def __init__(self, read: ReadFile, *, runs: bool) -> None:
        """``read``: how a file is read alone; ``runs``: whether files may be read in runs
        (a lenient read in the dsh format or each file's own, without the key search)."""
        self._read = read
        self._runs = runs
        self._held: list[_Simple | list[SessionLog]] = []
        """The files taken and not given back yet, in file order: a simple file, or the
        sessions of one read alone."""
        self._simple = 0
        self._bytes = 0
        self._version: int | None = None

    def take(self, path: str, chunks: Iterator[Chunk]) -> list[SessionLog]:
        """Read one more file, given as its chunks; return the sessions ready (of this file
        and those before it, in order; none while a run is being gathered)."""
        origin = getattr(chunks, "origin", None)
        if not self._runs or origin is None:
            return self._alone(self._read(path, chunks))
        first = list(islice(chunks, 2))  # two asked for: a file in one chunk is read to its end
        simple = (_simple(path, first[0], origin)
                  if len(first) == 1 and isinstance(first[0], bytes) else None)
        rest = FileChunks(iter(first) if len(first) < 2 else chain(first, chunks), origin)
        if simple is None:
            return self._alone(self._read(path, rest))
        ready = []
        if self._simple and (simple.header.version != self._version
                             or self._simple == RUN_FILES
                             or self._bytes + len(simple.content) > RUN_BYTES):
            ready = self.finish()
        self._held.append(simple)
        self._simple += 1
        self._bytes += len(simple.content)
        self._version = simple.header.version
        return ready

    def finish(self) -> list[SessionLog]:
        """Read the run gathered; return every session held, in file order."""
        simple = [held for held in self._held if isinstance(held, _Simple)]
        logs = iter(self._tabled(simple))
        ready = [log for held in self._held
                 for log in (next(logs) if isinstance(held, _Simple) else held)]
        self._held, self._simple, self._bytes = [], 0, 0
        return ready

    def _alone(self, logs: list[SessionLog]) -> list[SessionLog]:
        """Return the sessions of a file read alone now, or hold them behind a run."""
        if not self._held:
            return logs
        self._held.append(logs)
        return []

    def _tabled(self, run: Sequence[_Simple]) -> list[list[SessionLog]]:
        """Return the sessions of each file of a run: read as one block when the typed
        check takes it, else halved (a file alone that it refuses is read alone)."""
        if not run:
            return []
        version = run[0].header.version
        block = typed_run([simple.events for simple in run], FIRST_LINE, version,
                          schema_of(version))
        if block is None:
            if len(run) == 1:
                return [self._read(run[0].path, _chunks(run[0]))]
            half = len(run) // 2
            return self._tabled(run[:half]) + self._tabled(run[half:])
        bounds = list(accumulate((len(simple.events) for simple in run), initial=0))
        start, stop = array("q"), array("q")
        for simple in run:
            _line_ranges(simple.lines, start, stop)
        tables = table_of(block, start, stop).split(bounds)
        held = _held_rows(block, bounds, run)
        return [self._session(*parts, block) for parts in zip(
            run, tables, bounds, held, strict=False)]  # bounds: one more than the files

    def _session(self, simple: _Simple, table: EventTable, first: int,
                 held: list[tuple[int, list[dict[str, Any]]]], block: TypedBlock
                 ) -> list[SessionLog]:
        """Return the session of one file of a run from its rows of the run's table (read
        alone when its lineage needs a warning: the reader's route says it)."""
        count = len(table)
        seed = SeedCheck()
        seed.observe(block.types[first:first + count], block.seqs[first:first + count],
                     block.datas[first:first + count], block.lines[first:first + count])
        header = simple.header
        if seed.problem(header.fields, header.version) is not None:
            return self._read(simple.path, _chunks(simple))
        diagnostics = []
        torn = bool(simple.tail.strip())
        if torn:
            message = torn_tail_message(len(simple.tail), no_newline=True, no_json=False)
            diagnostics.append(Diagnostic(simple.path, len(simple.lines) + 1, "torn_tail",
                                          "warning", message))
        content, origin = simple.content, simple.origin
        source = LineSource(origin.path, identity=origin.identity, size=len(content),
                            end=content[-END_KEPT:])
        return [SessionLog(simple.path, session_key(simple.path, header.fields), header.fields,
                           header.version, LazyEvents(source, *table.byte_ranges(), held),
                           diagnostics, int(torn), range(FIRST_LINE, FIRST_LINE + count),
                           table=table)]


def _simple(path: str, content: bytes, origin: FileOrigin) -> _Simple | None:
    """Return a file read whole (``content``) as a run may take it, or None: one not in
    the dsh format (by its content), not starting with its header, with no event, whose
    header gives a diagnostic, or whose lines the typed schema does not decode (as
    ``reader.FileScan`` would decode its only block: ``typed_schema.decoded``)."""
    if not content.startswith(b"{") or detect_format(content).name != FALLBACK:
        return None
    lines = content.split(b"\n")
    tail = lines.pop()
    if len(lines) < 2:
        return None
    log = DiagnosticLog(path, strict=False)
    header = read_header(lines[0], log)
    if log.items or not header.readable or header.line_is_event:
        return None
    marks = number_marks(content)
    if may_hold_big_integers(content, marks):
        return None
    events = decoded(lines[1:], content, marks, header.version)
    if events is None:
        return None
    return _Simple(path, content, origin, header, lines, tail, events)


def _line_ranges(lines: list[bytes], start: array, stop: array) -> None:
    """Add the byte range of each event line of a file (its lines after the header) to
    ``start`` and ``stop``."""
    lengths = list(map(len, lines))
    offsets = list(accumulate(map(add, lengths, repeat(1)), initial=0))
    start.extend(offsets[1:-1])
    stop.extend(map(add, offsets[1:-1], lengths[1:]))


def _held_rows(block: TypedBlock, bounds: list[int], run: Sequence[_Simple]
               ) -> list[list[tuple[int, list[dict[str, Any]]]]]:
    """Return, per file, the row and dict of each lineage event and replace op of the run
    (decoded now and held, as ``tabled.TableRows`` holds a typed block's)."""
    held: list[list[tuple[int, list[dict[str, Any]]]]] = [[] for _ in run]
    if block.replaced or not LINEAGE_EVENTS.isdisjoint(block.rows):  # rare
        rows = sorted([*block.replaced, *(
            row for kind in LINEAGE_EVENTS for row in block.rows.get(kind, ()))])
        for row in rows:
            number = bisect_right(bounds, row) - 1
            local = row - bounds[number]
            held[number].append((local, [orjson.loads(run[number].lines[1 + local])]))
    return held


def _chunks(simple: _Simple) -> Iterator[Chunk]:
    """Return a simple file's chunks as they were read: its content, from its file."""
    return FileChunks(iter([simple.content]), simple.origin)
