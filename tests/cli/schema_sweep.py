"""The schema-driven sweep: every field ledgerviz reads, of the header and of every event
type, replaced by a value of each JSON type (issue 38).

The fields come from ``ledgerviz.ledger.schema``; the ledgers they are written into are
built here by hand from the format (LEDGER_FORMAT §2-§8), and a sample without any
replacement holds no problem at all, so that each case's expected diagnostic is the one
its replaced field makes.
"""

from __future__ import annotations

import copy
import json
from typing import Any, NamedTuple

from ledgerviz.ledger.schema import (
    ENVELOPE_FIELDS,
    EVENT_FIELDS,
    HEADER_FIELDS,
    LENIENT_FIELDS,
    PACKED_FIELDS,
    PACKED_TOOL_FIELDS,
    JsonType,
)

Event = dict[str, Any]

BIG_STRING = 10 * 1024 * 1024
"""The size of the one big string case."""

HOSTILE: dict[str, tuple[Any, JsonType | None]] = {
    "object": ({"x": 1}, "object"),
    "array": ([1], "array"),
    "bool": (True, "boolean"),
    "huge-int": (2**70, None),  # an integer, but none the runtime writes
    "string": ("s" * 65536, "string"),
}
"""Each replacement value and the JSON type it has (None: of no declared type)."""

HEADER: Event = {"type": "session", "version": 4, "id": "sweep", "createdAt": 1,
                 "cwd": "/w", "parentSession": "p", "isSeeded": False,
                 "origin": "subagent", "delegationDepth": 1, "agentPreset": "standard"}
V0_HEADER: Event = {"type": "session", "version": 0, "id": "sweep0", "createdAt": 1,
                    "seedLength": 0, "delegationDepth": 0}


def _message(role: str, kind: str, content: list[Event], **extra: Any) -> Event:
    return {"id": f"{role}-1", "role": role, "content": content,
            "source": {"kind": kind, **extra.pop("source", {})}, **extra}


def _text(text: str) -> list[Event]:
    return [{"type": "text", "text": text}]


def sample_events() -> list[Event]:
    """Return a v4 ledger (no header) holding every event type of the schema, each with
    every field the schema lists, and no problem: one turn, one answered call."""
    step = {"turn": 1, "step": 1}
    call = {"type": "tool-call", "id": "A", "name": "ls", "arguments": "{}"}
    result = _message("tool", "tool", _text("no such file"), toolCallId="A", isError=True,
                      source={"callId": "A"})
    surface = {"surfaceOp": "append"}
    rows: list[tuple[str, Event, Event]] = [
        ("turn/start", {"turn": 1}, {}),
        ("step/start", step, {}),
        ("request/header", {"header": {"config": {"provider": "p", "model": "m"}},
                            "reason": "initial"}, {}),
        ("request/context", {"provider": "p", "model": "m"}, {}),
        ("system/message", {**step, "message": _message("system", "system-prompt",
                                                        _text("be brief"))}, surface),
        ("developer/message", {**step, "message": _message(
            "developer", "tool-registry", [{"type": "tool-addition", "toolName": "ls"}]),
            "headerSeq": 2}, surface),
        ("user/message", _message("user", "user", _text("hi")), surface),
        ("assistant/message", {**step, "message": _message(
            "assistant", "model", [call], source={"provider": "p", "model": "m"}),
            "stream": [], "usage": {"inputTokens": 1, "outputTokens": 2},
            "interrupted": True}, surface),
        ("tool/call", {**step, "callId": "A", "name": "ls", "arguments": "{}"}, {}),
        ("tool/result", {**step, "message": result,
                         "error": {"name": "FsError", "code": "ENOENT"}},
         {**surface, "sourceEventSeqs": [8]}),
        ("step/end", step, {}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, {}),
        ("subagent/catalog", {"version": 1, "childId": "c", "childCreatedAt": 1,
                              "mode": "one-shot"}, {}),
        ("session/end-seed", {"inherited": False}, {}),
        ("surface/rewind", {"start": 6, "end": 9, "shadowedSeqs": [6, 7, 9]}, {}),
        ("surface/restore", {"rewindSeq": 14}, {}),
    ]
    return [{"type": kind, "seq": seq, "time": 1000 + seq, "data": data, **extra}
            for seq, (kind, data, extra) in enumerate(rows)]


