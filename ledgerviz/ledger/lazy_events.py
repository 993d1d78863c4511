"""A session's events as plain dicts, decoded from the file's bytes when first asked for.

The read route fills a session's typed table (``ledger.table``) without making a dict per
event; ``LazyEvents`` gives the dicts (``SessionLog.events``) on demand, decoded with
``orjson`` from the byte ranges of their lines (the table's ``start``/``stop``), a window
of ``WINDOW`` rows at a time, each run of consecutive lines in one call. Rows a block read
the dict route for (a block the typed decode could not judge, packed chunk rows expanded
into several events), and a typed block's lineage events (``tabled``), keep the dicts made
as they were read: reading one of them alone reads nothing from the file.

The lines are read again by ``reread.lines_again`` from a ``reread.LineSource`` (the file,
checked to be the one read, or the bytes held): a file changed since it was read is a
``LedgerChangedError``, not other events. None holds an integer beyond 64 bits: a block
with one is read the dict route, its dicts kept.

Each row, once decoded, is kept: the same index gives the same dict object, as a list
did (the recovery engine and the frames still hold events and compare them by identity,
``frames/session_frames.py``). A session nobody reads the dicts of holds none.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any, overload

from ledgerviz.ledger.head_events import ListLikeEvents
from ledgerviz.ledger.reread import LineSource, lines_again
from ledgerviz.wording import counted

WINDOW = 1024
"""How many rows are decoded at once on a miss: one read and one pass per window."""


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
        first, last = lazy[0], lazy[-1]
        if last - first + 1 == len(lazy):  # rows first to last: slices, in C
            starts, stops = self._start[first:last + 1], self._stop[first:last + 1]
        else:
            starts, stops = [self._start[r] for r in lazy], [self._stop[r] for r in lazy]
        values = lines_again(self._source, starts, stops, lambda at: _named(lazy[at]), ())
        if last - first + 1 == len(lazy):
            self._decoded[first:last + 1] = values
        else:
            for row, value in zip(lazy, values, strict=True):
                self._decoded[row] = value

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


def _named(row: int) -> str:
    """Name the line of event ``row`` in a ``LedgerChangedError``."""
    return f"the line of event {row}"
