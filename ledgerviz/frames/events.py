"""The ``events`` frame: one row per event of the policy's view, recorded or synthetic."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames.columns import (
    Column,
    bool_column,
    category_column,
    coded_category_column,
    int_column,
    string_column,
    time_column,
)
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.lineage import SEED_MARKER, inherited_count
from ledgerviz.recovery.result_columns import RECOVERY_CODE_NAMES
from ledgerviz.recovery.vocab import BRANCHES, SURFACE_OPS

EVENT_SCHEMA = {
    "seq": int_column,
    "time": time_column,
    "type": category_column,
    "turn": int_column,
    "step": int_column,
    "call_id": string_column,
    "surface_op": category_column,
    "synthetic": bool_column,
    "recorded": bool_column,
    "inherited": bool_column,
    "branch": lambda values: category_column(values, BRANCHES),
    "recovery_code": category_column,
}

TOOL_EVENTS = frozenset({"tool/call", "tool/result"})
"""The event types that name a tool call (``calls`` and ``events.call_id`` read them)."""


def branch_column(codes: np.ndarray) -> pd.Categorical:
    """Return a ``branch`` categorical from codes into ``BRANCHES``."""
    return pd.Categorical.from_codes(codes, categories=_BRANCHES)


_BRANCHES = pd.Index(BRANCHES)


def call_ids(view: SessionsView) -> pd.arrays.StringArray:
    """Return the call id of each event from the view's start on: a tool/call's or a
    tool/result's (<NA> for the others)."""
    return string_column(view.values("call_id"))


def surface_ops(view: SessionsView) -> pd.Categorical:
    """Return each event's ``surfaceOp`` from the view's start on: ``append``, the ``op`` of
    an object, another raw value as it is (read from the few events that hold one), None."""
    ops = view.column("surface_op")
    others = np.flatnonzero(ops == SURFACE_OPS.index("other"))
    codes = ops.astype(np.int64) if len(others) else ops  # each other op: a code of its own
    names: list[Any] = [None, "append", "replace"]
    for i in others.tolist():
        op = view.events[view.start + i].get("surfaceOp")
        names.append(op.get("op") if isinstance(op, dict) else op)
    codes[others] = np.arange(3, len(names))
    return coded_category_column(codes - 1, names[1:])


def _inherited(view: SessionsView) -> np.ndarray:
    """Return True for every event a session inherited from its parent: the events before
    its own cut (its last ``session/end-seed {inherited: true}``; v0/v1: ``seedLength``)."""
    flags = np.zeros(len(view.events), dtype=bool)
    ends = np.cumsum([len(analysis.events) for analysis in view.analyses])
    markers: dict[int, list[int]] = defaultdict(list)
    for position in view.indices_of(frozenset({SEED_MARKER})):
        markers[view.sessions[position]].append(position)
    for session, log in enumerate(view.logs):
        own = ((view.seqs[i], view.data_at(i)) for i in markers.get(session, ()))
        inherited = inherited_count(log.header, log.version, own)
        if inherited:  # every event before the first own recorded one
            start, stop = (ends[session - 1] if session else 0), ends[session]
            recorded = view.recorded[start:stop]
            kept = np.flatnonzero(recorded)
            if inherited >= len(kept):  # a seed that runs past the log: every recorded event
                flags[start:stop] = recorded
            else:
                flags[start : start + kept[inherited]] = True
    return flags


def mark_columns(view: SessionsView, start: int = 0) -> dict[str, Column]:
    """Return the ``events`` columns of the analyses' marks (``synthetic``, ``recorded``,
    ``branch``, ``recovery_code``) from position ``start`` on, typed from their codes."""
    codes = view.recovery_code[start:] - 1  # int8; -1: none
    return {
        "synthetic": view.synthetic[start:],
        "recorded": view.recorded[start:],
        "branch": branch_column(view.branch[start:]),
        "recovery_code": coded_category_column(codes, RECOVERY_CODE_NAMES[1:]),
    }


def event_columns(view: SessionsView) -> dict[str, Column]:
    """Return the ``events`` columns of every session."""
    return {
        "session": view.sessions,
        "seq": view.seq_array,
        "time": view.time_array,
        "type": view.type_array,
        "turn": view.table.ints("turn"),
        "step": view.table.ints("step"),
        "call_id": call_ids(view),
        "surface_op": surface_ops(view),
        **mark_columns(view),
        "inherited": _inherited(view),
    }
