"""Each scenario's recovery facts, as the recovery engine computes them from the written ledger."""

import json
from collections.abc import Callable

from ledgerviz.ledger import read_sessions
from ledgerviz.recovery import (
    PROVIDERS,
    analyze,
    export,
    pairing_problems,
    project_context,
)

from .conftest import read_ledger

UNKNOWN, NOT_STARTED = "TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED"


def _session(written: Callable, name: str, index: int = 0):
    [session] = read_sessions(written(name)[index])
    return session


def _statuses(analysis, turn: int) -> list[str]:
    return [call.status for call in analysis.calls if call.turn == turn]


def _codes(events: list[dict]) -> list[str | None]:
    return [e["data"].get("error", {}).get("code") for e in events if e["type"] == "tool/result"]


def test_clean_has_only_settled_calls_and_nothing_to_close(written: Callable) -> None:
    events = _session(written, "clean").events
    for policy in ("synthesize", "fork"):
        analysis = analyze(events, policy=policy, version=4)
        assert analysis.closers == [] and analysis.fork_points == []
        assert analysis.abandoned_seqs == [] and analysis.unanswered_in_closed_steps == []
    calls = analyze(events, policy="recorded", version=4).calls
    assert len(calls) >= 1 and {c.status for c in calls} == {"ok"} and all(c.settled for c in calls)


def test_crash_mid_dispatch_leaves_unknown_and_not_started_calls(written: Callable) -> None:
    events = _session(written, "crash-mid-dispatch").events
    analysis = analyze(events, policy="synthesize", version=4)
    assert _statuses(analysis, 2) == ["ok", "outcome_unknown", "not_started", "not_started"]
    # what the simulator wrote: the last assistant's calls, which of them were dispatched
    asked = [e for e in events if e["type"] == "assistant/message"][-1]
    ids = [b["id"] for b in asked["data"]["message"]["content"] if b["type"] == "tool-call"]
    dispatched = {e["data"]["callId"]: e["seq"] for e in events if e["type"] == "tool/call"}
    answered = {e["data"]["message"]["toolCallId"] for e in events if e["type"] == "tool/result"}
    last = events[-1]["seq"]
    expected = [
        (
            last + 1 + k,
            call_id,
            f"interrupted-tool-result-{call_id}-{last + 1 + k}",
            [dispatched[call_id]] if call_id in dispatched else None,
        )
        for k, call_id in enumerate(c for c in ids if c not in answered)
    ]
    assert [
        (
            e["seq"],
            e["data"]["message"]["toolCallId"],
            e["data"]["message"]["id"],
            e.get("sourceEventSeqs"),
        )
        for e in analysis.closers[:-2]
    ] == expected
    assert len(expected) == 3
    assert _codes(analysis.closers) == [UNKNOWN, NOT_STARTED, NOT_STARTED]
    assert [e["type"] for e in analysis.closers[-2:]] == ["step/end", "turn/end"]
    fork = analyze(events, policy="fork", version=4)
    [fork_point] = fork.fork_points
    assert events[fork_point]["type"] == "assistant/message"
    assert events[fork_point]["data"]["turn"] == 2


def test_crash_before_dispatch_has_only_not_started_calls(written: Callable) -> None:
    events = _session(written, "crash-before-dispatch").events
    assert events[-1]["type"] == "assistant/message"
    analysis = analyze(events, policy="synthesize", version=4)
    assert _statuses(analysis, 2) == ["not_started"] * 4
    assert _codes(analysis.closers) == [NOT_STARTED] * 4
    assert analyze(events, policy="fork", version=4).fork_points == []


def test_torn_write_drops_the_tail_and_leaves_one_dispatched_call(written: Callable) -> None:
    session = _session(written, "torn-write")
    assert [d.kind for d in session.diagnostics] == ["torn_tail"]
    assert session.events[-1]["type"] == "tool/call"
    analysis = analyze(session.events, policy="synthesize", version=4)
    assert _statuses(analysis, 2) == [
        "outcome_unknown",
        "not_started",
        "not_started",
        "not_started",
    ]
    assert _codes(analysis.closers) == [UNKNOWN, NOT_STARTED, NOT_STARTED, NOT_STARTED]


