"""first_difference: where two sequences part (equal items, the same object counting as
equal to itself)."""

from __future__ import annotations

import pytest

from ledgerviz.recovery.sequences import first_difference


@pytest.mark.parametrize(("old", "new", "expected"), [
    ([], [], 0),
    ([1, 2, 3], [1, 2, 3], 3),
    ([1, 2, 3], [1, 2], 2),
    ([1, 2], [1, 2, 3], 2),
    ([1, 2, 3], [0, 2, 3], 0),
    ([1, 2, 3], [1, 2, 4], 2),
    (["active"] * 1000, ["active"] * 777 + ["abandoned"] * 223, 777),
    ([True] * 999 + [False], [True] * 1000, 999),
    ([None, "a"] * 300, [None, "a"] * 150 + [None, "b"] + [None, "a"] * 149, 301),
])
def test_first_difference_finds_the_first_unequal_item(old: list, new: list, expected: int) -> None:
    assert first_difference(old, new) == expected


def test_the_same_object_is_equal_to_itself_and_equal_objects_are_shared() -> None:
    nan, a, b = float("nan"), [1], [2]
    assert first_difference([nan, a], [nan, b]) == 1  # nan != nan, but it is the same object
    assert first_difference([[1], a], [[1], b]) == 1  # equal lists, not the same objects
