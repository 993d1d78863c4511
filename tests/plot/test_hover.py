"""Turn and step hover labels: counts take the number of their noun (worked out by hand)."""

from __future__ import annotations

import pandas as pd
import pytest

from ledgerviz.plot.hover import FEW, step_hover, turn_hover


def turns(steps: list[int], calls: list[int]) -> pd.DataFrame:
    n = len(steps)
    return pd.DataFrame({
        "turn": range(1, n + 1), "start_seq": [0] * n, "end_seq": [9] * n,
        "end_reason": ["completed"] * n, "steps": steps, "calls": calls,
        "outcome_unknown": [0] * n, "not_started": [1] * n,
        "duration": [pd.Timedelta(milliseconds=512)] * n,
    })


def test_a_turn_label_says_one_step_and_one_call_in_the_singular() -> None:
    assert turn_hover(turns([1, 2], [1, 0])).tolist() == [
        "<b>turn 1</b> · seqs 0–9<br>ended: completed<br>1 step · 1 call (0 outcome unknown, "
        "1 not started)<br>duration: 512 ms",
        "<b>turn 2</b> · seqs 0–9<br>ended: completed<br>2 steps · 0 calls (0 outcome unknown, "
        "1 not started)<br>duration: 512 ms",
    ]


@pytest.mark.parametrize("rows", [3, FEW + 1])  # short columns value by value, long ones by value
def test_counts_are_worded_in_long_columns_too(rows: int) -> None:
    labels = turn_hover(turns([1, 2, 3] * (rows // 3) + [1] * (rows % 3), [2] * rows))
    assert "<br>1 step · 2 calls (" in labels[0]
    assert "<br>2 steps · 2 calls (" in labels[1]


def test_a_step_label_counts_its_tool_calls() -> None:
    steps = pd.DataFrame({
        "turn": [1, 1], "step": [1, 2], "start_seq": [2, 6],
        "end_seq": pd.array([5, None], dtype="Int64"),  # nullable, as in the steps frame
        "provider": ["openai", None], "model": ["gpt", None],
        "input_tokens": pd.array([10, None], dtype="Int64"),
        "output_tokens": pd.array([3, None], dtype="Int64"), "calls": [1, 4],
    })
    assert step_hover(steps).tolist() == [
        "<b>turn 1 · step 1</b> · seqs 2–5<br>model: openai / gpt<br>tokens: 10 in · 3 out"
        "<br>1 tool call",
        "<b>turn 1 · step 2</b> · seqs 6–none<br>model: ? / ?<br>tokens: ? in · ? out"
        "<br>4 tool calls",
    ]
