"""The frame rows and event facts one session's spans are made of, as plain Python values.

``session_rows`` turns the ``turns``, ``steps``, ``calls`` and ``lineage`` frames into
tuples per session (pandas NA as None, times as epoch nanoseconds); ``clock_of`` reads
from a session's analysis what the frames do not hold: the time of the last event, the
times of a few seqs, the seqs the policy appended, and where the abandoned suffix begins.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import compress
from typing import Any, NamedTuple

import pandas as pd

from ledgerviz.recovery.analysis import Analysis
from ledgerviz.recovery.vocab import CallStatus

_NS_PER_MS = 1_000_000


class TurnRow(NamedTuple):
    """A ``turns`` row (times in epoch ns)."""

    turn: int | None
    start_seq: int | None
    end_seq: int | None
    start_time: int | None
    end_time: int | None
    end_reason: str | None


class StepRow(NamedTuple):
    """A ``steps`` row (times in epoch ns)."""

    turn: int | None
    step: int | None
    start_seq: int | None
    end_seq: int | None
    start_time: int | None
    end_time: int | None
    provider: str | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    reasoning_tokens: int | None


class CallRow(NamedTuple):
    """A ``calls`` row (times in epoch ns)."""

    call_id: str
    tool: str | None
    turn: int | None
    step: int | None
    requested_seq: int
    dispatched_seq: int | None
    result_seq: int | None
    dispatch_time: int | None
    result_time: int | None
    status: CallStatus
    error_code: str | None
    branch: str
    settled: bool


class LineageRow(NamedTuple):
    """A ``lineage`` row."""

    parent_session: str | None
    relation: str | None
    boundary_seq: int | None
    agent_preset: str | None


@dataclass(frozen=True, slots=True)
class SessionRows:
    """One session's rows of every frame a span is made from, in frame order."""

    turns: list[TurnRow]
    steps: list[StepRow]
    calls: list[CallRow]
    lineage: LineageRow | None


def session_rows(frames: Any) -> dict[str, SessionRows]:
    """Return the rows of every session of ``frames`` (a ``Frames``), by session key."""
    turns = _rows(frames.turns, TurnRow)
    steps = _rows(frames.steps, StepRow)
    calls = _rows(frames.calls, CallRow)
    lineage = _rows(frames.lineage, LineageRow)
    keys = dict.fromkeys([*turns, *steps, *calls, *lineage])
    return {key: SessionRows(turns.get(key, []), steps.get(key, []), calls.get(key, []),
                             next(iter(lineage.get(key, [])), None)) for key in keys}


def _rows(frame: pd.DataFrame, row: type[NamedTuple]) -> dict[str, list[Any]]:
    """Return ``frame``'s rows as ``row`` tuples, grouped by session key in frame order."""
    columns = [_values(frame[name]) for name in row._fields]
    grouped: dict[str, list[Any]] = defaultdict(list)
    for session, values in zip(frame["session"].tolist(), zip(*columns, strict=True),
                               strict=True):
        grouped[session].append(row._make(values))
    return grouped


def _values(column: pd.Series) -> list[Any]:
    """Return a column as Python values: None for missing, epoch ns for times."""
    if isinstance(column.dtype, pd.DatetimeTZDtype):
        missing = column.isna().tolist()
        ns = column.dt.as_unit("ns").array.asi8.tolist()
        return [None if gap else value for value, gap in zip(ns, missing, strict=True)]
    return column.astype(object).where(column.notna(), None).tolist()


@dataclass(frozen=True, slots=True)
class SessionClock:
    """What a session's spans need from its events beyond the frames."""

    end: int
    """Epoch ns of the latest event (what an open span ends at: the crash point)."""
    times: dict[int, int]
    """Epoch ns of the seqs asked for, when they have an event with a time."""
    synthetic: frozenset[int]
    """Seqs of the events the policy appended (synthetic results and closers)."""
    abandoned_from: int | None
    """The first abandoned seq (the fork policy's suffix), or None."""
    fork_points: tuple[int, ...]
    """The policy's fork points, ascending."""


def clock_of(analysis: Analysis, wanted: set[int]) -> SessionClock:
    """Return the clock of one session's ``analysis``, with the times of the ``wanted`` seqs."""
    latest = 0
    times: dict[int, int] = {}
    for seq, event in zip(analysis.seqs, analysis.events, strict=True):
        time = event.get("time")
        if type(time) is not int:
            continue
        latest = max(latest, time)
        if seq.__class__ is int and seq in wanted:
            times[seq] = time * _NS_PER_MS
    synthetic = frozenset(seq for seq in compress(analysis.seqs, analysis.synthetic)
                          if seq is not None)
    return SessionClock(latest * _NS_PER_MS, times, synthetic,
                        min(analysis.abandoned_seqs, default=None),
                        tuple(sorted(analysis.fork_points)))
