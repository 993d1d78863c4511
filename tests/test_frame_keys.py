"""Row keys of several int64 columns (frames/keys.py), on values worked out by hand."""

from __future__ import annotations

import numpy as np

from ledgerviz.frames.keys import (
    int64_of,
    keyed_counts,
    last_with_key,
    latest_in_rows,
    nullable,
    one_key,
    opened_rows,
)
from ledgerviz.ledger.table import MISSING


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_ints_and_nones_become_int64_with_missing() -> None:
    assert int64_of([3, None, -2, True, 2**70]).tolist() == [3, MISSING, -2, MISSING, MISSING]


def test_one_key_is_equal_exactly_where_every_column_is() -> None:
    sessions = ints(0, 0, 1, 1, 0, 1)
    turns = ints(5, MISSING, 5, MISSING, 5, 2**62)  # a span too wide for the mixed radix
    keys = one_key([sessions, turns]).tolist()
    same = [[keys[i] == keys[j] for j in range(6)] for i in range(6)]
    expected = [[(sessions[i], turns[i]) == (sessions[j], turns[j]) for j in range(6)]
                for i in range(6)]
    assert same == expected
    assert keys[0] == keys[4] and len(set(keys)) == 5


def test_keyed_counts_count_the_calls_of_each_row() -> None:
    rows = [ints(0, 0, 1, 1), ints(1, MISSING, 1, 2)]
    calls = [ints(0, 0, 0, 1, 1, 0), ints(1, 1, MISSING, 2, 3, 2)]
    assert keyed_counts(rows, calls).tolist() == [2, 1, 0, 1]
    assert keyed_counts(rows, [ints(), ints()]).tolist() == [0, 0, 0, 0]


def test_last_with_key_finds_the_last_equal_key() -> None:
    assert last_with_key(ints(7, 3, 7, 5), ints(7, 5, 4, 3)).tolist() == [2, 3, -1, 1]
    assert last_with_key(ints(), ints(1, 2)).tolist() == [-1, -1]


def test_opened_rows_follow_the_runtime_reading() -> None:
    # events of turns 1, 2, 1 (reopened by a start), 2 (no start: its latest row), 1, None
    turns = ints(1, 1, 2, 1, 2, 1, MISSING, MISSING)
    opens = np.array([True, False, True, True, False, False, False, True])
    rows, openers = opened_rows([np.zeros(8, dtype=np.int64), turns], opens)
    assert rows.tolist() == [0, 0, 1, 2, 1, 2, 3, 4]
    assert openers.tolist() == [0, 2, 3, 6, 7]
    assert latest_in_rows(5, rows, np.arange(10, 18)).tolist() == [11, 14, 15, 16, 17]
    assert latest_in_rows(3, ints(2), ints(9)).tolist() == [-1, -1, 9]


def test_opened_rows_of_two_sessions_never_share_a_row() -> None:
    rows, openers = opened_rows([ints(0, 1, 0), ints(4, 4, 4)], np.zeros(3, dtype=bool))
    assert (rows.tolist(), openers.tolist()) == ([0, 1, 0], [0, 1])


def test_nullable_gives_none_for_missing() -> None:
    assert nullable(ints(3, MISSING, 0)) == [3, None, 0]
