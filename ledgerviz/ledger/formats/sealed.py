"""A foreign reader's events, each window of them encoded once it can no longer change.

A dsh ledger's events are decoded from its lines when asked for (``lazy_events``); a
foreign transcript's events are the reader's own mapping of its records, so they cannot
be read again from the file. Instead the reader appends them to a plain list (and their
lines to another) which an ``EventStore`` seals a window of ``WINDOW`` events at a time
once the reader says no event of the window will change any more (``seal_before``): the
window is tabled (``table.EventTable.of``, the one route every format's table is made by),
encoded as one ``orjson`` array, and its places in the list emptied (None). The session's
events are then a ``SealedEvents``: a window is decoded when one of its events is first
asked for, and its dicts kept (the same index gives the same dict, as a list did).

An event the reader changes after its window was sealed (a late amendment: an exit code
settling an earlier result) is asked for with ``live``: its window is decoded back into
the list, to be tabled and sealed anew. The rare rewrites of every seq (a fork's inherited
prefix, rejected dispatches removed) first fill every place again (``unsealed``).

A reader that fills its table's columns itself derives its events instead, from the table
and its records, a window when first asked for (``DerivedEvents``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, overload

import orjson

from ledgerviz.ledger.head_events import ListLikeEvents
from ledgerviz.ledger.table import EventTable
from ledgerviz.wording import counted

Event = dict[str, Any]

WINDOW = 512
"""Events per window: one ``orjson`` call encodes, and one decodes, a window."""


def _encoded(window: list[Event]) -> bytes | list[Event]:
    """Return ``window`` as one ``orjson`` array; or, when an event holds an integer beyond
    64 bits (kept exact as read: ``foreign.Records``, which orjson cannot write), the
    window itself, held as dicts."""
    try:
        return orjson.dumps(window)
    except TypeError:
        return window


class SealedEvents(ListLikeEvents):
    """A session's events kept as encoded windows (see the module docstring): a
    ``Sequence`` that indexes, slices (into a list), iterates and compares as the list of
    them did."""

    __slots__ = ("_count", "_size", "_windows")

    def __init__(self, windows: list[bytes | list[Event]], count: int,
                 size: int = WINDOW) -> None:
        """``windows``: the ``orjson`` arrays (or lists) of each ``size`` events in turn."""
        self._windows: list[bytes | list[Event]] = list(windows)
        self._count = count
        self._size = size

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[row] for row in range(*index.indices(self._count))]
        row = index.__index__()
        if row < 0:
            row += self._count
        if not 0 <= row < self._count:
            raise IndexError("event index out of range")
        return self._window(row // self._size)[row % self._size]

    def __iter__(self) -> Iterator[Event]:
        for number in range(len(self._windows)):
            yield from self._window(number)

    def __repr__(self) -> str:
        return f"<{counted(self._count, 'event')}, decoded on demand>"

    def _window(self, number: int) -> list[Event]:
        """Return window ``number``'s events (decoded, and kept, the first time)."""
        window = self._windows[number]
        if window.__class__ is not list:
            window = self._windows[number] = orjson.loads(window)
        return window  # type: ignore[return-value]


class Derivation(Protocol):
    """What a reader derives a session's events from (its table and its records)."""

    def window(self, first: int, stop: int) -> list[Event]:
        """Return the events of rows ``first`` to ``stop``."""
        ...


class DerivedEvents(SealedEvents):
    """A session's events derived, not decoded, a window at a time when one of its events
    is first asked for (and kept, as a ``SealedEvents`` keeps a window decoded)."""

    __slots__ = ("_derivation",)

    def __init__(self, derivation: Derivation, count: int) -> None:
        super().__init__([], count)
        self._windows = [None] * -(-count // self._size)  # type: ignore[list-item]
        self._derivation = derivation

    def _window(self, number: int) -> list[Event]:
        """Return window ``number``'s events (derived, and kept, the first time)."""
        window = self._windows[number]
        if window is None:
            first = number * self._size
            window = self._windows[number] = self._derivation.window(
                first, min(first + self._size, self._count))
        return window  # type: ignore[return-value]


class EventStore:
    """Seals the events a reader appends to ``events`` (read from ``lines``), see the
    module docstring."""

    def __init__(self, events: list[Any], lines: list[int]) -> None:
        self.events = events
        self.lines = lines
        self.window = WINDOW
        """The events of a window (``WINDOW`` when the store was made)."""
        self._sealed: dict[int, tuple[bytes | list[Event], EventTable]] = {}
        """Each sealed window's encoding and table, by window number."""
        self._next = 0
        """The first window ``seal_before`` has not sealed."""

    def seal_before(self, seq: int) -> None:
        """Seal every full window whose events all come before ``seq`` (none of them will
        change any more)."""
        if seq < (self._next + 1) * self.window:  # not past the next window: nothing to seal
            return
        last = min(seq, len(self.events)) // self.window
        for number in range(self._next, last):
            self._seal(number)
        self._next = max(self._next, last)

    def live(self, seq: int) -> Event:
        """Return event ``seq``, a dict the reader may change (its window decoded back into
        ``events`` if it was sealed, to be sealed anew)."""
        self._unseal(seq // self.window)
        return self.events[seq]

    def unsealed(self) -> None:
        """Put every sealed event back into ``events`` (to be sealed anew)."""
        for number in list(self._sealed):
            self._unseal(number)

    def finished(self) -> tuple[SealedEvents, list[int], EventTable]:
        """Seal every window; return the events, their lines and their table (once: the
        store hands its windows over)."""
        count = len(self.events)
        windows = range(max(1, -(-count // self.window)))
        for number in windows:
            if number not in self._sealed:
                self._seal(number)
        sealed = [self._sealed.pop(number) for number in windows]
        data = [encoded for encoded, _ in sealed]
        parts = [part for _, part in sealed]
        del sealed
        parts.reverse()
        table = parts.pop()  # the first window's rows, the others appended to them
        while parts:  # each part let go once appended: the rows are not held twice
            table.extend(parts.pop())
        events = SealedEvents(data, count, self.window)
        return events, self.lines, table

    def _seal(self, number: int) -> None:
        """Table window ``number`` and encode it, emptying its places in ``events``."""
        start = number * self.window
        stop = min(start + self.window, len(self.events))
        window = self.events[start:stop]
        self._sealed[number] = (_encoded(window),
                                EventTable.of(window, self.lines[start:stop], start))
        self.events[start:stop] = [None] * (stop - start)

    def _unseal(self, number: int) -> None:
        """Decode window ``number`` back into ``events`` if it is sealed."""
        if number in self._sealed:
            data, _ = self._sealed.pop(number)
            start = number * self.window
            window = data if data.__class__ is list else orjson.loads(data)
            self.events[start:start + len(window)] = window
