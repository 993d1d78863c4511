"""The ``messages`` frame: one row per message-producing event (the model-visible surface)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ledgerviz.frames.columns import (
    Column,
    category_column,
    int_column,
    string_column,
    transpose,
)
from ledgerviz.frames.events import BRANCHES
from ledgerviz.frames.view import SessionsView
from ledgerviz.recovery.events import message_in

MESSAGE_SCHEMA = {
    "seq": int_column,
    "role": category_column,
    "kind": category_column,
    "text": string_column,
    "branch": lambda values: category_column(values, BRANCHES),
}

Shared = Callable[[str, str], str]
"""``dict.setdefault`` of a table mapping each string to its one shared object."""

MESSAGE_EVENTS = frozenset(
    {"user/message", "system/message", "developer/message", "assistant/message", "tool/result"}
)


def message_text(blocks: Any) -> str:
    """Return the visible text of content blocks: text blocks, nested tool-result text included."""
    if not isinstance(blocks, list):
        return ""
    parts = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                parts.append(text)
        elif kind == "tool-result":
            text = message_text(block.get("content"))
            if text:
                parts.append(text)
    return parts[0] if len(parts) == 1 else "\n".join(parts)


def _described(message: dict[str, Any], shared: Shared) -> tuple[Any, Any, str]:
    """Return ``(role, source kind, visible text)`` of one message (strings via ``shared``)."""
    role = message.get("role")
    source = message.get("source")
    kind = source.get("kind") if isinstance(source, dict) else None
    return (
        shared(role, role) if role.__class__ is str else role,
        shared(kind, kind) if kind.__class__ is str else kind,
        message_text(message.get("content")),
    )


def message_columns(view: SessionsView) -> dict[str, Column]:
    """Return the ``messages`` columns of every session.

    ``kind`` is the message's ``source.kind`` (``user``, ``model``, ``tool``, ``plugin``…).
    """
    indices = view.indices_of(MESSAGE_EVENTS)
    types, datas = view.types, view.datas
    strings: dict[str, str] = {}  # one object per role / kind: cheap categoricals later
    shared = strings.setdefault
    described = [_described(message_in(types[i], datas[i]) or {}, shared) for i in indices]
    return {
        "session": list(map(view.sessions.__getitem__, indices)),
        "seq": view.seq_at(indices),
        **transpose(described, ("role", "kind", "text")),
        "branch": list(map(view.branch.__getitem__, indices)),
    }