def sample_v0_events(tool: bool = False) -> list[Event]:
    """Return a v0 ledger (no header) whose assistant output is one packed chunk row: of
    text, or (``tool``) of a call's arguments, the call then never started."""
    step = {"turn": 1, "step": 1}
    if tool:
        packed = {"type": "tool-call-chunks", "seq0": 2, "time0": 1002,
                  "data": {**step, "index": 0, "id": "c1", "name": "ls", "dt": [3],
                           "args": ['{"pa', 'th":"."}']}}
        content = [{"type": "tool-call", "id": "c1", "name": "ls",
                    "arguments": '{"path":"."}'}]
    else:
        packed = {"type": "text-chunks", "seq0": 2, "time0": 1002,
                  "data": {**step, "index": 0, "dt": [3], "texts": ["He", "llo"]}}
        content = _text("Hello")
    message = {**step, "message": _message("assistant", "model", content)}
    return [
        {"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 1001, "data": step},
        packed,
        {"type": "assistant/message", "seq": 4, "time": 1006, "data": message,
         "surfaceOp": "append", "sourceEventSeqs": [2, 3]},
        {"type": "step/end", "seq": 5, "time": 1007, "data": step},
        {"type": "turn/end", "seq": 6, "time": 1008, "data": {"turn": 1,
                                                              "reason": {"kind": "completed"}}},
    ]


def encode(header: Event | None, events: list[Any]) -> bytes:
    """Return ledger bytes, one compact JSON line per item (the standard library's
    encoder: orjson refuses integers beyond 64 bits)."""
    items = ([header] if header is not None else []) + events
    return b"".join(json.dumps(item, separators=(",", ":")).encode() + b"\n" for item in items)


def put(target: Any, path: str, value: Any) -> None:
    """Set the field at ``path`` (see ``schema``; ``[]``: the first element), making the
    objects along it that are missing."""
    keys = path.replace("[]", ".[]").split(".")
    for key in keys[:-1]:
        target = target[0] if key == "[]" else target.setdefault(key, {})
    if keys[-1] == "[]":
        target[0] = value
    else:
        target[keys[-1]] = value


class Case(NamedTuple):
    """One sweep ledger: which field was replaced by what, and the line it is on."""

    name: str
    content: bytes
    line: int
    field: str
    checked: bool
    """Whether the field is one the reader checks (``schema.LENIENT_FIELDS`` are not)."""
    wrong: bool
    """Whether the value is not of the field's declared type (or no integer the runtime
    writes): a checked field then gives a diagnostic on ``line``."""


def _declared(kind: str) -> list[tuple[str, JsonType, bool]]:
    """Return ``(path, type, checked)`` for every field the schema lists for ``kind``."""
    fields = [(path, json_type, True) for path, json_type in ENVELOPE_FIELDS.items()]
    fields += [(path, json_type, True) for path, json_type in EVENT_FIELDS.get(kind, {}).items()]
    fields += [(path, json_type, False)
               for path, json_type in LENIENT_FIELDS.get(kind, {}).items()]
    return fields


def _case_name(where: str, path: str, value: str) -> str:
    safe = "".join(c if c.isalnum() else "-" for c in f"{where}-{path}")
    return f"{safe}--{value}.jsonl"


def cases() -> list[Case]:
    """Return every sweep case: each declared field of the header, of each event type's
    sample event and of a packed row, replaced by each ``HOSTILE`` value."""
    found: list[Case] = []
    for value_name, (value, value_type) in HOSTILE.items():
        for key, json_type in HEADER_FIELDS.items():
            header = {**HEADER, key: value}
            found.append(Case(_case_name("header", key, value_name),
                              encode(header, sample_events()), 1, f"header.{key}", True,
                              value_type != json_type))
        for index, event in enumerate(sample_events()):
            for path, json_type, checked in _declared(event["type"]):
                events = sample_events()
                put(events[index], path, copy.deepcopy(value))
                found.append(Case(_case_name(event["type"], path, value_name),
                                  encode(HEADER, events), index + 2, path, checked,
                                  value_type != json_type))
        for tool, fields in ((False, PACKED_FIELDS), (True, PACKED_TOOL_FIELDS)):
            for path, json_type in fields.items():
                events = sample_v0_events(tool)
                put(events[2], path, copy.deepcopy(value))
                found.append(Case(_case_name(events[2]["type"], path, value_name),
                                  encode(V0_HEADER, events), 4, path, True,
                                  value_type != json_type))
    return found


def big_string_case() -> Case:
    """Return the one case with a 10 MiB string: the arguments of the requested call."""
    events = sample_events()
    put(events[7], "data.message.content[].arguments", "x" * BIG_STRING)
    return Case("big-arguments.jsonl", encode(HEADER, events), 9,
                "data.message.content[].arguments", True, False)
