"""Where each fact lives in an event's ``data`` payload and in the model message it carries,
and how a raw ``surfaceOp`` is coded: the runtime's JSON facts the recovery engine and the
reader (``ledger/``, its event table) share, so both read an event alike.

A shared module of the engine: standard library only, importing nothing of ``recovery/``
but ``vocab`` (``tests/test_layers.py``), so the reader may import it without the engine.
"""

from __future__ import annotations

from typing import Any

from ledgerviz.recovery.vocab import RECOVERY_CODES, SYNTHETIC_ID_PREFIXES


def surface_op_code(op: Any) -> int:
    """Return the ``vocab.SURFACE_OPS`` code of a raw ``surfaceOp`` value."""
    if op is None:
        return 0
    if op == "append":
        return 1
    return 2 if op.__class__ is dict and op.get("op") == "replace" else 3


def message_in(kind: Any, data: dict[str, Any]) -> dict[str, Any] | None:
    """Return the model message of a ``data`` payload of event type ``kind``, or None."""
    if kind == "user/message":
        return data or None
    return payload_message(data)


def payload_message(data: dict[str, Any]) -> dict[str, Any] | None:
    """Return ``data.message`` when it is an object, else None."""
    message = data.get("message")
    return message if isinstance(message, dict) else None


def payload_tool_call_blocks(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the ``tool-call`` content blocks of an assistant/message ``data`` payload."""
    message = payload_message(data)
    return message_tool_call_blocks(message) if message is not None else []


def message_tool_call_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the ``tool-call`` content blocks of an assistant message, in order."""
    content = message.get("content")
    if not content:
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool-call"]


def _wrapper_block(message: dict[str, Any]) -> dict[str, Any] | None:
    """Return the first ``tool-result`` block of a v0-v3 wrapped result message, or None."""
    for block in message.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "tool-result":
            return block
    return None


def payload_result_call_id(data: dict[str, Any]) -> str | None:
    """Return the call id a tool/result's ``data`` payload answers, or None."""
    message = payload_message(data)
    return message_call_id(message) if message is not None else None


def message_call_id(message: dict[str, Any]) -> str | None:
    """Return the call id a tool result message answers, in either form."""
    source = message.get("source")
    if isinstance(source, dict) and source.get("callId") is not None:
        return source["callId"]
    if message.get("toolCallId") is not None:
        return message["toolCallId"]
    block = _wrapper_block(message)
    return block.get("toolCallId") if block else None


def message_is_error(message: dict[str, Any]) -> bool:
    """Return whether a tool result message is marked ``isError``, in either form."""
    if "isError" in message:
        return bool(message["isError"])
    block = _wrapper_block(message)
    return bool(block and block.get("isError"))


def result_content(message: dict[str, Any]) -> list[Any]:
    """Return the content blocks of a tool result message in either form."""
    block = _wrapper_block(message) if message.get("role") != "tool" else None
    content = block.get("content") if block else message.get("content")
    return content if isinstance(content, list) else []


def payload_result_facts(data: dict[str, Any]) -> tuple[str | None, str | None, bool, bool]:
    """Return (call id, error code, is_error, synthetic) of a tool/result's ``data`` payload.

    ``data`` and its ``message`` are looked up once and the message accessors
    (``message_call_id``, ``message_is_error``) run on them directly.
    """
    error = data.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    message = payload_message(data)
    if message is None:
        return None, code, False, code in RECOVERY_CODES
    message_id = message.get("id")
    synthetic = code in RECOVERY_CODES or (
        type(message_id) is str and message_id.startswith(SYNTHETIC_ID_PREFIXES)
    )
    return message_call_id(message), code, message_is_error(message), synthetic


def payload_end_reason_kind(data: dict[str, Any]) -> str | None:
    """Return ``reason.kind`` of a turn/end's ``data`` payload, or None."""
    reason = data.get("reason")
    return reason.get("kind") if isinstance(reason, dict) else None
