"""Per-session columns that several frames share, extracted once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

    @classmethod
    def of(cls, key: str, log: SessionLog, analysis: Analysis) -> SessionView:
        """Return the view of one ``(key, log, analysis)`` triple."""
        events = analysis.events
        return cls(
            key,
            log,
            analysis,
            [event.get("type") for event in events],
            [event.get("data") or {} for event in events],
            [event.get("time") for event in events],
        )

    def indices_of(self, kinds: frozenset[str]) -> list[int]:
        """Return the positions of the events whose type is in ``kinds``."""
        return [i for i, kind in enumerate(self.types) if kind in kinds]
