"""Crash closers and live failed-step recovery on hand-built and real ledgers."""

from __future__ import annotations

import copy

from ledgerviz.recovery import PendingCalls, crash_closers, failed_step_closers
from ledgerviz.recovery.results import (
    INTERRUPTED_NOT_STARTED_TEXT,
    INTERRUPTED_UNKNOWN_TEXT,
)

from .build import LedgerBuilder
from .ledgers import dsh_fixture


def summary(events: list[dict]) -> list[tuple]:
    """(type, seq, call id or reason kind, error code) per event."""
    rows = []
    for e in events:
        data = e["data"]
        message = data.get("message") or {}
        detail = message.get("toolCallId") or (data.get("reason") or {}).get("kind")
        rows.append((e["type"], e.get("seq"), detail, (data.get("error") or {}).get("code")))
    return rows


def parallel_crash(version: int) -> LedgerBuilder:
    b = LedgerBuilder(version)
    b.turn_start()
    b.user()
    b.step_start()
    b.assistant("A", "B", "C")  # seq 3
    b.tool_call("A")  # 4
    b.tool_call("B")  # 5
    b.log()
    b.tool_result("A")  # 7
    return b


def test_parallel_calls_some_results_landed() -> None:
    b = parallel_crash(4)
    closers = crash_closers(b.events)
    assert summary(closers) == [
        ("tool/result", 8, "B", "TOOL_OUTCOME_UNKNOWN"),
        ("tool/result", 9, "C", "TOOL_NOT_STARTED"),
        ("step/end", 10, None, None),
        ("turn/end", 11, "interrupted", None),
    ]
    unknown, not_started = closers[0], closers[1]
    assert unknown["sourceEventSeqs"] == [5]
    assert "sourceEventSeqs" not in not_started
    assert unknown["data"]["message"]["id"] == "interrupted-tool-result-B-8"
    assert unknown["data"]["message"]["content"][0]["text"] == INTERRUPTED_UNKNOWN_TEXT
    assert not_started["data"]["message"]["content"][0]["text"] == INTERRUPTED_NOT_STARTED_TEXT
    assert {c["time"] for c in closers} == {b.events[-1]["time"]}
    assert all(c["data"]["turn"] == 1 and c["data"].get("step", 1) == 1 for c in closers[:3])


def test_v0_v3_generation_uses_wrapper_form() -> None:
    closers = crash_closers(parallel_crash(3).events, generation="v0-v3")
    message = closers[0]["data"]["message"]
    assert message["role"] == "user"
    assert message["content"][0]["type"] == "tool-result"
    assert message["content"][0]["toolCallId"] == "B"


def test_forked_cause_changes_ids_texts_and_reason() -> None:
    closers = crash_closers(parallel_crash(4).events, cause="forked")
    assert closers[0]["data"]["message"]["id"] == "forked-tool-result-B-8"
    assert closers[-1]["data"]["reason"] == {"kind": "forked"}


def test_crash_in_later_step_only_closes_open_step() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user()
    b.step_start()
    b.assistant("A")
    b.tool_call("A")
    b.tool_result("A")
    b.step_end()
    b.step_start()  # 7
    b.assistant("D")  # 8
    assert summary(crash_closers(b.events)) == [
        ("tool/result", 9, "D", "TOOL_NOT_STARTED"),
        ("step/end", 10, None, None),
        ("turn/end", 11, "interrupted", None),
    ]
    assert crash_closers(b.events)[0]["data"]["step"] == 2


def test_unanswered_call_in_closed_step_is_left_alone() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.step_start()
    b.assistant("A")
    b.tool_call("A")
    b.step_end()  # scheduler failure: no result, step closed
    assert summary(crash_closers(b.events)) == [("turn/end", 5, "interrupted", None)]


def test_crash_right_after_step_end_or_turn_start() -> None:
    b = LedgerBuilder()
    b.turn_start()
    assert summary(crash_closers(b.events)) == [("turn/end", 1, "interrupted", None)]
    b.step_start()
    b.assistant(text="done")
    b.step_end()
    assert summary(crash_closers(b.events)) == [("turn/end", 4, "interrupted", None)]
    b.turn_end()
    assert crash_closers(b.events) == []


