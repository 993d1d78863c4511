"""analyze(): annotations, call facts, synthesize and fork policies, surface fold."""

from __future__ import annotations

import copy

import pytest

from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery import analyze, project_context
from ledgerviz.recovery.analysis import POLICIES

from .build import LedgerBuilder
from .ledgers import DSH, dsh_fixture, read_ledger


def active_seqs(analysis) -> list:
    return [analysis.seqs[k] for k in analysis.surface]


def by_call(analysis) -> dict:
    return {c.call_id: c for c in analysis.calls}


def test_semantic_checkpoint_under_each_policy() -> None:
    _, events = dsh_fixture("semantic-checkpoint")
    recorded = analyze(events, policy="recorded", version=2)
    assert [i for i, s in enumerate(recorded.synthetic) if s] == [5, 6, 7]
    assert recorded.recovery_code[5] == "TOOL_OUTCOME_UNKNOWN"
    assert active_seqs(recorded) == [1, 3, 5, 16, 17, 21]
    (call,) = recorded.calls
    assert (call.call_id, call.requested_seq, call.dispatched_seq, call.result_seq) == (
        "unknown-outcome-call",
        3,
        4,
        5,
    )
    assert (call.status, call.settled, call.branch) == ("outcome_unknown", False, "active")

    fork = analyze(events, policy="fork", version=2)
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [3, 5]
    assert active_seqs(fork) == [1, 16, 17, 21]
    assert fork.branch[3] == fork.branch[5] == "abandoned"
    assert fork.branch[4] == "log" and fork.branch[16] == "active"
    assert fork.calls[0].branch == "abandoned" and not fork.calls[0].settled
    assert fork.closers == []


def scheduler_failure(version: int = 4) -> LedgerBuilder:
    """A v4-era runtime without live recovery: the failed step closes with calls unpaired."""
    b = LedgerBuilder(version)
    b.turn_start()
    b.user()  # 1
    b.step_start()
    b.assistant("A", "B", "C")  # 3
    b.tool_call("A")  # 4
    b.tool_result("A")  # 5
    b.tool_call("B")  # 6
    b.step_end()  # 7
    b.turn_end("error")  # 8
    return b


def test_synthesize_fills_closed_step_before_its_step_end() -> None:
    events = scheduler_failure().events
    recorded = analyze(events, policy="recorded")
    assert recorded.unanswered_in_closed_steps == ["B", "C"]
    assert len(recorded.events) == 9

    synth = analyze(events, policy="synthesize")
    assert synth.unanswered_in_closed_steps == ["B", "C"]
    assert [e["type"] for e in synth.events[6:10]] == [
        "tool/call",
        "tool/result",
        "tool/result",
        "step/end",
    ]
    inserted = synth.events[7:9]
    assert all("seq" not in e for e in inserted)
    assert synth.seqs[7:10] == [None, None, 7]
    assert synth.recovery_code[7:9] == ["TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED"]
    assert synth.recorded[7:9] == [False, False] and synth.synthetic[7:9] == [True, True]
    assert [e["data"]["message"]["id"] for e in inserted] == [
        "interrupted-tool-result-B-7",
        "interrupted-tool-result-C-8",
    ]
    assert inserted[0]["sourceEventSeqs"] == [6]
    assert synth.closers == []
    calls = by_call(synth)
    assert [calls[c].status for c in "ABC"] == ["ok", "outcome_unknown", "not_started"]
    assert calls["B"].result_seq is None and calls["B"].error_code == "TOOL_OUTCOME_UNKNOWN"


def test_fork_on_closed_step_abandons_and_leaves_no_unknown_result() -> None:
    b = scheduler_failure()
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [3, 5]
    assert active_seqs(fork) == [1]
    assert fork.closers == []  # the fork policy appends nothing to the parent
    calls = by_call(fork)
    assert {c.branch for c in calls.values()} == {"abandoned"}
    assert not any(c.settled for c in calls.values())
    # a recorded log that went on: its next submitted turn starts from the prefix plus
    # its own message
    b.turn_start()
    b.user("again")  # 10
    again = analyze(b.events, policy="fork")
    assert again.fork_points == [3]
    assert [e["type"] for e in again.closers] == ["turn/end"]  # turn 2 is still open
    assert active_seqs(again) == [1, 10]


def test_not_started_call_is_no_fork_point() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user()
    b.step_start()
    b.assistant("A")  # 3, never dispatched
    b.step_end()
    b.turn_end("error")
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == []
    assert fork.unanswered_in_closed_steps == ["A"]
    assert [fork.recovery_code[k] for k in fork.surface] == [None, None, "TOOL_NOT_STARTED"]
    assert by_call(fork)["A"].settled


def crash_then_two_turns() -> LedgerBuilder:
    b = LedgerBuilder()
    b.turn_start()
    b.user("one")  # 1
    b.step_start()
    b.assistant("A")  # 3
    b.tool_call("A")  # 4
    b.user("steer", kind="user")  # 5: typed in the same turn, does not end abandonment
    b.tool_result("A", code="TOOL_OUTCOME_UNKNOWN", is_error=True)  # 6
    b.step_end()
    b.turn_end("interrupted")  # 8
    b.turn_start()
    b.user("auto", kind="goal")  # 10: not typed by the user
    b.user("two")  # 11: the next submitted turn
    b.answered_step("X")  # 12-16: X's result at 15 is a durable fact on the new branch
    b.step_start()
    b.assistant("Y")  # 18: second unresolved call -> second fork
    b.tool_call("Y")  # 19
    return b


