"""What an event did, without when or under which ids: the keys two sessions are aligned by
(standard library only).

A :data:`Signature` is ``(type, tool, arguments, text, status)``; a field an event type does
not have is None. Seqs, times, turn and step numbers, message and call ids are left out, so
two runs of one task, a copy with shifted times or a renumbered session align.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from ledgerviz.recovery.providers import block_text

Signature = tuple[Any, Any, Any, Any, Any]
"""``(type, tool, arguments, text, status)`` of one event."""

FIELDS = ("type", "tool", "arguments", "text", "status")
"""The names of a :data:`Signature`'s fields, in order."""

MESSAGE_TYPES = frozenset({"user/message", "system/message", "developer/message"})
"""Event types whose signature is their message text (a user message's data is the message)."""


BARE_TYPES = frozenset({"turn/start", "step/start", "step/end"})
"""Event types whose signature is their type alone (their data holds numbers only)."""


class SessionKeys(NamedTuple):
    """A session's events as the aligner reads them, one entry per event."""

    signatures: list[Signature]
    types: list[Any]
    turn_starts: list[int]
    """The index of every ``turn/start`` event."""


def session_keys(events: Sequence[dict[str, Any]]) -> SessionKeys:
    """Return the signature and type of every event and where each turn starts."""
    tools: dict[Any, Any] = {}
    signatures = [_signature(event, tools) for event in events]
    types = [signature[0] for signature in signatures]
    return SessionKeys(signatures, types, [i for i, kind in enumerate(types)
                                           if kind == "turn/start"])


def differences(a: Signature, b: Signature) -> list[str]:
    """Return the names of the fields in which two signatures differ (``text`` is named
    ``result text`` for tool results, ``message text`` otherwise)."""
    named = []
    for field, left, right in zip(FIELDS, a, b, strict=True):
        if left != right:
            is_result = "tool/result" in (a[0], b[0])
            named.append(("result text" if is_result else "message text")
                         if field == "text" else field)
    return named


def _signature(event: Any, tools: dict[Any, Any]) -> Signature:
    """Return the signature of one event; ``tools`` maps call ids to tool names as seen so
    far (a tool result is signed with its tool's name, not its call id)."""
    if not isinstance(event, dict):
        return (None, None, None, None, None)
    kind = _hashable(event.get("type"))
    data = event.get("data")
    if kind in BARE_TYPES or not isinstance(data, dict):
        return (kind, None, None, None, None)
    if kind == "tool/call":
        name = _hashable(data.get("name"))
        tools[_hashable(data.get("callId"))] = name
        return (kind, name, _hashable(data.get("arguments")), None, None)
    if kind == "tool/result":
        message = _dict(data.get("message"))
        status = "error" if message.get("isError") else "ok"
        text = _text(message.get("content"))
        return (kind, tools.get(_hashable(message.get("toolCallId"))), None, text, status)
    if kind == "assistant/message":
        content = _dict(data.get("message")).get("content")
        calls = [block for block in content if isinstance(block, dict)
                 and block.get("type") == "tool-call"] if isinstance(content, list) else []
        for call in calls:
            tools.setdefault(_hashable(call.get("id")), _hashable(call.get("name")))
        names = ",".join(str(call.get("name")) for call in calls) if calls else None
        arguments = tuple(_hashable(call.get("arguments")) for call in calls) or None
        return (kind, names, arguments, _text(content), None)
    if kind in MESSAGE_TYPES:
        message = data if kind == "user/message" else _dict(data.get("message"))
        return (kind, None, None, _text(message.get("content")), None)
    if kind == "turn/end":
        return (kind, None, None, None, _hashable(_dict(data.get("reason")).get("kind")))
    return (kind, None, None, None, None)


def _text(content: Any) -> str:
    """Return :func:`~ledgerviz.recovery.providers.block_text` of ``content``, read directly
    when it is one text block (most messages)."""
    if isinstance(content, list) and len(content) == 1:
        block = content[0]
        if isinstance(block, dict) and block.get("type") == "text":
            return str(block.get("text", ""))
    return block_text(content)


def _dict(value: Any) -> dict[str, Any]:
    """Return ``value`` when it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def _hashable(value: Any) -> Any:
    """Return ``value``, or its canonical JSON text when it is a list or an object."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, default=str)
    return value
