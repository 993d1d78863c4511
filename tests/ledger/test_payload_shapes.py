"""Payload shapes the reader refuses or accepts, and call pairing on the full-check path.

The reader's fast check refers any event it cannot vouch for (here: a ranged
``sourceEventSeqs``) to the full shape check, which must reach the same verdicts and pair
results with calls the same way. Expected diagnostics are worked out by hand from the
format (§3, §4.4) and the messages the reader documents.
"""

from __future__ import annotations

from typing import Any

import pytest
from ledger_lines import HEADER, assistant_calls, encode, turn_start

from ledgerviz.ledger import read_session

LEFT_OUT = "; the runtime reads this line as it is (left out of the frames)"
"""How an ``unusual_payload`` warning ends: the runtime reads what ledgerviz's frames cannot."""
KEPT = "; the runtime reads this line as it is (kept as the runtime reads it)"
"""How it ends for a call id of another type than string (not an array or object): kept."""


def unusual(line: int, problem: str, ending: str = LEFT_OUT) -> tuple[str, int, str]:
    return ("unusual_payload", line, problem + ending)


def found(events: list[dict[str, Any]]) -> list[tuple[str, int, str]]:
    log = read_session("x.jsonl", encode([HEADER, *events]))
    return [(d.kind, d.line, d.message) for d in log.diagnostics]


