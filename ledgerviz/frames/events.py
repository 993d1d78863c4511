"""The ``events`` frame: one row per event of the policy's view, recorded or synthetic."""

from __future__ import annotations

from typing import Any

from ledgerviz.frames.columns import (
    bool_column,
    category_column,
    int_column,
    string_column,
    time_column,
)
from ledgerviz.frames.view import SessionView
from ledgerviz.recovery.events import result_call_id

BRANCHES = ("active", "abandoned", "log")

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
    "branch": lambda values: category_column(values, BRANCHES),
    "recovery_code": category_column,
}


_CALL_TYPES = frozenset({"tool/call", "tool/result"})


def _call_id(kind: str, event: dict[str, Any], data: dict[str, Any]) -> Any:
    """Return the call id of a tool/call or tool/result event."""
    return data.get("callId") if kind == "tool/call" else result_call_id(event)


def _surface_op(event: dict[str, Any]) -> Any:
    """Return ``append`` / ``replace`` / None for an event's surfaceOp."""
    op = event.get("surfaceOp")
    return op.get("op") if isinstance(op, dict) else op


def event_columns(view: SessionView) -> dict[str, list[Any]]:
    """Return the ``events`` columns of one session as lists."""
    analysis = view.analysis
    events, types, datas = analysis.events, view.types, view.datas
    return {
        "seq": analysis.seqs,
        "time": view.times,
        "type": types,
        "turn": [data.get("turn") for data in datas],
        "step": [data.get("step") for data in datas],
        "call_id": [
            _call_id(k, e, d) if k in _CALL_TYPES else None
            for k, e, d in zip(types, events, datas, strict=True)
        ],
        "surface_op": [_surface_op(e) if "surfaceOp" in e else None for e in events],
        "synthetic": analysis.synthetic,
        "recorded": analysis.recorded,
        "branch": analysis.branch,
        "recovery_code": analysis.recovery_code,
    }
