"""``first_fork_point`` reads a session block by block and stops at the first fork point.

Expected seqs are worked out by hand from DESIGN.md ("Fork"), on the smallest ledgers
that need each rule; every ledger is read whole and in blocks of every size.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from ledgerviz.recovery.analyze import first_fork_point

from .build import crashed_mid_dispatch, requesting


def blocks(events: Sequence[dict[str, Any]], size: int, taken: list[int] | None = None
           ) -> Iterator[tuple[Sequence[dict[str, Any]], None]]:
    """Yield ``events`` in blocks of ``size`` (counting them into ``taken``)."""
    for start in range(0, len(events), size):
        if taken is not None:
            taken.append(start)
        yield events[start:start + size], None


def every_split(events: Sequence[dict[str, Any]]) -> list[int | None]:
    return [first_fork_point(blocks(events, size), version=4)
            for size in range(1, len(events) + 1)]


def test_an_open_step_at_the_end_is_found_by_the_closing_scan() -> None:
    events = crashed_mid_dispatch().events
    assert set(every_split(events)) == {11}


def test_no_fork_point() -> None:
    b = crashed_mid_dispatch()
    b.tool_result("B")
    b.step_end()
    b.turn_end()
    assert set(every_split(b.events)) == {None}
    assert first_fork_point([], version=4) is None


def test_reading_stops_at_the_event_that_makes_the_fork_point() -> None:
    b = requesting("A")  # 0-3: turn/start, user, step/start, A requested (F)
    b.tool_call("A")  # 4
    b.tool_result("A", is_error=True, code="TOOL_OUTCOME_UNKNOWN")  # 5: found here
    for _ in range(40):
        b.user("later")
    taken: list[int] = []
    assert first_fork_point(blocks(b.events, 2, taken), version=4) == 3
    assert taken == [0, 2, 4]  # the block of seqs 4 and 5 is the last one read


def test_a_candidate_hidden_by_a_rewind_is_passed_over() -> None:
    b = requesting("A")  # 0-3: turn/start, user (1), step/start, A requested (3)
    b.tool_call("A")  # 4
    rewind = b.log("surface/rewind")  # 5: the undo hides 1 and 3
    b.events[rewind]["data"] = {"start": 1, "end": 3, "shadowedSeqs": [1, 3]}
    b.tool_result("A", is_error=True, code="TOOL_OUTCOME_UNKNOWN")  # 6: A is hidden
    b.step_end()  # 7
    b.turn_end()  # 8
    b.turn_start()  # 9
    b.user("two")  # 10
    b.step_start()  # 11
    b.assistant("B")  # 12: F
    b.tool_call("B")  # 13, then the process died
    assert set(every_split(b.events)) == {12}


@pytest.mark.parametrize("size", [1, 2, 3, 5, 13])
def test_events_without_seqs_are_numbered_by_their_position_in_the_session(size: int) -> None:
    events = [{k: v for k, v in e.items() if k != "seq"} for e in crashed_mid_dispatch().events]
    assert first_fork_point(blocks(events, size), version=4) == 11
