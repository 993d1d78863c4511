"""The reader's fast payload checks: what they vouch for, and what they refer on.

``FAST_PAYLOAD_CHECKS`` may refer a well-shaped payload to the full shape check without
changing any verdict, only the reader's speed, so the reader's diagnostics cannot tell
a check that refers too much. These tests state each check's own contract: the value it
vouches (the tool-call ids of a message, the call id a result answers, None for the
rest) or SUSPECT. Expected values are worked out by hand from the format (§3, §4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ledgerviz.ledger.duplicates import may_repeat_keys
from ledgerviz.ledger.numbers import may_hold_big_integers
from ledgerviz.ledger.shapes import FAST_PAYLOAD_CHECKS, MAX_INTEGER, SUSPECT, plain_source_seqs

DSH = Path(__file__).parents[1] / "data" / "dsh"

CALL = {"type": "tool-call", "id": "c1", "name": "ls", "arguments": "{}"}


def vouched(kind: str, data: dict[str, Any]) -> Any:
    return FAST_PAYLOAD_CHECKS[kind](data)


@pytest.mark.parametrize(("message", "expected"), [
    (None, []),
    ({}, []),
    ({"role": "assistant", "content": []}, []),
    ({"role": None, "source": None, "content": None}, []),
    ({"source": {"kind": "llm", "provider": "openai", "model": None}}, []),
    ({"content": [{"type": "text", "text": "a"}, CALL]}, ["c1"]),
    ({"content": [CALL, {"type": "tool-call", "id": "c2"}]}, ["c1", "c2"]),
    ({"content": [{"type": "tool-call", "id": "c3", "name": None, "arguments": None}]}, ["c3"]),
])
def test_a_well_shaped_message_is_vouched_with_its_call_ids(message: Any, expected: list) -> None:
    for kind in ("assistant/message", "system/message", "developer/message"):
        assert vouched(kind, {"message": message}) == expected
    assert FAST_PAYLOAD_CHECKS["user/message"](message) == expected


@pytest.mark.parametrize("message", [
    "hello",
    ["hello"],
    {"role": 3},
    {"source": "llm"},
    {"source": {"kind": 3}},
    {"source": {"provider": ["openai"]}},
    {"source": {"model": 4}},
    {"content": "hello"},
    {"content": ["hello"]},
    {"content": [{"type": "tool-call", "name": "ls"}]},
    {"content": [{"type": "tool-call", "id": 5}]},
    {"content": [{"type": "tool-call", "id": "c1", "name": 3}]},
    {"content": [{"type": "tool-call", "id": "c1", "arguments": {}}]},
    {"content": [CALL, {"type": "tool-call", "id": "c2", "name": False}]},
])
def test_a_message_of_another_shape_is_referred(message: Any) -> None:
    assert vouched("assistant/message", {"message": message}) is SUSPECT


@pytest.mark.parametrize(("data", "expected"), [
    ({"callId": "c1"}, "c1"),  # the call id it dispatches
    ({"callId": "c1", "name": "ls", "arguments": "{}"}, "c1"),
    ({"callId": "c1", "name": None, "arguments": None}, "c1"),
    ({"name": "ls"}, SUSPECT),
    ({"callid": "c1"}, SUSPECT),
    ({"callId": 1}, SUSPECT),
    ({"callId": "c1", "name": 2}, SUSPECT),
    ({"callId": "c1", "arguments": {}}, SUSPECT),
])
def test_tool_call(data: dict[str, Any], expected: Any) -> None:
    assert vouched("tool/call", data) == expected


@pytest.mark.parametrize(("message", "expected"), [
    (None, None),
    ({"role": "tool", "source": {"kind": "tool", "callId": "c1"}}, "c1"),
    ({"role": "tool", "toolCallId": "c2"}, "c2"),
    ({"role": "tool", "source": {"kind": "tool"}, "toolCallId": "c2"}, "c2"),
    ({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c3"}]}, "c3"),
    ({"role": "tool", "content": [{"type": "tool-result", "toolCallId": 7}]}, None),
    ({"role": "tool", "content": []}, None),
    ({"role": "tool", "source": {"kind": "tool", "callId": 9}}, SUSPECT),
    ({"role": "tool", "source": "tool"}, SUSPECT),
    ({"role": "tool", "toolCallId": 2}, SUSPECT),
    ({"role": 1}, SUSPECT),
])
def test_tool_result_names_the_call_it_answers(message: Any, expected: Any) -> None:
    assert vouched("tool/result", {"message": message}) == expected
    assert (vouched("tool/result", {"message": message}) is SUSPECT) == (expected is SUSPECT)


@pytest.mark.parametrize(("data", "expected"), [
    ({}, None),
    ({"reason": None}, None),
    ({"reason": {"kind": "completed"}}, None),
    ({"reason": {}}, SUSPECT),
    ({"reason": {"kind": 1}}, SUSPECT),
    ({"reason": "completed"}, SUSPECT),
])
def test_turn_end(data: dict[str, Any], expected: Any) -> None:
    assert vouched("turn/end", data) is expected


@pytest.mark.parametrize(("config", "expected"), [
    (None, None),
    ("not an object", None),
    ({}, None),
    ({"provider": "openai", "model": "gpt"}, None),
    ({"provider": 1}, SUSPECT),
    ({"model": ["gpt"]}, SUSPECT),
])
def test_request_routes(config: Any, expected: Any) -> None:
    assert vouched("request/context", config) is expected
    assert vouched("request/header", {"header": {"config": config}}) is expected
    assert vouched("request/header", {"header": "x"}) is None


@pytest.mark.parametrize(("seqs", "expected"), [
    ([], True),
    ([0, 5, 2], True),
    ([-MAX_INTEGER, MAX_INTEGER], True),
    ([MAX_INTEGER + 1], False),
    ([-MAX_INTEGER - 1], False),
    ([1, [2, 4]], False),
    ([1.0], False),
    ([True], False),
    ((1, 2), False),
    ("1", False),
])
def test_plain_source_seqs(seqs: Any, expected: bool) -> None:
    assert plain_source_seqs(seqs) is expected


def test_no_payload_of_a_real_ledger_is_referred() -> None:
    """The runtime writes well-shaped payloads, so every one takes the fast path."""
    checked = 0
    for path in sorted(DSH.glob("*.jsonl")):
        for line in path.read_bytes().splitlines()[1:]:
            event = orjson.loads(line)
            check = FAST_PAYLOAD_CHECKS.get(event.get("type"))
            if check is not None and isinstance(event.get("data"), dict):
                assert check(event["data"]) is not SUSPECT, (path.name, event.get("seq"))
                checked += 1
            if "sourceEventSeqs" in event and all(
                isinstance(seq, int) for seq in event["sourceEventSeqs"]
            ):
                assert plain_source_seqs(event["sourceEventSeqs"])
    assert checked > 200  # the loop reached the fixtures


@pytest.mark.parametrize(("raw", "expected"), [
    (b'{"n":123}', False),
    (b'{"n":123456789012345678}', False),  # 18 digits fit in 64 bits
    (b'{"n":1234567890123456789}', True),  # a run of 19 digits
    (b'{"a":"9876543210987654321x"}', False),  # digits in a string are no number
    (b'{"a":"msg_0000000000000000000000123"}', False),  # an id of digits
    (b'{"a":"2026-1234567890123456789"}', False),  # a minus inside a string
    (b'{"n": -1234567890123456789}', True),  # a space and a minus before the digits
    (b'{"n":[1,\r\n\t12345678901234567890]}', True),  # in an array, whitespace before
    (b'12345678901234567890', True),  # at the start
    (b'{"a":"x:1234567890123456789"}', True),  # a string holding ':' before: looked at
    (b'{"a":"x","n":98765432109876543210987654321098765432109876543210}', True),
    (b"", False),
])
def test_may_hold_big_integers(raw: bytes, expected: bool) -> None:
    assert may_hold_big_integers(raw) is expected


@pytest.mark.parametrize(("raw", "value", "expected"), [
    (b'{"a":1}', {"a": 1}, False),
    (b'{"a":1}\r', {"a": 1}, False),
    (b'{"a":1,"a":1}', {"a": 1}, True),
    (b'{"a": 1}', {"a": 1}, True),  # spaced: re-encodes shorter, so maybe
    (b'{"n":1180591620717411303424}', {"n": 2**70}, True),  # orjson cannot encode it
])
def test_may_repeat_keys(raw: bytes, value: object, expected: bool) -> None:
    assert may_repeat_keys(raw, value) is expected
