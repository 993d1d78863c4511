"""A call id requested, dispatched or answered twice (issue 38): a ``repeated_call``
warning on the repeating line, from the whole check and the streamed one alike, and
nothing downstream raises. Which call the repeat then names is the recovery rules' call
(LEDGER_FORMAT §9.1: a repeated request keeps its place and loses its dispatch)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ledger_lines import HEADER, assistant_calls, encode, tool_result, turn_start

import ledgerviz as lv
from ledgerviz.cli import main
from ledgerviz.ledger import read_session
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.streams.summary import summarize_file


def step_start(seq: int) -> dict[str, Any]:
    return {"type": "step/start", "seq": seq, "time": 1000 + seq, "data": {"turn": 1, "step": 1}}


def dispatch(seq: int, call_id: str) -> dict[str, Any]:
    return {"type": "tool/call", "seq": seq, "time": 1000 + seq,
            "data": {"turn": 1, "step": 1, "callId": call_id, "name": "ls", "arguments": "{}"}}


OPEN = [turn_start(0), step_start(1)]

# the header is line 1: the event at seq n is on line n + 2
CASES = {
    "requested by two messages": (
        [*OPEN, assistant_calls(2, "A"), assistant_calls(3, "A")],
        [(5, "assistant/message requests 'A' again")]),
    "requested twice by one message": (
        [*OPEN, assistant_calls(2, "A", "B", "A")],
        [(4, "assistant/message requests 'A' again")]),
    "dispatched twice": (
        [*OPEN, assistant_calls(2, "A"), dispatch(3, "A"), dispatch(4, "A")],
        [(6, "tool/call dispatches call 'A' again")]),
    "answered twice": (
        [*OPEN, assistant_calls(2, "A"), dispatch(3, "A"), tool_result(4, "A"),
         tool_result(5, "A")],
        [(7, "tool/result answers call 'A' again")]),
    "dispatched again in a later turn": (
        [*OPEN, assistant_calls(2, "A"), dispatch(3, "A"),
         {"type": "turn/end", "seq": 4, "time": 1004,
          "data": {"turn": 1, "reason": {"kind": "completed"}}},
         turn_start(5, 2), dispatch(6, "A")],
        []),  # the runtime pairs ids within a step: another turn's dispatch is no repeat
}


@pytest.mark.parametrize(("events", "expected"), CASES.values(), ids=CASES.keys())
def test_a_repeat_is_a_warning_on_its_line(events: list[dict[str, Any]],
                                            expected: list[tuple[int, str]]) -> None:
    content = encode([HEADER, *events])
    whole = read_session("x.jsonl", content).diagnostics
    streamed = summarize_file("x.jsonl", iter([content])).diagnostics
    for diagnostics in (whole, streamed):
        assert [(d.line, d.message) for d in diagnostics if d.kind == "repeated_call"] == \
            expected
        assert all(d.severity == "warning" for d in diagnostics if d.kind == "repeated_call")


@pytest.mark.parametrize("events", [events for events, _ in CASES.values()], ids=CASES.keys())
def test_nothing_downstream_raises_on_a_repeat(
    events: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "repeat.jsonl"
    path.write_bytes(encode([HEADER, *events]))
    ledger = lv.load(path)
    for policy in POLICIES:
        assert len(ledger.recovery(policy).frames.calls.columns) > 0
        ledger.context(policy, provider="anthropic")
        lv.timeline(ledger, policy=policy)
    assert main(["repair", str(path)]) in (0, 1)
    assert main(["fork", "--at", "2", "-o", str(tmp_path / "child.jsonl"), str(path)]) == 0
    assert main(["check", str(path)]) == 0  # warnings only
    capsys.readouterr()
