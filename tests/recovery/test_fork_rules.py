"""Each fork rule on the smallest ledger that exercises it, with literal expected seqs.

Every expectation is worked out by hand from DESIGN.md ("Fork"): the fork point is the
assistant message of the first dispatched call without a durable result; the whole
surface from there on is abandoned until the next message the user types in a *later*
turn; a not-started call is a known outcome, not a fork point; recorded
``surface/rewind`` / ``surface/restore`` events are honoured; abandoned calls are never
settled.
"""

from __future__ import annotations

from ledgerviz.recovery import PROVIDERS, analyze, export, pairing_problems, project_context

from .build import LedgerBuilder


def active(analysis) -> list:
    return [analysis.seqs[k] for k in analysis.surface]


def facts(analysis) -> dict:
    """call id -> (status, branch, settled)."""
    return {c.call_id: (c.status, c.branch, c.settled) for c in analysis.calls}


def unknown_turn() -> LedgerBuilder:
    """Turn 1: call A dispatched, its result a recorded TOOL_OUTCOME_UNKNOWN (seq 5)."""
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.step_start()  # 2
    b.assistant("A")  # 3
    b.tool_call("A")  # 4
    b.tool_result("A", is_error=True, code="TOOL_OUTCOME_UNKNOWN")  # 5
    return b


def interrupted_unknown_turn() -> LedgerBuilder:
    """``unknown_turn`` with its step (seq 6) and turn (seq 7, interrupted) ended."""
    b = unknown_turn()
    b.step_end()  # 6
    b.turn_end("interrupted")  # 7
    return b


def test_user_message_typed_inside_the_forked_turn_stays_abandoned() -> None:
    b = unknown_turn()
    b.user("steer", kind="user")  # 6: typed while the forked turn is still open
    b.step_end()  # 7
    b.turn_end("interrupted")  # 8
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [3, 5, 6]
    assert active(fork) == [1]
    assert facts(fork) == {"A": ("outcome_unknown", "abandoned", False)}


def test_typed_message_of_the_next_turn_starts_the_new_branch() -> None:
    b = interrupted_unknown_turn()  # 0-7
    b.turn_start()  # 8
    b.user("two")  # 9
    b.step_start()  # 10
    b.assistant(text="done")  # 11
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [3, 5]
    assert active(fork) == [1, 9, 11]
    assert [fork.branch[k] for k in range(12)] == [
        "log", "active", "log", "abandoned", "log", "abandoned",
        "log", "log", "log", "active", "log", "active",
    ]  # fmt: skip


def next_turn_with(kind: str) -> LedgerBuilder:
    """The forked turn closed, then turn 2 opens with a message of source ``kind`` (seq 9),
    then the user's own message (seq 10)."""
    b = interrupted_unknown_turn()  # 0-7
    b.turn_start()  # 8
    b.user("injected", kind=kind)  # 9
    b.user("typed")  # 10
    return b


def test_goal_message_of_the_next_turn_is_still_abandoned() -> None:
    fork = analyze(next_turn_with("goal").events, policy="fork")
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [3, 5, 9]
    assert active(fork) == [1, 10]


def test_plugin_message_of_the_next_turn_is_still_abandoned() -> None:
    b = next_turn_with("plugin")
    b.events[9]["data"]["source"]["plugin"] = "@deepseek-ai/dsh-system-prompt"
    fork = analyze(b.events, policy="fork")
    assert fork.abandoned_seqs == [3, 5, 9]
    assert active(fork) == [1, 10]


def test_without_a_typed_message_the_whole_suffix_stays_abandoned() -> None:
    b = next_turn_with("goal")
    del b.events[10]
    fork = analyze(b.events, policy="fork")
    assert fork.abandoned_seqs == [3, 5, 9]
    assert active(fork) == [1]


