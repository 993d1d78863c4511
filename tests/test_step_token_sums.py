"""A step's token counts are summed exactly, or refused clearly past what ``Int64`` holds.

Each usage count the frames take is at most 2**53 - 1 (9,007,199,254,740,991), so a step
passes int64's largest value (2**63 - 1 = 9,223,372,036,854,775,807) only with over 1,024
assistant messages. The sums below are worked by hand:
1,024 x (2**53 - 1) = 2**63 - 1,024 = 9,223,372,036,854,774,784;
that + 1,023 = 2**63 - 1 = 9,223,372,036,854,775,807 (the largest, still held);
1,025 x (2**53 - 1) = 9,232,379,236,109,515,775 (beyond).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ledgerviz

LARGEST_COUNT = 2**53 - 1


def _ledger(path: Path, counts: list[int]) -> Path:
    """Write one turn of one step whose assistant messages report ``counts`` output tokens
    (and one input token each)."""
    lines: list[dict] = [
        {"type": "session", "version": 4, "id": "tokens", "createdAt": 1},
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 1, "data": {"turn": 1, "step": 1}},
    ]
    for i, count in enumerate(counts):
        message = {"id": f"a{i}", "role": "assistant", "content": [{"type": "text", "text": "x"}],
                   "source": {"kind": "model", "provider": "p", "model": "m"}}
        lines.append({"type": "assistant/message", "seq": len(lines) - 1, "time": 2,
                      "data": {"turn": 1, "step": 1, "message": message, "stream": [],
                               "usage": {"inputTokens": 1, "outputTokens": count}},
                      "surfaceOp": "append"})
    seq = len(lines) - 1
    lines.append({"type": "step/end", "seq": seq, "time": 3, "data": {"turn": 1, "step": 1}})
    lines.append({"type": "turn/end", "seq": seq + 1, "time": 3,
                  "data": {"turn": 1, "reason": {"kind": "completed"}}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _step(path: Path) -> dict:
    return ledgerviz.load(path).frames.steps.iloc[0].to_dict()


def test_a_sum_up_to_int64s_largest_is_exact(tmp_path: Path) -> None:
    step = _step(_ledger(tmp_path / "a.jsonl", [LARGEST_COUNT] * 1024))
    assert (step["output_tokens"], step["input_tokens"]) == (9_223_372_036_854_774_784, 1024)
    step = _step(_ledger(tmp_path / "b.jsonl", [LARGEST_COUNT] * 1024 + [1023]))
    assert (step["output_tokens"], step["input_tokens"]) == (9_223_372_036_854_775_807, 1025)


def test_a_sum_beyond_int64_is_refused_naming_the_step(tmp_path: Path) -> None:
    ledger = ledgerviz.load(_ledger(tmp_path / "c.jsonl", [LARGEST_COUNT] * 1025))
    with pytest.raises(OverflowError) as raised:
        ledger.frames.steps  # noqa: B018
    assert str(raised.value) == (
        "session 'tokens', turn 1, step 1: its output_tokens sum to 9232379236109515775, "
        "beyond the largest the steps frame holds (9223372036854775807)")
