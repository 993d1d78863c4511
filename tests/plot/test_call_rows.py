"""The calls of one step each sit on a row of their lane, in the order requested: up to three
a row apart, more spread evenly over the same band."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ledgerviz.plot.lanes import ROW_OFFSET, rows_within_step

UP, MIDDLE, DOWN = ROW_OFFSET, 0.0, -ROW_OFFSET
"""The offsets of a step's first, second and third call."""
FOUR = [0.24, 0.08, -0.08, -0.24]
"""A step of four calls: the band from UP to DOWN in three equal gaps (0.48 / 3 = 0.16)."""


def calls(turns: list, steps: list) -> pd.DataFrame:
    return pd.DataFrame({"turn": pd.array(turns, dtype="Int64"),
                         "step": pd.array(steps, dtype="Int64")})


@pytest.mark.parametrize(("turns", "steps", "codes", "expected"), [
    # sorted by session, turn and step: each step's calls are one run of rows
    ([1, 1, 1, 1, 2, 2], [1, 1, 1, 1, 1, 2], [0] * 6, [*FOUR, UP, UP]),
    ([1, 1, 1, 2], [1, 1, 1, 1], [0] * 4, [UP, MIDDLE, DOWN, UP]),
    ([1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 1, 1], [UP, MIDDLE, UP, MIDDLE]),
    ([1, 1, None, None], [1, None, None, None], [0] * 4, [UP, UP, UP, MIDDLE]),
    # not sorted: a step's calls apart from each other still count on
    ([1, 2, 1], [1, 1, 1], [0] * 3, [UP, UP, MIDDLE]),
    ([2, 1, 1], [1, 1, 1], [0] * 3, [UP, UP, MIDDLE]),
    ([1, 2, 1, 1, 1], [1] * 5, [0] * 5, [FOUR[0], UP, *FOUR[1:]]),
    ([], [], [], []),
])
def test_a_steps_calls_take_the_next_row(turns: list, steps: list, codes: list,
                                         expected: list) -> None:
    offsets = rows_within_step(calls(turns, steps), np.array(codes, dtype=np.int64))
    assert offsets.tolist() == pytest.approx(expected)


def test_every_call_of_a_crashed_step_can_be_seen() -> None:
    """crash-before-dispatch asks for four calls in its last step and dispatches none: the
    four crosses share one x, so each needs its own row (a cycle of three hid the fourth)."""
    import ledgerviz as lv
    from ledgerviz.examples import example_path

    figure = lv.timeline(lv.load(example_path("crash-before-dispatch")))
    (crosses,) = [trace for trace in figure.data if trace.name == "not started"]
    assert len(set(crosses.x)) == 1
    assert np.diff(np.asarray(crosses.y, dtype=float)) == pytest.approx([-0.16] * 3)
