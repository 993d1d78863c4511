"""The first events of a session followed by others, read from it when asked
(``ledger.head_events``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ledgerviz.ledger.head_events import HeadThen, head_then


class Events(Sequence[dict[str, Any]]):
    """A sequence of events that is no list and counts the rows read from it."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self._events = events
        self.read: list[int] = []

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            rows = range(*index.indices(len(self)))
            self.read.extend(rows)
            return [self._events[row] for row in rows]
        self.read.append(index % len(self))
        return self._events[index]


EVENTS = [{"type": "mark", "seq": seq} for seq in range(10)]
ADDED = [{"type": "session/end-seed", "seq": 6}, {"type": "turn/end", "seq": 7}]
EXPECTED = [*EVENTS[:6], *ADDED]
"""What a list gives: the first six events, then the two added."""


def test_the_view_indexes_slices_iterates_and_compares_as_the_list() -> None:
    source = Events(EVENTS)
    view = head_then(source, 6, ADDED)
    assert isinstance(view, HeadThen) and source.read == []  # nothing read to make it
    assert len(view) == 8
    assert [view[i] for i in range(8)] == EXPECTED
    assert view[-1] is ADDED[1] and view[-3] is EVENTS[5] and view[0] is EVENTS[0]
    for rows in (slice(None), slice(2, 7), slice(6, None), slice(7, 2, -2), slice(1, 8, 3),
                 slice(-4, -1), slice(20, 30)):
        assert view[rows] == EXPECTED[rows], rows
    assert list(view) == EXPECTED and view == EXPECTED
    assert EXPECTED == view  # noqa: SIM300  (the list asks the view)
    assert view != EXPECTED[:-1] and view != [*EXPECTED[:-1], {"type": "other"}]
    for row in (8, -9):
        with pytest.raises(IndexError):
            view[row]


def test_a_slice_reads_only_the_rows_it_holds() -> None:
    source = Events(EVENTS)
    view = head_then(source, 6, ADDED)
    assert view[6:] == ADDED and source.read == []  # the added events only
    assert view[4:7] == [EVENTS[4], EVENTS[5], ADDED[0]]
    assert source.read == [4, 5]


def test_a_list_is_copied_and_a_whole_sequence_is_itself() -> None:
    copied = head_then(EVENTS, 6, ADDED)
    assert type(copied) is list and copied == EXPECTED
    assert head_then(EVENTS, 4) == EVENTS[:4]
    source = Events(EVENTS)
    assert head_then(source, 10) is source and head_then(source, 12) is source
    assert list(head_then(source, 3)) == EVENTS[:3]


def test_more_events_kept_than_there_are_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot keep 11 of 10 events"):
        HeadThen(Events(EVENTS), 11, ())
