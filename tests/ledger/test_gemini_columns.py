"""The Gemini reader's typed route (``gemini_columns``, events derived by ``gemini_events``):
a chat of the common shapes read straight into its table's columns, checked against
figures worked out by hand; a chat it does not take read whole by the dict route."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ledgerviz
from ledgerviz.ledger.formats.sealed import DerivedEvents
from ledgerviz.ledger.reread import LedgerChangedError
from ledgerviz.recovery.vocab import MISSING

T = 1767607200000
"""2026-01-05T10:00:00Z in epoch ms."""


def _stamp(second: int) -> str:
    return f"2026-01-05T10:00:{second:02d}.000Z"


CALLS = [
    {"id": "c1", "name": "ls", "args": {"p": "."}, "status": "success",
     "result": [{"functionResponse": {"response": {"output": "a b"}}}]},
    {"id": "c2", "name": "rm", "args": {}, "status": "cancelled",
     "result": [{"functionResponse": {"response": {"error": "User denied the call"}}}]},
]
CHAT = [
    {"sessionId": "s-typed", "projectHash": "p", "startTime": _stamp(0)},
    {"id": "u1", "timestamp": _stamp(1), "type": "user", "content": [{"text": "hi"}]},
    {"id": "g1", "timestamp": _stamp(2), "type": "gemini", "content": "", "model": "m",
     "thoughts": [{"subject": "S", "description": "D"}]},
    {"$set": {"summary": "x"}},
    {"id": "g1", "timestamp": _stamp(3), "type": "gemini", "content": "ok", "model": "m",
     "tokens": {"input": 10, "output": 2, "cached": 4, "thoughts": 1, "total": 12},
     "toolCalls": CALLS},
    {"id": "i1", "timestamp": _stamp(4), "type": "info", "content": "note"},
    {"id": "u2", "timestamp": _stamp(5), "type": "user", "content": "next"},
    {"id": "g2", "timestamp": _stamp(6), "type": "gemini", "content": [{"text": "done"}],
     "model": "m", "toolCalls": [{"name": "wait", "args": "x", "status": "awaiting_approval"}]},
]
"""A prompt; a reply written twice (a ``$set`` between its copies) whose last copy has usage,
a call that ran and one the user denied; an info message; a prompt; a reply whose call
awaits approval."""


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(json.dumps(record).encode() + b"\n" for record in records))
    return path


def test_a_chat_is_tabled_as_worked_out_by_hand(tmp_path: Path) -> None:
    log = ledgerviz.load(_write(tmp_path / "chat.jsonl", CHAT)).sessions[0]
    assert isinstance(log.events, DerivedEvents)  # the typed route took it
    table = log.table
    assert table.types == [
        "gemini/session", "turn/start", "user/message",
        # g1 where it first came (line 3), as its last copy (line 5): one call ran
        "step/start", "assistant/message", "tool/call", "tool/result", "tool/result",
        "step/end",
        "gemini/metadata", "gemini/update",  # the records after g1, once g1 is written
        "gemini/info", "turn/end", "turn/start", "user/message",
        "step/start", "assistant/message", "step/end", "turn/end"]
    assert table.line.tolist() == [1, 2, 2, 3, 3, 3, 3, 3, 3, 4, 5, 6, 7, 7, 7, 8, 8, 8, 8]
    second = 1000
    assert table.time.tolist() == [MISSING, T + second, T + second, *[T + 3 * second] * 8,
                                   T + 4 * second, *[T + 5 * second] * 3, *[T + 6 * second] * 4]
    assert table.turn.tolist() == [MISSING, 1, MISSING, 1, 1, 1, 1, 1, 1, MISSING, MISSING,
                                   MISSING, 1, 2, MISSING, 2, 2, 2, 2]
    text = table.column("text")
    assert text[2] == "hi" and text[4] == "ok" and text[14] == "next"
    assert table.column("text")[6] == "a b" and table.column("text")[7] == "User denied the call"
    call_id = table.column("call_id")
    assert call_id[5] == call_id[6] == "c1" and call_id[7] == "c2"
    assert (table.column("tool_name")[5], table.column("arguments")[5]) == ("ls", '{"p":"."}')
    # the denied call: an error that never ran, its code written by the reader
    assert table.column("is_error").tolist()[6:8] == [0, 1]
    assert table.column("synthetic").tolist()[6:8] == [0, 1]
    assert table.column("error_code")[7] == "TOOL_NOT_STARTED"
    # g1's usage: input less the cached
    assert table.usage.values_at(4) == (6, 2, 4, 1)  # input, output, cache read, reasoning
    assert table.column("input_tokens")[16] == MISSING
    assert (table.column("provider")[4], table.column("model")[4]) == ("google", "m")
    assert table.column("end_reason")[12] == table.column("end_reason")[18] == "completed"
    assert table.requests.row.tolist() == [4, 4, 16]
    assert table.requests.call_id == ["c1", "c2", "g2-call-0"]
    assert log.diagnostics == []
    assert dict(log.call_reasons) == {"c2": "rejected by user",
                                      "g2-call-0": "no result at end of file"}
    assert log.header["id"] == "s-typed" and log.header["createdAt"] == T


def test_its_events_are_derived_as_worked_out_by_hand(tmp_path: Path) -> None:
    log = ledgerviz.load(_write(tmp_path / "chat.jsonl", CHAT)).sessions[0]
    events = list(log.events)
    reply = events[4]
    assert reply == {
        "type": "assistant/message", "seq": 4, "time": T + 3000,
        "data": {"turn": 1, "step": 1, "message": {
            "id": "g1", "role": "assistant",
            # the last copy's content (its thoughts are gone), then its calls
            "content": [{"type": "text", "text": "ok"},
                        {"type": "tool-call", "id": "c1", "name": "ls", "arguments": '{"p":"."}'},
                        {"type": "tool-call", "id": "c2", "name": "rm", "arguments": "{}"}],
            "source": {"kind": "model", "provider": "google", "model": "m"}},
            "usage": {"inputTokens": 6, "outputTokens": 2, "cacheReadTokens": 4,
                      "reasoningTokens": 1, "totalTokens": 12}},
        "surfaceOp": "append"}
    assert list(reply) == ["type", "seq", "time", "data", "surfaceOp"]
    assert events[6]["sourceEventSeqs"] == [5] and "sourceEventSeqs" not in events[7]
    assert events[7]["data"]["error"] == {"name": "ToolNotStartedError",
                                          "code": "TOOL_NOT_STARTED"}
    assert events[7]["data"]["message"]["isError"] is True
    assert events[9]["data"] == {"summary": "x"}
    assert events[10]["data"] == CHAT[4]
    assert events[11]["data"] == CHAT[5]
    assert events[14]["data"] == {"id": "u2", "role": "user", "source": {"kind": "user"},
                                  "content": [{"type": "text", "text": "next"}]}
    assert events[18] == {"type": "turn/end", "seq": 18, "time": T + 6000,
                          "data": {"turn": 2, "reason": {"kind": "completed"}}}


@pytest.mark.parametrize(("extra", "last_types"), [
    # u2 and g2 taken back (u2's user/message is seq 14), then the last turn ends
    ({"$rewindTo": "u2"}, ["step/end", "surface/rewind", "turn/end"]),
    # the whole list replaced by u1 again: the surface taken back, u1 a third turn
    ({"$set": {"messages": [CHAT[1]]}},
     ["surface/rewind", "turn/end", "turn/start", "user/message", "turn/end"]),
])
def test_a_shape_it_does_not_take_sends_the_whole_chat_the_dict_route(
        tmp_path: Path, extra: dict[str, Any], last_types: list[str]) -> None:
    log = ledgerviz.load(_write(tmp_path / "chat.jsonl", [*CHAT, extra])).sessions[0]
    assert not isinstance(log.events, DerivedEvents)
    assert log.table.types[-len(last_types):] == last_types
    assert log.table.types[:18] == ledgerviz.load(
        _write(tmp_path / "plain.jsonl", CHAT)).sessions[0].table.types[:18]
    rewind = next(event for event in log.events if event["type"] == "surface/rewind")
    assert rewind["data"]["start"] == (14 if "$rewindTo" in extra else 2)
    assert log.diagnostics == []


def test_a_late_copy_of_an_earlier_message_is_written_where_it_first_came(
        tmp_path: Path) -> None:
    late = {"id": "g1", "type": "gemini", "content": "late", "model": "m"}
    log = ledgerviz.load(_write(tmp_path / "chat.jsonl", [*CHAT, late])).sessions[0]
    # g1's step (line 3) now holds the late copy: no calls, no usage
    assert log.table.types[3:6] == ["step/start", "assistant/message", "step/end"]
    assert log.table.column("text")[4] == "late" and log.table.column("input_tokens")[4] == MISSING


def test_thoughts_nested_past_the_encoders_reach_are_the_dict_routes_bad_record(
        tmp_path: Path) -> None:
    path = _write(tmp_path / "chat.jsonl", CHAT[:2])
    deep = "[" * 1000 + "]" * 1000  # one thought's subject, 1,000 arrays deep
    with path.open("ab") as out:
        out.write(b'{"id":"g1","type":"gemini","content":"ok","thoughts":[{"subject":%s}]}\n'
                  % deep.encode())
    log = ledgerviz.load(path).sessions[0]
    assert [(d.kind, d.line) for d in log.diagnostics] == [("bad_record", 3)]


def test_a_chat_changed_after_it_was_read_is_said_when_its_events_are_asked_for(
        tmp_path: Path) -> None:
    path = _write(tmp_path / "chat.jsonl", CHAT)
    log = ledgerviz.load(path).sessions[0]
    assert log.table.types[0] == "gemini/session"
    path.write_bytes(path.read_bytes().replace(b'"hi"', b'"h"'))  # a byte shorter
    with pytest.raises(LedgerChangedError):
        list(log.events)


REPEATED_IDS = [
    {"sessionId": "s-ids", "projectHash": "p", "startTime": _stamp(0)},
    # a reply with no prompt before it: it opens the first turn
    {"id": "g1", "timestamp": _stamp(1), "type": "gemini", "content": "a",
     "toolCalls": [{"id": "x", "name": "ls", "status": "executing"},
                   {"id": "y", "name": "ls", "status": "success", "result": "y ok"},
                   {"name": "rm", "status": "validating"}]},
    {"id": "u1", "timestamp": _stamp(2), "type": "user", "content": "go on"},
    {"id": "g2", "timestamp": _stamp(3), "type": "gemini", "content": "b",
     "toolCalls": [{"id": "x", "name": "ls", "status": "success",
                    "result": [{"functionResponse": {"response": {"output": "x ok"}}}]},
                   {"id": "y", "name": "ls", "status": "scheduled"},
                   {"id": "z", "name": "ls", "status": "awaiting_approval"}],
     "tokens": {"tool": 3}},
]
"""Call ``x`` left running, then answered; ``y`` answered, then asked again and not run;
``z`` never answered, nor g1's third call (its id made of its message's)."""


def test_calls_answered_in_another_message_have_no_reason_at_end(tmp_path: Path) -> None:
    log = ledgerviz.load(_write(tmp_path / "chat.jsonl", REPEATED_IDS)).sessions[0]
    assert isinstance(log.events, DerivedEvents)
    table = log.table
    assert table.types == [
        "gemini/session", "turn/start", "step/start", "assistant/message",
        "tool/call", "tool/call", "tool/result", "step/end",  # x (executing) and y ran
        "turn/end", "turn/start", "user/message",
        "step/start", "assistant/message", "tool/call", "tool/result", "step/end",  # x only
        "turn/end"]
    assert table.turn.tolist() == [MISSING, 1, 1, 1, 1, 1, 1, 1, 1, 2, MISSING,
                                   2, 2, 2, 2, 2, 2]
    assert table.step.tolist() == [MISSING, MISSING, 1, 1, 1, 1, 1, 1, MISSING, MISSING,
                                   MISSING, 1, 1, 1, 1, 1, MISSING]
    assert table.requests.call_id == ["x", "y", "g1-call-2", "x", "y", "z"]
    assert table.requests.row.tolist() == [3, 3, 3, 12, 12, 12]
    assert table.column("call_id")[6] == "y" and table.column("call_id")[14] == "x"
    assert table.column("text")[6] == "" and table.column("text")[14] == "x ok"  # y's: no text
    # a tokens record of only an unknown count: usage of zeros
    assert table.usage.values_at(12) == (0, 0, 0, 0)
    assert table.column("input_tokens")[3] == MISSING
    # x and y each have a result somewhere; g1's third call and z have none
    assert dict(log.call_reasons) == {"g1-call-2": "no result at end of file",
                                      "z": "no result at end of file"}
    assert list(log.call_reasons) == ["g1-call-2", "z"]
