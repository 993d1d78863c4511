"""The declared JSON type of every field ledgerviz reads, per header and event type.

One table: ``header.read_header`` checks the header against ``HEADER_FIELDS``;
``shapes`` (the fast and full checks) and ``typed`` (the streamed check's structs) check
the fields of ``EVENT_FIELDS``, written out for speed to this table (an event with a
field of another type gets a diagnostic naming the field and is left out of the frames,
but for a call id that is no array or object: see ``shapes.payload_problem``);
the hostile-input sweep of the tests replaces each field listed here by a value of every
other type and so holds both to it. ``LENIENT_FIELDS`` are read only
when they hold their type and ignored otherwise (the event is kept).

A path names keys from the event object down, ``[]`` standing for each element of
an array: ``data.message.content[].id``.
"""

from __future__ import annotations

from typing import Literal

JsonType = Literal["integer", "string", "boolean", "object", "array"]

HEADER_FIELDS: dict[str, JsonType] = {
    "version": "integer",
    "id": "string",
    "createdAt": "integer",
    "cwd": "string",
    "parentSession": "string",
    "isSeeded": "boolean",
    "seedLength": "integer",
    "origin": "string",
    "delegationDepth": "integer",
    "agentPreset": "string",
}
"""Every header key of format §2 (``type`` is literally ``"session"``)."""

ENVELOPE_FIELDS: dict[str, JsonType] = {
    "seq": "integer",
    "time": "integer",
    "data": "object",
    "sourceEventSeqs": "array",
}
"""The envelope keys of format §3 read from every event (``type`` selects the event;
``surfaceOp`` is a string or an object and checked with it)."""

_TURN_STEP: dict[str, JsonType] = {"data.turn": "integer", "data.step": "integer"}


_TOOL_CALL_BLOCK: dict[str, JsonType] = {
    ".content[].id": "string", ".content[].name": "string", ".content[].arguments": "string"}
"""The fields read from a ``tool-call`` content block (``content[]`` stands for it here)."""


def _message(prefix: str, *, calls: bool = False) -> dict[str, JsonType]:
    """Return the fields read from a message object at ``prefix`` (format §4.2), those of
    its tool-call blocks with ``calls``."""
    blocks = {f"{prefix}{key}": json_type for key, json_type in _TOOL_CALL_BLOCK.items()}
    return {
        f"{prefix}": "object",
        f"{prefix}.role": "string",
        f"{prefix}.source": "object",
        f"{prefix}.source.kind": "string",
        f"{prefix}.source.provider": "string",
        f"{prefix}.source.model": "string",
        f"{prefix}.content": "array",
        f"{prefix}.content[]": "object",
        **(blocks if calls else {}),
    }


_CARRIES_MESSAGE = {**_TURN_STEP, **_message("data.message")}

EVENT_FIELDS: dict[str, dict[str, JsonType]] = {
    "turn/start": _TURN_STEP,
    "step/start": _TURN_STEP,
    "step/end": _TURN_STEP,
    "turn/end": {**_TURN_STEP, "data.reason": "object", "data.reason.kind": "string"},
    "user/message": {key: json_type for key, json_type in _message("data").items()
                     if key != "data"},
    "assistant/message": {**_TURN_STEP, **_message("data.message", calls=True)},
    "system/message": _CARRIES_MESSAGE,
    "developer/message": _CARRIES_MESSAGE,
    "tool/call": {**_TURN_STEP, "data.callId": "string", "data.name": "string",
                  "data.arguments": "string"},
    "tool/result": {
        **_CARRIES_MESSAGE,
        "data.message.toolCallId": "string",
        "data.message.source.callId": "string",
        "data.error": "object",
        "data.error.code": "string",
        "data.error.name": "string",
    },
    "request/header": {**_TURN_STEP, "data.header.config.provider": "string",
                       "data.header.config.model": "string"},
    "request/context": {**_TURN_STEP, "data.provider": "string", "data.model": "string"},
    "surface/rewind": {**_TURN_STEP, "data.start": "integer", "data.end": "integer",
                       "data.shadowedSeqs": "array", "data.shadowedSeqs[]": "integer"},
    "surface/restore": {**_TURN_STEP, "data.rewindSeq": "integer"},
}
"""Per event type, the payload fields recovery, frames and figures read (format §4-§7)."""

LENIENT_FIELDS: dict[str, dict[str, JsonType]] = {
    "assistant/message": {"data.usage": "object", "data.usage.inputTokens": "integer",
                          "data.stream": "array", "data.interrupted": "boolean"},
    "tool/result": {"data.message.isError": "boolean"},
    "session/end-seed": {"data.inherited": "boolean"},
    "subagent/catalog": {"data.childId": "string"},
}
"""Fields read only when they hold their type: another value is ignored, the event kept."""

PACKED_FIELDS: dict[str, JsonType] = {
    "seq0": "integer",
    "time0": "integer",
    "data": "object",
    "data.turn": "integer",
    "data.step": "integer",
    "data.index": "integer",
    "data.dt": "array",
    "data.dt[]": "integer",
    "data.texts": "array",
    "data.texts[]": "string",
}
"""The fields read from a packed ``text-chunks`` or ``reasoning-chunks`` row (format
§4.3)."""

PACKED_TOOL_FIELDS: dict[str, JsonType] = {
    **{path: kind for path, kind in PACKED_FIELDS.items() if not path.startswith("data.texts")},
    "data.id": "string",
    "data.name": "string",
    "data.args": "array",
    "data.args[]": "string",
}
"""The fields read from a packed ``tool-call-chunks`` row (format §4.3): its call's ``id``
and optional ``name``, and ``args`` strings instead of ``texts``."""
