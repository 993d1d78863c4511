"""Which recorded events are a runtime's crash closers (``Analysis.synthetic``), by hand.

A recorded ``turn/end`` of kind ``interrupted`` is a closer, and so is the ``step/end``
just before it when that step/end directly follows a synthetic result (format §9.1: the
closers are the pending calls' results, ``step/end``, ``turn/end``).
"""

from __future__ import annotations

from ledgerviz.recovery import analyze

from .build import LedgerBuilder


def flags(b: LedgerBuilder, start: int = 0) -> list[int]:
    """The seqs marked synthetic (of the events from index ``start`` on)."""
    analysis = analyze(b.events[start:], policy="recorded")
    return [analysis.seqs[k] for k, synthetic in enumerate(analysis.synthetic) if synthetic]


def crashed_turn(b: LedgerBuilder, call_id: str) -> None:
    """A turn whose call was dispatched and closed by recorded crash closers (last 3 events)."""
    b.turn_start()
    b.user()
    b.step_start()
    b.assistant(call_id)
    b.tool_call(call_id)
    b.tool_result(call_id, is_error=True, code="TOOL_OUTCOME_UNKNOWN")
    b.step_end()
    b.turn_end("interrupted")


def test_recorded_crash_closers_are_synthetic() -> None:
    b = LedgerBuilder()
    crashed_turn(b, "A")  # 0-7
    assert flags(b) == [5, 6, 7]


def test_a_step_end_after_a_genuine_result_is_not_a_closer() -> None:
    b = LedgerBuilder()
    crashed_turn(b, "A")  # 0-7: closers 5, 6, 7
    b.turn_start()  # 8
    b.user()  # 9
    b.answered_step("B")  # 10-14: B's genuine result at 13
    b.turn_end("interrupted")  # 15
    assert flags(b) == [5, 6, 7, 15]


def test_an_interrupted_turn_without_a_step_end_marks_only_itself() -> None:
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user()  # 1
    b.turn_end("interrupted")  # 2
    assert flags(b) == [2]


def test_closers_at_the_very_start_of_the_events_given() -> None:
    # the tail of a log from its synthetic result on: the first closer at index 0
    b = LedgerBuilder()
    crashed_turn(b, "A")
    assert flags(b, start=5) == [5, 6, 7]
