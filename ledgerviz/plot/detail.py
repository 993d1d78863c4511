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
    label with the item count, seq range and distinct ``names``."""
    bin_of = _bin_of(starts, bins)
    keep = bin_of >= 0
    frame = pd.DataFrame({"bin": bin_of[keep], "start": starts[keep],
                          "end": np.fmax(ends[keep], starts[keep]),
                          "seq": pd.array(seqs, dtype="Int64")[keep],
                          "name": pd.Categorical(names)[keep]})
    groups = frame.groupby("bin", sort=True)
    spans = groups.agg(start=("start", "min"), end=("end", "max"), count=("start", "size"),
                       first=("seq", "min"), last=("seq", "max"))
    named: dict[int, list[str]] = {}
    for b, name in frame.groupby(["bin", "name"], sort=True, observed=True).size().index:
        named.setdefault(b, []).append(name)
    labels = [group_hover(what, int(row.count), named.get(b, ()), row.first, row.last)
              for b, row in zip(spans.index, spans.itertuples(index=False), strict=True)]
    return Level(spans["start"].to_numpy(dtype=float), spans["end"].to_numpy(dtype=float),
                 labels, True)


def pick(starts: np.ndarray, ends: np.ndarray, rows: pd.DataFrame, label: Callable[[pd.DataFrame],
         Sequence[str]], *, seq_column: str, name_column: str, what: str,
         limit: int) -> Level:
    """Return every item of ``rows`` (hover labels from ``label``) when there are at most
    ``limit``, else the lane :func:`binned` (``label`` is then never called)."""
    if len(rows) <= limit:
        return Level(starts, ends, label(rows), False)
    return binned(starts, ends, rows[seq_column], rows[name_column], what)
