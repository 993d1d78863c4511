"""The ``messages`` frame: one row per message-producing event (the model-visible surface)."""

from __future__ import annotations

from ledgerviz.frames.columns import (
    Column,
    category_column,
    int_column,
    string_column,
)
from ledgerviz.frames.events import branch_column
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.table import MESSAGE_TYPES
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
    positions = view.positions_of(MESSAGE_EVENTS)
    table = view.table
    return {
        "session": view.sessions[positions],
        "seq": view.seq_at(positions),
        "role": category_column(table.column("role")[positions]),
        "kind": category_column(table.column("source_kind")[positions]),
        "text": string_column(table.column("text")[positions]),
        "branch": branch_column(view.branch[positions]),
    }
