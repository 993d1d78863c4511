"""project_context: the next request under each policy, with the seqs it came from."""

from __future__ import annotations

from ledgerviz.recovery import analyze, project_context

from .build import LedgerBuilder
from .ledgers import dsh_fixture
from .test_analyze import crash_then_two_turns, scheduler_failure


def rows(policy: str, events: list[dict]) -> list[tuple]:
    return [
        (m.seq, m.event_type, m.message.get("role"))
        for m in project_context(analyze(events, policy=policy, version=4))
    ]


def test_synthesize_context_includes_never_logged_results() -> None:
    events = scheduler_failure().events
    assert rows("recorded", events) == [
        (1, "user/message", "user"),
        (3, "assistant/message", "assistant"),
        (5, "tool/result", "tool"),
    ]
    assert rows("synthesize", events) == [
        (1, "user/message", "user"),
        (3, "assistant/message", "assistant"),
        (5, "tool/result", "tool"),
        (None, "tool/result", "tool"),
        (None, "tool/result", "tool"),
    ]


def test_fork_context_is_the_active_branch_only() -> None:
    events = crash_then_two_turns().events
    assert [seq for seq, _, _ in rows("fork", events)] == [1, 11, 13, 15]
    context = project_context(analyze(events, policy="fork"))
    assert context[1].message["content"][0]["text"] == "two"
    assert context[0].message is events[1]["data"]  # recorded objects, not copies


def test_empty_assistant_message_keeps_no_message() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user()  # 1
    b.step_start()
    b.assistant(text=None)  # 3: a max-tokens step hosting only usage
    b.step_end()
    b.turn_end("max-tokens")
    analysis = analyze(b.events, policy="recorded", version=4)
    assert [analysis.seqs[k] for k in analysis.surface] == [1, 3]
    assert [m.seq for m in project_context(analysis)] == [1]


def test_replaced_system_head_is_projected_in_its_place() -> None:
    _, events = dsh_fixture("subagent-inheritance__parent")
    context = project_context(analyze(events, policy="recorded", version=4))
    assert [(m.seq, m.event_type) for m in context][:2] == [
        (15, "system/message"),
        (3, "user/message"),
    ]
    assert events[15]["surfaceOp"] == {"op": "replace", "startSeq": 2, "endSeq": 2}
