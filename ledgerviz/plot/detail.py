"""Level of detail per timeline lane: every item, or items grouped into bins of the x extent.

A lane with more items than the detail limit is drawn as at most :data:`BINS` bars, each
spanning the first to the last item of an equal slice of the lane's x extent, so the whole
session stays visible at full extent and the figure stays small at any size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from ledgerviz.plot.hover import group_hover

BINS = 400


class Level(NamedTuple):
    """What one lane draws: item (or bin) starts, ends and hover labels, and whether binned."""

    starts: np.ndarray
    ends: np.ndarray
    labels: Sequence[str]
    binned: bool


def _bin_of(starts: np.ndarray, bins: int) -> np.ndarray:
    """Return each item's bin: ``bins`` equal slices of the extent of ``starts`` (NaN: -1)."""
    known = ~np.isnan(starts)
    out = np.full(len(starts), -1, dtype=np.int64)
    if not known.any():
        return out
    low, high = np.nanmin(starts), np.nanmax(starts)
    width = (high - low) / bins or 1.0
    out[known] = np.minimum(((starts[known] - low) / width).astype(np.int64), bins - 1)
    return out


def binned(starts: np.ndarray, ends: np.ndarray, seqs: pd.Series, names: pd.Series,
           what: str, bins: int = BINS) -> Level:
    """Return the lane grouped into bins: per non-empty bin its first start, last end, and a
    label with the item count, seq range and distinct ``names`` (computed with numpy, one
    pass over the items)."""
    bin_of = _bin_of(starts, bins)
    known = np.flatnonzero(bin_of >= 0)
    order = known[np.argsort(bin_of[known], kind="stable")]
    if not len(order):
        return Level(np.empty(0), np.empty(0), [], True)
    slot = bin_of[order]
    heads = np.flatnonzero(np.r_[True, slot[1:] != slot[:-1]])
    first = np.minimum.reduceat(starts[order], heads)
    last = np.maximum.reduceat(np.fmax(ends, starts)[order], heads)
    counts = np.diff(np.r_[heads, len(order)])
    seq = pd.array(seqs, dtype="Int64").to_numpy(dtype=float, na_value=np.nan)[order]
    low, high = np.fmin.reduceat(seq, heads), np.fmax.reduceat(seq, heads)
    categories = pd.Categorical(names)
    codes = categories.codes[order].astype(np.int64)
    width = len(categories.categories) + 1
    pairs = np.unique(slot[codes >= 0] * width + codes[codes >= 0])
    values = categories.categories.tolist()
    named: dict[int, list[str]] = {}
    for b, code in zip((pairs // width).tolist(), (pairs % width).tolist(), strict=True):
        named.setdefault(b, []).append(values[code])
    labels = [group_hover(what, int(count), named.get(b, ()), _whole(a), _whole(z))
              for b, count, a, z in zip(slot[heads].tolist(), counts, low, high, strict=True)]
    return Level(first.astype(float), last.astype(float), labels, True)


def _whole(value: float) -> int | None:
    """Return a float seq as an int (None for NaN: no seq)."""
    return None if np.isnan(value) else int(value)


def pick(starts: np.ndarray, ends: np.ndarray, rows: pd.DataFrame, label: Callable[[pd.DataFrame],
         Sequence[str]], *, seq_column: str, name_column: str, what: str,
         limit: int) -> Level:
    """Return every item of ``rows`` (hover labels from ``label``) when there are at most
    ``limit``, else the lane :func:`binned` (``label`` is then never called)."""
    if len(rows) <= limit:
        return Level(starts, ends, label(rows), False)
    return binned(starts, ends, rows[seq_column], rows[name_column], what)
