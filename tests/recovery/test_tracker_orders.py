"""The pending-call tracker and the crash closers after every order of boundary events.

A runtime can leave calls pending and then write any boundary event: ``step/end`` (the
normal close), ``step/start`` (a new step without closing the last one, as v0-era loops
did), ``turn/start`` (a crash without repair, then a new turn) or ``turn/end``. The
expected state comes from two independent sources: literal cases worked out by hand from
LEDGER_FORMAT.md §9.1, and a reference model of the §9.1 table written here, run over
every sequence of up to three boundary events (or new requests).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from ledgerviz.recovery import PendingCalls, analyze, crash_closers

from .build import LedgerBuilder

MOVES = ("step/start", "step/end", "turn/start", "turn/end", "request")


def pending_prefix() -> LedgerBuilder:
    """Turn 1, step 1: A dispatched at seq 4, B never; the crash can come next."""
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user()  # 1
    b.step_start()  # 2
    b.assistant("A", "B")  # 3
    b.tool_call("A")  # 4
    return b


def apply(b: LedgerBuilder, move: str) -> None:
    if move == "step/start":
        b.step_start()
    elif move == "step/end":
        b.step_end()
    elif move == "turn/start":
        b.turn_start()
    elif move == "turn/end":
        b.turn_end()
    else:  # a new request whose call is dispatched
        call_id = f"C{len(b.events)}"
        b.assistant(call_id)
        b.tool_call(call_id)


def tracked(events: list[dict[str, Any]]) -> PendingCalls:
    tracker = PendingCalls()
    for event in events:
        tracker.observe(event)
    return tracker


def state(tracker: PendingCalls) -> tuple:
    pending = [(c.call_id, c.turn, c.step, c.call_seq) for c in tracker.pending.values()]
    return tracker.open_turn, tracker.open_step, pending


def closer_rows(closers: list[dict[str, Any]]) -> list[tuple]:
    """(type, seq, turn, step, call id, code, cited seqs) of each closer."""
    rows = []
    for e in closers:
        data = e["data"]
        rows.append(
            (
                e["type"],
                e["seq"],
                data["turn"],
                data.get("step"),
                ((data.get("message") or {}).get("source") or {}).get("callId"),
                (data.get("error") or {}).get("code"),
                e.get("sourceEventSeqs"),
            )
        )
    return rows


# --- literal cases ---------------------------------------------------------------------

LITERAL = {
    # a new step without step/end keeps the old step's calls pending (format §9.1)
    ("step/start",): (
        (1, 2, [("A", 1, 1, 4), ("B", 1, 1, None)]),
        [
            ("tool/result", 6, 1, 1, "A", "TOOL_OUTCOME_UNKNOWN", [4]),
            ("tool/result", 7, 1, 1, "B", "TOOL_NOT_STARTED", None),
            ("step/end", 8, 1, 2, None, None, None),
            ("turn/end", 9, 1, None, None, None, None),
        ],
    ),
    ("step/end",): ((1, None, []), [("turn/end", 6, 1, None, None, None, None)]),
    ("turn/end",): ((None, None, []), []),
    ("turn/start",): ((2, None, []), [("turn/end", 6, 2, None, None, None, None)]),
    ("step/start", "step/end"): ((1, None, []), [("turn/end", 7, 1, None, None, None, None)]),
    ("step/start", "request"): (
        (1, 2, [("A", 1, 1, 4), ("B", 1, 1, None), ("C6", 1, 2, 7)]),
        [
            ("tool/result", 8, 1, 1, "A", "TOOL_OUTCOME_UNKNOWN", [4]),
            ("tool/result", 9, 1, 1, "B", "TOOL_NOT_STARTED", None),
            ("tool/result", 10, 1, 2, "C6", "TOOL_OUTCOME_UNKNOWN", [7]),
            ("step/end", 11, 1, 2, None, None, None),
            ("turn/end", 12, 1, None, None, None, None),
        ],
    ),
    ("turn/start", "step/start"): (
        (2, 1, []),
        [("step/end", 7, 2, 1, None, None, None), ("turn/end", 8, 2, None, None, None, None)],
    ),
    ("turn/end", "step/start"): ((None, 2, []), []),
}


@pytest.mark.parametrize("moves", list(LITERAL), ids=" > ".join)
def test_literal_boundary_orders(moves: tuple[str, ...]) -> None:
    b = pending_prefix()
    for move in moves:
        apply(b, move)
    expected_state, expected_closers = LITERAL[moves]
    assert state(tracked(b.events)) == expected_state
    assert closer_rows(crash_closers(b.events)) == expected_closers
    synth = analyze(b.events, policy="synthesize")
    assert closer_rows(synth.closers) == expected_closers


# --- every order against a reference model of the §9.1 table ------------------------------


def reference_state(events: list[dict[str, Any]]) -> tuple:
    """open turn, open step and pending calls by the table of format §9.1, line by line."""
    open_turn = open_step = None
    pending: dict[str, list[Any]] = {}
    for e in events:
        kind, data = e["type"], e["data"]
        if kind in ("turn/start", "turn/end"):
            open_turn = data["turn"] if kind == "turn/start" else None
            open_step = None
            pending = {}
        elif kind == "step/start":
            open_step = data["step"]
        elif kind == "step/end":
            open_step = None
            pending = {}
        elif kind == "assistant/message":
            for block in data["message"]["content"]:
                if block["type"] == "tool-call":
                    pending[block["id"]] = [block["id"], data["turn"], data["step"], None]
        elif kind == "tool/call" and data["callId"] in pending:
            pending[data["callId"]][3] = e["seq"]
        elif kind == "tool/result":
            pending.pop(data["message"]["source"]["callId"], None)
    return open_turn, open_step, [tuple(call) for call in pending.values()]


def reference_closers(events: list[dict[str, Any]]) -> list[tuple]:
    open_turn, open_step, pending = reference_state(events)
    if open_turn is None:
        return []
    seq = events[-1]["seq"] + 1
    rows = []
    for call_id, _, step, call_seq in pending:
        code = "TOOL_NOT_STARTED" if call_seq is None else "TOOL_OUTCOME_UNKNOWN"
        cited = None if call_seq is None else [call_seq]
        rows.append(("tool/result", seq, open_turn, step, call_id, code, cited))
        seq += 1
    if open_step is not None:
        rows.append(("step/end", seq, open_turn, open_step, None, None, None))
        seq += 1
    rows.append(("turn/end", seq, open_turn, None, None, None, None))
    return rows


ORDERS = [m for n in (1, 2, 3) for m in itertools.product(MOVES, repeat=n)]


def test_every_order_is_tried() -> None:
    assert len(ORDERS) == 5 + 25 + 125
    assert set(LITERAL) <= set(ORDERS)


@pytest.mark.parametrize("moves", ORDERS, ids=" > ".join)
def test_every_boundary_order_matches_the_format_table(moves: tuple[str, ...]) -> None:
    b = pending_prefix()
    for move in moves:
        apply(b, move)
    assert state(tracked(b.events)) == reference_state(b.events)
    expected = reference_closers(b.events)
    assert closer_rows(crash_closers(b.events)) == expected
    assert closer_rows(analyze(b.events, policy="synthesize").closers) == expected
    # closing the tail leaves nothing open
    assert crash_closers(b.events + crash_closers(b.events)) == []
