"""Level of detail per timeline lane: every item, or items grouped into bins of the x extent.

A lane with more items than the detail limit is drawn as at most :data:`BINS` bars, each
spanning the first to the last item of an equal slice of the lane's x extent, so the whole
session stays visible at full extent and the figure stays small at any size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ledgerviz.html import plotly_text, text_of
from ledgerviz.plot.groups import distinct_sorted
from ledgerviz.plot.hover import GROUPED_STATIC, group_hovers

BINS = 400
PAIRS_COUNTED = 1 << 22
"""Up to this many possible (bin, name) pairs, the pairs a lane holds are counted, not sorted."""


class Level(NamedTuple):
    """What one lane draws: item (or bin) starts, ends and hover labels, whether binned, and
    (binned) the positions of the items the bins hold."""

    starts: np.ndarray
    ends: np.ndarray
    labels: Sequence[str]
    binned: bool
    rows: np.ndarray | None = None


def _bin_of(starts: np.ndarray, bins: int) -> np.ndarray:
    """Return each item's bin: ``bins`` equal slices of the extent of ``starts`` (NaN: -1)."""
    known = ~np.isnan(starts)
    if not known.any():
        return np.full(len(starts), -1, dtype=np.int64)
    low, high = np.nanmin(starts), np.nanmax(starts)
    width = (high - low) / bins or 1.0
    if known.all():  # (in place: no temporary arrays)
        scaled = starts - low
        scaled /= width
        out = scaled.astype(np.int64)
        return np.minimum(out, bins - 1, out=out)
    out = np.full(len(starts), -1, dtype=np.int64)
    out[known] = np.minimum(((starts[known] - low) / width).astype(np.int64), bins - 1)
    return out


def binned(starts: np.ndarray, ends: np.ndarray, seqs: np.ndarray | None,
           names: np.ndarray | pd.Series | pd.Categorical | None,
           what: str, bins: int = BINS, note: str = GROUPED_STATIC,
           labelled: bool = True) -> Level:
    """Return the lane grouped into bins: per non-empty bin its first start, last end, and a
    label with the item count, seq range (``seqs`` as floats, NaN where missing), distinct
    ``names`` and ``note`` (no per-item Python work); an empty label unless ``labelled``
    (``seqs`` and ``names`` are then not read, and may be None)."""
    bin_of = _bin_of(starts, bins)
    order = _in_bin_order(bin_of)
    bin_sorted = bin_of[order]
    if not len(bin_sorted):
        return Level(np.empty(0), np.empty(0), [], True)
    first = np.flatnonzero(np.r_[True, bin_sorted[1:] != bin_sorted[:-1]])
    lows = np.minimum.reduceat(starts[order], first)
    highs = np.maximum.reduceat(starts[order] if ends is starts  # points
                                else np.fmax(ends[order], starts[order]), first)
    if not labelled:
        return Level(lows.astype(float), highs.astype(float), [""] * len(first), True)
    counts = np.diff(np.r_[first, len(bin_sorted)])
    seq_values = np.asarray(seqs, dtype=float)[order]
    first_seqs = np.fmin.reduceat(seq_values, first)
    last_seqs = np.fmax.reduceat(seq_values, first)
    codes, names_in_bins = sorted_codes(names)
    labels = group_hovers(what, counts.tolist(), _bin_names(bin_sorted, codes[order], first,
                                                            names_in_bins),
                          first_seqs, last_seqs, note)
    return Level(lows.astype(float), highs.astype(float), labels, True)


def _in_bin_order(bin_of: np.ndarray) -> np.ndarray | slice:
    """Return the positions of the items with a bin, in bin order (stable): all of them, as a
    slice, when every item has a bin and the bins never fall (items in x order)."""
    binned_ = bin_of >= 0
    if binned_.all() and not (bin_of[1:] < bin_of[:-1]).any():
        return slice(None)
    keep = np.flatnonzero(binned_)
    bins = bin_of[keep]
    small = bins.astype(np.int16) if bins.max(initial=0) <= np.iinfo(np.int16).max else bins
    return keep[np.argsort(small, kind="stable")]  # a radix sort for 16-bit bins


def sorted_codes(names: np.ndarray | pd.Series | pd.Categorical
                  ) -> tuple[np.ndarray, list[str]]:
    """Return a code per item into the sorted distinct non-empty names (escaped, at most 60
    characters each), -1 for an item without a name; each name is escaped once (a
    categorical's codes are used as they are)."""
    if isinstance(names, pd.Categorical):
        codes, uniques = names.codes, names.categories
    else:
        codes, uniques = pd.factorize(np.asarray(names, dtype=object), use_na_sentinel=True)
    texts = [text_of(u) for u in uniques.tolist()]
    shown = sorted(set(texts) - {""})
    rank = {text: i for i, text in enumerate(shown)}
    ranks = np.array([rank.get(text, -1) for text in texts] + [-1], dtype=np.int64)
    return ranks[codes], [plotly_text(text, 60) for text in shown]


