"""A ``SessionDiff`` as DataFrames: the alignment, and the calls whose status changed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ledgerviz.compare.session_diff import KINDS
from ledgerviz.frames.columns import category_column, int_column, string_column
from ledgerviz.recovery.vocab import CALL_STATUSES

if TYPE_CHECKING:
    from ledgerviz.compare.session_diff import SessionDiff

ALIGNMENT_SCHEMA = {
    "kind": lambda values: category_column(values, KINDS),
    "a_seq": int_column,
    "b_seq": int_column,
    "a_type": category_column,
    "b_type": category_column,
    "a_turn": int_column,
    "b_turn": int_column,
    "differs": string_column,
}
"""The alignment frame's columns: one row per aligned pair or unmatched event."""

STATUS_SCHEMA = {
    "tool": category_column,
    "a_call_id": string_column,
    "b_call_id": string_column,
    "a_seq": int_column,
    "b_seq": int_column,
    "a_status": lambda values: category_column(values, CALL_STATUSES),
    "b_status": lambda values: category_column(values, CALL_STATUSES),
}
"""The status-change frame's columns (``*_seq``: the requesting assistant message)."""


def alignment_frame(diff: SessionDiff) -> pd.DataFrame:
    """Return one row per alignment row: kind, both seqs, types and turns, what differs."""
    a, b = diff.a, diff.b

    def side(values: list[Any], index: int | None) -> Any:
        return None if index is None else values[index]

    columns: dict[str, list[Any]] = {name: [] for name in ALIGNMENT_SCHEMA}
    for row, ((i, j), kind) in enumerate(zip(diff.rows, diff.kinds, strict=True)):
        columns["kind"].append(kind)
        columns["a_seq"].append(side(a.seqs, i))
        columns["b_seq"].append(side(b.seqs, j))
        columns["a_type"].append(side(a.keys.types, i))
        columns["b_type"].append(side(b.keys.types, j))
        columns["a_turn"].append(side(a.turns, i))
        columns["b_turn"].append(side(b.turns, j))
        columns["differs"].append(", ".join(diff.differs(row)) if kind == "changed" else None)
    return _typed(columns, ALIGNMENT_SCHEMA)


def status_frame(diff: SessionDiff) -> pd.DataFrame:
    """Return one row per call whose status differs between the two sessions."""
    rows = [(a.name, a.call_id, b.call_id, a.requested_seq, b.requested_seq, a.status, b.status)
            for a, b in diff.status_changes]
    columns = {name: [row[n] for row in rows] for n, name in enumerate(STATUS_SCHEMA)}
    return _typed(columns, STATUS_SCHEMA)


def _typed(columns: dict[str, list[Any]], schema: dict[str, Any]) -> pd.DataFrame:
    """Return the columns as one DataFrame, each converted by its schema entry."""
    return pd.DataFrame({name: convert(columns[name]) for name, convert in schema.items()})