def test_scheduler_failure_records_recovery_results_before_step_end(written: Callable) -> None:
    events = _session(written, "scheduler-failure").events
    analysis = analyze(events, policy="synthesize", version=4)
    assert _statuses(analysis, 2) == ["ok", "ok", "outcome_unknown", "not_started"]
    assert analysis.closers == [] and analysis.unanswered_in_closed_steps == []
    turn = [e for e in events if e["type"] != "session/end-seed" and e["data"].get("turn") == 2]
    recovery = [e for e in turn if e["type"] == "tool/result" and "error" in e["data"]]
    step_end = next(e for e in turn if e["type"] == "step/end")
    assert _codes(recovery) == [UNKNOWN, NOT_STARTED]
    assert all(e["seq"] < step_end["seq"] for e in recovery)
    assert [e["seq"] for e in recovery] == [step_end["seq"] - 2, step_end["seq"] - 1]
    turn_end = next(e for e in turn if e["type"] == "turn/end")
    assert turn_end["data"]["reason"]["kind"] == "error"
    assert "tool scheduler failed" in turn_end["data"]["reason"]["error"]["message"]
    synthetic = [analysis.synthetic[analysis.seqs.index(e["seq"])] for e in recovery]
    assert synthetic == [True, True]


def test_tool_error_is_a_settled_error_call(written: Callable) -> None:
    calls = analyze(_session(written, "tool-error").events, policy="recorded", version=4).calls
    errors = [c for c in calls if c.status == "error"]
    assert [(c.name, c.error_code, c.settled) for c in errors] == [("read", "ENOENT", True)]


def test_provider_error_leaves_no_call_unsettled(written: Callable) -> None:
    events = _session(written, "provider-error").events
    analysis = analyze(events, policy="synthesize", version=4)
    assert analysis.closers == [] and all(c.settled for c in analysis.calls)
    ends = [e["data"]["reason"]["kind"] for e in events if e["type"] == "turn/end"]
    assert ends == ["completed", "error", "completed"]


def test_cancel_records_real_abort_results(written: Callable) -> None:
    analysis = analyze(_session(written, "cancel").events, policy="synthesize", version=4)
    turn = [c for c in analysis.calls if c.turn == 2]
    assert [c.status for c in turn] == ["ok", "ok", "error", "error"]
    assert [c.error_code for c in turn][2:] == ["ABORTED_BEFORE_DISPATCH"] * 2
    assert all(c.dispatched_seq is not None and c.settled for c in turn)
    assert analysis.closers == []


def test_resume_synthesize_is_balanced_with_recorded_closers(written: Callable) -> None:
    events = _session(written, "resume-synthesize").events
    analysis = analyze(events, policy="synthesize", version=4)
    assert analysis.closers == []
    assert _statuses(analysis, 2) == ["ok", "outcome_unknown", "not_started", "not_started"]
    codes = [code for code in analysis.recovery_code if code]
    assert codes == [UNKNOWN, NOT_STARTED, NOT_STARTED]
    assert sum(analysis.synthetic) == 5  # three results, step/end, turn/end interrupted
    assert _statuses(analysis, 3) and set(_statuses(analysis, 3)) == {"ok"}


