"""``EventRuns``: an analysis's events as runs of other sequences, read in place."""

from __future__ import annotations

import pytest

from ledgerviz.recovery.runs import EventRuns

LOG = [{"seq": n} for n in range(6)]
MADE = [{"made": 0}, {"made": 1}]


def spliced() -> EventRuns:
    """LOG[0:3], then MADE, then LOG[3:6]: eight events in three runs."""
    runs = EventRuns()
    runs.take(LOG, 0, 2)
    runs.take(LOG, 2, 3)  # continues the run
    runs.take(MADE, 0, 2)
    runs.take(LOG, 3, 3)  # nothing
    runs.take(LOG, 3, 6)
    return runs


def test_events_are_read_in_place_from_their_runs() -> None:
    runs = spliced()
    expected = [*LOG[:3], *MADE, *LOG[3:]]
    assert len(runs) == 8 and repr(runs) == "<EventRuns: length 8, runs 3>"
    assert all(runs[i] is expected[i] for i in range(8))
    assert runs[-1] is LOG[5] and runs[-8] is LOG[0]
    assert list(runs) == expected and runs == expected and expected == runs
    assert runs[2:6] == expected[2:6] and runs[::3] == expected[::3] and runs[7:2] == []
    assert runs.index(MADE[1]) == 4 and LOG[4] in runs
    with pytest.raises(IndexError):
        runs[8]


def test_a_head_shares_the_runs_up_to_its_length() -> None:
    runs = spliced()
    head = runs.head(4)
    assert list(head) == [*LOG[:3], MADE[0]] and len(runs) == 8
    assert runs.head(0) == [] and runs.head(20) == runs
    head.take(LOG, 3, 4)  # a head goes on by itself
    assert list(head) == [*LOG[:3], MADE[0], LOG[3]] and len(runs) == 8


def test_equal_runs_and_equal_events_compare_equal() -> None:
    assert spliced() == spliced()
    other = EventRuns()
    other.take([dict(e) for e in LOG], 0, 6)
    assert other != spliced() and other == LOG
    assert spliced() != [*LOG[:3], {"made": 9}, MADE[1], *LOG[3:]]


def test_a_run_forgotten_is_no_longer_read() -> None:
    runs = spliced()
    runs.forget_before(5)
    assert runs.forgotten == 5 and len(runs) == 8
    assert runs[5] is LOG[3] and list(runs) == LOG[3:]
    with pytest.raises(IndexError, match="not held"):
        runs[4]


def test_runs_alike_up_to_a_point_are_compared_from_there() -> None:
    one, other = spliced(), spliced().head(5)
    other.take([dict(e) for e in LOG[3:]], 0, 3)  # equal copies of the last run
    assert one == other
    other = spliced().head(5)
    other.take([*LOG[3:5], {"seq": 9}], 0, 3)
    assert one != other


def test_no_events_equal_no_events() -> None:
    assert EventRuns() == EventRuns() == [] and EventRuns() != spliced()
    assert list(EventRuns()) == [] and EventRuns()[0:3] == []
