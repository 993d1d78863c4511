"""Crash closers and live failed-step recovery on hand-built and real ledgers."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import pytest

from ledgerviz.recovery import PendingCalls, analyze, crash_closers, failed_step_closers
from ledgerviz.recovery.closers import track
from ledgerviz.recovery.results import (
    INTERRUPTED_NOT_STARTED_TEXT,
    INTERRUPTED_UNKNOWN_TEXT,
)

from .build import LedgerBuilder, requesting
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
    b.answered_step("A")  # 2-6
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


class ReadLog(Sequence):
    """A list of events that records each position read."""

    def __init__(self, events: list[dict]) -> None:
        self.events = events
        self.read: set[int] = set()

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, position: int) -> dict:  # type: ignore[override]
        self.read.add(position)
        return self.events[position]


def two_turns(*, ended: bool = False) -> LedgerBuilder:
    """Turn 1 left a call unanswered (0-5); turn 2 dispatched B and crashed (6-10)."""
    b = requesting("A")
    b.tool_call("A")
    b.turn_end("interrupted")  # 5
    b.turn_start()  # 6
    b.user()
    b.step_start()
    b.assistant("B")  # 9
    b.tool_call("B")  # 10
    if ended:
        b.turn_end("interrupted")  # 11
    return b


SECOND_TURN_CLOSERS = [
    ("tool/result", 11, "B", "TOOL_OUTCOME_UNKNOWN"),
    ("step/end", 12, None, None),
    ("turn/end", 13, "interrupted", None),
]


def test_only_the_events_from_the_last_turn_boundary_on_are_read() -> None:
    log = ReadLog(two_turns().events)
    assert summary(crash_closers(log)) == SECOND_TURN_CLOSERS
    assert log.read == {6, 7, 8, 9, 10}

    ended = ReadLog(two_turns(ended=True).events)
    assert crash_closers(ended) == []
    assert ended.read == {11}


def test_a_boundary_on_the_second_line_is_found() -> None:
    b = LedgerBuilder()
    b.log()  # 0: before any turn
    b.turn_start()  # 1
    b.user()
    b.step_start()
    b.assistant("A")  # 4: requested, never dispatched
    log = ReadLog(b.events)
    assert summary(crash_closers(log)) == [
        ("tool/result", 5, "A", "TOOL_NOT_STARTED"),
        ("step/end", 6, None, None),
        ("turn/end", 7, "interrupted", None),
    ]
    assert log.read == {1, 2, 3, 4}


def test_a_log_without_a_turn_boundary_is_tracked_from_its_first_event() -> None:
    b = LedgerBuilder()
    b.assistant("A")  # 0
    b.tool_call("A")  # 1
    b.log()  # 2
    tracker = track(b.events)
    pending = [(c.call_id, c.name, c.requested_seq, c.call_seq) for c in tracker.pending.values()]
    assert pending == [("A", "bash", 0, 1)]  # the builder's calls are all named "bash"
    assert tracker.last_seq == 2


def test_an_iterator_of_events_is_read_as_the_list() -> None:
    assert summary(crash_closers(iter(two_turns().events))) == SECOND_TURN_CLOSERS


def test_seqless_events_are_numbered_by_their_position() -> None:
    # format §1: a normalised log's event seq is its 0-based position among the lines
    events = [{key: value for key, value in event.items() if key != "seq"}
              for event in two_turns().events]
    assert summary(crash_closers(events)) == SECOND_TURN_CLOSERS


def test_a_failed_steps_computed_result_takes_the_step_end_time_and_the_calls_step() -> None:
    b = requesting("A")  # step 1 starts at seq 2
    b.tool_call("A")  # 4
    b.step_end()  # 5: the step failed with A unanswered (time 1050)
    b.turn_end("error")
    analysis = analyze(b.events, policy="synthesize", version=3)
    computed = [e for e, logged in zip(analysis.events, analysis.recorded, strict=True)
                if not logged]
    assert [(e["type"], e["time"], e["data"]["turn"], e["data"]["step"], e["sourceEventSeqs"],
             e["data"]["error"]["code"]) for e in computed] == [
        ("tool/result", 1050, 1, 1, [4], "TOOL_OUTCOME_UNKNOWN")
    ]
    message = computed[0]["data"]["message"]  # a v3 ledger: the v0-v3 wrapper form (§9.2)
    assert (message["role"], message["content"][0]["type"]) == ("user", "tool-result")


def test_a_dispatch_of_a_call_never_requested_is_ignored() -> None:
    # format §9.1: a tool/call whose call id no assistant message requested changes nothing
    b = requesting("A")  # 3
    b.tool_call("Z")  # 4: never requested
    b.tool_call("A")  # 5
    analysis = analyze(b.events, policy="recorded")  # no result, not even a synthetic one
    assert [(c.call_id, c.name, c.arguments, c.requested_seq, c.dispatched_seq, c.is_error)
            for c in analysis.calls] == [("A", "bash", '{"n":1}', 3, 5, False)]


@pytest.mark.parametrize(("version", "generation"), [(0, "v0-v3"), (3, "v0-v3"), (4, "v4")])
def test_an_analysis_names_the_closer_generation_of_its_version(version: int,
                                                                generation: str) -> None:
    analysis = analyze(requesting("A").events, policy="synthesize", version=version)
    assert analysis.generation == generation


def test_recorded_results_are_synthetic_by_their_code_or_by_their_id() -> None:
    def one_result(**error: str) -> list[dict]:
        b = requesting("A")
        b.tool_call("A")  # 4
        b.tool_result("A", is_error=True, **error)  # 5
        b.step_end()
        b.turn_end()
        return b.events

    by_code = analyze(one_result(code="TOOL_OUTCOME_UNKNOWN"), policy="synthesize")
    assert (by_code.synthetic[5], by_code.recovery_code[5]) == (True, "TOOL_OUTCOME_UNKNOWN")
    by_id = one_result()
    by_id[5]["data"]["message"]["id"] = "interrupted-tool-result-A-5"  # no error code
    analysis = analyze(by_id, policy="synthesize")
    assert (analysis.synthetic[5], analysis.recovery_code[5]) == (True, None)
    plain = analyze(one_result(code="ENOENT"), policy="synthesize")
    assert (plain.synthetic[5], plain.recovery_code[5]) == (False, None)


def test_an_assistant_message_event_without_a_message_requests_nothing() -> None:
    b = requesting("A")  # 3
    b.events.append({"type": "assistant/message", "seq": 4, "time": 1040,
                     "data": {"turn": 1, "step": 1}, "surfaceOp": "append"})
    analysis = analyze(b.events, policy="recorded")
    assert [c.call_id for c in analysis.calls] == ["A"]


def test_the_tracker_takes_an_events_own_seq_when_none_is_given() -> None:
    tracker = PendingCalls()
    tracker.observe({"type": "turn/start", "seq": 7, "time": 5, "data": {"turn": 1}})
    tracker.observe({"type": "turn/end", "time": 6, "data": {"turn": 1}})  # seqless: its position
    assert (tracker.last_seq, tracker.last_time) == (1, 6)
    tracker.observe({"type": "turn/start", "time": 8, "data": {"turn": 2}})
    assert (tracker.last_seq, tracker.last_time) == (2, 8)
    tracker = PendingCalls()
    tracker.observe({"type": "turn/start", "seq": 7, "time": 5, "data": {"turn": 1}})
    assert tracker.last_seq == 7
