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
    logged = events["seq"].notna().to_numpy() & (codes >= 0)
    timed = events["time"].notna().to_numpy()
    count = np.bincount(codes[logged], minlength=len(names))
    with_time = np.bincount(codes[logged & timed], minlength=len(names))
    if axis == "time":
        for index in np.flatnonzero(with_time == 0).tolist():
            raise ValueError(f"session {names[index]!r} records no event times; use axis='order'")
        return np.ones(len(names), dtype=bool)
    if axis == "auto":
        return (count > 0) & (with_time == count)
    return np.zeros(len(names), dtype=bool)


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
    return pd.array(seqs, dtype="Int64").fillna(-1).to_numpy(dtype=np.int64)


class Positions:
    """Maps (session code, event seq) to an x position: the seq, or the event's time in epoch
    milliseconds for a session drawn on a time axis (the first event of a seq counts)."""

    def __init__(self, events: pd.DataFrame, codes: np.ndarray, on_time: np.ndarray) -> None:
        seqs = seq_keys(events["seq"])
        keep = (seqs >= 0) & (codes >= 0)
        index = pd.MultiIndex.from_arrays([codes[keep], seqs[keep]])
        first = ~index.duplicated()
        self._index = index[first]
        values = np.where(on_time[codes[keep]], epoch_ms(events["time"][keep]),
                          seqs[keep].astype(float))[first]
        self._values = np.append(values, np.nan)
        ends = np.full(len(on_time), -np.inf)
        np.fmax.at(ends, codes[keep][first], values)
        self.ends = np.where(np.isinf(ends), np.nan, ends)
        """The last position of each session (NaN for a session without logged events)."""

    def at(self, codes: np.ndarray, seqs: pd.Series | np.ndarray) -> np.ndarray:
        """Return the x position of each (session code, seq) (NaN where missing or unknown)."""
        wanted = pd.MultiIndex.from_arrays([np.asarray(codes), seq_keys(seqs)])
        return self._values[self._index.get_indexer(wanted)]

    def at_or_end(self, codes: np.ndarray, seqs: pd.Series | np.ndarray) -> np.ndarray:
        """Return :meth:`at`, with the session's last position where the seq is missing."""
        values = self.at(codes, seqs)
        missing = np.isnan(values)
        values[missing] = self.ends[np.asarray(codes)[missing]]
        return values
