"""Where an event lands on the timeline's x axis: its seq (event order) or its time.

Positions are float arrays (seq, or epoch milliseconds which plotly date axes accept),
NaN where unknown, so plotly can ship them as compact binary arrays. One
:class:`Positions` serves every session drawn in one pass: rows name their session by a code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from ledgerviz.plot.groups import distinct_sorted

Axis = Literal["auto", "time", "order"]
AXES = ("auto", "time", "order")


def check_axis(axis: str) -> None:
    """Raise ValueError unless ``axis`` is one of :data:`AXES`."""
    if axis not in AXES:
        raise ValueError(f"axis must be 'auto', 'time' or 'order', got {axis!r}")


def time_axes(events: pd.DataFrame, codes: np.ndarray, names: Sequence[str],
              axis: Axis) -> np.ndarray:
    """Return, per session (``codes`` give each event row's session index into ``names``),
    whether its concrete axis is time: ``auto`` picks time only when every logged event of
    the session has a time; ``time`` raises for a session without any event time."""
    check_axis(axis)
    if axis == "order":
        return np.zeros(len(names), dtype=bool)
    logged = events["seq"].notna().to_numpy() & (codes >= 0)
    timed = events["time"].notna().to_numpy()
    count = np.bincount(codes[logged], minlength=len(names))
    with_time = np.bincount(codes[logged & timed], minlength=len(names))
    if axis == "time":
        for index in np.flatnonzero(with_time == 0).tolist():
            raise ValueError(f"session {names[index]!r} records no event times; use axis='order'")
        return np.ones(len(names), dtype=bool)
    return (count > 0) & (with_time == count)  # auto


def epoch_ms(times: pd.Series) -> np.ndarray:
    """Return datetimes as float epoch milliseconds (UTC), NaN where missing."""
    if isinstance(times.dtype, pd.DatetimeTZDtype):
        times = times.dt.tz_convert("UTC").dt.tz_localize(None)
    stamps = pd.to_datetime(times).to_numpy(dtype="datetime64[ms]")
    values = stamps.astype("int64").astype(float)
    values[np.isnat(stamps)] = np.nan
    return values


def seq_keys(seqs: pd.Series | np.ndarray) -> np.ndarray:
    """Return seqs as int64, -1 where missing (no event has seq -1)."""
    values = seqs.array if isinstance(seqs, pd.Series) else seqs
    if isinstance(values, pd.arrays.IntegerArray):  # (one pass, no copies on the way)
        return values.to_numpy(dtype=np.int64, na_value=-1)
    return pd.array(seqs, dtype="Int64").fillna(-1).to_numpy(dtype=np.int64)


DENSE_SPAN = 2
"""An index of one code whose values span at most this many times their count (plus 64) keeps a
table over the span: pairs are found by their offset, never searched for."""


class PairIndex:
    """Finds (session code, integer) pairs, such as (session, seq), among those it was built
    from; the first row of a repeated pair counts. Pairs are ranked, never multiplied out, so
    no value is too large."""

    def __init__(self, codes: np.ndarray, values: np.ndarray) -> None:
        self._table: np.ndarray | None = None
        """Per value from the lowest, its position into :attr:`rows` (-1: none), when one
        code's values are dense (seqs or turn numbers of one session)."""
        if len(values) and (codes == codes[0]).all():
            low, high = int(values.min()), int(values.max())
            if high - low < DENSE_SPAN * len(values) + 64:
                self._tabulate(int(codes[0]), low, high, values)
                return
        self._values = distinct_sorted(values)
        keys = self._keys(codes, values)
        self._sorted, first = np.unique(keys, return_index=True)
        self.rows = first
        """The row (into the arrays built from) of each distinct pair, in key order."""

    def _tabulate(self, code: int, low: int, high: int, values: np.ndarray) -> None:
        offsets = values - low
        self._code, self._low = code, low
        rising = offsets[1:] > offsets[:-1]
        head = len(values) if rising.all() else int(np.argmin(rising)) + 1  # each once, in order
        if head == len(values):
            self.rows = np.arange(len(values))
            if high - low + 1 == len(values):  # no gap: each value's offset is its row
                self._table = self.rows
            else:
                self._table = np.full(high - low + 1, -1, dtype=np.int64)
                self._table[offsets] = self.rows
            return
        first = np.full(high - low + 1, len(values), dtype=np.int64)
        first[offsets[:head]] = np.arange(head)
        # the rest (such as a fork story's child after its parent): a value seen before keeps
        # its first row
        np.minimum.at(first, offsets[head:], np.arange(head, len(values)))
        present = first < len(values)
        self.rows = first[present]
        self._table = np.where(present, np.cumsum(present) - 1, -1)

    def _keys(self, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        ranks = np.searchsorted(self._values, values)
        return np.asarray(codes, dtype=np.int64) * (len(self._values) + 1) + ranks

    def find(self, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Return the position (into :attr:`rows`) of each pair, -1 where it is not known."""
        codes, values = np.asarray(codes, dtype=np.int64), np.asarray(values, dtype=np.int64)
        if self._table is not None:
            offsets = values - self._low
            known = (offsets >= 0) & (offsets < len(self._table)) & (codes == self._code)
            if known.all():  # (an absent value's entry is -1 too)
                return self._table[offsets]
            found = np.full(len(values), -1, dtype=np.int64)
            found[known] = self._table[offsets[known]]
            return found
        ranks = np.searchsorted(self._values, values)
        known = ranks < len(self._values)
        known[known] = self._values[ranks[known]] == values[known]
        keys = codes * (len(self._values) + 1) + ranks
        at = np.searchsorted(self._sorted, keys)
        known &= at < len(self._sorted)
        known[known] = self._sorted[at[known]] == keys[known]
        return np.where(known, at, -1)


class Positions:
    """Maps (session code, event seq) to an x position: the seq, or the event's time in epoch
    milliseconds for a session drawn on a time axis (the first event of a seq counts)."""

    def __init__(self, events: pd.DataFrame, codes: np.ndarray, on_time: np.ndarray) -> None:
        seqs = seq_keys(events["seq"])
        drawn = (seqs >= 0) & (codes >= 0)
        self._timed = bool(on_time.any())
        self._seen: tuple[int, np.ndarray] | None = None
        """One session on the event-order axis, its seqs dense: the lowest, and whether each
        seq from it is an event's (an x is then its seq: nothing else is kept)."""
        if not self._timed and len(on_time) == 1 and self._tabulate_seen(
                seqs if drawn.all() else seqs[drawn]):
            return
        if drawn.all():  # (every row: no copy of the columns)
            self._index = PairIndex(codes, seqs)
            rows = self._index.rows
        else:
            keep = np.flatnonzero(drawn)
            self._index = PairIndex(codes[keep], seqs[keep])
            rows = keep[self._index.rows]
        values = np.empty(len(rows) + 1)
        values[:-1] = seqs[rows]
        values[-1] = np.nan
        if self._timed:
            timed = np.append(on_time[codes[rows]], False)
            values[timed] = epoch_ms(events["time"].iloc[rows[timed[:-1]]])
        self._values = values
        ends = np.full(len(on_time), -np.inf)
        if len(on_time) == 1:
            ends[0] = np.fmax.reduce(values[:-1], initial=-np.inf)
        else:
            np.fmax.at(ends, codes[rows], values[:-1])
        self.ends = np.where(np.isinf(ends), np.nan, ends)
        """The last position of each session (NaN for a session without logged events)."""

    def _tabulate_seen(self, seqs: np.ndarray) -> bool:
        """Keep :attr:`_seen` of one session's logged ``seqs`` and its end, unless they are
        too sparse; return whether it was kept."""
        if not len(seqs):
            self._seen, self.ends = (0, np.zeros(0, dtype=bool)), np.array([np.nan])
            return True
        low, high = int(seqs.min()), int(seqs.max())
        if high - low >= DENSE_SPAN * len(seqs) + 64:
            return False
        seen = np.zeros(high - low + 1, dtype=bool)
        seen[seqs - low] = True
        self._seen, self.ends = (low, seen), np.array([float(high)])
        return True

    def at(self, codes: np.ndarray, seqs: pd.Series | np.ndarray) -> np.ndarray:
        """Return the x position of each (session code, seq) (NaN where missing or unknown)."""
        if self._seen is None:
            return self._values[self._index.find(codes, seq_keys(seqs))]
        low, seen = self._seen
        keys = seq_keys(seqs)
        offsets = keys - low
        known = (offsets >= 0) & (offsets < len(seen)) & (np.asarray(codes) == 0)
        known[known] = seen[offsets[known]]
        values = keys.astype(float)
        values[~known] = np.nan
        return values

    def own(self, codes: np.ndarray, seqs: pd.Series) -> np.ndarray:
        """Return :meth:`at` of the rows these positions were built from (their ``codes`` and
        ``seqs``): on the event-order axis each one's seq, found without a lookup."""
        if self._timed:
            return self.at(codes, seqs)
        keys = seq_keys(seqs)
        values = keys.astype(float)
        values[(keys < 0) | (np.asarray(codes) < 0)] = np.nan
        return values

    def at_or_end(self, codes: np.ndarray, seqs: pd.Series | np.ndarray) -> np.ndarray:
        """Return :meth:`at`, with the session's last position where the seq is missing."""
        values = self.at(codes, seqs)
        missing = np.isnan(values)
        values[missing] = self.ends[np.asarray(codes)[missing]]
        return values
