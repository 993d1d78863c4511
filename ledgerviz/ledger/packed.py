"""Expand packed chunk rows into the ``assistant/chunk`` events they stand for.

v0/v1 writers produce them; the runtime expands them in every version, so do we. A row
is accepted exactly when the runtime's decoder accepts it (format §4.3): its envelope
and data hold exactly the keys of its kind, ``seq0`` is a non-negative safe integer,
``time0`` and every gap of ``dt`` safe integers (a gap may be negative: the clock may
step back), ``turn``/``step``/``index`` numbers, the payload a non-empty list of strings
with one more element than ``dt``. Anything else is a malformed row the runtime stops at.
A row stands for at most ``MAX_PACKED_DELTAS`` events, which the runtime does not
bound: each costs a few hundred bytes once expanded from as few as five bytes of row
(``"",0,``), so a larger row is refused with a diagnostic, never expanded (a 32 MB row
of empty deltas would take gigabytes).
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from ledgerviz.ledger.shapes import MAX_INTEGER, json_type
from ledgerviz.ledger.vocabulary import PACKED_CHUNK_ROWS

MAX_PACKED_DELTAS = 65_536
"""The most chunk events one packed row is expanded into (a run of deltas of one block)."""

_ENVELOPE = frozenset({"type", "seq0", "time0", "data"})
_TEXT_DATA = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_DATA = frozenset({"turn", "step", "index", "id", "dt", "args"})


def _number(value: Any) -> Any:
    """Return a JSON number as the runtime holds it (a whole float is its integer)."""
    if value.__class__ is float and value.is_integer() and abs(value) <= MAX_INTEGER:
        return int(value)
    return value


def _safe_integer(value: Any) -> bool:
    """Return whether ``value`` is a number that is a safe integer (JavaScript's test)."""
    value = _number(value)
    return value.__class__ is int and -MAX_INTEGER <= value <= MAX_INTEGER


def _is_number(value: Any) -> bool:
    return value.__class__ is int or value.__class__ is float


def row_problem(row: dict[str, Any]) -> str | None:
    """Return why the runtime's decoder refuses a packed row, or None."""
    kind = row["type"]
    if set(row) != _ENVELOPE:
        extra, missing = sorted(set(row) - _ENVELOPE), sorted(_ENVELOPE - set(row))
        found = [f"{word} {', '.join(map(repr, keys))}"
                 for word, keys in (("lacks", missing), ("has", extra)) if keys]
        return (f"packed {kind} row must have exactly type, seq0, time0, data "
                f"(it {' and '.join(found)})")
    if not _safe_integer(row["seq0"]) or _number(row["seq0"]) < 0:
        return f"packed {kind} row: 'seq0' must be a non-negative safe integer"
    if not _safe_integer(row["time0"]):
        return f"packed {kind} row: 'time0' must be a safe integer"
    data = row["data"]
    if data.__class__ is not dict:
        return f"packed {kind} row: 'data' must be an object, not {json_type(data)}"
    is_tool = PACKED_CHUNK_ROWS[kind] == "tool-call-delta"
    keys = _TOOL_DATA | ({"name"} if "name" in data else set()) if is_tool else _TEXT_DATA
    if set(data) != keys:
        return f"packed {kind} row: 'data' must hold exactly {', '.join(sorted(keys))}"
    if is_tool and not (data["id"].__class__ is str and data.get("name", "").__class__ is str):
        return f"packed {kind} row: 'id' (and 'name') must be strings"
    if not all(_is_number(data[key]) for key in ("turn", "step", "index")):
        return f"packed {kind} row: 'turn', 'step' and 'index' must be numbers"
    name = "args" if is_tool else "texts"
    payload, deltas = data[name], data["dt"]
    if payload.__class__ is not list or not payload or not all(
            piece.__class__ is str for piece in payload):
        return f"packed {kind} row: '{name}' must be a non-empty list of strings"
    if deltas.__class__ is not list or not all(map(_safe_integer, deltas)):
        return f"packed {kind} row: 'dt' must be a list of safe integers"
    if len(deltas) != len(payload) - 1:
        return f"packed {kind} row: 'dt' must have one element fewer than its payload"
    if _number(row["seq0"]) + len(payload) - 1 > MAX_INTEGER or not all(
            abs(_number(row["time0"]) + offset) <= MAX_INTEGER
            for offset in accumulate(map(_number, deltas))):
        return f"packed {kind} row: its members' seqs and times must stay safe integers"
    return None


def expand_packed_row(row: dict[str, Any]) -> list[dict[str, Any]] | str:
    """Return the new ``assistant/chunk`` events of one packed row, or why it is malformed."""
    problem = row_problem(row)
    if problem is not None:
        return problem
    data = row["data"]
    chunk_type = PACKED_CHUNK_ROWS[row["type"]]
    is_tool = chunk_type == "tool-call-delta"
    payload = data["args" if is_tool else "texts"]
    if len(payload) > MAX_PACKED_DELTAS:
        return (f"packed {row['type']} row stands for {len(payload):,} deltas, more than the "
                f"{MAX_PACKED_DELTAS:,} one row is expanded into: not expanded")
    seq0, time0 = _number(row["seq0"]), _number(row["time0"])
    index = _number(data["index"])
    turn, step = _number(data["turn"]), _number(data["step"])
    offsets = accumulate([0, *map(_number, data["dt"])])
    events = []
    for i, (piece, offset) in enumerate(zip(payload, offsets, strict=True)):
        chunk: dict[str, Any] = {"type": chunk_type, "index": index}
        if is_tool:
            chunk["id"] = data["id"]
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = piece
        else:
            chunk["text"] = piece
        events.append({"type": "assistant/chunk", "seq": seq0 + i, "time": time0 + offset,
                       "data": {"turn": turn, "step": step, "chunk": chunk}})
    return events