def test_second_unresolved_call_forks_again() -> None:
    b = crash_then_two_turns()
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3, 18]
    assert fork.abandoned_seqs == [3, 5, 6, 10, 18]
    assert active_seqs(fork) == [1, 11, 13, 15]
    assert fork.closers == []  # Y is pending: the policy seeds a child, the parent stays
    calls = by_call(fork)
    assert (calls["X"].branch, calls["X"].settled) == ("active", True)
    assert (calls["Y"].branch, calls["Y"].status) == ("abandoned", "outcome_unknown")
    # synthesize keeps everything on the surface and answers Y
    synth = analyze(b.events, policy="synthesize")
    assert active_seqs(synth) == [1, 3, 5, 6, 10, 11, 13, 15, 18, 20]
    assert synth.fork_points == [] and synth.abandoned_seqs == []


def test_explicit_rewind_and_restore_are_honoured() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user("one")  # 1
    b.step_start()
    b.assistant(text="answer")  # 3
    b.step_end()
    b.turn_end()
    rewind = b.log("surface/rewind")  # 6
    b.events[rewind]["data"] = {"start": 1, "end": 3, "shadowedSeqs": [1, 3]}
    for policy in POLICIES:
        a = analyze(b.events, policy=policy)
        assert active_seqs(a) == [] and a.abandoned_seqs == [1, 3]
        assert not a.synthetic[rewind]  # starts at a user message: an undo, not a fork
    restore = b.log("surface/restore")
    b.events[restore]["data"] = {"rewindSeq": rewind}
    assert active_seqs(analyze(b.events, policy="recorded")) == [1, 3]


@pytest.mark.parametrize(("start", "end"), [("start", "end"), ("startSeq", "endSeq")])
def test_replacement_spellings_splice_by_surface_position(start: str, end: str) -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user("a")  # 1
    b.user("b")  # 2
    b.user("c")  # 3
    first = b.user("summary")  # 4 replaces 1..2
    b.events[first]["surfaceOp"] = {"op": "replace", start: 1, end: 2}
    second = b.user("summary 2")  # 5 replaces 4 (now at position 0) .. 3
    b.events[second]["surfaceOp"] = {"op": "replace", start: 4, end: 3}
    b.user("d")  # 6
    a = analyze(b.events, policy="recorded")
    assert active_seqs(a) == [5, 6]
    assert [a.branch[k] for k in range(1, 7)] == ["log", "log", "log", "log", "active", "active"]


def test_status_ok_and_error_and_input_untouched() -> None:
    b = LedgerBuilder(3)
    b.turn_start()
    b.step_start()
    b.assistant("A", "B")
    b.tool_call("A")
    b.tool_call("B")
    b.tool_result("A")
    b.tool_result("B", is_error=True, code="ENOENT")
    b.step_end()
    b.turn_end()
    before = copy.deepcopy(b.events)
    for policy in POLICIES:
        a = analyze(b.events, policy=policy, version=3)
        calls = by_call(a)
        assert (calls["A"].status, calls["B"].status) == ("ok", "error")
        assert calls["B"].error_code == "ENOENT" and calls["B"].is_error
        assert a.closers == [] and not any(a.synthetic)
    assert b.events == before


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown recovery policy"):
        analyze([], policy="optimistic")  # type: ignore[arg-type]


def test_empty_ledger() -> None:
    for policy in POLICIES:
        a = analyze([], policy=policy)
        assert (a.events, a.calls, a.closers, a.surface) == ([], [], [], [])
        assert project_context(a) == []


@pytest.mark.parametrize("path", sorted(DSH.glob("*.jsonl")), ids=lambda p: p.name)
def test_a_table_of_the_events_changes_nothing_at_any_cut(path) -> None:
    header, events = read_ledger(path)
    version = header.get("version")
    for n in range(len(events) + 1):
        prefix = events[:n]
        for policy in POLICIES:
            plain = analyze(prefix, policy=policy, version=version)
            given = analyze(prefix, policy=policy, version=version, columns=EventTable.of(prefix))
            assert given == plain, (n, policy)


def test_seqless_snapshot_with_columns_numbers_events_by_position() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user("hi")
    b.step_start()
    b.assistant("A")
    events = [{key: value for key, value in e.items() if key != "seq"} for e in b.events]
    given = analyze(events, policy="synthesize", version=4, columns=EventTable.of(events))
    assert given == analyze(events, policy="synthesize", version=4)
    assert given.seqs[:4] == [0, 1, 2, 3]
    assert given.calls[0].requested_seq == 3


def test_columns_of_another_length_are_refused() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user("hi")
    columns = EventTable.of(b.events[:1])
    with pytest.raises(ValueError, match="1 rows of columns for 2 events"):
        analyze(b.events, policy="recorded", columns=columns)


def test_closers_of_a_seqless_log_count_on_from_its_positions() -> None:
    # seqs are positions 0..3 (format §3); the last turn starts at position 2
    events = [{"type": "turn/start", "data": {"turn": 1}},
              {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
              {"type": "turn/start", "data": {"turn": 2}},
              {"type": "step/start", "data": {"turn": 2, "step": 1}}]
    closers = analyze(events, policy="synthesize").closers
    assert [(e["type"], e["seq"]) for e in closers] == [("step/end", 4), ("turn/end", 5)]
