"""The first events of a session followed by others, without decoding or copying them.

A cut keeps a session's first ``n`` events and a fork child its parent's first ones plus
the events the seed adds. Slicing a ``LazyEvents`` decodes every row sliced (into a list),
so a cut of a long session, or the child forked from it, would decode the whole file
before anything asked for one dict; :func:`head_then` reads them from the session's own
events when asked instead (the same dict objects, which the engine and the frames compare
by identity).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain, islice
from typing import Any, overload

Event = dict[str, Any]


class ListLikeEvents(Sequence[Event]):
    """A read-only sequence of events that compares with any sequence (not text) as the
    list of its events would, and is unhashable as a list is."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable-like, as a list


class HeadThen(ListLikeEvents):
    """The first ``count`` events of ``events`` followed by ``then``: a ``Sequence`` that
    indexes, slices (into a list), iterates and compares as the list of them would."""

    __slots__ = ("_count", "_events", "_then")

    def __init__(self, events: Sequence[Event], count: int, then: Sequence[Event]) -> None:
        if not 0 <= count <= len(events):
            raise ValueError(f"cannot keep {count} of {len(events)} events")
        self._events = events
        self._count = count
        self._then = then

    def __len__(self) -> int:
        return self._count + len(self._then)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Any:
        count = self._count
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[row] for row in range(start, stop, step)]
            head = self._events[start:min(stop, count)] if start < count else []
            return [*head, *self._then[max(start - count, 0):max(stop - count, 0)]]
        row = index.__index__()
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError("event index out of range")
        return self._events[row] if row < count else self._then[row - count]

    def __iter__(self) -> Iterator[Event]:
        return chain(islice(self._events, self._count), self._then)

    def __repr__(self) -> str:
        return f"<the first {self._count} of {self._events!r}, then {len(self._then)} more>"


def head_then(events: Sequence[Event], count: int,
              then: Sequence[Event] = ()) -> Sequence[Event]:
    """Return the first ``count`` events of ``events`` followed by ``then``: a new list when
    ``events`` is one (cheap to copy, and what a caller of a list may expect), else a
    :class:`HeadThen` reading them when asked (a whole ``events`` itself, nothing added)."""
    if isinstance(events, list):
        return [*events[:count], *then]
    if count >= len(events) and not then:
        return events
    return HeadThen(events, min(count, len(events)), then)
