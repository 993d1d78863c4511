"""Construction of the events recovery appends: synthetic tool results and turn closers."""

from __future__ import annotations

import copy
from typing import Any, Literal

from ledgerviz.recovery.events import Event, Generation
from ledgerviz.recovery.runtime_values import UNDEFINED, js_string
from ledgerviz.recovery.tracker import PendingCall, PendingCalls
from ledgerviz.recovery.vocab import NOT_STARTED_CODE, UNKNOWN_CODE

Cause = Literal["interrupted", "forked"]

RETRY_GUIDANCE = (
    "Decide whether to retry from the tool semantics: retry only if the operation is "
    "read-only or idempotent; if it may have side effects, first verify external state "
    "or ask the user. Do not retry blindly."
)
INTERRUPTED_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably "
    "recorded. Its outcome is unknown. " + RETRY_GUIDANCE
)
INTERRUPTED_NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. "
    "Retry it if it is still needed."
)
FORKED_UNKNOWN_TEXT = (
    "The history inherited by this branch records this tool call starting but does not "
    "include its result. The parent session may have completed it after the fork point. "
    + RETRY_GUIDANCE
)
FORKED_NOT_STARTED_TEXT = (
    "The history inherited by this branch has no record of this tool call starting. "
    "The parent session may have executed it after the fork point. " + RETRY_GUIDANCE
)

RESULT_TEXTS: dict[tuple[Cause, bool], str] = {
    ("interrupted", True): INTERRUPTED_UNKNOWN_TEXT,
    ("interrupted", False): INTERRUPTED_NOT_STARTED_TEXT,
    ("forked", True): FORKED_UNKNOWN_TEXT,
    ("forked", False): FORKED_NOT_STARTED_TEXT,
}
UNKNOWN_ERROR = {"name": "ToolOutcomeUnknownError", "code": UNKNOWN_CODE}
NOT_STARTED_ERROR = {"name": "ToolNotStartedError", "code": NOT_STARTED_CODE}


def new_event(kind: str, seq: int | None, time: int | None, data: dict[str, Any]) -> Event:
    """Return a new event dict ``type, seq, time, data``; a None seq or time is left out."""
    event: Event = {"type": kind}
    if seq is not None:
        event["seq"] = seq
    if time is not None:
        event["time"] = time
    event["data"] = data
    return event


def synthetic_result(
    call: PendingCall,
    *,
    turn: int | None,
    id_seq: int,
    seq: int | None,
    time: int | None,
    generation: Generation = "v4",
    cause: Cause = "interrupted",
) -> Event:
    """Return a new synthetic error tool/result for an unanswered call.

    TOOL_OUTCOME_UNKNOWN citing the tool/call when the call was dispatched, else
    TOOL_NOT_STARTED. The id ends with ``id_seq``; ``seq``/``time`` None leave the
    key out (events never logged, or a log without times).
    """
    started = call.call_seq is not None
    prefix = cause if generation == "v4" else "interrupted"
    message_id = f"{prefix}-tool-result-{js_string(call.call_id)}-{id_seq}"
    text_block = {"type": "text", "text": RESULT_TEXTS[(cause, started)]}
    # a call without id: JSON.stringify leaves the keys holding undefined out
    named = {} if call.call_id is UNDEFINED else {"toolCallId": call.call_id}
    source = {"kind": "tool"} if call.call_id is UNDEFINED else {
        "kind": "tool", "callId": call.call_id}
    if generation == "v4":
        message: dict[str, Any] = {
            "id": message_id,
            "role": "tool",
            **named,
            "isError": True,
            "source": source,
            "content": [text_block],
        }
    else:
        message = {
            "id": message_id,
            "role": "user",
            "source": source,
            "content": [
                {
                    "type": "tool-result",
                    **named,
                    "isError": True,
                    "content": [text_block],
                }
            ],
        }
    error = dict(UNKNOWN_ERROR if started else NOT_STARTED_ERROR)
    data = {"turn": turn, "step": call.step, "message": message, "error": error}
    event = new_event("tool/result", seq, time, data)
    event["surfaceOp"] = "append"
    if started:
        event["sourceEventSeqs"] = [call.call_seq]
    return event


def step_end(turn: int | None, step: int | None, seq: int | None, time: int | None) -> Event:
    """Return a new step/end event."""
    return new_event("step/end", seq, time, {"turn": turn, "step": step})


def close_open_turn(
    tracker: PendingCalls,
    *,
    next_seq: int,
    time: int | None,
    reason: dict[str, Any],
    generation: Generation = "v4",
    cause: Cause = "interrupted",
    with_results: bool = True,
) -> list[Event]:
    """Return the events that close the tracker's open turn, seqs from ``next_seq``.

    One synthetic result per pending call (request order) unless ``with_results`` is
    False, then step/end if a step is open, then turn/end with ``reason``. [] when no
    turn is open.
    """
    turn = tracker.open_turn
    if turn is None:
        return []
    closers: list[Event] = []
    seq = next_seq
    if with_results:
        for call in tracker.pending.values():
            closers.append(
                synthetic_result(
                    call,
                    turn=turn,
                    id_seq=seq,
                    seq=seq,
                    time=time,
                    generation=generation,
                    cause=cause,
                )
            )
            seq += 1
    if tracker.open_step is not None:
        closers.append(step_end(turn, tracker.open_step, seq, time))
        seq += 1
    closers.append(
        new_event("turn/end", seq, time, {"turn": turn, "reason": copy.deepcopy(reason)})
    )
    return closers