def _bin_names(bin_sorted: np.ndarray, codes: np.ndarray, first: np.ndarray,
               names: list[str]) -> list[tuple[str, ...]]:
    """Return per bin (its items' rows begin at ``first`` in ``bin_sorted`` order) the
    distinct names its items carry (``codes`` into ``names``, -1: none), in ``names`` order."""
    width = len(names) + 1
    keys = bin_sorted * width + codes + 1
    span = (int(bin_sorted[-1]) + 1) * width
    pairs = (np.flatnonzero(np.bincount(keys, minlength=span)) if span <= PAIRS_COUNTED
             else distinct_sorted(keys))
    pairs = pairs[pairs % width != 0]  # items without a name
    rank = np.searchsorted(bin_sorted[first], pairs // width)  # the bin's index among bins
    bounds = np.searchsorted(rank, np.arange(len(first) + 1))
    held = (pairs % width - 1).tolist()
    name_of = names.__getitem__
    return [tuple(map(name_of, held[low:high]))
            for low, high in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]


def packed_items(starts: np.ndarray, ends: np.ndarray, seqs: np.ndarray,
                 names: np.ndarray | pd.Categorical) -> dict[str, Any] | None:
    """Return binned items as a page redraws them one by one (``report.js``): per item its
    start (``x0``, as differences from the previous item's), its length (``span``), its seq
    (``seq``, as differences; -1: none) and a code into the escaped ``names`` (-1: none);
    items without a position are left out. None when positions are not whole numbers (the
    differences would not be exact)."""
    placed = ~np.isnan(starts)
    x0 = starts[placed]
    if not np.array_equal(x0, np.round(x0)):
        return None
    x1 = np.fmax(ends[placed], x0)
    whole = np.nan_to_num(seqs[placed], nan=-1).astype(np.int64)
    codes, shown = sorted_codes(names[placed])
    return {"x0": np.diff(x0.astype(np.int64), prepend=0),
            "span": np.round(x1 - x0).astype(np.int64),
            "seq": np.diff(whole, prepend=0), "name": codes, "names": shown}


def view_sides(starts: np.ndarray, ends: np.ndarray, codes: np.ndarray,
               views: Sequence[tuple[float, float] | None]) -> np.ndarray | None:
    """Return where each item (``codes``: each one's session, -1: none) lies against its
    session's x range in ``views``: 0 overlapping it, 1 wholly after it, -1 wholly before it
    or without a range (None: the whole session; then no item counts as in view). None when
    no session has a range."""
    if all(view is None for view in views):
        return None
    bounds = np.array([(np.nan, np.nan) if view is None else view for view in views] +
                      [(np.nan, np.nan)], dtype=float)
    if len(views) == 1:  # one session (a NaN bound: -1 rows, or no range)
        drawn = codes == 0
        low, high = (bounds[0, 0], bounds[0, 1]) if drawn.all() else (
            np.where(drawn, bounds[0, 0], np.nan), np.where(drawn, bounds[0, 1], np.nan))
    else:
        low, high = bounds[codes, 0], bounds[codes, 1]
    sides = np.full(len(starts), -1, dtype=np.int8)
    sides[starts > high] = 1
    reach = starts if ends is starts else np.fmax(ends, starts)  # (points: no copy)
    sides[(reach >= low) & (starts <= high)] = 0
    return sides


def levels(rows: np.ndarray, single: np.ndarray, sides: np.ndarray | None,
           starts: np.ndarray, ends: np.ndarray, labels: np.ndarray, seqs: np.ndarray,
           names: np.ndarray, *, what: str, note: str,
           outside_labels: bool = True) -> list[Level]:
    """Return what the items at positions ``rows`` draw: those ``single`` one by one, then the
    rest :func:`binned`: with ``sides`` (:func:`view_sides`), those in view in bins of the
    view's extent, and those before and those after it each in bins of their own extent
    (labelled only with ``outside_labels``), so no bin spans the view; each part only when
    it holds items."""
    one = single[rows]
    found = [Level(starts[rows[one]], ends[rows[one]], labels[rows[one]], False)] if one.any() \
        else []
    rest = rows[~one]
    parts = [(rest, True)] if sides is None else [
        (rest[sides[rest] == side], side == 0 or outside_labels) for side in (0, -1, 1)]
    def binned_part(p: np.ndarray, labelled: bool) -> Level:
        at = starts[p]  # points (``ends`` is ``starts``) stay points
        return binned(at, at if ends is starts else ends[p], seqs[p] if labelled else None,
                      names[p] if labelled else None, what, note=note, labelled=labelled)

    grouped = [binned_part(p, labelled) for p, labelled in parts if len(p)]
    if grouped:
        found.append(Level(np.concatenate([g.starts for g in grouped]),
                           np.concatenate([g.ends for g in grouped]),
                           [label for g in grouped for label in g.labels], True, rest))
    return found
