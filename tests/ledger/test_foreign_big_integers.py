"""Integers beyond 64 bits in Claude Code, Codex and Gemini transcripts are kept exact and
warned of, as in a dsh ledger: orjson alone reads one as a float (or refuses one beyond a
double), which lost the value without a word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.ledger import read_session

DATA = Path(__file__).parent.parent / "data"
BIG = 2**70  # 1180591620717411303424
HUGE = 10**400  # beyond a double: orjson refuses the line
WARNING = ("big_integer", "warning", "holds an integer beyond 64 bits: kept exact")

# (fixture, its line count, an appended record of a kind the reader does not know, holding
# ``value``, and the log-only event type it becomes)
UNKNOWN = [
    ("codex/basic.jsonl", 33,
     lambda value: {"timestamp": "2026-01-05T10:00:09Z", "type": "mystery",
                    "payload": {"n": value}}, "codex/mystery"),
    ("claude_code/basic.jsonl", 21,
     lambda value: {"type": "mystery", "uuid": "m1", "n": value}, "claude-code/mystery"),
    ("gemini/basic.jsonl", 11,
     lambda value: {"id": "m1", "type": "mystery", "n": value}, "gemini/message"),
]


def _exact(found: object, value: int) -> bool:
    """Whether ``found`` holds ``value`` as an int somewhere."""
    if found.__class__ is int:
        return found == value
    if isinstance(found, dict):
        return any(_exact(item, value) for item in found.values())
    if isinstance(found, list):
        return any(_exact(item, value) for item in found)
    return False


@pytest.mark.parametrize("value", [BIG, -BIG, HUGE])
@pytest.mark.parametrize(("path", "lines", "record", "kind"), UNKNOWN)
def test_an_integer_beyond_64_bits_is_kept_exact_and_warned_of(
        path: str, lines: int, record, kind: str, value: int) -> None:
    content = (DATA / path).read_bytes() + json.dumps(record(value)).encode() + b"\n"
    log = read_session("t.jsonl", content)
    big = [(d.kind, d.severity, d.message, d.line) for d in log.diagnostics
           if d.kind in ("big_integer", "invalid_json")]
    assert big == [(*WARNING, lines + 1)]
    assert [event["type"] for event in log.events if _exact(event, value)] == [kind]
    frames = ledgerviz.Ledger([log]).frames
    assert len(frames.events) == len(log.events)


def test_a_claude_code_tool_input_keeps_its_digits() -> None:
    """A tool call's input is kept as the JSON text of its arguments, every digit."""
    call = {"type": "assistant", "uuid": "a9", "parentUuid": None, "sessionId": "s",
            "timestamp": "2026-01-05T10:00:00Z",
            "message": {"id": "m9", "role": "assistant", "model": "claude",
                        "content": [{"type": "tool_use", "id": "toolu_9", "name": "Bash",
                                     "input": {"n": BIG}}]}}
    log = read_session("t.jsonl", json.dumps(call).encode() + b"\n")
    assert [(d.kind, d.line) for d in log.diagnostics if d.kind == "big_integer"] == [
        ("big_integer", 1)]
    (call,) = [event["data"] for event in log.events if event["type"] == "tool/call"]
    assert (call["callId"], call["arguments"]) == ("toolu_9", '{"n":1180591620717411303424}')
