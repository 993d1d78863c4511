"""(session, seq) pairs are found among the pairs an index was built from."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ledgerviz.plot.axis import PairIndex, Positions


def ints(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


@pytest.mark.parametrize(("codes", "values"), [
    ([0, 0, 0, 0], [3, 5, 8, 9]),  # one session's rising seqs (built without sorting)
    ([0, 0, 0, 0], [8, 3, 9, 5]),  # the same pairs in another order
    ([1, 1, 1, 1], [3, 5, 8, 9]),
])
def test_each_known_pair_is_found_and_others_are_not(codes: list[int],
                                                      values: list[int]) -> None:
    index = PairIndex(ints(codes), ints(values))
    code = codes[0]
    found = index.find(ints([code] * 6), ints([9, 3, 4, 8, 5, 10]))
    assert [int(values[index.rows[at]]) if at >= 0 else None for at in found] == [
        9, 3, None, 8, 5, None]
    assert index.find(ints([code + 1]), ints([3])).tolist() == [-1]  # another session


@pytest.mark.parametrize("code", [0, 2])
def test_seqs_without_a_gap_are_found_by_their_offset(code: int) -> None:
    index = PairIndex(ints([code] * 5), ints([3, 4, 5, 6, 7]))
    found = index.find(ints([code] * 7), ints([7, 3, 5, 2, 8, -1, 10**15]))
    assert found.tolist() == [4, 0, 2, -1, -1, -1, -1]
    assert index.rows[found[:3]].tolist() == [4, 0, 2]
    assert index.find(ints([code + 1, code - 1]), ints([3, 4])).tolist() == [-1, -1]


def test_the_first_row_of_a_repeated_pair_counts() -> None:
    index = PairIndex(ints([0, 1, 0, 0]), ints([4, 4, 7, 4]))
    rows = index.rows[index.find(ints([0, 1, 0]), ints([4, 4, 7]))]
    assert rows.tolist() == [0, 1, 2]


@pytest.mark.parametrize("values", [
    [7, 4, 4, 9, 7],  # dense: found by offset
    [7 * 10**6, 4, 4, 9 * 10**9, 7 * 10**6],  # sparse: found by search
])
def test_one_sessions_pairs_in_any_order_find_their_first_row(values: list[int]) -> None:
    index = PairIndex(ints([3] * 5), ints(values))
    found = index.find(ints([3, 3, 3, 3, 2]), ints([values[0], values[1], values[3], 5, values[1]]))
    assert found[3:].tolist() == [-1, -1]
    assert index.rows[found[:3]].tolist() == [0, 1, 3]


def test_a_value_inside_the_table_but_never_seen_is_not_found() -> None:
    # every value asked for lies within the table's span (3..9), so none is out of range;
    # 4 and 6 were never built from
    index = PairIndex(ints([0, 0, 0, 0]), ints([3, 5, 8, 9]))
    found = index.find(ints([0, 0, 0, 0, 0]), ints([9, 4, 3, 6, 8]))
    assert [int(index.rows[at]) if at >= 0 else None for at in found] == [3, None, 0, None, 2]


def test_rising_values_then_some_seen_before_keep_their_first_rows() -> None:
    # a fork story's seqs: the parent's 10..14, then the child's own 12..13 and a new 15
    index = PairIndex(ints([0] * 8), ints([10, 11, 12, 13, 14, 12, 13, 15]))
    found = index.find(ints([0] * 4), ints([12, 13, 15, 16]))
    assert index.rows[found[:3]].tolist() == [2, 3, 7] and found[3] == -1


def test_the_positions_of_the_events_own_rows_are_their_seqs_on_the_order_axis() -> None:
    events = pd.DataFrame({"seq": pd.array([5, None, 7, 5, 9], dtype="Int64"),
                           "time": pd.Series([None] * 5, dtype="datetime64[ms, UTC]")})
    codes = ints([0, 0, 0, 0, -1])  # the last row is not drawn
    at = Positions(events, codes, np.zeros(1, dtype=bool))
    own = at.own(codes, events["seq"])
    np.testing.assert_array_equal(own, [5.0, np.nan, 7.0, 5.0, np.nan])
    np.testing.assert_array_equal(own, at.at(codes, events["seq"]))


def test_one_sessions_dense_seqs_on_the_order_axis_are_found_as_the_index_finds_them() -> None:
    events = pd.DataFrame({"seq": pd.array([3, 4, 6, 4, None, 7], dtype="Int64"),
                           "time": pd.Series([None] * 6, dtype="datetime64[ms, UTC]")})
    at = Positions(events, ints([0] * 6), np.zeros(1, dtype=bool))
    asked = pd.array([4, 5, 6, 7, 8, 2, None, 3], dtype="Int64")
    codes = ints([0, 0, 0, 0, 0, 0, 0, -1])
    # 5 and 2 and 8 are no event's seq, None is missing, code -1 is not drawn
    np.testing.assert_array_equal(at.at(codes, asked), [4, np.nan, 6, 7, np.nan, np.nan,
                                                        np.nan, np.nan])
    assert at.ends.tolist() == [7.0]
    many = Positions(events.iloc[[0, 1, 2]], ints([0, 0, 1]), np.zeros(2, dtype=bool))
    np.testing.assert_array_equal(many.at(ints([0, 1, 1]), pd.array([4, 6, 3])),
                                  [4, 6, np.nan])  # several sessions: the pair index
