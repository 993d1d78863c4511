"""Incremental tracker of the open turn, open step and unanswered tool calls (format §9.1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ledgerviz.recovery.events import Event, data_of
from ledgerviz.recovery.payload import payload_tool_call_blocks
from ledgerviz.recovery.runtime_values import UNDEFINED, call_key


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call requested by an assistant message and not yet answered."""

    call_id: Any
    """The id as written (a string, unless the ledger is unusual)."""
    turn: int | None
    step: int | None
    call_seq: int | None
    name: str | None
    requested_seq: int


class PendingCalls:
    """Follows committed events one at a time, keeping only what closing the tail needs.

    ``pending`` maps each call's ``call_key`` -> :class:`PendingCall` in request order.
    The rules are exactly the runtime's crash-repair scan: turn/start, turn/end and
    step/end clear it; step/start does not; an assistant message asking again for a
    pending call keeps its place and forgets its dispatch; each tool/call of a pending
    call records its seq (the last one is cited); a tool/result removes the call its
    ``message.source.callId`` names (a second result finds nothing to remove).
    """

    __slots__ = ("_count", "last_seq", "last_time", "open_step", "open_turn", "pending")

    def __init__(self) -> None:
        self.open_turn: int | None = None
        self.open_step: int | None = None
        self.pending: dict[Any, PendingCall] = {}
        self.last_seq: int | None = None
        self.last_time: int | None = None
        self._count = 0

    def observe(self, event: Event, seq: int | None = None) -> None:
        """Apply one committed event; ``seq`` defaults to its ``seq`` or its position."""
        if seq is None:
            seq = event.get("seq", self._count)
        self.observe_fields(event.get("type"), seq, event.get("time"), data_of(event))

    def observe_fields(self, kind: Any, seq: int | None, time: int | None,
                       data: dict[str, Any]) -> None:
        """Apply one committed event given as its ``type``, seq, ``time`` and ``data``
        (``data_of(event)``): what ``observe`` does, for a reader that has these already."""
        self._count += 1
        self.last_seq = seq
        self.last_time = time
        if kind == "tool/result":
            self.pending.pop(call_key(_source_call_id(data)), None)
        elif kind == "tool/call":
            key = call_key(data.get("callId", UNDEFINED))
            call = self.pending.get(key)
            if call is not None:
                self.pending[key] = PendingCall(
                    call.call_id, call.turn, call.step, seq, call.name, call.requested_seq
                )
        elif kind == "assistant/message":
            for block in payload_tool_call_blocks(data):
                call_id = block.get("id", UNDEFINED)
                self.pending[call_key(call_id)] = PendingCall(
                    call_id, data.get("turn"), data.get("step"), None, block.get("name"), seq
                )
        elif kind == "step/start":
            self.open_step = data.get("step")
        elif kind == "step/end":
            self.pending.clear()
            self.open_step = None
        elif kind == "turn/start":
            self.open_turn = data.get("turn")
            self.open_step = None
            self.pending.clear()
        elif kind == "turn/end":
            self.open_turn = None
            self.open_step = None
            self.pending.clear()

    def observe_columns(
        self,
        types: Sequence[Any],
        seqs: Sequence[int | None],
        times: Sequence[int | None],
        datas: Sequence[dict[str, Any]],
    ) -> None:
        """Apply a run of committed events given as parallel columns (as ``observe_fields``).

        Only the events from the run's last turn/start or turn/end on are applied: that
        event resets everything the tracker keeps but the last seq and time, which the
        run's last event sets, so the state is the one observing every event gives.
        """
        start = last_turn_boundary(types)
        self._count += start
        for row in zip(types[start:], seqs[start:], times[start:], datas[start:], strict=True):
            self.observe_fields(*row)


def _source_call_id(data: dict[str, Any]) -> Any:
    """Return ``data.message.source.callId``, the id the runtime removes for a tool/result
    (``_NO_ID`` when it gives none)."""
    message = data.get("message")
    source = message.get("source") if message.__class__ is dict else None
    return source.get("callId", _NO_ID) if source.__class__ is dict else _NO_ID


_NO_ID = object()
"""Stands in for the call id of a result that gives none (``call_key`` files it under a key
of its own, so it answers no call, not even one without id: the loader reads results the
same way)."""


TURN_BOUNDARIES = ("turn/start", "turn/end")
"""The event types after which the tracker's state depends on nothing before them."""


def last_turn_boundary(types: Sequence[Any]) -> int:
    """Return the index of the last turn/start or turn/end in ``types`` (0 when none)."""
    for index in range(len(types) - 1, -1, -1):
        if types[index] in TURN_BOUNDARIES:
            return index
    return 0
