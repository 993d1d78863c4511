"""Rows of two frames stacked without joining them: each column read equals the joined frame's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ledgerviz.frames.columns import assemble, bool_column, category_column, int_column
from ledgerviz.frames.joined import StackedRows

SCHEMA = {"name": category_column, "n": int_column, "flag": bool_column}


def part(key: str, names: list, numbers: list, flags: list) -> pd.DataFrame:
    return assemble([key], {"session": [0] * len(names), "name": names, "n": numbers,
                            "flag": flags}, SCHEMA)


PARENT = part("p", ["b", "a", "b"], [1, None, 3], [True, False, True])
CHILD = part("c", ["c"], [7], [False])


def test_each_column_is_the_parts_values_one_after_another() -> None:
    rows = StackedRows(["p", "c"], [PARENT, CHILD], SCHEMA)
    assert len(rows) == 4
    assert rows["name"].tolist() == ["b", "a", "b", "c"]
    assert list(rows["name"].cat.categories) == ["a", "b", "c"]  # sorted, as inferred
    assert rows["n"].tolist() == [1, pd.NA, 3, 7] and rows["n"].dtype == "Int64"
    assert rows["flag"].tolist() == [True, False, True, False] and rows["flag"].dtype == bool
    assert rows["session"].astype(str).tolist() == ["p", "p", "p", "c"]
    assert rows["n"] is rows["n"]  # joined once, then kept
    whole = rows.frame()
    for column in whole.columns:
        pd.testing.assert_series_equal(rows[column], whole[column])


def test_rows_taken_from_a_part_and_a_selection_of_rows() -> None:
    rows = StackedRows(["p", "c"], [PARENT, CHILD], SCHEMA, [np.array([1, 2]), None])
    assert rows["name"].tolist() == ["a", "b", "c"] and rows["n"].tolist() == [pd.NA, 3, 7]
    chosen = rows[np.array([True, False, True])]
    assert isinstance(chosen, pd.DataFrame)
    assert chosen["name"].tolist() == ["a", "c"] and chosen["n"].tolist() == [pd.NA, 7]
    assert chosen["session"].astype(str).tolist() == ["p", "c"]
    assert chosen.index.tolist() == [0, 1]
    pd.testing.assert_frame_equal(rows[np.ones(3, dtype=bool)], rows.frame())