def test_resume_fork_leaves_the_parent_and_seeds_a_child(written: Callable) -> None:
    parent_path, child_path = written("resume-fork")
    [parent], [child] = read_sessions(parent_path), read_sessions(child_path)
    assert parent.diagnostics == [] and child.diagnostics == []
    events = parent.events
    # the parent ends where the process died: the first of four results of turn 2
    assert events[-1]["type"] == "tool/result" and events[-1]["data"]["turn"] == 2
    analysis = analyze(events, policy="fork", version=4)
    [fork_point] = analysis.fork_points
    # what the simulator wrote: the request of the call it dispatched and never answered,
    # and every message from there to where the process died
    answered = {e["data"]["message"]["toolCallId"] for e in events if e["type"] == "tool/result"}
    [lost] = [
        e["data"]["callId"]
        for e in events
        if e["type"] == "tool/call" and e["data"]["callId"] not in answered
    ]
    [asked] = [
        e["seq"]
        for e in events
        if e["type"] == "assistant/message"
        and lost in {b.get("id") for b in e["data"]["message"]["content"]}
    ]
    assert fork_point == asked
    assert events[fork_point]["data"]["turn"] == 2
    assert analysis.abandoned_seqs == [
        e["seq"] for e in events if e.get("surfaceOp") == "append" and e["seq"] >= asked
    ]
    assert len(analysis.abandoned_seqs) >= 2
    assert analysis.closers == []  # nothing is appended to the parent
    assert [c.branch for c in analysis.calls if c.turn == 2] == ["abandoned"] * 4
    assert not any(c.settled for c in analysis.calls if c.turn == 2)

    header = child.header
    assert header["parentSession"] == parent.header["id"] and header["isSeeded"] is True
    assert header["id"] == parent.header["id"] + "-fork"
    assert header["createdAt"] > events[-1]["time"]
    seed = child.events
    assert seed[:fork_point] == events[:fork_point]
    tail = [(e["type"], e["seq"], e["data"]) for e in seed[fork_point : fork_point + 3]]
    assert tail == [
        ("session/end-seed", fork_point, {"inherited": True}),
        ("step/end", fork_point + 1, {"turn": 2, "step": 1}),
        ("turn/end", fork_point + 2, {"turn": 2, "reason": {"kind": "forked"}}),
    ]
    assert {e["time"] for e in seed[fork_point : fork_point + 3]} == {
        events[fork_point - 1]["time"]
    }
    own = seed[fork_point + 3 :]
    assert own[0]["type"] == "turn/start" and own[0]["data"] == {"turn": 3}
    first_header = next(e for e in own if e["type"] == "request/header")
    assert first_header["data"]["reason"] == "resume"
    assert _codes(seed) == [None] * [e["type"] for e in seed].count("tool/result")
    for policy in ("recorded", "fork"):
        view = analyze(seed, policy=policy, version=4)
        assert view.closers == [] and view.fork_points == []
        assert {c.branch for c in view.calls if c.turn == 3} == {"active"}
        assert all(c.settled for c in view.calls)
        context = project_context(view)
        for provider in PROVIDERS:
            assert pairing_problems(export(context, provider)) == []


def test_subagent_pair_carries_lineage(written: Callable) -> None:
    (parent_header, parent), (child_header, child) = map(read_ledger, written("subagent"))
    assert child_header["parentSession"] == parent_header["id"]
    assert (child_header["origin"], child_header["delegationDepth"]) == ("subagent", 1)
    assert child_header["isSeeded"] is False and parent_header["delegationDepth"] == 0
    [catalog] = [e["data"] for e in parent if e["type"] == "subagent/catalog"]
    assert (catalog["childId"], catalog["childCreatedAt"]) == (
        child_header["id"],
        child_header["createdAt"],
    )
    [descriptor] = [e["data"] for e in child if e["type"] == "subagent/descriptor"]
    assert descriptor["provider"] == "spawn"
    delegated = next(
        e for e in parent if e["type"] == "tool/call" and e["data"]["name"] == "subagent"
    )
    answer = next(
        e
        for e in parent
        if e["type"] == "tool/result"
        and e["data"]["message"]["toolCallId"] == delegated["data"]["callId"]
    )
    final = [e for e in child if e["type"] == "assistant/message"][-1]
    assert answer["data"]["message"]["content"] == final["data"]["message"]["content"]
    [task] = [e["data"] for e in child if e["type"] == "user/message"]
    assert task["content"] == [
        {"type": "text", "text": json.loads(delegated["data"]["arguments"])["prompt"]}
    ]
    assert delegated["time"] <= child_header["createdAt"] <= child[0]["time"]
    assert child[-1]["time"] <= answer["time"]


def test_compaction_replaces_the_history_with_one_summary(written: Callable) -> None:
    events = _session(written, "compaction").events
    [summary] = [e for e in events if isinstance(e.get("surfaceOp"), dict)]
    analysis = analyze(events, policy="recorded", version=4)
    surface_seqs = [analysis.seqs[node] for node in analysis.surface]
    system = next(e["seq"] for e in events if e["type"] == "system/message")
    later = [
        e["seq"] for e in events if e["seq"] > summary["seq"] and e.get("surfaceOp") == "append"
    ]
    assert surface_seqs == [system, summary["seq"], *later]
    assert summary["data"]["source"] == {"kind": "compact-checkpoint"}
    headers = [e["data"]["reason"] for e in events if e["type"] == "request/header"]
    assert headers == ["initial", "series"]
