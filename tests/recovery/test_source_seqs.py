"""``source_seqs`` decodes range-encoded citations at bounded cost, raising only ValueError."""

from __future__ import annotations

import pytest

from ledgerviz.recovery import source_seqs


def test_ranges_expand_inclusively() -> None:
    assert source_seqs({"seq": 10, "sourceEventSeqs": [[4, 7], 9]}) == [4, 5, 6, 7, 9]
    assert source_seqs({"seq": 3}) == []


@pytest.mark.parametrize(
    ("stored", "seq", "message"),
    [
        ([[0, 10**15]], 12, "expands beyond the 12 seqs an event at seq 12 can cite"),
        ([[0, 10**15]], None, "expands beyond the 1000000 seqs"),
        ([[0, 5], [0, 5]], 8, "expands beyond the 8 seqs"),
        ([[5, 1]], 9, "runs backwards"),
        ([["a", "b"]], 9, "is not a seq or a [first, last] pair"),
        ([[1]], 9, "is not a seq or a [first, last] pair"),
        ([True], 9, "is not a seq"),
        ([None], 9, "is not a seq"),
        ("4", 9, "must be a list, not str"),
        ({"a": 1}, 9, "must be a list, not dict"),
        (list(range(20)), 10, "lists 20 seqs, more than the 10"),
    ],
)
def test_hostile_citations_raise_value_error(stored: object, seq: int | None, message: str) -> None:
    event = {"sourceEventSeqs": stored} if seq is None else {"seq": seq, "sourceEventSeqs": stored}
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        source_seqs(event)


def test_the_bound_is_exactly_the_events_own_seq() -> None:
    # an event at seq n can cite n earlier seqs (0 .. n-1), not one more
    assert source_seqs({"seq": 3, "sourceEventSeqs": [[0, 2]]}) == [0, 1, 2]
    assert source_seqs({"seq": 3, "sourceEventSeqs": [0, 1, 2]}) == [0, 1, 2]
    assert source_seqs({"seq": 3, "sourceEventSeqs": [[4, 4]]}) == [4]
    with pytest.raises(ValueError, match=r"range \[0, 3\] expands beyond the 3 seqs"):
        source_seqs({"seq": 3, "sourceEventSeqs": [[0, 3]]})
    with pytest.raises(ValueError, match="lists 1 seqs, more than the 0 an event at seq 0"):
        source_seqs({"seq": 0, "sourceEventSeqs": [5]})
    with pytest.raises(ValueError, match=r"range \[0, 0\] expands beyond the 0 seqs"):
        source_seqs({"seq": 0, "sourceEventSeqs": [[0, 0]]})
