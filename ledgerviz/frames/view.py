"""Per-session columns that several frames share, extracted once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.ledger import SessionLog
from ledgerviz.recovery.analysis import Analysis


@dataclass(frozen=True, slots=True)
class SessionView:
    """One session under one policy with its event types, payloads and times as lists."""

    key: str
    log: SessionLog
    analysis: Analysis
    types: list[Any]
    datas: list[dict[str, Any]]
    times: list[Any]
    _codes: np.ndarray = field(repr=False)
    _names: pd.Index = field(repr=False)

    @classmethod
    def of(cls, key: str, log: SessionLog, analysis: Analysis) -> SessionView:
        """Return the view of one ``(key, log, analysis)`` triple."""
        events = analysis.events
        types = [event.get("type") for event in events]
        codes, names = pd.factorize(pd.Series(types, dtype=object))
        return cls(
            key,
            log,
            analysis,
            types,
            [event.get("data") or {} for event in events],
            [event.get("time") for event in events],
            codes,
            names,
        )

    def indices_of(self, kinds: frozenset[str]) -> list[int]:
        """Return the positions of the events whose type is in ``kinds``, in log order."""
        wanted = [code for code, name in enumerate(self._names) if name in kinds]
        return np.flatnonzero(np.isin(self._codes, wanted)).tolist()
