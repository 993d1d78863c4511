"""A session's events as plain dicts, decoded from the file's bytes when first asked for.

The read route fills a session's typed table (``ledger.table``) without making a dict per
event; ``LazyEvents`` gives the dicts (``SessionLog.events``) on demand, each decoded
with ``orjson`` from the byte range of its line (the table's ``start``/``stop``), a
window of ``WINDOW`` rows at a time. Rows a block read the dict route for (a block the
typed decode could not judge, packed chunk rows expanded into several events) keep the
dicts that route made.

The bytes come from a ``LineSource``: the file itself, re-read on demand, checked on every
read to be the file read (the same inode, not shorter, the same bytes where the read
ended; appending, what a runtime does to a live ledger, keeps it so), and each line read
again to lie between two newlines, so a file changed since it was read is a
``LedgerChangedError``, never wrong data; or, for an input that cannot be read again (a
binary stream, a compressed file, bytes in memory), the bytes themselves, held.

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
from ledgerviz.ledger.sources import file_identity, open_input

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


class LazyEvents(Sequence[dict[str, Any]]):
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
        return map(self._row, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable-like, as a list

    def __repr__(self) -> str:
        return f"<{len(self)} events of {self._source.path!r}, decoded on demand>"

    def _row(self, row: int) -> dict[str, Any]:
        event = self._decoded[row]
        if event is None:
            self._decode_window(row)
            event = self._decoded[row]
        return event

    def _decode_window(self, row: int) -> None:
        """Decode (or take from the held runs) the ``WINDOW`` rows around ``row``."""
        first = row - row % WINDOW
        last = min(first + WINDOW, len(self))
        rows = [r for r in range(first, last) if self._decoded[r] is None]
        held = self._held_rows
        lazy = []
        for r in rows:
            run = bisect_right(held, r) - 1
            events = self._held[run] if run >= 0 else ()
            if run >= 0 and r - held[run] < len(events):
                self._decoded[r] = events[r - held[run]]
            else:
                lazy.append(r)
        if not lazy:
            return
        starts, stops = self._start, self._stop
        base = starts[lazy[0]]
        data = self._source.read(base, stops[lazy[-1]] + 1)
        for r in lazy:
            line = data[starts[r] - base:stops[r] - base + 1]
            if not line.endswith(b"\n") or (starts[r] > base and data[starts[r] - base - 1] != 10):
                raise LedgerChangedError(
                    f"{self._source.path}: the line of event {r} is no longer where it was "
                    "read: the file changed; load it again")
            self._decoded[r] = orjson.loads(line)
