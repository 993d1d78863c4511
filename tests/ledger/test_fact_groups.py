"""The fact groups' operations (``ledger.fact_groups``), on literal rows worked out by hand:
a group of a 10-row table holding rows 1, 4, 5 and 8."""

from __future__ import annotations

from array import array

import pytest

from ledgerviz.ledger.fact_groups import Calls, Results, RowFacts, Usage
from ledgerviz.recovery.vocab import MISSING


def _results() -> Results:
    return Results(array("q", [1, 4, 5, 8]), ["a", "b", None, "d"], [None, "E1", None, None],
                   array("b", [0, 1, 0, 1]), array("b", [0, 0, 1, 0]))


def test_a_split_keeps_each_parts_rows_counted_from_its_first() -> None:
    first, middle, last = _results().split([0, 4, 6, 10])
    assert list(first.row) == [1] and first.call_id == ["a"]
    assert list(middle.row) == [0, 1]  # rows 4 and 5, less 4
    assert middle.call_id == ["b", None] and middle.error_code == ["E1", None]
    assert list(middle.is_error) == [1, 0] and list(middle.synthetic) == [0, 1]
    assert list(last.row) == [2] and last.call_id == ["d"]  # row 8, less 6
    assert _results().split([2, 4]) == [Results()]  # no row from 2 to 4


def test_an_extend_shifts_the_rows_added() -> None:
    group = _results()
    group.extend(Results(array("q", [0, 3]), ["e", "f"], [None, None], array("b", [0, 0]),
                         array("b", [0, 1])), 10)
    assert list(group.row) == [1, 4, 5, 8, 10, 13]
    assert group.call_id == ["a", "b", None, "d", "e", "f"]
    assert list(group.synthetic) == [0, 0, 1, 0, 0, 1]


def test_a_dense_column_holds_the_missing_value_where_no_row_is_held() -> None:
    group = _results()
    assert group.dense("call_id", 10) == [None, "a", None, None, "b", None, None, None, "d",
                                          None]
    assert list(group.dense("is_error", 10)) == [-1, 0, -1, -1, 1, 0, -1, -1, 1, -1]
    usage = Usage(array("q", [2]), array("q", [5]), array("q", [MISSING]), array("q", [0]),
                  array("q", [7]))
    assert list(usage.dense("input_tokens", 4)) == [MISSING, MISSING, 5, MISSING]
    calls = Calls(array("q", [0]), ["z"], ["ls"], ["{}"])
    assert group.dense("call_id", 10, calls.dense("call_id", 10))[:2] == ["z", "a"]


def test_hold_finds_a_row_or_adds_it_in_order() -> None:
    group = _results()
    assert group.hold(5) == 2 and len(group) == 4
    assert group.hold(3) == 1  # added between 1 and 4, its facts missing
    assert list(group.row) == [1, 3, 4, 5, 8]
    assert group.values_at(3) == (None, None, -1, -1)
    assert group.hold(9) == 5 and list(group.row) == [1, 3, 4, 5, 8, 9]
    assert group.values_at(4) == ("b", "E1", 1, 0)


def test_row_facts_read_and_set_by_row() -> None:
    calls = Calls(array("q", [0, 7]), ["x", "y"], ["ls", "cat"], ["{}", "{}"])
    results = _results()
    call_ids = RowFacts([calls, results], "call_id")
    assert [call_ids[row] for row in range(10)] == ["x", "a", None, None, "b", None, None, "y",
                                                    "d", None]
    assert call_ids[4] == "b" and call_ids[1] == "a"  # backwards: found by bisection
    flags = RowFacts([results], "is_error")
    assert flags[2] == -1
    flags[5] = 1
    assert list(results.is_error) == [0, 1, 1, 1]
    with pytest.raises(KeyError, match="row 2 holds no is_error"):
        flags[2] = 1
    with pytest.raises(IndexError):
        call_ids[-1]
    with pytest.raises(TypeError):
        list(call_ids)  # not iterable: ask the table for the dense column
