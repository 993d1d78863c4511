"""Crash-tail closers and live failed-step recovery: two callers of one closing routine."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ledgerviz.recovery.events import Event, Generation
from ledgerviz.recovery.results import Cause, close_open_turn
from ledgerviz.recovery.tracker import PendingCalls

_TURN_BOUNDARIES = frozenset({"turn/start", "turn/end"})


def track(events: Iterable[Event]) -> PendingCalls:
    """Return a tracker that has observed every event in order.

    Only the events from the last turn/start or turn/end on are read: that event resets
    everything the tracker keeps but the last seq and time, so the state is the same.
    """
    log = events if isinstance(events, Sequence) else list(events)
    start = next((i for i in range(len(log) - 1, -1, -1)
                  if log[i].get("type") in _TURN_BOUNDARIES), 0)
    tracker = PendingCalls()
    for position in range(start, len(log)):
        tracker.observe(log[position], log[position].get("seq", position))
    return tracker


def crash_closers(
    events: Iterable[Event], *, generation: Generation = "v4", cause: Cause = "interrupted"
) -> list[Event]:
    """Return the new events the runtime appends to close a log whose last turn is open.

    Format §9.1: results for the open step's unanswered calls, step/end, turn/end
    ``{"kind": cause}``; seqs continue after the last event, times copy its time.
    """
    return tail_closers(track(events), generation=generation, cause=cause)


def tail_closers(
    tracker: PendingCalls, *, generation: Generation, cause: Cause = "interrupted"
) -> list[Event]:
    """Return the crash closers for the log the tracker has observed (see crash_closers)."""
    if tracker.last_seq is None:
        return []
    return close_open_turn(
        tracker,
        next_seq=tracker.last_seq + 1,
        time=tracker.last_time,
        reason={"kind": cause},
        generation=generation,
        cause=cause,
    )


def failed_step_closers(
    tracker: PendingCalls,
    failure: dict[str, Any],
    *,
    next_seq: int,
    time: int | None,
    generation: Generation = "v4",
) -> list[Event]:
    """Return the events a runtime appends live when the current step fails.

    Format §10: ``interrupted`` results for the step's unanswered calls in call order,
    step/end, then turn/end whose reason is ``failure`` (e.g. ``{"kind": "error", ...}``).
    """
    return close_open_turn(
        tracker, next_seq=next_seq, time=time, reason=failure, generation=generation
    )