def tool_call(data: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool/call", "seq": 2, "time": 1002, "data": {"turn": 1, "step": 1, **data}}


@pytest.mark.parametrize(("data", "problem", "ending"), [
    ({"name": "ls"}, "'data.callId' must be a string, not null", KEPT),
    ({"callId": 5, "name": "ls"}, "'data.callId' must be a string, not number", KEPT),
    ({"callId": [5], "name": "ls"}, "'data.callId' must be a string, not array", LEFT_OUT),
    ({"callId": "A", "name": 3, "arguments": "{}"}, "'data.name' must be string, not number",
     LEFT_OUT),
    ({"callId": "A", "name": "ls", "arguments": {}}, "'data.arguments' must be string, not object",
     LEFT_OUT),
    ({"callId": "A"}, None, None),
    ({"callId": "A", "name": None, "arguments": None}, None, None),
])
def test_tool_call_payloads(data: dict[str, Any], problem: str | None, ending: str) -> None:
    events = [turn_start(0), assistant_calls(1, "A"), tool_call(data)]
    expected = [] if problem is None else [unusual(4, f"tool/call: {problem}", ending)]
    assert found(events) == expected


@pytest.mark.parametrize(("route", "problem"), [
    ({"provider": {"p": 1}, "model": "m"}, "'data.provider' must be string, not object"),
    ({"provider": "p", "model": 4}, "'data.model' must be string, not number"),
    ({"provider": "p", "model": "m"}, None),
    ({}, None),
])
def test_request_context_payloads(route: dict[str, Any], problem: str | None) -> None:
    context = {"type": "request/context", "seq": 1, "time": 1001,
               "data": {"turn": 1, "step": 1, **route}}
    expected = [] if problem is None else [unusual(3, f"request/context: {problem}")]
    assert found([turn_start(0), context]) == expected


@pytest.mark.parametrize(("event", "problem"), [
    ({"type": "turn/end", "seq": 1, "time": 1001, "data": {"turn": 1, "reason": "done"}},
     "turn/end: 'data.reason' must be an object, not string"),
    ({"type": "turn/end", "seq": 1, "time": 1001, "data": {"turn": 1, "reason": {"kind": 2}}},
     "turn/end: 'data.reason.kind' must be a string, not number"),
    ({"type": "user/message", "seq": 1, "time": 1001, "surfaceOp": "append",
      "data": {"id": "u1", "role": 5, "content": []}},
     "user/message: 'data.role' must be string, not number"),
    ({"type": "user/message", "seq": 1, "time": 1001, "surfaceOp": "append",
      "data": {"id": "u1", "role": "user", "content": [{"type": "tool-call", "id": "A"}, 3]}},
     "user/message: 'data.content' holds a number, not a block object"),
])
def test_turn_end_and_user_message_payloads(event: dict[str, Any], problem: str) -> None:
    assert found([turn_start(0), event]) == [unusual(3, problem)]


@pytest.mark.parametrize(("message", "problem", "ending"), [
    ({"role": 5, "source": {"kind": "tool", "callId": "A"}},
     "'data.message.role' must be string, not number", LEFT_OUT),
    ({"role": "tool", "toolCallId": "A", "source": {"kind": "tool", "callId": 5}},
     "'data.message.source.callId' must be string, not number", KEPT),
    ({"role": "tool", "toolCallId": ["A"], "source": {"kind": "tool", "callId": "A"}},
     "'data.message.toolCallId' must be string, not array", LEFT_OUT),
])
def test_tool_result_payloads(message: dict[str, Any], problem: str, ending: str) -> None:
    bad = {"type": "tool/result", "seq": 2, "time": 1002, "surfaceOp": "append",
           "data": {"turn": 1, "step": 1, "message": {"id": "r2", **message}}}
    events = [turn_start(0), assistant_calls(1, "A"), bad]
    assert found(events) == [unusual(4, f"tool/result: {problem}", ending)]


@pytest.mark.parametrize(("seqs", "problem"), [
    ([[0]], "'sourceEventSeqs' ranges must be [first, last] pairs"),
    ([0, "1"], "'sourceEventSeqs[]' must be an integer, not string"),
])
def test_source_seqs_problems_word_for_word(seqs: list, problem: str) -> None:
    asks = {**assistant_calls(1, "A"), "sourceEventSeqs": seqs}
    assert found([turn_start(0), asks]) == [("invalid_event", 3, f"assistant/message: {problem}")]


def result(seq: int, message: dict[str, Any] | None) -> dict[str, Any]:
    data: dict[str, Any] = {"turn": 1, "step": 1}
    if message is not None:
        data["message"] = {"id": f"r{seq}", **message}
    return {"type": "tool/result", "seq": seq, "time": 1000 + seq, "data": data,
            "surfaceOp": "append"}


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def pairing_turn() -> list[dict[str, Any]]:
    """Calls A and B requested (seq 1; a text block's own ``id`` C is no call), then one
    result per way of naming (or not naming) a call (seqs 2-8, file lines 4-10), then an
    assistant message without a message object (seq 9)."""
    request = assistant_calls(1, "A", "B")
    request["data"]["message"]["content"].insert(0, {**text("t"), "id": "C"})
    return [
        turn_start(0),
        request,
        # source.callId wins over toolCallId
        result(2, {"role": "tool", "toolCallId": "Z", "source": {"kind": "tool", "callId": "A"},
                   "content": [text("a")]}),
        result(3, {"role": "tool", "toolCallId": "B", "content": [text("b")]}),
        # the v3 wrapper block names the call
        result(4, {"role": "user", "content": [{"type": "tool-result", "toolCallId": "C"}]}),
        result(5, {"role": "user", "content": [text("no id")]}),
        result(6, {"role": "user", "content": [{"type": "tool-result", "toolCallId": 5}]}),
        result(7, {"role": "tool", "source": {"kind": "tool"}, "content": []}),
        result(8, None),
        # an assistant message without a message object requests nothing
        {"type": "assistant/message", "seq": 9, "time": 1009, "data": {"turn": 1, "step": 1},
         "surfaceOp": "append"},
    ]


@pytest.mark.parametrize("full_check", [False, True])
def test_results_pair_with_requested_calls_on_either_path(full_check: bool) -> None:
    events = pairing_turn()
    if full_check:
        for event in events[1:]:
            event["sourceEventSeqs"] = [[0, 0]]
    no_source = ("unopenable_event", "tool/result: 'data.message.source' is missing or null: "
                 "the runtime's crash-repair scan fails on it, so the runtime refuses to open "
                 "this log")
    no_message = "'data.message' is null, not an object: the runtime's crash-repair scan " \
        "fails on it, so the runtime refuses to open this log"
    no_id = ("orphan_result", "tool/result names no call id")
    assert [(kind, line) for kind, line, _ in found(events)] == [
        ("unopenable_event", 5), ("unopenable_event", 6), ("orphan_result", 6),
        ("unopenable_event", 7), ("orphan_result", 7),
        ("unopenable_event", 8), ("orphan_result", 8),
        ("orphan_result", 9), ("unopenable_event", 10), ("orphan_result", 10),
        ("unopenable_event", 11),
    ]
    messages = {(kind, message) for kind, _, message in found(events)}
    assert messages == {
        no_source, no_id, ("orphan_result", "tool/result answers call 'C', never requested"),
        ("unopenable_event", f"tool/result: {no_message}"),
        ("unopenable_event", f"assistant/message: {no_message}"),
    }
