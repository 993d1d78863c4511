"""The ``messages`` frame: one row per message-producing event (the model-visible surface)."""

from __future__ import annotations

from ledgerviz.frames.columns import (
    Column,
    category_column,
    int_column,
    string_column,
)
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.table import MESSAGE_TYPES
from ledgerviz.recovery.nesting import visible_text
from ledgerviz.recovery.vocab import BRANCHES

MESSAGE_SCHEMA = {
    "seq": int_column,
    "role": category_column,
    "kind": category_column,
    "text": string_column,
    "branch": lambda values: category_column(values, BRANCHES),
}

MESSAGE_EVENTS = MESSAGE_TYPES


def message_columns(view: SessionsView) -> dict[str, Column]:
    """Return the ``messages`` columns of every session.

    ``kind`` is the message's ``source.kind`` (``user``, ``model``, ``tool``, ``plugin``…).
    """
    indices = view.indices_of(MESSAGE_EVENTS)
    types, datas = view.types, view.datas
    strings: dict[str, str] = {}  # one object per role / kind: cheap categoricals later
    shared = strings.setdefault
    roles, kinds, texts = [], [], []
    add_role, add_kind, add_text = roles.append, kinds.append, texts.append
    for i in indices:
        data = datas[i]
        message = data if types[i] == "user/message" else data.get("message")  # message_in
        if not isinstance(message, dict):
            message = {}
        role = message.get("role")
        source = message.get("source")
        kind = source.get("kind") if isinstance(source, dict) else None
        add_role(shared(role, role) if role.__class__ is str else role)
        add_kind(shared(kind, kind) if kind.__class__ is str else kind)
        add_text(visible_text(message.get("content")))
    return {
        "session": list(map(view.sessions.__getitem__, indices)),
        "seq": view.seq_at(indices),
        "role": roles,
        "kind": kinds,
        "text": texts,
        "branch": list(map(view.branch.__getitem__, indices)),
    }