def test_inbox_splice_is_log_only_and_its_user_message_starts_the_branch() -> None:
    b = interrupted_unknown_turn()  # 0-7
    b.turn_start()  # 8
    splice = b.log("agent/inbox/spliced")  # 9
    b.events[splice]["data"] = {
        "target": "next-turn",
        "start": 0,
        "inserted": [{"id": "q", "role": "user", "content": [], "source": {"kind": "user"}}],
    }
    b.user("queued")  # 10: the spliced message, typed by the user
    fork = analyze(b.events, policy="fork")
    assert fork.abandoned_seqs == [3, 5]
    assert active(fork) == [1, 10]
    assert fork.branch[9] == "log"


def test_second_unresolved_call_in_a_closed_step_forks_again() -> None:
    b = interrupted_unknown_turn()  # 0-7
    b.turn_start()  # 8
    b.user("two")  # 9
    b.answered_step("X")  # 10-14: X requested at 11, answered at 13
    b.step_start()  # 15
    b.assistant("Y", "Z")  # 16: Y dispatched, Z never
    b.tool_call("Y")  # 17
    b.step_end()  # 18: the scheduler failed, nothing recorded for Y or Z
    b.turn_end("error")  # 19
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3, 16]
    assert fork.abandoned_seqs == [3, 5, 16]
    assert active(fork) == [1, 9, 11, 13]
    assert facts(fork) == {
        "A": ("outcome_unknown", "abandoned", False),
        "X": ("ok", "active", True),
        "Y": ("outcome_unknown", "abandoned", False),
        "Z": ("not_started", "abandoned", False),
    }
    # the fork puts no synthetic result into the branch
    computed = [e for e, logged in zip(fork.events, fork.recorded, strict=True) if not logged]
    assert [e for e in computed if e["type"] == "tool/result"] == []


def test_not_started_call_next_to_an_unknown_one() -> None:
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.step_start()  # 2
    b.assistant("A", "B")  # 3: A dispatched and lost, B never started
    b.tool_call("A")  # 4
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [3]
    assert active(fork) == [1]
    assert facts(fork) == {
        "A": ("outcome_unknown", "abandoned", False),
        "B": ("not_started", "abandoned", False),
    }
    synth = analyze(b.events, policy="synthesize")
    assert synth.fork_points == [] and synth.abandoned_seqs == []
    assert active(synth) == [1, 3, 5, 6]
    assert facts(synth) == {
        "A": ("outcome_unknown", "active", False),
        "B": ("not_started", "active", True),
    }


def test_lone_not_started_call_in_an_open_step_is_answered_not_forked() -> None:
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.step_start()  # 2
    b.assistant("B")  # 3: never dispatched
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [] and fork.abandoned_seqs == []
    assert active(fork) == [1, 3, 4]
    assert [e["data"]["message"]["id"] for e in fork.closers[:1]] == ["interrupted-tool-result-B-4"]
    assert facts(fork) == {"B": ("not_started", "active", True)}


def test_hidden_not_started_call_is_not_answered() -> None:
    # A rewind recorded inside the step hides its assistant message; when the step then
    # closes, the not-started call B must not get a result: its request left the context.
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.step_start()  # 2
    b.assistant("A", "B")  # 3
    b.tool_call("A")  # 4
    rewind = b.log("surface/rewind")  # 5
    b.events[rewind]["data"] = {"start": 3, "end": 3, "shadowedSeqs": [3]}
    b.step_end()  # 6
    b.turn_end("error")  # 7
    fork = analyze(b.events, policy="fork")
    assert len(fork.events) == 8 and not any(fork.synthetic[:5] + fork.synthetic[6:])
    assert fork.fork_points == []
    assert fork.abandoned_seqs == [3]
    assert active(fork) == [1]
    assert [m.seq for m in project_context(fork)] == [1]
    assert facts(fork) == {
        "A": ("outcome_unknown", "abandoned", False),
        "B": ("not_started", "abandoned", False),
    }


