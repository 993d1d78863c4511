"""The dsh read route's blocks as rows of the session's typed table, without their dicts.

``reader.FileScan`` judges each block of lines: a block the typed check accepts
(``typed.typed_block``: every line fits the schema and the reader's check would say
nothing) is tabled from the structs that check decoded (``typed_table.table_of``), with
the byte range of each line, and its dicts are not made; a block it cannot judge is checked the
dict route (its diagnostics are the reader's by construction), tabled from those dicts
(``EventTable.of``), and its dicts are held. The session's ``events`` are then a
``lazy_events.LazyEvents`` over the table's byte ranges and the held dicts.

The lineage events of a typed block (``lineage.LINEAGE_EVENTS``: a seed's end, a subagent's
catalog or descriptor, a few a session) and its replace ops (``TypedBlock.replaced``: the
recovery engine reads a replaced range from the dict) are decoded as they are read and
held, as the dict route's are: the frames, report, export and engine read them, and a miss
would read the file again for a window of rows around each.

Byte ranges are offsets in the file: a leading byte order mark, the bytes of a line cut
short (too long, or cut at a control byte) and of leading blank lines given back shortened
(``reader.LeadingBlanks``) are counted.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import accumulate, repeat
from operator import add, itemgetter
from typing import Any, NamedTuple

import orjson

from ledgerviz.ledger.checks import CheckedEvents, joined_lines
from ledgerviz.ledger.fields import concatenated
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.held import HeldBytes
from ledgerviz.ledger.lazy_events import LazyEvents
from ledgerviz.ledger.lineage import LINEAGE_EVENTS
from ledgerviz.ledger.reread import END_KEPT, LineSource
from ledgerviz.ledger.sources import UTF8_BOM, FileOrigin, SourceProblem
from ledgerviz.ledger.table import EventTable
from ledgerviz.ledger.typed import TypedBlock
from ledgerviz.ledger.typed_table import table_of


class TableBlock(NamedTuple):
    """One block of a file's events, added to the file's table (``TableRows.table``)."""

    held: Sequence[dict[str, Any]] | None
    """The block's events as dicts, when the dict route made them (None: not made)."""
    lines: Sequence[int]
    """The file line of each event."""


