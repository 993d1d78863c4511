"""Rows of one frame grouped by session and lane part, so many sessions are drawn in one pass."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """Return the distinct values of an integer array, sorted (by sorting: numpy's hash-based
    ``unique`` is far slower on long runs of consecutive integers such as seqs)."""
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


class Groups:
    """The rows of a frame by (session code, part): ``codes`` and ``parts`` give each row's
    session index and lane part (-1: not drawn); each group keeps the frame's row order."""

    def __init__(self, codes: np.ndarray, parts: np.ndarray, sessions: int, part_count: int):
        groups = sessions * part_count
        # groups numbered in the smallest int type that holds them (argsort is then a radix
        # sort, and no wide array is made on the way)
        kind = np.int8 if groups < 127 else np.int16 if groups < 32_767 else np.int64
        group = np.asarray(codes).astype(kind) * kind(part_count) + np.asarray(parts).astype(kind)
        group[(np.asarray(codes) < 0) | (np.asarray(parts) < 0)] = -1
        self._order = np.argsort(group, kind="stable")
        self._bounds = np.searchsorted(group[self._order], np.arange(sessions * part_count + 1))
        self._part_count = part_count
        self._group = group
        self.counts = np.diff(self._bounds)
        """The number of rows of each group, ``session * part_count + part``."""

    def rows(self, session: int, part: int) -> np.ndarray:
        """Return the row positions of one session's part, in row order."""
        at = session * self._part_count + part
        return self._order[self._bounds[at]:self._bounds[at + 1]]

    def one_by_one(self, limit: int, in_view: np.ndarray | None = None) -> np.ndarray:
        """Return which rows are drawn one by one: every row of a group of at most ``limit``
        rows, and the rows ``in_view`` of a group with at most ``limit`` of them in view."""
        grouped = self._group >= 0
        small = np.append(self.counts <= limit, False)  # per group (-1: the last, none)
        single = small[self._group]
        if in_view is None:
            return single
        visible = in_view & grouped
        shown = np.bincount(self._group[visible], minlength=len(self.counts))
        single[visible] |= (shown <= limit)[self._group[visible]]
        return single

    def labels(self, frame: pd.DataFrame, label: Callable[[pd.DataFrame], np.ndarray],
               drawn: np.ndarray) -> np.ndarray:
        """Return ``label`` of each ``drawn`` row (those drawn one by one), ``""`` for the
        others: ``label`` runs once, over all those rows at once."""
        out = np.full(len(frame), "", dtype=object)
        if drawn.all():
            out[:] = label(frame)
        elif drawn.any():
            out[drawn] = label(frame[drawn])
        return out
