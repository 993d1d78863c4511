"""Synthetic results of both generations and both causes, as LEDGER_FORMAT.md §9.2 pins them.

The conformance vectors only hold the ``forked`` cause for v4 ledgers; the v0-v3 rows
below are read from §9.2's table: that generation knows one id prefix,
``interrupted-tool-result-``, whatever the cause.
"""

from __future__ import annotations

import pytest

from ledgerviz.recovery import crash_closers
from ledgerviz.recovery.results import (
    FORKED_NOT_STARTED_TEXT,
    FORKED_UNKNOWN_TEXT,
    INTERRUPTED_NOT_STARTED_TEXT,
    INTERRUPTED_UNKNOWN_TEXT,
)

from .build import LedgerBuilder


def crashed(version: int) -> list[dict]:
    b = LedgerBuilder(version)
    b.turn_start()  # 0
    b.step_start()  # 1
    b.assistant("A", "B")  # 2
    b.tool_call("A")  # 3
    return b.events


@pytest.mark.parametrize(
    ("generation", "cause", "ids", "texts"),
    [
        ("v0-v3", "interrupted", ["interrupted-tool-result-A-4", "interrupted-tool-result-B-5"],
         [INTERRUPTED_UNKNOWN_TEXT, INTERRUPTED_NOT_STARTED_TEXT]),
        ("v0-v3", "forked", ["interrupted-tool-result-A-4", "interrupted-tool-result-B-5"],
         [FORKED_UNKNOWN_TEXT, FORKED_NOT_STARTED_TEXT]),
        ("v4", "interrupted", ["interrupted-tool-result-A-4", "interrupted-tool-result-B-5"],
         [INTERRUPTED_UNKNOWN_TEXT, INTERRUPTED_NOT_STARTED_TEXT]),
        ("v4", "forked", ["forked-tool-result-A-4", "forked-tool-result-B-5"],
         [FORKED_UNKNOWN_TEXT, FORKED_NOT_STARTED_TEXT]),
    ],
)  # fmt: skip
def test_ids_texts_and_reason_by_generation_and_cause(
    generation: str, cause: str, ids: list[str], texts: list[str]
) -> None:
    closers = crash_closers(crashed(4), generation=generation, cause=cause)  # type: ignore[arg-type]
    results = [c["data"]["message"] for c in closers[:2]]
    assert [m["id"] for m in results] == ids
    if generation == "v4":
        assert [(m["role"], m["toolCallId"], m["isError"]) for m in results] == [
            ("tool", "A", True),
            ("tool", "B", True),
        ]
        assert [m["content"][0]["text"] for m in results] == texts
    else:
        assert [m["role"] for m in results] == ["user", "user"]
        blocks = [m["content"][0] for m in results]
        assert [(b["type"], b["toolCallId"], b["isError"]) for b in blocks] == [
            ("tool-result", "A", True),
            ("tool-result", "B", True),
        ]
        assert [b["content"] for b in blocks] == [[{"type": "text", "text": t}] for t in texts]
    assert [m["source"] for m in results] == [
        {"kind": "tool", "callId": "A"},
        {"kind": "tool", "callId": "B"},
    ]
    assert [c["data"]["error"] for c in closers[:2]] == [
        {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"},
        {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
    ]
    assert closers[-1]["data"] == {"turn": 1, "reason": {"kind": cause}}


def test_key_orders_are_the_runtime_build_orders() -> None:
    unknown, not_started, step_end, turn_end = crash_closers(crashed(4))
    assert list(unknown) == ["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"]
    assert list(not_started) == ["type", "seq", "time", "data", "surfaceOp"]
    assert list(unknown["data"]) == ["turn", "step", "message", "error"]
    assert list(unknown["data"]["message"]) == [
        "id", "role", "toolCallId", "isError", "source", "content",
    ]  # fmt: skip
    assert list(unknown["data"]["error"]) == ["name", "code"]
    assert [list(step_end), list(turn_end)] == [["type", "seq", "time", "data"]] * 2
