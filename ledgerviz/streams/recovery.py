"""The recovery facts of a ledger read as a stream: call statuses, fork points, pairing.

``StreamedRecovery`` takes the facts a reader gives per block (``ledger.typed_stream.Fact``,
from the typed decoder or, by :func:`event_facts`, from the dicts of a block checked the
usual way) and follows the recovery scan (``recovery.analyze``) for the three policies:

- each call's status, as the ``calls`` frame gives it, and the unanswered calls;
- the fork policy's fork points: the assistant message of the first dispatched call left
  without a genuine result, applied (its suffix abandoned) at the next message the human
  types in a later turn;
- whether each policy's next request is valid for each provider: the model context
  (``recovery.context``) is read message by message into the providers' pairing rules
  (``streams.pairing.PairingState``: whether a rule broke), without being held.

What is kept: the calls not answered yet, a pairing state per such call's message (the
fork policy goes back to it when the call becomes a fork point), and the fork points.
Memory grows with those, not with the events.

A ledger whose surface is edited (``surface/rewind``, ``surface/restore``, a replace op)
is refolded by the scan from any earlier node; that needs the surface held, so its fork
points and pairing are not computed here (``edited`` says where the first edit is).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ledgerviz.ledger.typed_stream import Fact, message_facts
from ledgerviz.recovery.analysis import POLICIES, CallStatus, Policy
from ledgerviz.recovery.analyze import call_status
from ledgerviz.recovery.context import context_message
from ledgerviz.recovery.events import Event, Generation, data_of, is_user_typed
from ledgerviz.recovery.pairing_memo import pairing_shape
from ledgerviz.recovery.payload import payload_result_facts, payload_tool_call_blocks
from ledgerviz.recovery.providers import Provider
from ledgerviz.recovery.results import synthetic_result
from ledgerviz.recovery.runtime_values import call_key
from ledgerviz.recovery.tracker import PendingCall
from ledgerviz.recovery.vocab import OPEN_STATUSES, UNKNOWN_CODE
from ledgerviz.streams.pairing import PairingState

_CLOSING = frozenset({"step/end", "turn/end"})
_EDITS = frozenset({"surface/rewind", "surface/restore"})


def event_facts(types: Sequence[Any], seqs: Sequence[Any], times: Sequence[Any],
                datas: Sequence[dict[str, Any]], ops: Sequence[Any],
                lines: Sequence[int]) -> list[Fact]:
    """Return the facts of a run of events given as the reader's columns (what the typed
    decoder gives without the dicts, see ``ledger.typed_stream.Fact``)."""
    facts: list[Fact] = []
    add = facts.append
    for kind, seq, time, data, op, line in zip(types, seqs, times, datas, ops, lines,
                                               strict=True):
        calls, place = _NO_CALLS, None
        if kind == "assistant/message":
            calls = [(block.get("id"), block.get("name"))
                     for block in payload_tool_call_blocks(data)]
            place = (data.get("turn"), data.get("step"))
        elif kind == "tool/call":
            add(("dispatch", data.get("callId"), seq, None))
        elif kind == "tool/result":
            call_id, code, is_error, _ = payload_result_facts(data)
            in_context = op == "append" and context_message(kind, data, seq) is not None
            add(("result" if in_context else "answer", call_id, code, is_error))
            if in_context:
                continue  # its context message is the "result" fact's
        elif kind == "user/message":
            add(("user", is_user_typed({"data": data}), None, None))
        elif kind == "turn/start":
            add(("turn", data.get("turn"), seq, time))
        elif kind in _CLOSING:
            add(("close", kind, seq, time))
        edit = kind in _EDITS or op.__class__ is dict
        item = context_message(kind, data, seq) if op == "append" and not edit else None
        facts.extend(message_facts(seq, place, calls, None if item is None
                                   else pairing_shape(item)))
        if edit:
            add(("edit", line, None, None))
    return facts


_NO_CALLS: list[tuple[Any, Any]] = []


class _Call:
    """A requested call not settled yet."""

    __slots__ = ("dispatched", "id", "mark", "message", "number", "place", "seq")

    def __init__(self, call_id: Any, number: int, seq: Any, place: tuple[Any, Any, Any],
                 message: int) -> None:
        self.id = call_id
        self.number = number
        self.seq = seq
        self.place = place
        """The call's turn, step and tool name."""
        self.message = message
        """The position its assistant message has (or would have) in the context."""
        self.dispatched: Any = None
        """The seq of its last tool/call (None: not dispatched)."""
        self.mark: tuple[Any, ...] | None = None
        """The fork policy's pairing state before its message."""


