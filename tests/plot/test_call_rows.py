"""The calls of one step sit on up to three rows of their lane, in the order requested."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ledgerviz.plot.lanes import ROW_OFFSET, rows_within_step

UP, MIDDLE, DOWN = ROW_OFFSET, 0.0, -ROW_OFFSET
"""The offsets of a step's first, second and third call (the fourth starts over)."""


def calls(turns: list, steps: list) -> pd.DataFrame:
    return pd.DataFrame({"turn": pd.array(turns, dtype="Int64"),
                         "step": pd.array(steps, dtype="Int64")})


@pytest.mark.parametrize(("turns", "steps", "codes", "expected"), [
    # sorted by session, turn and step: each step's calls are one run of rows
    ([1, 1, 1, 1, 2, 2], [1, 1, 1, 1, 1, 2], [0] * 6, [UP, MIDDLE, DOWN, UP, UP, UP]),
    ([1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 1, 1], [UP, MIDDLE, UP, MIDDLE]),
    ([1, 1, None, None], [1, None, None, None], [0] * 4, [UP, UP, UP, MIDDLE]),
    # not sorted: a step's calls apart from each other still count on
    ([1, 2, 1], [1, 1, 1], [0] * 3, [UP, UP, MIDDLE]),
    ([2, 1, 1], [1, 1, 1], [0] * 3, [UP, UP, MIDDLE]),
    ([], [], [], []),
])
def test_a_steps_calls_take_the_next_row(turns: list, steps: list, codes: list,
                                         expected: list) -> None:
    offsets = rows_within_step(calls(turns, steps), np.array(codes, dtype=np.int64))
    assert offsets.tolist() == pytest.approx(expected)
