"""The rows of one frame of a whole session, kept with where each began and how far the rows
before each reach, so that a prefix's frame can take its first rows from them."""

from __future__ import annotations

from functools import cached_property
from itertools import repeat
from typing import Any

import numpy as np

from ledgerviz.frames.keys import nullable
from ledgerviz.frames.turns import listed


class Rows:
    """Rows of one frame of the whole session (an array per slot: ``turn_arrays``,
    ``step_arrays``), with where each began and how far the rows before each reach; their
    lists (``rows``) and keys are made when first read."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays
        self.reach = np.maximum.accumulate(arrays["last"].astype(np.int64, copy=False))

    @cached_property
    def rows(self) -> dict[str, list[Any]]:
        """Return the rows as one list per slot (see ``frames.turns.listed``)."""
        return listed(self.arrays)

    @cached_property
    def keys(self) -> dict[tuple[Any, ...], int]:
        """Return the first row of each key."""
        return {key: row for row, key in reversed(list(enumerate(self.row_keys())))}

    @cached_property
    def call_keys(self) -> list[Any]:
        """Return each row's key as its calls carry it: the turn, or (turn, step)."""
        turns = nullable(self.arrays["turn"])
        if "step" in self.arrays:
            return list(zip(turns, nullable(self.arrays["step"]), strict=True))
        return turns

    @cached_property
    def row_of_call_key(self) -> dict[Any, int] | None:
        """Return the row of each call key, or None when two rows share one."""
        found = {key: row for row, key in enumerate(self.call_keys)}
        return found if len(found) == len(self.call_keys) else None

    def rows_of(self, keys: list[Any]) -> np.ndarray | None:
        """Return the row of each call key in ``keys`` (-1: none), or None when two rows
        share a key."""
        row_of = self.row_of_call_key
        if row_of is None:
            return None
        return np.fromiter(map(row_of.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))

    def row_keys(self, rows: dict[str, list[Any]] | None = None) -> list[tuple[Any, ...]]:
        """Return the key of each row (``rows``: of another set of rows of this frame)."""
        rows = rows or self.rows
        names = ["session", "turn", "step"] if "step" in rows else ["session", "turn"]
        return list(zip(*(rows[name] for name in names), strict=True))

    def kept(self, shared: int) -> int:
        """Return how many first rows only events before position ``shared`` change."""
        return int(np.searchsorted(self.reach, shared))

    def start(self, count: int, shared: int) -> int | None:
        """Return the position the rows after the first ``count`` begin at (``shared`` when
        there are none), or None when an event from there on changes one of the first."""
        start = int(self.arrays["first"][count]) if count < len(self.reach) else shared
        return None if count and self.reach[count - 1] >= start else start

    def reopened(self, new: dict[str, list[Any]], count: int) -> int | None:
        """Return the first of the first ``count`` rows whose key a row of ``new`` (built
        after them) that no start event opened carries (a scan over all would change that
        row instead), or None."""
        reopened = [self.keys.get(key, count)
                    for start, key in zip(new["start"], self.row_keys(new), strict=True)
                    if start == -1]
        first = min(reopened, default=count)
        return first if first < count else None
