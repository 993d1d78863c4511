"""A session's calls found again on a second read of its events, after ``analyze_blocks``.

The scan's rules for a call (``analyze._Scan.run``): a message's tool-call blocks make
calls, each filed by the ``call_key`` of its id (a later call with the same key takes its
place); a ``tool/call`` naming a key records its seq on the call filed there until that
call is answered; the first ``tool/result`` naming it answers it. A call answered before
its step closes is settled by events read in order, so :class:`CallFollower` finds its
facts again holding only the calls of the open step; the others, and every call's branch,
come from the first read (``SessionFacts``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Hashable
from typing import Any

from ledgerviz.recovery.analysis import Branch, CallFacts
from ledgerviz.recovery.analyze import (
    _CODE,
    _DISPATCHED,
    _IS_ERROR,
    _RESULT,
    _RESULT_SEQ,
    _SEQ,
    _TURN,
    _facts,
)
from ledgerviz.recovery.blocks import SessionFacts
from ledgerviz.recovery.payload import payload_result_facts, payload_tool_call_blocks
from ledgerviz.recovery.runtime_values import UNDEFINED, call_key


class FollowedCall:
    """One requested call as the second read knows it: ``final`` once nothing later in
    the log can change its facts; ``times`` holds the ``time`` of its requesting message,
    its ``tool/call`` and its ``tool/result`` (None until read)."""

    __slots__ = ("branch", "call", "final", "known", "times")

    def __init__(self, call: list[Any], branch: Branch, known: CallFacts | None,
                 requested_time: Any) -> None:
        self.call = call
        """The call in the scan's layout (``analyze._ID`` ...)."""
        self.branch = branch
        self.known = known
        """Its facts from the first read (a call unanswered when its step closed)."""
        self.final = known is not None
        self.times: list[Any] = [requested_time, None, None]

    @property
    def turn(self) -> Any:
        """Return the requesting message's ``data.turn``."""
        return self.call[_TURN]

    @property
    def requested_seq(self) -> Any:
        """Return the requesting message's seq."""
        return self.call[_SEQ]

    def facts(self) -> CallFacts:
        """Return the call's facts (``arguments``: None)."""
        return self.known or _facts(self.call, self.branch)


class CallFollower:
    """Finds a session's calls again, event by event in log order (the recorded events,
    then the closers), from what :func:`~ledgerviz.recovery.blocks.analyze_blocks` found.

    ``calls`` gets each call as its message is read; the reader takes them from the
    front. Only the calls not yet answered in the open step are held by id."""

    def __init__(self, facts: SessionFacts) -> None:
        self.calls: deque[FollowedCall] = deque()
        self._unresolved = dict(facts.unresolved)
        self._runs = facts.branches
        self._starts = [first for first, _ in facts.branches]
        self._ordinal = -1
        self._open: dict[Hashable, FollowedCall] = {}
        self._awaited: dict[int, list[tuple[FollowedCall, int]]] = {}
        """The calls known from the first read by the seqs of the tool events they cite."""

    def follow(self, kind: Any, seq: Any, data: dict[str, Any], time: Any) -> None:
        """Take one event: its ``type``, seq, ``data`` and ``time``."""
        if kind == "tool/result":
            facts = payload_result_facts(data)
            followed = self._open.pop(call_key(facts[0]), None)
            if followed is not None:
                call = followed.call
                call[_RESULT], call[_RESULT_SEQ] = True, seq
                call[_CODE], call[_IS_ERROR] = facts[1], facts[2]
                followed.times[2] = time
                followed.final = True
        elif kind == "tool/call":
            followed = self._open.get(call_key(data.get("callId", UNDEFINED)))
            if followed is not None:
                followed.call[_DISPATCHED] = seq
                followed.times[1] = time
        elif kind == "assistant/message":
            self._request(seq, data, time)
            return
        else:
            return
        for awaiting, slot in self._awaited.pop(seq, ()) if seq.__class__ is int else ():
            awaiting.times[slot] = time

    def _request(self, seq: Any, data: dict[str, Any], time: Any) -> None:
        """Take the calls a message requests, as the scan makes them."""
        blocks = payload_tool_call_blocks(data)
        if not blocks:
            return
        self._ordinal += 1
        branch = self._runs[bisect_right(self._starts, self._ordinal) - 1][1]
        turn, step = data.get("turn"), data.get("step")
        for block in blocks:
            call_id = block.get("id", UNDEFINED)
            key = call_key(call_id)
            call = [call_id, block.get("name"), None, turn, step, self._ordinal, seq,
                    None, None, None, None, False]
            known = self._unresolved.pop((self._ordinal, key), None)
            followed = FollowedCall(call, branch, known, time)
            replaced = self._open.pop(key, None)
            if replaced is not None:  # no tool event can reach it any more
                replaced.final = True
            if known is None:
                self._open[key] = followed
            else:
                for slot, cited in ((1, known.dispatched_seq), (2, known.result_seq)):
                    if cited.__class__ is int:
                        self._awaited.setdefault(cited, []).append((followed, slot))
            self.calls.append(followed)

    def finish(self) -> None:
        """Mark every call final: the log and its closers are read."""
        for followed in self._open.values():
            followed.final = True
        self._open.clear()