class TableRows:
    """What the read route needs to table one file's blocks (see the module docstring)."""

    def __init__(self, path: str, origin: FileOrigin | None, max_line: int | None = None
                 ) -> None:
        self.path = path
        self.origin = origin
        self._content = HeldBytes(max_line) if origin is None else None
        """The file's bytes as read, when it cannot be read again (no ``origin``), but for
        lines that cannot be events (``held``)."""
        self._size = 0
        """How many bytes of the file were read."""
        self._end = b""
        """The last ``END_KEPT`` of them."""
        self._offset = 0
        """The file offset of the next line."""
        self._starts: list[int] = []
        """The file offset of each line of the piece last read."""
        self._lengths: list[int] = []
        """The length of each line of the piece last read."""
        self._lines: list[bytes] = []
        """The lines of the piece last read, until its block is tabled (its lineage events
        are decoded from them)."""
        self._first_line = 1
        """The file line of the first of them."""
        self._table: EventTable | None = None
        """The rows of the blocks tabled so far (None: none; each block's appended as it
        comes, so the file's columns are not held twice at its end)."""
        self._read: list[tuple[int, list[dict[str, Any]]]] = []
        """The row and dict of each lineage event and replace op of the typed blocks (see
        the module docstring), in row order."""

    def kept(self, chunks: Iterable[bytes | SourceProblem]) -> Iterator[bytes | SourceProblem]:
        """Yield the file's chunks, noting a leading byte order mark and holding the bytes
        when the file cannot be read again."""
        first = True
        for chunk in chunks:
            if isinstance(chunk, bytes):
                if first and chunk.startswith(UTF8_BOM):
                    self._offset = len(UTF8_BOM)
                if self._content is not None:
                    self._content.take(chunk)
                self._size += len(chunk)
                self._end = (chunk if len(chunk) >= END_KEPT else self._end + chunk)[-END_KEPT:]
            first = False
            yield chunk

    def lines_read(self, lines: list[bytes], cut: int, first_line: int) -> None:
        """Take the file offsets of the next piece's complete lines, the first of them file
        line ``first_line``, with ``cut`` bytes of the file before the second not in
        ``lines`` (of a first line cut short, or of blank lines given back shortened)."""
        self._first_line, self._lines = first_line, lines
        self._lengths = lengths = list(map(len, lines))
        starts = list(accumulate(map(add, lengths, repeat(1)), initial=self._offset))
        if cut:
            starts[1:] = [start + cut for start in starts[1:]]
        self._offset = starts.pop()
        self._starts = starts

    def offsets(self) -> list[int]:
        """Return the file offset of each line of the piece last read, then that of the
        line after them."""
        return [*self._starts, self._offset]

    def block(self, checked: CheckedEvents | TypedBlock) -> TableBlock:
        """Add the table rows of one checked block of the piece last read to ``table``:
        from the structs the typed check decoded for a block it accepted, else from the
        dicts checked, held."""
        if isinstance(checked, TypedBlock):
            skip = checked.lines[0] - self._first_line  # a block is never empty
            stop = skip + len(checked.lines)
            starts = self._starts[skip:stop]
            ends = list(map(add, starts, self._lengths[skip:stop]))
            first_row = 0 if self._table is None else len(self._table)
            with paused_gc():  # the rows' many small objects would set the collector off
                self._add(table_of(checked, array("q", starts), array("q", ends)))
            self._hold_read(checked, skip, first_row)
            return TableBlock(None, checked.lines)
        table = EventTable.of(checked.events, checked.lines,
                              0 if self._table is None else len(self._table))
        index = [line - self._first_line for line in checked.lines]
        self._add(replace(table, start=array("q", [self._starts[i] for i in index]),
                          stop=array("q", [self._starts[i] + self._lengths[i] for i in index])))
        self._lines = []
        return TableBlock(checked.events, checked.lines)

    def _hold_read(self, checked: TypedBlock, skip: int, first_row: int) -> None:
        """Decode and hold the lineage events and replace ops of a typed block whose first
        row is the table's ``first_row``, from the lines of the piece last read (from its
        ``skip``-th); then let the lines go (not held between blocks)."""
        if checked.replaced or not LINEAGE_EVENTS.isdisjoint(checked.rows):  # rare
            rows = sorted([*checked.replaced, *(
                row for kind in LINEAGE_EVENTS for row in checked.rows.get(kind, ()))])
            self._read.extend((first_row + row, [orjson.loads(self._lines[skip + row])])
                              for row in rows)
        self._lines = []

    def _add(self, table: EventTable) -> None:
        """Append a block's rows to the file's table (the first block's is the table)."""
        if self._table is None:
            self._table = table
        else:
            self._table.extend(table)

    def session(self, blocks: Sequence[TableBlock]
                ) -> tuple[Sequence[dict[str, Any]], EventTable, Sequence[int]]:
        """Return a file's events, table and event lines from its blocks."""
        table = EventTable.of([]) if self._table is None else self._table
        lines = joined_lines([block.lines for block in blocks])
        if all(block.held is not None for block in blocks):
            return concatenated(block.held for block in blocks), table, lines
        held = []
        row = 0
        for block in blocks:
            if block.held is not None:
                held.append((row, block.held))
            row += len(block.lines)
        if self._read:  # rows of other blocks than the dict route's: merged in row order
            held = sorted([*held, *self._read], key=itemgetter(0))
        return LazyEvents(self.source(), *table.byte_ranges(), held), table, lines

    def source(self) -> LineSource:
        """Return where the file's lines are read again from."""
        if self._content is not None:
            return LineSource(self.path, self._content.content())
        assert self.origin is not None
        if self.origin.identity is None:
            raise ValueError(f"{self.path}: tabled before it was read to its end")
        return LineSource(self.origin.path, identity=self.origin.identity, size=self._size,
                          end=self._end)
