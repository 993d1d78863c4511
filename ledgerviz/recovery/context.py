"""The model context a policy projects: the messages of the next model request."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass
from itertools import islice
from operator import itemgetter
from typing import Any, NamedTuple

from ledgerviz.recovery.analysis import Analysis
from ledgerviz.recovery.events import data_of
from ledgerviz.recovery.payload import message_in
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
    return context_message(event.get("type"), data_of(event), seq)


def context_message(kind: Any, data: dict[str, Any], seq: int | None) -> ContextMessage | None:
    """Return the context message of a surface event of type ``kind`` whose ``data`` payload
    is given (``data_of``), or None when it produces none."""
    message = message_in(kind, data)
    if message is None:
        return None
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
    """One analysis projected (None: none yet), and the messages its surface gave."""

    analysis: Analysis | None
    messages: list[ContextMessage]
    positions: array[int]
    """The surface position each message came from."""

    @property
    def nodes(self) -> int:
        """Return how many nodes the analysis' surface has."""
        return 0 if self.analysis is None else len(self.analysis.surface)


_NOTHING = _Projected(None, [], array("q"))


class ContextProjector:
    """Projects the contexts of many analyses of one session (its cuts, under any policy).

    An analysis whose surface begins with the nodes of one projected before (the last, the
    longest, or one a caller said it shares events with), those nodes holding the same
    events and seqs, takes their messages and projects only the nodes after them.
    """

    def __init__(self) -> None:
        self._last = self._longest = _NOTHING
        self._sources: dict[int, _Projected] = {}
        """Analyses that others were said to share events with, by ``id``."""

    def project(self, analysis: Analysis, shares: tuple[Analysis, int] | None = None
                ) -> list[ContextMessage]:
        """Return :func:`project_context` of ``analysis``.

        ``shares`` is ``(other, n)`` when the caller knows that the first ``n`` events of
        ``analysis`` are those of ``other`` (the same objects, with the same seqs), and that
        it shares no more with any other analysis: the cuts of one scan and the whole
        session, say. ``other`` is projected once, and each such analysis takes its
        messages without comparing events.
        """
        held = (self._last,) if self._last is self._longest else (self._last, self._longest)
        bases: list[tuple[_Projected, int | None]] = [(base, None) for base in held]
        if shares is not None:  # it shares at least as much with no other
            source, count = shares
            if id(source) not in self._sources:
                self._sources[id(source)] = self._projected(source, bases)
            bases = [(self._sources[id(source)], count)]
        self._last = self._projected(analysis, bases)
        if self._last.nodes >= self._longest.nodes:
            self._longest = self._last
        return list(self._last.messages)

    @staticmethod
    def _projected(analysis: Analysis,
                   bases: list[tuple[_Projected, int | None]]) -> _Projected:
        """Return ``analysis`` projected, taking the messages of the nodes it shares with the
        base that shares most (each base with how many first events it is known to share)."""
        base, shared = max(((base, _shared_nodes(base.analysis, analysis, count))
                            for base, count in bases), key=itemgetter(1))
        kept = bisect_left(base.positions, shared)
        messages, positions = base.messages[:kept], base.positions[:kept]
        events, seqs, surface = analysis.events, analysis.seqs, analysis.surface
        for position in range(shared, len(surface)):
            node = surface[position]
            message = _projected(events[node], seqs[node])
            if message is not None:
                messages.append(message)
                positions.append(position)
        return _Projected(analysis, messages, positions)


def _shared_nodes(base: Analysis | None, analysis: Analysis, events: int | None) -> int:
    """Return how many first surface nodes ``analysis`` shares with ``base``: the same nodes,
    holding the same events with the same seqs (``events``: how many first events they are
    known to share; else they are compared)."""
    if base is None:
        return 0
    if events is None:
        events = min(first_difference(base.events, analysis.events),
                     first_difference(base.seqs, analysis.seqs))
    surface = analysis.surface
    nodes = first_difference(base.surface, surface)
    return _first_at_or_past(surface, nodes, events)


def _first_at_or_past(surface: list[int], stop: int, node: int) -> int:
    """Return the first position before ``stop`` whose node is ``node`` or later (else
    ``stop``): found by bisection when the nodes before it rise, as they usually do."""
    at = bisect_left(surface, node, 0, stop)
    if (at == stop or surface[at] >= node) and (not at or max(islice(surface, at)) < node):
        return at
    return next((i for i in range(stop) if surface[i] >= node), stop)
