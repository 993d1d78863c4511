"""Incremental tracker of the open turn, open step and unanswered tool calls (format §9.1)."""

from __future__ import annotations

from dataclasses import dataclass

from ledgerviz.recovery.events import Event, data_of, result_call_id, tool_call_blocks


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call requested by an assistant message and not yet answered."""

    call_id: str
    turn: int | None
    step: int | None
    call_seq: int | None
    name: str | None
    requested_seq: int


class PendingCalls:
    """Follows committed events one at a time, keeping only what closing the tail needs.

    ``pending`` maps call id -> :class:`PendingCall` in request order. The rules are
    exactly the runtime's crash-repair scan: turn/start, turn/end and step/end clear
    it; step/start does not; any tool/result removes its call.
    """

    __slots__ = ("_count", "last_seq", "last_time", "open_step", "open_turn", "pending")

    def __init__(self) -> None:
        self.open_turn: int | None = None
        self.open_step: int | None = None
        self.pending: dict[str, PendingCall] = {}
        self.last_seq: int | None = None
        self.last_time: int | None = None
        self._count = 0

    def observe(self, event: Event, seq: int | None = None) -> None:
        """Apply one committed event; ``seq`` defaults to its ``seq`` or its position."""
        if seq is None:
            seq = event.get("seq", self._count)
        self._count += 1
        self.last_seq = seq
        self.last_time = event.get("time")
        kind = event.get("type")
        if kind == "tool/result":
            call_id = result_call_id(event)
            if call_id is not None:
                self.pending.pop(call_id, None)
        elif kind == "tool/call":
            data = data_of(event)
            call = self.pending.get(data.get("callId"))  # type: ignore[arg-type]
            if call is not None:
                self.pending[call.call_id] = PendingCall(
                    call.call_id, call.turn, call.step, seq, call.name, call.requested_seq
                )
        elif kind == "assistant/message":
            data = data_of(event)
            for block in tool_call_blocks(event):
                call_id = block.get("id")
                self.pending[call_id] = PendingCall(
                    call_id, data.get("turn"), data.get("step"), None, block.get("name"), seq
                )
        elif kind == "step/start":
            self.open_step = data_of(event).get("step")
        elif kind == "step/end":
            self.pending.clear()
            self.open_step = None
        elif kind == "turn/start":
            self.open_turn = data_of(event).get("turn")
            self.open_step = None
            self.pending.clear()
        elif kind == "turn/end":
            self.open_turn = None
            self.open_step = None
            self.pending.clear()
