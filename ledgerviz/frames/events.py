"""The ``events`` frame: one row per event of the policy's view, recorded or synthetic."""

from __future__ import annotations

from collections import defaultdict
from itertools import compress, count, islice
from typing import Any

import numpy as np

from ledgerviz.frames.columns import (
    Column,
    bool_column,
    category_column,
    int_column,
    string_column,
    time_column,
)
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.lineage import SEED_MARKER, inherited_count
from ledgerviz.recovery.events import payload_result_call_id
from ledgerviz.recovery.vocab import BRANCHES

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


def _call_ids(view: SessionsView) -> list[Any]:
    """Return the call id of each event from the view's start on: a tool/call's or a
    tool/result's (None for the others)."""
    start, types, datas = view.start, view.rows("types"), view.rows("datas")
    call_ids: list[Any] = [None] * len(types)
    for i in view.indices_of(TOOL_EVENTS):
        data = datas[i - start]
        is_call = types[i - start] == "tool/call"
        call_ids[i - start] = data.get("callId") if is_call else payload_result_call_id(data)
    return call_ids


def _surface_ops(raw_ops: list[Any]) -> list[Any]:
    """Return ``append`` / ``replace`` / None per event from the raw ``surfaceOp`` values."""
    if dict not in set(map(type, raw_ops)):
        return raw_ops
    return [op.get("op") if isinstance(op, dict) else op for op in raw_ops]


def _inherited(view: SessionsView) -> np.ndarray:
    """Return True for every event a session inherited from its parent: the events before
    its own cut (its last ``session/end-seed {inherited: true}``; v0/v1: ``seedLength``)."""
    flags = np.zeros(len(view.events), dtype=bool)
    markers: dict[int, list[int]] = defaultdict(list)
    for position in view.indices_of(frozenset({SEED_MARKER})):
        markers[view.sessions[position]].append(position)
    start = 0
    for session, (log, analysis) in enumerate(zip(view.logs, view.analyses, strict=True)):
        own = ((view.seqs[i], view.field_at("datas", i)) for i in markers.get(session, ()))
        inherited = inherited_count(log.header, log.version, own)
        if inherited:  # every event before the first own recorded one
            recorded = compress(count(), analysis.recorded)
            first_own = next(islice(recorded, inherited, None), None)
            if first_own is None:  # a seed that runs past the log: every recorded event
                flags[start : start + len(analysis.events)] = analysis.recorded
            else:
                flags[start : start + first_own] = True
        start += len(analysis.events)
    return flags


def event_columns(view: SessionsView) -> dict[str, Column]:
    """Return the ``events`` columns of every session."""
    fields = view.fields
    return {
        "session": view.sessions,
        "seq": view.seq_array,
        "time": view.time_array,
        "type": view.type_array,
        "turn": fields.turns,
        "step": fields.steps,
        "call_id": _call_ids(view),
        "surface_op": _surface_ops(fields.surface_ops),
        "synthetic": view.synthetic,
        "recorded": view.recorded,
        "inherited": _inherited(view),
        "branch": view.branch,
        "recovery_code": view.recovery_code,
    }
