"""Where an event lands on the timeline's x axis: its seq (event order) or its time."""

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


def _time_strings(times: pd.Series) -> np.ndarray:
    if isinstance(times.dtype, pd.DatetimeTZDtype):
        times = times.dt.tz_convert("UTC").dt.tz_localize(None)
    stamps = times.to_numpy(dtype="datetime64[ms]")
    text = np.datetime_as_string(stamps, unit="ms").astype(object)
    text[np.isnat(stamps)] = None
    return text


class Locator:
    """Maps event seqs of one session to x positions on the chosen axis."""

    def __init__(self, events: pd.DataFrame, axis: Literal["time", "order"]) -> None:
        logged = events[events["seq"].notna()].drop_duplicates("seq")
        seqs = logged["seq"].astype("int64").to_numpy()
        values = seqs.astype(object) if axis == "order" else _time_strings(logged["time"])
        self.axis = axis
        self._by_seq = pd.Series(values, index=seqs, dtype=object)
        self.end = self._by_seq.iloc[int(np.argmax(seqs))] if len(seqs) else None

    def at(self, seqs: pd.Series) -> np.ndarray:
        """Return the x position of each seq (None where the seq is missing or unknown)."""
        index = pd.Index(pd.array(seqs, dtype="Int64").fillna(-1).astype("int64"))
        values = self._by_seq.reindex(index).to_numpy(dtype=object, copy=True)
        values[pd.isna(values)] = None
        return values

    def at_or_end(self, seqs: pd.Series) -> np.ndarray:
        """Return :meth:`at`, with the session's last position where the seq is missing."""
        values = self.at(seqs)
        values[pd.isna(values)] = self.end
        return values
