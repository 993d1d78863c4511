"""The model context a policy projects: the messages of the next model request."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

from ledgerviz.recovery.analysis import Analysis
from ledgerviz.recovery.events import message_of
from ledgerviz.recovery.sequences import first_difference

_SKIPPED_WHEN_EMPTY = frozenset({"system/message", "developer/message", "assistant/message"})


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """One message of the projected context and the event it came from."""

    seq: int | None
    """Seq of the source event; None for a result recovery computed but never logged."""
    event_type: str
    message: dict[str, Any]
    """The message object exactly as recorded (not a copy: do not modify)."""

    @property
    def is_tool_result(self) -> bool:
        """Whether the message answers a tool call (either result form)."""
        return self.event_type == "tool/result"


ProjectionMemo = dict[int, tuple[dict[str, Any], int | None, "ContextMessage | None"]]
"""What each event projected to, by the event's ``id``; each entry keeps its event alive."""


def _projected(event: dict[str, Any], seq: int | None) -> ContextMessage | None:
    """Return the context message of one surface event, or None when it produces none."""
    message = message_of(event)
    if message is None:
        return None
    kind = event.get("type")
    if kind in _SKIPPED_WHEN_EMPTY and not message.get("content"):
        return None
    return ContextMessage(seq, kind, message)


def project_context(analysis: Analysis, memo: ProjectionMemo | None = None
                    ) -> list[ContextMessage]:
    """Return the messages the next model request would contain under the analysis' policy.

    Surface order (§6), active branch only; system, developer and assistant nodes with
    empty content keep their place but produce no message. ``memo`` (kept by the caller)
    remembers each event's message, so projecting many overlapping analyses (cuts of one
    session) reads each event once; :class:`ContextProjector` instead copies what they share.
    """
    events, seqs = analysis.events, analysis.seqs
    if memo is None:
        projected = (_projected(events[key], seqs[key]) for key in analysis.surface)
        return [message for message in projected if message is not None]
    remembered = (_remembered(memo, events[key], seqs[key]) for key in analysis.surface)
    return [message for message in remembered if message is not None]


def _remembered(memo: ProjectionMemo, event: dict[str, Any], seq: int | None
                ) -> ContextMessage | None:
    """Return what ``event`` projects to, from ``memo`` when it holds that event and seq."""
    held = memo.get(id(event))
    if held is None or held[0] is not event or held[1] != seq:
        held = memo[id(event)] = (event, seq, _projected(event, seq))
    return held[2]


class _Projected(NamedTuple):
    """One analysis' surface (each node's event and seq) and the messages it projected."""

    events: list[dict[str, Any]]
    seqs: list[int | None]
    messages: list[ContextMessage]
    positions: array[int]
    """The surface position each message came from."""


class ContextProjector:
    """Projects the contexts of many analyses of one session (its cuts, under any policy).

    An analysis whose surface begins with equal events (and seqs) to the last or the longest
    one projected so far takes their messages and projects only the nodes after them.
    """

    def __init__(self) -> None:
        self._last = self._longest = _Projected([], [], [], array("q"))

    def project(self, analysis: Analysis) -> list[ContextMessage]:
        """Return :func:`project_context` of ``analysis``."""
        events = list(map(analysis.events.__getitem__, analysis.surface))
        seqs = list(map(analysis.seqs.__getitem__, analysis.surface))
        done = (self._last,) if self._last is self._longest else (self._last, self._longest)
        base, shared = max(
            ((projected, min(first_difference(projected.events, events),
                             first_difference(projected.seqs, seqs)))
             for projected in done), key=itemgetter(1))
        kept = bisect_left(base.positions, shared)
        messages, positions = base.messages[:kept], base.positions[:kept]
        for position in range(shared, len(events)):
            message = _projected(events[position], seqs[position])
            if message is not None:
                messages.append(message)
                positions.append(position)
        self._last = _Projected(events, seqs, messages, positions)
        if len(events) >= len(self._longest.events):
            self._longest = self._last
        return list(messages)
