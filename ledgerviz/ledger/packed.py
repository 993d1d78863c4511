"""Expand packed chunk rows into the ``assistant/chunk`` events they stand for.

v0/v1 writers produce them; the runtime expands them in every version, so do we. A row
stands for at most ``MAX_PACKED_DELTAS`` events: each costs a few hundred bytes once
expanded from as few as five bytes of row (``"",0,``), so a larger row is refused with a
diagnostic, never expanded (a 32 MB row of empty deltas would take gigabytes).
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from ledgerviz.ledger.shapes import MAX_INTEGER, integer_problem
from ledgerviz.ledger.vocabulary import PACKED_CHUNK_ROWS

MAX_PACKED_DELTAS = 65_536
"""The most chunk events one packed row is expanded into (a run of deltas of one block)."""


def expand_packed_row(row: dict[str, Any]) -> list[dict[str, Any]] | str:
    """Return the new ``assistant/chunk`` events of one packed row, or why it is malformed."""
    chunk_type = PACKED_CHUNK_ROWS[row["type"]]
    data = row.get("data")
    if not isinstance(data, dict):
        return "packed row without a data object"
    is_tool = chunk_type == "tool-call-delta"
    payload = data.get("args" if is_tool else "texts")
    deltas = data.get("dt", [])
    if not isinstance(payload, list) or not payload:
        return f"packed {row['type']} row without a non-empty {'args' if is_tool else 'texts'} list"
    if len(payload) > MAX_PACKED_DELTAS:
        return (f"packed {row['type']} row stands for {len(payload):,} deltas, more than the "
                f"{MAX_PACKED_DELTAS:,} one row is expanded into: not expanded")
    if not isinstance(deltas, list) or len(deltas) != len(payload) - 1:
        return "packed row 'dt' must have one element fewer than its payload"
    for name, value in (("seq0", row.get("seq0")), ("time0", row.get("time0")),
                        ("data.turn", data.get("turn")), ("data.step", data.get("step"))):
        problem = None if value is None else integer_problem(name, value)
        if problem:
            return f"packed row: {problem}"
    seq0, time0 = row.get("seq0"), row.get("time0")
    if not all(type(step) is int and 0 <= step <= MAX_INTEGER for step in deltas):
        return "packed row 'dt' must hold non-negative integers"
    if is_tool and not all(isinstance(piece, str) for piece in payload):
        return "packed tool-call-chunks row 'args' must hold strings"
    events = []
    for i, (piece, offset) in enumerate(zip(payload, accumulate([0, *deltas]), strict=True)):
        chunk: dict[str, Any] = {"type": chunk_type, "index": data.get("index")}
        if is_tool:
            chunk["id"] = data.get("id")
            if i == 0 and "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = piece
        else:
            chunk["text"] = piece
        event: dict[str, Any] = {"type": "assistant/chunk"}
        if seq0 is not None:
            event["seq"] = seq0 + i
        if time0 is not None:
            event["time"] = time0 + offset
        event["data"] = {"turn": data.get("turn"), "step": data.get("step"), "chunk": chunk}
        events.append(event)
    return events