class StreamedRecovery:
    """Follows a session's facts in log order (see the module's docstring)."""

    def __init__(self, generation: Generation) -> None:
        self.generation = generation
        self.counts: Counter[CallStatus] = Counter()
        self.fork_points: list[int] = []
        self.edited: int | None = None
        """The file line of the first surface edit (None: the surface is appended only)."""
        self._unanswered: list[tuple[int, Any, CallStatus]] = []
        self._requests = 0
        self._open: dict[Any, _Call] = {}  # call key -> the latest request, unsettled
        self._step: dict[Any, _Call] = {}  # call key -> unanswered call of the open step
        self._marking: list[_Call] = []  # requested by the message whose context is next
        self._messages = 0  # context messages so far (of the recorded policy)
        self._open_turn: Any = None
        self._fork: _Call | None = None  # the pending fork point's call
        self._hidden: list[tuple[int, float]] = []  # abandoned message positions
        shared = PairingState()
        self._scans: dict[Policy, PairingState] = dict.fromkeys(POLICIES, shared)
        self._reading = [shared]  # the distinct states that read the next message

    def observe(self, facts: list[Fact]) -> None:
        """Take the facts of a run of events, in log order."""
        reading, marking = self._reading, self._marking
        for what, first, second, third in facts:
            if what == "close":
                if self._step:
                    self._close_step(first, second, third)
                    reading = self._reading
                if first == "turn/end":
                    self._open_turn = None
            elif what == "said":
                if marking:
                    self._mark(marking)
                    reading = self._reading
                self._messages += 1
                for scans in reading:
                    scans.read_text(first, second)
            elif what == "result":
                if marking:
                    self._mark(marking)
                self._answer(first, second, third)
                reading = self._reading
                for scans in reading:
                    scans.read_result(first)
                self._messages += 1
            elif what == "dispatch":
                call = self._open.get(first if first.__class__ is str else call_key(first))
                if call is not None:
                    call.dispatched = second
            elif what == "calls":
                turn, step = second
                for call_id, name in third:
                    self._request(call_id, first, (turn, step, name))
                if marking:  # the calls just requested, when no fork is pending
                    self._mark(marking)
                    reading = self._reading
                self._messages += 1
                call_ids = [call_id for call_id, _ in third]
                for scans in reading:
                    scans.read_calls(call_ids)
            elif what == "turn":
                if self._step:
                    self._close_step("turn/start", second, third)
                    reading = self._reading
                self._open_turn = first
            elif what == "user":
                if first and self._fork is not None and self._open_turn != self._fork.place[0]:
                    self._apply_fork(self._messages)
                    reading = self._reading
            elif what == "answer":
                self._answer(first, second, third)
                reading = self._reading
            elif what == "asked":
                if marking:
                    self._mark(marking)
                    reading = self._reading
                self._messages += 1
                for scans in reading:
                    scans.read_calls(first)
            elif what == "request":
                self._request(first, second, third)
            elif self.edited is None:
                self.edited = first

    def _mark(self, calls: list[_Call]) -> None:
        """Keep the fork policy's pairing state before the message that requested ``calls``
        (emptied: they are marked)."""
        mark = self._scans["fork"].mark()
        for call in calls:
            call.mark = mark
        calls.clear()

    def _request(self, call_id: Any, seq: Any, place: tuple[Any, Any, Any]) -> None:
        key = call_id if call_id.__class__ is str else call_key(call_id)
        shadowed = self._open.get(key)
        if shadowed is not None:
            self._settle(shadowed, call_status(False, shadowed.dispatched is not None, None,
                                               False))
        call = _Call(call_id, self._requests, seq, place, self._messages)
        self._requests += 1
        self._open[key] = self._step[key] = call
        if self._fork is None:  # a call requested while a fork is pending is abandoned
            self._marking.append(call)

    def _answer(self, call_id: Any, code: Any, is_error: bool) -> None:
        key = call_id if call_id.__class__ is str else call_key(call_id)
        self._step.pop(key, None)
        call = self._open.pop(key, None)
        if call is None:
            return
        if code is None and not is_error:  # call_status's "ok", the common case, told first
            self.counts["ok"] += 1
            return
        self._settle(call, call_status(True, call.dispatched is not None, code, is_error))
        if code == UNKNOWN_CODE:
            self._fork_at(call)

    def _settle(self, call: _Call, status: CallStatus) -> None:
        self.counts[status] += 1
        if status in OPEN_STATUSES:
            self._unanswered.append((call.number, call.id, status))

    def _close_step(self, kind: str, seq: Any, time: Any) -> None:
        """A step/end, turn/start or turn/end closes the open step's unanswered calls
        (``analyze._Scan._close_step``)."""
        unanswered = list(self._step.values())
        self._step.clear()
        for call in unanswered:
            if call.dispatched is not None:
                self._fork_at(call)
        if kind == "step/end":
            self._synthesize(unanswered, seq, time)

    def _synthesize(self, unanswered: list[_Call], seq: Any, time: Any) -> None:
        """Read the synthetic results a repairing policy gives a closed step's calls."""
        for policy in ("synthesize", "fork"):
            calls = unanswered if policy == "synthesize" else [
                call for call in unanswered if call.dispatched is None and self._fork is None
                and not self._is_hidden(call)]
            results = [synthetic_result(
                PendingCall(call.id, call.place[0], call.place[1], call.dispatched,
                            call.place[2], call.seq),
                turn=self._open_turn, id_seq=(seq or 0) + offset, seq=None, time=time,
                generation=self.generation) for offset, call in enumerate(calls)]
            if results:
                self._read_apart(policy, results)

    def _read_apart(self, policy: Policy, events: list[Event]) -> None:
        """Read events only ``policy`` adds to its context (its scans made its own)."""
        scans = self._own(policy)
        for event in events:
            if event.get("surfaceOp") != "append":
                continue
            item = context_message(event.get("type"), data_of(event), event.get("seq"))
            if item is not None:
                scans.read((item.event_type, item.message.get("role")), pairing_shape(item))

    def _own(self, policy: Policy, scans: PairingState | None = None) -> PairingState:
        """Return ``policy``'s scans, no longer shared with another policy (``scans``:
        replace them)."""
        held = self._scans[policy]
        if scans is None:
            shared = any(other is held for name, other in self._scans.items() if name != policy)
            if not shared:
                return held
            scans = PairingState.restored(held.mark())
        self._scans[policy] = scans
        self._reading = list({id(s): s for name, s in self._scans.items()
                              if name != "fork" or self._fork is None}.values())
        return scans

    def _is_hidden(self, call: _Call) -> bool:
        return any(start <= call.message < end for start, end in self._hidden)

    def _fork_at(self, call: _Call) -> None:
        """Make the call's message the pending fork point (``_Scan._fork_at``): the fork
        policy's context is back at its state before that message and reads nothing
        until the fork is applied."""
        if self._fork is not None or self._is_hidden(call):
            return
        # no mark yet: no context message followed the call's, which gives none
        mark = call.mark if call.mark is not None else self._scans["fork"].mark()
        self._fork = call
        self.fork_points.append(call.seq)
        self._own("fork", PairingState.restored(mark))

    def _apply_fork(self, end: float) -> None:
        """Abandon the messages from the pending fork point to ``end``."""
        assert self._fork is not None
        self._hidden.append((self._fork.message, end))
        self._fork = None
        self._own("fork", self._scans["fork"])

    def finish(self, closers: list[Event]) -> dict[Policy, dict[Provider, bool]]:
        """Settle the calls still open after the tail ``closers`` the repairing policies
        append (the fork policy only without a pending fork); return each policy's
        validity per provider."""
        for call in self._step.values():
            if call.dispatched is not None:
                self._fork_at(call)
        if closers:
            self._read_apart("synthesize", closers)
            if self._fork is None:
                self._read_apart("fork", closers)
        if self._fork is not None:
            self._apply_fork(float("inf"))
        checked = {id(scans): scans.valid() for scans in {id(s): s for s in
                                                          self._scans.values()}.values()}
        return {policy: checked[id(scans)] for policy, scans in self._scans.items()}

    def unanswered(self) -> list[tuple[Any, CallStatus]]:
        """Settle the calls still open; return every unanswered call, in request order."""
        for call in self._open.values():
            self._settle(call, call_status(False, call.dispatched is not None, None, False))
        self._open.clear()
        return [(call_id, status) for _, call_id, status in sorted(self._unanswered)]
