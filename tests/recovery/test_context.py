"""project_context: the next request under each policy, with the seqs it came from."""

from __future__ import annotations

import pytest

from ledgerviz.recovery import Analysis, analyze, context, project_context
from ledgerviz.recovery.context import ContextMessage, ContextProjector, ProjectionMemo

from .build import LedgerBuilder, requesting
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


def asked_and_answered() -> LedgerBuilder:
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("ask")  # 1
    b.step_start()  # 2
    b.assistant(text=None)  # 3: no content, keeps its place but projects nothing
    b.assistant(text="reply")  # 4
    return b


def test_a_projection_memo_holds_each_surface_event_and_is_reused() -> None:
    events = asked_and_answered().events
    analysis = analyze(events, policy="recorded")
    memo: ProjectionMemo = {}
    ask = ContextMessage(1, "user/message", events[1]["data"])
    reply = ContextMessage(4, "assistant/message", events[4]["data"]["message"])
    assert project_context(analysis, memo) == [ask, reply]
    assert memo == {id(events[1]): (events[1], 1, ask), id(events[3]): (events[3], 3, None),
                    id(events[4]): (events[4], 4, reply)}
    kept = ContextMessage(1, "user/message", {"role": "user", "content": []})
    memo[id(events[1])] = (events[1], 1, kept)
    assert project_context(analysis, memo) == [kept, reply]


def test_a_stale_projection_memo_entry_is_replaced() -> None:
    events = asked_and_answered().events
    analysis = analyze(events, policy="recorded")
    ask = ContextMessage(1, "user/message", events[1]["data"])
    reply = ContextMessage(4, "assistant/message", events[4]["data"]["message"])
    kept = ContextMessage(1, "user/message", {"role": "user", "content": []})
    for stale in [(dict(events[1]), 1, kept), (events[1], 7, kept)]:  # another dict; another seq
        memo: ProjectionMemo = {id(events[1]): stale}
        assert project_context(analysis, memo) == [ask, reply]
        assert memo[id(events[1])] == (events[1], 1, ask)


def test_a_projector_copies_what_a_surface_shares_with_the_last_or_longest_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    b = requesting("A")  # 0-3
    b.tool_call("A")  # 4
    b.tool_result("A")  # 5
    b.step_end()
    b.turn_end()
    b.turn_start()
    b.user("more")  # 9
    events = b.events
    projected: list[int | None] = []  # the seq of each node projected anew, in order

    def recorded(event: dict, seq: int | None) -> ContextMessage | None:
        projected.append(seq)
        return project_one(event, seq)

    project_one = context._projected
    monkeypatch.setattr(context, "_projected", recorded)
    projector = ContextProjector()

    def project(analysis: Analysis) -> list[int | None]:
        projected.clear()
        return [m.seq for m in projector.project(analysis)]

    def cut(n: int) -> Analysis:
        return analyze(events[:n], policy="synthesize")

    # the surface: the messages of 1, 3, 5 and 9
    assert project(cut(10)) == [1, 3, 5, 9] and projected == [1, 3, 5, 9]
    # after the dispatch: a closer (a new event, seq 5) answers A
    crashed = cut(5)
    assert project(crashed) == [1, 3, 5] and projected == [5]
    assert project(crashed) == [1, 3, 5] and projected == []  # all shared with the last
    # shares 1 and 3 with the last, 1, 3 and 5 with the longest (the whole log)
    assert project(cut(8)) == [1, 3, 5] and projected == []
    b.user("last")  # 10
    assert project(cut(11)) == [1, 3, 5, 9, 10] and projected == [10]
    assert project(cut(10)) == [1, 3, 5, 9] and projected == []  # the new longest


def test_a_projector_projects_a_shared_event_again_under_another_seq() -> None:
    # format §1: a seqless event's seq is its position, so one more event before moves it
    seqless = [{k: v for k, v in event.items() if k != "seq"}
               for event in asked_and_answered().events]
    todo = {"type": "todo/write", "data": {"todos": []}}
    projector = ContextProjector()
    first = projector.project(analyze(seqless, policy="recorded"))
    moved = projector.project(analyze([seqless[0], todo, *seqless[1:]], policy="recorded"))
    assert [m.seq for m in first] == [1, 4] and [m.seq for m in moved] == [2, 5]
    assert [m.message for m in moved] == [m.message for m in first]


@pytest.mark.parametrize(("surface", "stop", "node", "first"), [
    ([1, 3, 5, 9], 4, 5, 2),  # rising nodes: found by bisection
    ([1, 3, 5, 9], 2, 5, 2),  # none of the first two
    ([1, 3, 5, 9], 4, 10, 4),
    ([1, 7, 3, 9], 4, 5, 1),  # a node replaced by a later one sits before smaller ones
    ([6, 1, 2], 3, 5, 0),
    ([1, 2, 8, 3, 9], 5, 9, 4),  # not rising, but bisection lands right
    ([1, 8, 2, 3, 4], 5, 3, 1),
])
def test_the_first_surface_node_at_or_past_a_node(surface: list[int], stop: int, node: int,
                                                  first: int) -> None:
    assert context._first_at_or_past(surface, stop, node) == first
