"""A turn started inside an open turn, or a step inside an open step, is a warning with its
file and line, from the whole check and the streamed one alike (issue 38, format §4.1)."""

from __future__ import annotations

from typing import Any

import pytest
from ledger_lines import HEADER, encode, mark

from ledgerviz.ledger import read_session
from ledgerviz.streams.summary import summarize_file


def boundary(kind: str, seq: int, turn: int, step: int | None = None) -> dict[str, Any]:
    data = {"turn": turn} if step is None else {"turn": turn, "step": step}
    if kind == "turn/end":
        data["reason"] = {"kind": "completed"}
    return {"type": kind, "seq": seq, "time": seq, "data": data}


def found(events: list[dict[str, Any]]) -> list[list[tuple[int, str, str, str]]]:
    """Return the diagnostics of the whole check and of the streamed one."""
    content = encode([HEADER, *events])
    whole = read_session("x.jsonl", content).diagnostics
    streamed = summarize_file("x.jsonl", iter([content])).diagnostics
    return [[(d.line, d.kind, d.severity, d.message) for d in diagnostics]
            for diagnostics in (whole, streamed)]


# lines: the header is line 1, so the event at seq n is on line n + 2
CASES = {
    "closed turns and steps": ([
        boundary("turn/start", 0, 1), boundary("step/start", 1, 1, 1),
        boundary("step/end", 2, 1, 1), boundary("step/start", 3, 1, 2),
        boundary("step/end", 4, 1, 2), boundary("turn/end", 5, 1),
        boundary("turn/start", 6, 2), boundary("turn/end", 7, 2),
    ], []),
    "a turn inside an open turn": ([
        boundary("turn/start", 0, 1), mark(1), boundary("turn/start", 2, 2),
    ], [(4, "nested_turn", "warning",
         "turn/start of turn 2 while turn 1 (started on line 2) is still open")]),
    "a step inside an open step": ([
        boundary("turn/start", 0, 1), boundary("step/start", 1, 1, 1),
        boundary("step/start", 2, 1, 2),
    ], [(4, "nested_step", "warning",
         "step/start of step 2 (turn 1) while step 1 of turn 1 (started on line 3) is "
         "still open")]),
    "a step left open when its turn ends does not stay open": ([
        boundary("turn/start", 0, 1), boundary("step/start", 1, 1, 1),
        boundary("turn/end", 2, 1), boundary("turn/start", 3, 2),
        boundary("step/start", 4, 2, 1),
    ], []),
    "a new turn closes the step of the turn it nests in": ([
        boundary("turn/start", 0, 1), boundary("step/start", 1, 1, 1),
        boundary("turn/start", 2, 2), boundary("step/start", 3, 2, 1),
    ], [(4, "nested_turn", "warning",
         "turn/start of turn 2 while turn 1 (started on line 2) is still open")]),
}


@pytest.mark.parametrize(("events", "expected"), CASES.values(), ids=CASES.keys())
def test_nesting_warnings(events: list[dict[str, Any]], expected: list[Any]) -> None:
    whole, streamed = found(events)
    assert whole == expected
    assert streamed == expected


def test_the_warning_counts_across_blocks_of_the_stream() -> None:
    events = [boundary("turn/start", 0, 1), *(mark(seq) for seq in range(1, 3000)),
              boundary("turn/start", 3000, 2)]
    content = encode([HEADER, *events])
    expected = [(3002, "nested_turn")]
    for chunk in (97, 4096, len(content)):
        pieces = iter([content[i:i + chunk] for i in range(0, len(content), chunk)])
        streamed = summarize_file("x.jsonl", pieces).diagnostics
        assert [(d.line, d.kind) for d in streamed] == expected
    assert [(d.line, d.kind) for d in read_session("x.jsonl", content).diagnostics] == expected