def test_closer_seqs_follow_the_last_recorded_seq_not_its_position() -> None:
    events = [{"type": "turn/start", "seq": 10, "time": 7, "data": {"turn": 3}},
              {"type": "step/start", "seq": 12, "time": 8, "data": {"turn": 3, "step": 1}}]
    assert summary(crash_closers(events)) == [("step/end", 13, None, None),
                                              ("turn/end", 14, "interrupted", None)]


def test_empty_ledger_has_no_closers() -> None:
    assert crash_closers([]) == []


def test_semantic_checkpoint_reproduces_recorded_closers() -> None:
    _, events = dsh_fixture("semantic-checkpoint")
    assert crash_closers(events, generation="v0-v3") == []
    computed = crash_closers(events[:5], generation="v0-v3")
    assert [c["seq"] for c in computed] == [5, 6, 7]
    assert all("time" not in c for c in computed)  # the snapshot has no times
    assert [{k: v for k, v in c.items() if k != "seq"} for c in computed] == events[5:8]


def test_repair_is_idempotent_and_input_untouched() -> None:
    events = parallel_crash(4).events
    before = copy.deepcopy(events)
    closers = crash_closers(events)
    assert events == before
    assert crash_closers(events + closers) == []


def test_live_failed_step_closers() -> None:
    b = parallel_crash(4)
    tracker = PendingCalls()
    for event in b.events:
        tracker.observe(event)
    assert list(tracker.pending) == ["B", "C"]
    assert tracker.pending["B"].call_seq == 5 and tracker.pending["C"].call_seq is None
    failure = {"kind": "error", "error": {"message": "scheduler failed", "code": "UNKNOWN"}}
    closers = failed_step_closers(tracker, failure, next_seq=8, time=99)
    assert summary(closers) == [
        ("tool/result", 8, "B", "TOOL_OUTCOME_UNKNOWN"),
        ("tool/result", 9, "C", "TOOL_NOT_STARTED"),
        ("step/end", 10, None, None),
        ("turn/end", 11, "error", None),
    ]
    assert closers[-1]["data"]["reason"] == failure
    assert closers[-1]["data"]["reason"] is not failure
    assert [c["data"]["message"]["id"] for c in closers[:2]] == [
        "interrupted-tool-result-B-8",
        "interrupted-tool-result-C-9",
    ]
    assert {c["time"] for c in closers} == {99}
    # the runtime's own live recovery, once recorded, leaves nothing to repair
    assert crash_closers(b.events + closers) == []


def test_tracker_rules_repeated_id_and_foreign_call() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.step_start()
    b.assistant("A", "B")
    b.tool_call("A")
    b.tool_call("Z")  # never requested: ignored
    b.assistant("A")  # repeated id keeps its position, loses its call seq
    tracker = PendingCalls()
    for event in b.events:
        tracker.observe(event)
    assert list(tracker.pending) == ["A", "B"]
    assert tracker.pending["A"].call_seq is None
    assert tracker.pending["A"].requested_seq == 5
    assert (tracker.open_turn, tracker.open_step, tracker.last_seq) == (1, 1, 5)


def test_live_failed_step_closers_in_the_v0_v3_generation() -> None:
    # §9.2: v0-v3 results are user-role wrappers holding one tool-result block
    b = parallel_crash(3)
    tracker = PendingCalls()
    for event in b.events:
        tracker.observe(event)
    closers = failed_step_closers(tracker, {"kind": "error"}, next_seq=8, time=99,
                                  generation="v0-v3")
    message = closers[0]["data"]["message"]
    assert (message["id"], message["role"]) == ("interrupted-tool-result-B-8", "user")
    assert [block["type"] for block in message["content"]] == ["tool-result"]
    assert message["content"][0]["toolCallId"] == "B"


def test_a_tracker_numbers_seqless_events_by_their_position() -> None:
    tracker = PendingCalls()
    tracker.observe({"type": "turn/start", "data": {"turn": 1}})
    tracker.observe({"type": "step/start", "data": {"turn": 1, "step": 1}})
    assert tracker.last_seq == 1
