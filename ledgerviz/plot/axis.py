"""Where an event lands on the timeline's x axis: its seq (event order) or its time.

Positions are float arrays (seq, or epoch milliseconds which plotly date axes accept),
NaN where unknown, so plotly can ship them as compact binary arrays.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

Axis = Literal["auto", "time", "order"]


def resolve_axis(events: pd.DataFrame, axis: Axis, session: str) -> Literal["time", "order"]:
    """Return the concrete axis: ``auto`` picks time only when every logged event has a time."""
    if axis not in ("auto", "time", "order"):
        raise ValueError(f"axis must be 'auto', 'time' or 'order', got {axis!r}")
    logged = events[events["seq"].notna()]
    has_times = logged["time"].notna()
    if axis == "time" and not has_times.any():
        raise ValueError(f"session {session!r} records no event times; use axis='order'")
    if axis == "auto":
        return "time" if len(logged) and bool(has_times.all()) else "order"
    return axis


def epoch_ms(times: pd.Series) -> np.ndarray:
    """Return datetimes as float epoch milliseconds (UTC), NaN where missing."""
    if isinstance(times.dtype, pd.DatetimeTZDtype):
        times = times.dt.tz_convert("UTC").dt.tz_localize(None)
    stamps = pd.to_datetime(times).to_numpy(dtype="datetime64[ms]")
    values = stamps.astype("int64").astype(float)
    values[np.isnat(stamps)] = np.nan
    return values


class Locator:
    """Maps event seqs of one session to x positions on the chosen axis."""

    def __init__(self, events: pd.DataFrame, axis: Literal["time", "order"]) -> None:
        logged = events[events["seq"].notna()].drop_duplicates("seq")
        seqs = logged["seq"].astype("int64").to_numpy()
        values = seqs.astype(float) if axis == "order" else epoch_ms(logged["time"])
        self._by_seq = pd.Series(values, index=seqs, dtype=float)
        self.end = float(np.nanmax(values)) if len(values) else np.nan

    def at(self, seqs: pd.Series) -> np.ndarray:
        """Return the x position of each seq (NaN where the seq is missing or unknown)."""
        index = pd.Index(pd.array(seqs, dtype="Int64").fillna(-1).astype("int64"))
        return self._by_seq.reindex(index).to_numpy(dtype=float, copy=True)

    def at_or_end(self, seqs: pd.Series) -> np.ndarray:
        """Return :meth:`at`, with the session's last position where the seq is missing."""
        values = self.at(seqs)
        values[np.isnan(values)] = self.end
        return values