def test_recorded_rewind_and_restore_around_a_fork() -> None:
    # Turn 1 ends with a dispatched call lost (closed step); the user undoes turn 1, then
    # turn 2 runs; the rewind's nodes are hidden under every policy.
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.step_start()  # 2
    b.assistant("A")  # 3
    b.tool_call("A")  # 4
    b.step_end()  # 5
    b.turn_end("error")  # 6
    rewind = b.log("surface/rewind")  # 7
    b.events[rewind]["data"] = {"start": 1, "end": 3, "shadowedSeqs": [1, 3]}
    b.turn_start()  # 8
    b.user("two")  # 9
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [1, 3]
    assert active(fork) == [9]
    assert not fork.synthetic[rewind]  # it starts at a user message: an undo, not a fork
    synth = analyze(b.events, policy="synthesize")
    assert synth.abandoned_seqs == [1, 3] and active(synth) == [9]
    # a restore of that rewind brings turn 1 back
    restore = b.log("surface/restore")  # 10
    b.events[restore]["data"] = {"rewindSeq": rewind}
    recorded = analyze(b.events, policy="recorded")
    assert recorded.abandoned_seqs == [] and active(recorded) == [1, 3, 9]


def test_restore_of_an_unknown_rewind_changes_nothing() -> None:
    b = next_turn_with("goal")
    restore = b.log("surface/restore")  # 11
    b.events[restore]["data"] = {"rewindSeq": 99}
    fork = analyze(b.events, policy="fork")
    assert fork.abandoned_seqs == [3, 5, 9]
    assert active(fork) == [1, 10]


def test_fork_point_brought_back_by_a_restore_is_abandoned_again() -> None:
    # Undo, then redo, of a turn whose dispatched call was lost: the call is back in the
    # context, so the fork must abandon it again (else the request pairs nothing with it).
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.step_start()  # 2
    b.assistant("A")  # 3
    b.tool_call("A")  # 4
    b.step_end()  # 5: the scheduler failed, nothing recorded for A
    b.turn_end("error")  # 6
    rewind = b.log("surface/rewind")  # 7
    b.events[rewind]["data"] = {"start": 1, "end": 3, "shadowedSeqs": [1, 3]}
    restore = b.log("surface/restore")  # 8
    b.events[restore]["data"] = {"rewindSeq": rewind}
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [3]
    assert active(fork) == [1]
    assert facts(fork) == {"A": ("outcome_unknown", "abandoned", False)}
    for provider in PROVIDERS:
        assert pairing_problems(export(project_context(fork), provider)) == [], provider
    # a typed message of a later turn, after the redo, starts the new branch
    b.turn_start()  # 9
    b.user("two")  # 10
    fork = analyze(b.events, policy="fork")
    assert fork.abandoned_seqs == [3]
    assert active(fork) == [1, 10]


def test_a_pending_fork_undone_by_a_rewind_is_dropped() -> None:
    # turn 1's call ends TOOL_OUTCOME_UNKNOWN (fork pending at 3); the user undoes turn 1,
    # so the next typed message starts from the undone surface: no fork is applied.
    b = interrupted_unknown_turn()  # 0-7
    rewind = b.log("surface/rewind")  # 8
    b.events[rewind]["data"] = {"start": 1, "end": 5, "shadowedSeqs": [1, 3, 5]}
    b.turn_start()  # 9
    b.user("two")  # 10
    fork = analyze(b.events, policy="fork")
    assert fork.fork_points == [3]
    assert fork.abandoned_seqs == [1, 3, 5]
    assert active(fork) == [10]


def test_a_restore_while_another_rewind_hides_the_fork_point_keeps_it_dropped() -> None:
    # two rewinds hide the pending fork point; restoring the first leaves it hidden by
    # the second, so the typed message of turn 2 is not abandoned.
    b = interrupted_unknown_turn()  # 0-7
    first = b.log("surface/rewind")  # 8
    b.events[first]["data"] = {"start": 3, "end": 5, "shadowedSeqs": [3, 5]}
    second = b.log("surface/rewind")  # 9
    b.events[second]["data"] = {"start": 3, "end": 3, "shadowedSeqs": [3]}
    restore = b.log("surface/restore")  # 10
    b.events[restore]["data"] = {"rewindSeq": first}
    b.turn_start()  # 11
    b.user("two")  # 12
    fork = analyze(b.events, policy="fork")
    assert fork.abandoned_seqs == [3]
    assert active(fork) == [1, 5, 12]
