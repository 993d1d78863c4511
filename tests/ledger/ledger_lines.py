"""Builders of small ledger lines for reader tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

HEADER = {"type": "session", "version": 4, "id": "t", "createdAt": 0}

Line = dict[str, Any] | bytes


def encode(lines: list[Line]) -> bytes:
    """Return ledger bytes: dicts as JSON lines, bytes verbatim, each followed by a newline."""
    raw = [line if isinstance(line, bytes) else orjson.dumps(line) for line in lines]
    return b"".join(line + b"\n" for line in raw)


def turn_start(seq: int, turn: int = 1) -> dict[str, Any]:
    """Return a ``turn/start`` event."""
    return {"type": "turn/start", "seq": seq, "time": 1000 + seq, "data": {"turn": turn}}


def mark(seq: int) -> dict[str, Any]:
    """Return a log-only event (``plan/mode``): an event with a seq, opening nothing."""
    return {"type": "plan/mode", "seq": seq, "time": 1000 + seq, "data": {"active": False}}


def assistant_calls(seq: int, *call_ids: str) -> dict[str, Any]:
    """Return a v4 ``assistant/message`` requesting the given tool calls."""
    blocks = [{"type": "tool-call", "id": c, "name": "ls", "arguments": "{}"} for c in call_ids]
    return {
        "type": "assistant/message",
        "seq": seq,
        "time": 1000 + seq,
        "data": {
            "turn": 1,
            "step": 1,
            "message": {
                "id": f"m{seq}",
                "role": "assistant",
                "content": blocks,
                "source": {"kind": "model", "provider": "p", "model": "m"},
            },
            "stream": [],
        },
        "surfaceOp": "append",
    }


def tool_result(seq: int, call_id: str) -> dict[str, Any]:
    """Return a v4 tool-role ``tool/result`` answering ``call_id``."""
    return {
        "type": "tool/result",
        "seq": seq,
        "time": 1000 + seq,
        "data": {
            "turn": 1,
            "step": 1,
            "message": {
                "id": f"r{seq}",
                "role": "tool",
                "toolCallId": call_id,
                "source": {"kind": "tool", "callId": call_id},
                "content": [{"type": "text", "text": "done"}],
            },
        },
        "surfaceOp": "append",
    }


def containers(value: Any) -> Iterator[tuple[Any, Any]]:
    """Yield ``(container, key)`` for every value inside a decoded JSON value."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        yield value, key
        if isinstance(item, dict | list) and item:
            yield from containers(item)
