"""A session's events as plain dicts, decoded from the file's bytes when first asked for.

The read route fills a session's typed table (``ledger.table``) without making a dict per
event; ``LazyEvents`` gives the dicts (``SessionLog.events``) on demand, decoded with
``orjson`` from the byte ranges of their lines (the table's ``start``/``stop``), a window
of ``WINDOW`` rows at a time, each run of consecutive lines in one call. Rows a block read
the dict route for (a block the typed decode could not judge, packed chunk rows expanded
into several events), and a typed block's lineage events (``tabled``), keep the dicts made
as they were read: reading one of them alone reads nothing from the file.

The bytes come from a ``LineSource``: the file itself, re-read on demand, checked on every
read to be the file read (the same inode, not shorter, the same bytes where the read
ended; appending, what a runtime does to a live ledger, keeps it so), and each run of
lines read again to lie between two newlines and hold as many, so a file changed since it
was read is a ``LedgerChangedError``, not other events (only an edit in place that keeps
every newline where it was, and the file's end, goes unseen); or, for an input that
cannot be read again (a binary stream, a compressed file, bytes in memory), the bytes
themselves, held.

Each row, once decoded, is kept: the same index gives the same dict object, as a list
did (the recovery engine and the frames still hold events and compare them by identity,
``frames/session_frames.py``). A session nobody reads the dicts of holds none.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any, overload

import orjson

from ledgerviz.ledger.diagnostics import UnreadableSourceError
from ledgerviz.ledger.head_events import ListLikeEvents
from ledgerviz.ledger.sources import file_identity, open_input
from ledgerviz.wording import counted

WINDOW = 1024
"""How many rows are decoded at once on a miss: one read and one pass per window."""


class LedgerChangedError(UnreadableSourceError):
    """A ledger file whose bytes changed since it was read: its events cannot be decoded."""


END_KEPT = 4096
"""How many of the last bytes read of a file are kept to tell, before its lines are read
again, that it is still the file read (perhaps appended to since)."""


class LineSource:
    """Where a session's lines are read from again: a file checked to be the one read, or
    the bytes read, held."""

    __slots__ = ("_content", "_end", "_identity", "_size", "path")

    def __init__(self, path: str, content: bytes | None = None, *,
                 identity: tuple[int, int] | None = None, size: int = 0, end: bytes = b""
                 ) -> None:
        """``content``: the bytes read; else the file's ``identity`` (``file_identity``),
        the ``size`` read and the ``end`` of what was read (up to ``END_KEPT`` bytes)."""
        if (identity is None) == (content is None):
            raise ValueError("a line source is a file's identity or its content, not both")
        self.path = path
        self._content = content
        self._identity = identity
        self._size = size
        self._end = end

    def read(self, start: int, stop: int) -> bytes:
        """Return bytes ``start`` to ``stop`` of what was read; raise ``LedgerChangedError``
        when the file is no longer the one read (another file, shorter, or other bytes
        where what was read ended: only appending leaves it the same),
        ``UnreadableSourceError`` when it cannot be read."""
        if self._content is not None:
            return self._content[start:stop]
        try:
            with open_input(self.path) as raw:
                stat = os.fstat(raw.fileno())
                end_at = self._size - len(self._end)
                raw.seek(end_at)
                if (file_identity(stat) != self._identity or stat.st_size < self._size
                        or raw.read(len(self._end)) != self._end):
                    raise LedgerChangedError(
                        f"{self.path}: the file changed since it was read (it is another file "
                        f"now, or its first {self._size:,} bytes are not the ones read): its "
                        "events cannot be read from it; load it again")
                raw.seek(start)
                return raw.read(stop - start)
        except OSError as error:
            raise UnreadableSourceError(
                f"{self.path}: cannot read its events again: {error.strerror or error}"
            ) from error


class LazyEvents(ListLikeEvents):
    """A session's events (see the module docstring): a ``Sequence`` that indexes, slices
    (into a list), iterates and compares (with any sequence) as the list of dicts did."""

    __slots__ = ("_decoded", "_held", "_held_rows", "_source", "_start", "_stop")

    def __init__(self, source: LineSource, start: array, stop: array,
                 held: Sequence[tuple[int, Sequence[dict[str, Any]]]] = ()) -> None:
        """``start``/``stop``: each row's line's byte range in ``source``; ``held``: the
        first row and the dicts of each run of rows read the dict route (their ranges are
        not read)."""
        if len(start) != len(stop):
            raise ValueError(f"{len(start)} starts for {len(stop)} stops")
        self._source = source
        self._start = start
        self._stop = stop
        self._held = [events for _, events in held]
        self._held_rows = [row for row, _ in held]
        self._decoded: list[Any] = [None] * len(start)

    def __len__(self) -> int:
        return len(self._start)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._row(row) for row in range(*index.indices(len(self)))]
        count = len(self)
        row = index.__index__()
        if row < 0:
            row += count
        if not 0 <= row < count:
            raise IndexError("event index out of range")
        return self._row(row)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        decoded = self._decoded
        for first in range(0, len(self), WINDOW):
            window = decoded[first:first + WINDOW]
            if None in window:
                self._decode_window(first)
                window = decoded[first:first + WINDOW]
            yield from window

    def __repr__(self) -> str:
        return f"<{counted(len(self), 'event')} of {self._source.path!r}, decoded on demand>"

    def _row(self, row: int) -> dict[str, Any]:
        event = self._decoded[row]
        if event is None:
            if not self._held_rows or self._from_held([row]):  # a held row reads no window
                self._decode_window(row)
            event = self._decoded[row]
        return event

    def _decode_window(self, row: int) -> None:
        """Decode (or take from the held runs) the ``WINDOW`` rows around ``row``."""
        first = row - row % WINDOW
        missing = [r for r in range(first, min(first + WINDOW, len(self)))
                   if self._decoded[r] is None]
        lazy = self._from_held(missing) if self._held_rows else missing
        if not lazy:
            return
        starts, stops = self._start, self._stop
        base = starts[lazy[0]]
        data = self._source.read(base, stops[lazy[-1]] + 1)
        if lazy[-1] - lazy[0] + 1 == len(lazy) == data.count(b"\n"):  # one run of lines
            self._decode_run(lazy[0], lazy[-1], data, base)
            return
        begin = 0
        for end in range(1, len(lazy) + 1):  # runs of rows on consecutive lines
            if end < len(lazy) and lazy[end] == lazy[end - 1] + 1 and (
                    starts[lazy[end]] == stops[lazy[end - 1]] + 1):
                continue
            self._decode_run(lazy[begin], lazy[end - 1], data, base)
            begin = end

    def _from_held(self, rows: list[int]) -> list[int]:
        """Fill those of ``rows`` the held runs hold; return the others."""
        held, others = self._held_rows, []
        for row in rows:
            run = bisect_right(held, row) - 1
            events = self._held[run] if run >= 0 else ()
            if run >= 0 and row - held[run] < len(events):
                self._decoded[row] = events[row - held[run]]
            else:
                others.append(row)
        return others

    def _decode_run(self, first: int, last: int, data: bytes, base: int) -> None:
        """Decode rows ``first`` to ``last``, on consecutive lines of ``data`` (the file's
        bytes from ``base``), in one call: the lines joined into one JSON array (a line
        holds no raw newline)."""
        start, stop = self._start[first] - base, self._stop[last] - base
        try:
            lines = data[start:stop]
            if data[stop:stop + 1] != b"\n" or (start and data[start - 1] != 10):
                raise ValueError("not between two newlines")
            if lines.count(b"\n") != last - first:
                raise ValueError("another count of lines")
            events = orjson.loads(b"".join([b"[", lines.replace(b"\n", b","), b"]"]))
        except ValueError as error:  # orjson.JSONDecodeError is one
            raise LedgerChangedError(
                f"{self._source.path}: the lines of events {first} to {last} are no longer "
                f"where they were read ({error}): the file changed; load it again") from error
        self._decoded[first:last + 1] = events
