"""What to say when the frames of sessions no reader checked cannot be built: the first
event whose shape a reader would have refused or left out of the frames."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.checks import check_events
from ledgerviz.ledger.diagnostics import Diagnostic, DiagnosticLog
from ledgerviz.ledger.table import int_array
from ledgerviz.recovery.vocab import MISSING

SHAPE_KINDS = frozenset({"invalid_event", "unusual_payload"})
"""The diagnostics of an event whose shape keeps it out of a loaded session's frames."""


def unchecked_event(logs: Iterable[SessionLog], error: Exception) -> str | None:
    """Return what to say of frames that ``error`` stopped: the first event of ``logs``
    that the reader's check finds of a wrong shape, named by session, index and seq; None
    when every event passes (the error is no event's doing)."""
    for log in logs:
        problem = next((d for d in _checked(log) if d.kind in SHAPE_KINDS), None)
        if problem is not None:
            return _named(log, problem.line, f"{problem.message} [{error}]")
    return None


def unreadable_seq(logs: Iterable[SessionLog]) -> str:
    """Return what to say of frames of ``logs`` whose recorded events hold a seq no frame
    can (not an integer of 64 bits, read as missing): the first such event, named by
    session, index and seq, with what the reader's check says of it (it refuses such a
    seq, or reads an integral float as its integer)."""
    for log in logs:
        index = next((i for i, event in enumerate(log.events)
                      if _tabled_as_missing(event.get("seq", i))), None)
        if index is not None:
            said = next((d.message for d in _checked(log) if d.line == index),
                        "'seq' is no integer")
            return _named(log, index, said)
    return "a recorded event's seq is no integer"


def _tabled_as_missing(value: Any) -> bool:
    """Whether an integer column of the event table reads ``value`` as missing."""
    return int_array([value])[0] == MISSING


def _checked(log: SessionLog) -> list[Diagnostic]:
    """Return what the reader's check says of ``log``'s events, each at its event's index
    (of copies: the check rewrites a field it reads as another value in place)."""
    found = DiagnosticLog(log.path, strict=False)
    check_events(copy.deepcopy(list(log.events)), 0, log.version, found)  # it reads 6.0 as 6
    return found.items


def _named(log: SessionLog, index: int, said: str) -> str:
    """Return the message naming event ``index`` of ``log`` and what is wrong with it."""
    event: Any = log.events[index]
    seq = event.get("seq") if isinstance(event, dict) else None
    return (f"cannot build the frames: session {log.key!r}, event {index} (seq {seq!r}): "
            f"{said}; the frames read events as a ledger reader checked them")
