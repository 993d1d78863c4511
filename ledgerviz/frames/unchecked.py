"""What to say when the frames of sessions no reader checked cannot be built: the first
event whose shape a reader would have refused or left out of the frames."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.checks import check_events
from ledgerviz.ledger.diagnostics import DiagnosticLog

SHAPE_KINDS = frozenset({"invalid_event", "unusual_payload"})
"""The diagnostics of an event whose shape keeps it out of a loaded session's frames."""


def unchecked_event(logs: Iterable[SessionLog], error: Exception) -> str | None:
    """Return what to say of frames that ``error`` stopped: the first event of ``logs``
    that the reader's check finds of a wrong shape, named by session, index and seq; None
    when every event passes (the error is no event's doing)."""
    for log in logs:
        found = DiagnosticLog(log.path, strict=False)
        check_events(list(log.events), 0, log.version, found)
        problem = next((d for d in found.items if d.kind in SHAPE_KINDS), None)
        if problem is not None:
            event: Any = log.events[problem.line]
            seq = event.get("seq") if isinstance(event, dict) else None
            return (f"cannot build the frames: session {log.key!r}, event {problem.line} "
                    f"(seq {seq!r}): {problem.message} [{error}]; the frames read events "
                    "as a ledger reader checked them")
    return None
