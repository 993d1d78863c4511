"""``repr(Analysis)``: the one-line summary, worked out by hand from the ledgers built here."""

from __future__ import annotations

from ledgerviz.recovery import analyze

from .build import LedgerBuilder


def unknown_turns(count: int) -> LedgerBuilder:
    """``count`` turns of 8 events, each forking at its assistant message (seq 8k+3): call
    Ck dispatched, its result a recorded TOOL_OUTCOME_UNKNOWN (8k+5), the turn interrupted."""
    b = LedgerBuilder()
    for k in range(count):
        b.turn_start()  # 8k
        b.user(f"ask {k}")  # 8k+1
        b.step_start()  # 8k+2
        b.assistant(f"C{k}")  # 8k+3
        b.tool_call(f"C{k}")  # 8k+4
        b.tool_result(f"C{k}", is_error=True, code="TOOL_OUTCOME_UNKNOWN")  # 8k+5
        b.step_end()  # 8k+6
        b.turn_end("interrupted")  # 8k+7
    return b


def test_a_quiet_session_says_none() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user()
    b.turn_end()
    assert repr(analyze(b.events, policy="synthesize")) == (
        "<Analysis policy=synthesize: events 3, appended 0, abandoned 0, fork point seqs []; "
        "calls: none>"
    )


def test_crash_closers_are_counted() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user()
    b.step_start()
    b.assistant("B")  # never dispatched: TOOL_NOT_STARTED result, step/end, turn/end
    # events are the 4 recorded ones followed by the 3 appended (Analysis docstring)
    assert repr(analyze(b.events, policy="synthesize")) == (
        "<Analysis policy=synthesize: events 7, appended 3, abandoned 0, fork point seqs []; "
        "calls: 1 not_started>"
    )


def test_statuses_are_counted_in_order_of_first_appearance() -> None:
    b = unknown_turns(1)
    b.turn_start()  # 8
    b.user("again")  # 9
    b.step_start()  # 10
    b.assistant("OK1", "OK2")  # 11
    b.tool_call("OK1")  # 12
    b.tool_result("OK1")  # 13
    b.tool_call("OK2")  # 14
    b.tool_result("OK2")  # 15
    b.step_end()  # 16
    b.turn_end()  # 17
    assert repr(analyze(b.events, policy="fork")) == (
        "<Analysis policy=fork: events 18, appended 0, abandoned 2, fork point seqs [3]; "
        "calls: 1 outcome_unknown, 2 ok>"
    )


def test_only_the_first_five_fork_points_are_named() -> None:
    assert repr(analyze(unknown_turns(6).events, policy="fork")) == (
        "<Analysis policy=fork: events 48, appended 0, abandoned 12, "
        "fork point seqs [3, 11, 19, 27, 35, …]; calls: 6 outcome_unknown>"
    )
