"""A scan's list of seqs held as runs that rise by one: a few numbers for a whole log."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Any

_INT64 = range(-(2**63), 2**63)


class SeqRuns:
    """The seqs of a log's events by position, appended in order, read back by position.

    A log numbers its events one by one, so a run of seqs that each rise by one from the
    last is kept as its first position and first seq; any other value (None, a seq that
    is not an int in int64) is kept by its position. A well-numbered log of any length
    holds one run; each gap or repeat starts another.
    """

    __slots__ = ("_firsts", "_length", "_next", "_odd", "_starts")

    def __init__(self) -> None:
        self._starts = array("q")
        """The position where each run begins."""
        self._firsts = array("q")
        """The seq each run begins with."""
        self._odd: dict[int, Any] = {}
        """The values that are no int in int64, by position."""
        self._length = 0
        self._next: int | None = None
        """The seq that extends the last run (None: the next int begins a run)."""

    def __len__(self) -> int:
        return self._length

    def append(self, seq: Any) -> None:
        """Add the seq of the next position."""
        if seq == self._next and seq.__class__ is int:
            self._next = seq + 1
        elif seq.__class__ is int and seq in _INT64:
            self._starts.append(self._length)
            self._firsts.append(seq)
            self._next = seq + 1
        else:
            self._odd[self._length] = seq
            self._next = None
        self._length += 1

    def __getitem__(self, position: int) -> Any:
        """Return the seq at ``position`` (0 <= position < len)."""
        if not 0 <= position < self._length:
            raise IndexError(position)
        odd = self._odd
        if position in odd:
            return odd[position]
        run = bisect_right(self._starts, position) - 1
        return self._firsts[run] + position - self._starts[run]
