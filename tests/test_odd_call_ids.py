"""Call ids of another type than string are kept, as the runtime reads them (issue 38).

A six-line ledger worked by hand from format §9.1 (the crash-repair scan files calls in a
``Map``: the number ``7`` and ``7.0`` are one key, the string ``"7"`` another; a
``tool/call`` nobody requested is ignored): block ``7`` was dispatched (as ``7.0``), so
its outcome is unknown; blocks ``"7"`` and ``"<b>x</b>"`` were never started.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

import ledgerviz as lv

STEP = {"turn": 1, "step": 1}


def block(call_id: object) -> dict[str, object]:
    return {"type": "tool-call", "id": call_id, "name": "ls", "arguments": "{}"}


def call(seq: int, call_id: object) -> dict[str, object]:
    return {"type": "tool/call", "seq": seq, "time": 1000 + seq,
            "data": {**STEP, "callId": call_id, "name": "ls", "arguments": "{}"}}


LINES = [
    {"type": "session", "version": 4, "id": "six", "createdAt": 1700000000000, "cwd": "/w",
     "isSeeded": False, "delegationDepth": 0},
    {"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}},
    {"type": "step/start", "seq": 1, "time": 1001, "data": STEP},
    {"type": "assistant/message", "seq": 2, "time": 1002, "surfaceOp": "append",
     "data": {**STEP, "stream": [], "message": {
         "id": "m", "role": "assistant", "source": {"kind": "assistant"},
         "content": [block(7), block("7"), block("<b>x</b>")]}}},
    call(3, 7.0),
    call(4, True),
]
KEPT = "; the runtime reads this line as it is (kept as the runtime reads it)"


def six_lines(tmp_path: Path) -> lv.Ledger:
    path = tmp_path / "six.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES), encoding="utf-8")
    return lv.load(path)


def test_every_line_is_kept_with_a_warning(tmp_path: Path) -> None:
    (log,) = six_lines(tmp_path).sessions
    assert [(d.kind, d.line, d.severity, d.message) for d in log.diagnostics] == [
        ("unusual_payload", 4, "warning",
         "assistant/message: 'data.message.content[].id' must be string, not number" + KEPT),
        ("unusual_payload", 5, "warning",
         "tool/call: 'data.callId' must be a string, not number" + KEPT),
        ("unusual_payload", 6, "warning",
         "tool/call: 'data.callId' must be a string, not boolean" + KEPT),
    ]
    assert (len(log.events), log.lines_skipped) == (5, 0)


def test_the_calls_and_their_statuses_are_the_runtimes(tmp_path: Path) -> None:
    calls = six_lines(tmp_path).frames.calls
    assert list(calls["call_id"]) == ["7", "7", "<b>x</b>"]
    assert list(calls["status"]) == ["outcome_unknown", "not_started", "not_started"]
    assert list(calls["dispatched_seq"].astype(object).where(calls["dispatched_seq"].notna(),
                                                              None)) == [3, None, None]


def test_odd_ids_are_strings_in_the_events_frame(tmp_path: Path) -> None:
    ids = six_lines(tmp_path).frames.events["call_id"]
    assert [None if pd.isna(value) else value for value in ids] == [
        None, None, None, "7.0", "True"]


def test_the_crash_closers_name_the_calls_as_the_runtime_writes_them(tmp_path: Path) -> None:
    ledger = six_lines(tmp_path)
    closers = ledger.recovery("synthesize").analyses["six"].closers
    assert [(event["type"], event["seq"]) for event in closers] == [
        ("tool/result", 5), ("tool/result", 6), ("tool/result", 7), ("step/end", 8),
        ("turn/end", 9)]
    results = closers[:3]
    assert [event["data"]["message"]["id"] for event in results] == [
        "interrupted-tool-result-7-5", "interrupted-tool-result-7-6",
        "interrupted-tool-result-<b>x</b>-7"]
    assert [event["data"]["error"]["code"] for event in results] == [
        "TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED", "TOOL_NOT_STARTED"]
    assert [event.get("sourceEventSeqs") for event in results] == [[3], None, None]
