"""The events of an analysis, laid end to end from runs of other sequences, not copied.

A scan over a session's columns puts each run of recorded rows it reads as one run of the
caller's events (``log.events``: a list, or a reader's lazy sequence), and each batch of
events recovery makes as a run of its own: ``Analysis.events`` is the log's events with the
computed ones spliced in, and indexing it reads the log's sequence itself (the same dict
objects a list holds; a lazy reader decodes only the rows read).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import overload

from ledgerviz.recovery.events import Event


class EventRuns(Sequence[Event]):
    """A sequence of events made of runs ``(position, source, first)``: its events from
    ``position`` to the next run's are ``source[first:]``."""

    __slots__ = ("_firsts", "_length", "_positions", "_sources", "forgotten")

    def __init__(self) -> None:
        self._positions: list[int] = []
        self._sources: list[Sequence[Event]] = []
        self._firsts: list[int] = []
        self._length = 0
        self.forgotten = 0
        """The events before this position are no longer held (see ``forget_before``)."""

    def take(self, source: Sequence[Event], first: int, stop: int) -> None:
        """Append ``source[first:stop]`` (a run that continues the last one extends it)."""
        if stop <= first:
            return
        sources = self._sources
        if not (sources and sources[-1] is source
                and self._firsts[-1] + self._length - self._positions[-1] == first):
            self._positions.append(self._length)
            sources.append(source)
            self._firsts.append(first)
        self._length += stop - first

    def head(self, length: int) -> EventRuns:
        """Return the first ``length`` events as a new ``EventRuns`` (the runs shared)."""
        runs = EventRuns()
        kept = bisect_right(self._positions, length - 1) if length > 0 else 0
        runs._positions = self._positions[:kept]
        runs._sources = self._sources[:kept]
        runs._firsts = self._firsts[:kept]
        runs._length = max(min(length, self._length), 0)
        runs.forgotten = self.forgotten
        return runs

    def forget_before(self, position: int) -> None:
        """Drop the runs that end before ``position`` (a scan that keeps no result)."""
        dropped = bisect_right(self._positions, position) - 1
        if dropped > 0:
            del self._positions[:dropped], self._sources[:dropped], self._firsts[:dropped]
        self.forgotten = max(self.forgotten, position)

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return list(self._islice(start, stop))
        if index < 0:
            index += self._length
        if not 0 <= index < self._length or index < self.forgotten:
            raise IndexError(f"event {index} is not held (of {self._length})")
        positions = self._positions
        run = 0 if len(positions) == 1 else bisect_right(positions, index) - 1
        return self._sources[run][self._firsts[run] + index - positions[run]]

    def _ends(self) -> list[int]:
        """Return the position after each run."""
        return [*self._positions[1:], self._length] if self._positions else []

    def _islice(self, start: int, stop: int) -> Iterator[Event]:
        """Return an iterator over the events ``start`` to ``stop``."""
        if start < self.forgotten:
            raise IndexError(f"event {start} is not held")
        positions, ends = self._positions, self._ends()
        parts = []
        for run in range(max(bisect_right(positions, start) - 1, 0), len(positions)):
            begin, end = max(positions[run], start), min(ends[run], stop)
            if begin >= end:
                break
            source, first = self._sources[run], self._firsts[run] + begin - positions[run]
            whole = first == 0 and end - begin == len(source)
            parts.append(source if whole else source[first : first + end - begin])
        return chain.from_iterable(parts)

    def __iter__(self) -> Iterator[Event]:
        return self._islice(self.forgotten, self._length)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        if len(other) != self._length:
            return False
        start = self._shared(other) if isinstance(other, EventRuns) else 0
        mine, theirs = self._islice(start, self._length), other[start:]
        return all(a is b or a == b for a, b in zip(mine, theirs, strict=True))

    def _shared(self, other: EventRuns) -> int:
        """Return the length of the first runs both hold alike (the same rows of the same
        sources, so equal without a look)."""
        ends, other_ends = self._ends(), other._ends()
        shared = 0
        for run in range(min(len(ends), len(other_ends))):
            if not (self._sources[run] is other._sources[run]
                    and self._firsts[run] == other._firsts[run]
                    and self._positions[run] == other._positions[run]):
                break
            shared = min(ends[run], other_ends[run])
            if ends[run] != other_ends[run]:
                break
        return shared

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<EventRuns: length {self._length}, runs {len(self._positions)}>"

