"""Per-session columns that several frames share, extracted once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames.columns import category_column, int_column, time_column
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.fields import EventFields
from ledgerviz.recovery.analysis import Analysis


@dataclass(frozen=True, slots=True)
class SessionView:
    """One session under one policy with the envelope columns of ``analysis.events``."""

    key: str
    log: SessionLog
    analysis: Analysis
    fields: EventFields
    seq_array: pd.arrays.IntegerArray
    """Every event's seq (``analysis.seqs``) as ``Int64``."""
    time_array: pd.api.extensions.ExtensionArray
    """Every event's time as ``datetime64[ms, UTC]``."""
    _codes: np.ndarray = field(repr=False)
    _names: pd.Index = field(repr=False)

    @classmethod
    def of(cls, key: str, log: SessionLog, analysis: Analysis) -> SessionView:
        """Return the view of one ``(key, log, analysis)`` triple."""
        fields = analysis_fields(log, analysis)
        types = category_column(fields.types)
        seqs, times = int_column(analysis.seqs), time_column(fields.times)
        return cls(key, log, analysis, fields, seqs, times, types.codes, types.categories)

    def seq_at(self, positions: Sequence[int]) -> pd.arrays.IntegerArray:
        """Return the seqs of the events at ``positions`` (-1: no event, <NA>)."""
        return self.seq_array.take(positions, allow_fill=True)

    def time_at(self, positions: Sequence[int]) -> pd.api.extensions.ExtensionArray:
        """Return the times of the events at ``positions`` (-1: no event, NaT)."""
        return self.time_array.take(positions, allow_fill=True)

    @property
    def types(self) -> list[Any]:
        """Return each event's ``type``."""
        return self.fields.types

    @property
    def datas(self) -> list[dict[str, Any]]:
        """Return each event's ``data`` object ({} when it has none)."""
        return self.fields.datas

    def indices_of(self, kinds: frozenset[str]) -> list[int]:
        """Return the positions of the events whose type is in ``kinds``, in log order."""
        wanted = [code for code, name in enumerate(self._names) if name in kinds]
        return np.flatnonzero(np.isin(self._codes, wanted)).tolist()


def analysis_fields(log: SessionLog, analysis: Analysis) -> EventFields:
    """Return the envelope columns of ``analysis.events``.

    When the analysis starts with the whole recorded log (always under ``recorded``;
    under the other policies unless results were inserted into closed steps) the
    log's columns are reused and only the appended events are visited.
    """
    recorded, events = log.events, analysis.events
    n = len(recorded)
    keeps_log = (
        len(events) >= n
        and all(analysis.recorded[:n])
        and (n == 0 or events[n - 1] is recorded[n - 1])
    )
    if not keeps_log:
        return EventFields.of(events)
    if len(events) == n:
        return log.event_fields()
    return log.event_fields() + EventFields.of(events[n:], start=n)
