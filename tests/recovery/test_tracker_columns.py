"""The tracker fed the reader's columns (``observe_columns``, ``observe_fields``).

Expected values: the runtime's own crash repair (the conformance vectors) for every cut
of every input, fed in runs of every length from 1 to 4 events, and cases worked out by
hand from LEDGER_FORMAT.md §9.1.
"""

from __future__ import annotations

from typing import Any

import pytest

from ledgerviz.recovery import PendingCalls
from ledgerviz.recovery.closers import tail_closers
from ledgerviz.recovery.events import data_of
from ledgerviz.recovery.payload import payload_result_facts
from ledgerviz.recovery.tracker import last_turn_boundary

from .build import LedgerBuilder
from .ledgers import conformance_cases, conformance_input

CASES = conformance_cases()


def fed_in_runs(events: list[dict[str, Any]], run: int) -> PendingCalls:
    """Return a tracker fed ``events`` as columns, ``run`` events at a time."""
    tracker = PendingCalls()
    for start in range(0, len(events), run):
        part = events[start : start + run]
        tracker.observe_columns(
            [e.get("type") for e in part],
            [e.get("seq", start + i) for i, e in enumerate(part)],
            [e.get("time") for e in part],
            [data_of(e) for e in part],
        )
    return tracker


@pytest.mark.parametrize("run", [1, 2, 3, 4, 10_000])
def test_columns_in_runs_give_the_runtime_closers(run: int) -> None:
    checked = 0
    for case in CASES:
        _, events = conformance_input(case["input"])
        tracker = fed_in_runs(list(events[: case["cut"]]), run)
        closers = tail_closers(tracker, generation=case["generation"], cause=case["cause"])
        assert closers == case["closers"], (case["input"], case["cut"], case["cause"])
        checked += 1
    assert checked == 1865


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        ([], 0),
        (["step/start"], 0),
        (["turn/start", "step/start"], 0),
        (["step/end", "turn/end", "step/start"], 1),
        (["turn/start", "user/message", "turn/end"], 2),
        (["turn/end", "x", "turn/start", "y", "z"], 2),
        (["turn/started", ["turn/start"], None, 7], 0),  # near misses, unhashable values
    ],
)
def test_last_turn_boundary(types: list[Any], expected: int) -> None:
    assert last_turn_boundary(types) == expected


@pytest.mark.parametrize("run", [1, 3, 5, 8])
def test_a_run_is_applied_from_its_last_turn_boundary(run: int) -> None:
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.step_start()  # 1
    b.assistant("old")  # 2: cleared by the turn/start at 4
    b.tool_call("old")  # 3
    b.turn_start()  # 4: turn 2
    b.step_start()  # 5
    b.assistant("A", "B")  # 6
    b.tool_call("A")  # 7
    tracker = fed_in_runs(b.events, run)
    assert (tracker.open_turn, tracker.open_step) == (2, 1)
    assert [(c.call_id, c.turn, c.step, c.call_seq, c.name, c.requested_seq)
            for c in tracker.pending.values()] == [
        ("A", 2, 1, 7, "bash", 6),
        ("B", 2, 1, None, "bash", 6),
    ]
    assert (tracker.last_seq, tracker.last_time) == (7, 1070)
    # the events skipped still count as positions, in every run: a seqless event is number 8
    tracker.observe({"type": "tool/call", "data": {"callId": "B"}})
    assert tracker.last_seq == 8 and tracker.pending["B"].call_seq == 8
    assert tracker.last_time is None


def test_calls_stay_pending_across_runs_without_a_boundary() -> None:
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.step_start()  # 1
    b.assistant("A", "B")  # 2
    b.tool_call("A")  # 3
    b.tool_result("A")  # 4
    b.tool_call("B")  # 5
    tracker = PendingCalls()
    for part in ([0, 1, 2], [3], [4, 5]):
        events = [b.events[i] for i in part]
        tracker.observe_columns([e["type"] for e in events], part,
                                [e["time"] for e in events], [e["data"] for e in events])
    assert [(c.call_id, c.call_seq, c.requested_seq) for c in tracker.pending.values()] == [
        ("B", 5, 2)
    ]
    assert (tracker.open_turn, tracker.open_step, tracker.last_seq) == (1, 1, 5)


def test_a_run_ending_in_turn_end_leaves_nothing_open() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.step_start()
    b.assistant("A")
    b.turn_end()  # 3
    tracker = fed_in_runs(b.events, 4)
    assert (tracker.open_turn, tracker.open_step, tracker.pending) == (None, None, {})
    assert (tracker.last_seq, tracker.last_time) == (3, 1030)


def test_observe_fields_reads_only_what_it_is_given() -> None:
    tracker = PendingCalls()
    tracker.observe_fields("turn/start", 10, 5, {"turn": 3})
    tracker.observe_fields("step/start", 11, 6, {"step": 2})
    message = {"content": [{"type": "tool-call", "id": "c", "name": "ls"}]}
    tracker.observe_fields("assistant/message", 12, 7, {"turn": 3, "step": 2, "message": message})
    tracker.observe_fields("tool/call", 13, None, {"callId": "c"})
    assert (tracker.open_turn, tracker.open_step, tracker.last_seq, tracker.last_time) == (
        3, 2, 13, None)
    (call,) = tracker.pending.values()
    assert (call.call_id, call.turn, call.step, call.call_seq, call.name, call.requested_seq) == (
        "c", 3, 2, 13, "ls", 12)
    # the runtime removes the call named by message.source.callId, nothing else
    wrapped = {"message": {"content": [{"type": "tool-result", "toolCallId": "c"}]}}
    tracker.observe_fields("tool/result", 14, 8, wrapped)
    assert len(tracker.pending) == 1
    wrapped["message"]["source"] = {"kind": "tool", "callId": "c"}  # the v0-v3 wrapper form
    tracker.observe_fields("tool/result", 14, 8, wrapped)
    assert tracker.pending == {} and tracker.open_step == 2
    tracker.observe_fields("step/end", 15, 9, {})
    assert tracker.open_step is None and tracker.open_turn == 3


def test_payload_result_facts() -> None:
    message = {"id": "interrupted-tool-result-c-9", "toolCallId": "c", "isError": True}
    assert payload_result_facts({"message": message}) == ("c", None, True, True)
    unknown = {"error": {"code": "TOOL_OUTCOME_UNKNOWN"}, "message": {"id": "m", "toolCallId": "d"}}
    assert payload_result_facts(unknown) == ("d", "TOOL_OUTCOME_UNKNOWN", False, True)
    assert payload_result_facts({"error": {"code": "E"}}) == (None, "E", False, False)
    assert payload_result_facts({"error": "E", "message": "m"}) == (None, None, False, False)


def test_columns_of_unequal_length_are_refused() -> None:
    data = {"turn": 1}
    with pytest.raises(ValueError, match="zip"):
        PendingCalls().observe_columns(["turn/start", "user/message"], [0, 1], [None], [data, {}])
