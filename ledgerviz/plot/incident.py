"""Where a timeline opens: a session's incidents (fork points, calls left without a result,
turns that failed or were interrupted) and the x range of event seqs around one of them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ledgerviz.plot.axis import seq_keys

WINDOW = 200
"""Event seqs an incident view spans: a session of at most this many opens whole."""
BEFORE = 150
"""Seqs of the window before the incident (what led to it); the rest follow it."""
UNRESOLVED = ("outcome_unknown", "not_started")
ENDED_WELL = ("completed", "forked")
"""Turn end reasons that are no incident (``forked``: a fork child's closer, at the fork)."""


def incident_seqs(calls: pd.DataFrame, turns: pd.DataFrame,
                  fork_points: Sequence[int] = ()) -> list[int]:
    """Return the sorted seqs of one session's incidents: its fork points, the requests of
    its calls without a result (outcome unknown or never started), and the ends of its
    turns that ended otherwise than :data:`ENDED_WELL`."""
    return incidents_by_session(calls, np.zeros(len(calls), dtype=np.int64), turns,
                                np.zeros(len(turns), dtype=np.int64), [fork_points])[0]


def incidents_by_session(calls: pd.DataFrame, call_codes: np.ndarray, turns: pd.DataFrame,
                         turn_codes: np.ndarray, fork_points: Sequence[Sequence[int]]
                         ) -> list[list[int]]:
    """Return :func:`incident_seqs` of each session ``i`` (rows coded ``i``, -1: none;
    ``fork_points[i]``: its fork points) of frames holding several."""
    unresolved = calls["status"].isin(UNRESOLVED).to_numpy(dtype=bool) & (call_codes >= 0)
    failed = (turns["end_reason"].notna() & ~turns["end_reason"].isin(ENDED_WELL)).to_numpy(
        dtype=bool) & (turn_codes >= 0)
    codes = np.concatenate([call_codes[unresolved], turn_codes[failed]])
    seqs = np.concatenate([seq_keys(calls["requested_seq"])[unresolved],
                           seq_keys(turns["end_seq"])[failed]])
    found: list[set[int]] = [set(points) for points in fork_points]
    for code, seq in zip(codes.tolist(), seqs.tolist(), strict=True):
        if seq >= 0:
            found[code].add(seq)
    return [sorted(seqs_) for seqs_ in found]


def incident_view(seq: int, first: float, last: float) -> tuple[float, float] | None:
    """Return the x range (event seqs) of :data:`WINDOW` seqs around incident ``seq`` within
    the session's seqs ``first``..``last``, or None when the session is no longer than that."""
    if not last - first >= WINDOW:
        return None
    low = min(max(first, seq - BEFORE), last - WINDOW)
    return (float(low) - 0.5, float(low + WINDOW) + 0.5)
