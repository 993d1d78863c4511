"""The Claude Code typed route written during the first pass, in file order
(``claude_code_typed.FileOrder``), and what it leaves to the branch plan.

Expected values are the literals written here, worked out by hand from the records: which
files the first pass may write (its proof that the plan is the file order and finds no
refusal), and the rows of a session it gives up on that the typed route still writes after
the plan (a message's parts apart), or that it writes from a last line with no newline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

import ledgerviz
from ledgerviz.ledger.diagnostics import PendingDiagnostics
from ledgerviz.ledger.formats.claude_code_scan import scanned
from ledgerviz.ledger.formats.claude_code_typed import FileOrder
from ledgerviz.ledger.formats.sealed import DerivedEvents
from ledgerviz.ledger.numbers import number_marks
from ledgerviz.ledger.session import SessionLog
from ledgerviz.recovery.vocab import MISSING

T0 = 1_767_607_200_000
"""2026-01-05T10:00:00Z in epoch ms (see ``test_claude_code_records``)."""
REFUSAL = "The user doesn't want to proceed with this tool use. The tool use was rejected."


def _record(number: int, kind: str, message: Any, parent: int | None, **more: Any
            ) -> dict[str, Any]:
    return {"type": kind, "uuid": f"u{number}",
            "parentUuid": None if parent is None else f"u{parent}", "sessionId": "s",
            "timestamp": f"2026-01-05T10:00:0{number}.000Z", "message": message, **more}


def _prompt(number: int, parent: int | None, text: str = "fix it") -> dict[str, Any]:
    return _record(number, "user", {"role": "user", "content": text}, parent)


def _call(number: int, parent: int, call: str, message: str = "m1") -> dict[str, Any]:
    return _record(number, "assistant", {"id": message, "model": "claude-x", "content": [
        {"type": "tool_use", "id": call, "name": "Read", "input": {"n": number}}]}, parent)


def _result(number: int, parent: int, call: str, text: str = "ok", **more: Any
            ) -> dict[str, Any]:
    return _record(number, "user", {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call, "content": text, **more}]}, parent)


def _answer(number: int, parent: int, message: str = "m2") -> dict[str, Any]:
    return _record(number, "assistant", {"id": message, "model": "claude-x", "content": [
        {"type": "text", "text": "Done."}]}, parent)


def _linear() -> list[dict[str, Any]]:
    """A prompt, one message of two parts calling c1 and c2, both answered, an answer."""
    return [_prompt(1, None), _call(2, 1, "c1"), _call(3, 2, "c2"), _result(4, 3, "c1"),
            _result(5, 4, "c2"), _answer(6, 5)]


def _proven(records: list[dict[str, Any]]) -> bool:
    """Return whether the first pass writes ``records`` (one block of lines) itself."""
    lines = [orjson.dumps(r) for r in records]
    block = b"\n".join(lines)
    found = scanned(lines, block, number_marks(block), 1, 0, PendingDiagnostics(), {})
    assert found is not None
    route = FileOrder()
    route.take([entry for _, entry, _ in found], [facts for _, _, facts in found])
    return route.written() is not None


def _changed(records: list[dict[str, Any]], at: int, **fields: Any) -> list[dict[str, Any]]:
    return [{**r, **fields} if place == at else r for place, r in enumerate(records)]


def test_a_linear_session_is_written_by_the_first_pass() -> None:
    assert _proven(_linear())


@pytest.mark.parametrize(("records", "why"), [
    (_changed(_linear(), 3, uuid="u2"), "a uuid met twice (a replayed copy)"),
    (_changed(_linear(), 1, parentUuid="u5"), "a parent named ahead of its record"),
    (_changed(_linear(), 1, parentUuid="u2"), "a record its own parent"),
    ([*_linear(), _prompt(7, 6, "again"), _prompt(8, 6, "or this")],
     "two prompts below one parent (a rewind)"),
    ([*_linear()[:4], _result(5, 4, "c2", REFUSAL, is_error=True), _answer(6, 5)],
     "a refused call"),
    ([_prompt(1, None), _call(2, 1, "c1"), _result(3, 2, "c1"), _call(4, 3, "c2"),
      _result(5, 4, "c2")], "a message's parts apart"),
    (_changed(_linear(), 0, sessionId="older"), "a second sessionId (a resume's prefix?)"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_the_first_pass_leaves_to_the_plan(records: list[dict[str, Any]], why: str) -> None:
    assert not _proven(records), why


def _load(path: Path, records: list[dict[str, Any]], end: bytes = b"\n") -> SessionLog:
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + end)
    return ledgerviz.load(path).sessions[0]


def _rows(session: SessionLog) -> list[tuple[str, int, int, int, int]]:
    table = session.table
    return [(table.type_names[code], turn, step, line, time) for code, turn, step, line, time
            in zip(table.type_code, table.turn, table.step, table.line, table.time,
                   strict=True)]


def test_a_message_whose_parts_are_apart_is_written_after_the_plan(tmp_path: Path) -> None:
    progress = {"type": "progress", "uuid": "p3", "parentUuid": "u2", "sessionId": "s",
                "toolUseID": "c1"}  # no timestamp: its rows would have the time before
    records = [_prompt(1, None), _call(2, 1, "c1"), progress, _call(4, 2, "c2"),
               _result(5, 4, "c1"), _result(6, 5, "c2"), _answer(7, 6)]
    session = _load(tmp_path / "s.jsonl", records)
    assert isinstance(session.events, DerivedEvents)  # the typed route, after the plan
    m = MISSING
    assert _rows(session) == [
        ("turn/start", 1, m, 1, T0 + 1000), ("user/message", m, m, 1, T0 + 1000),
        ("step/start", 1, 1, 2, T0 + 2000), ("assistant/message", 1, 1, 2, T0 + 2000),
        ("tool/call", 1, 1, 2, T0 + 2000), ("tool/call", 1, 1, 2, T0 + 2000),
        ("claude-code/progress", m, m, 3, T0 + 2000),
        ("tool/result", 1, 1, 5, T0 + 5000), ("tool/result", 1, 1, 6, T0 + 6000),
        ("step/end", 1, 1, 7, T0 + 7000), ("step/start", 1, 2, 7, T0 + 7000),
        ("assistant/message", 1, 2, 7, T0 + 7000), ("step/end", 1, 2, 7, T0 + 7000),
        ("turn/end", 1, m, 7, T0 + 7000)]
    table = session.table
    assert list(table.requests.call_id) == ["c1", "c2"]  # both parts' calls, one message
    assert list(table.requests.row) == [3, 3]
    assert (table.column("call_id")[7], table.column("call_id")[8]) == ("c1", "c2")
    assert session.events[3]["data"]["message"]["content"] == [
        {"type": "tool-call", "id": "c1", "name": "Read", "arguments": '{"n":2}'},
        {"type": "tool-call", "id": "c2", "name": "Read", "arguments": '{"n":4}'}]


def test_a_last_line_with_no_newline_is_written_by_the_first_pass(tmp_path: Path) -> None:
    records = [_prompt(1, None), _record(2, "assistant", {"id": "m1", "content": [
        {"type": "text", "text": "Looking."}]}, 1), _call(3, 2, "c1")]
    session = _load(tmp_path / "s.jsonl", records, end=b"")  # the third record: the tail
    assert isinstance(session.events, DerivedEvents)
    m = MISSING
    # the step's two records are one message (m1) at the first one's line and time; the
    # call is unanswered at the file's end: the turn and step stay open
    assert _rows(session) == [
        ("turn/start", 1, m, 1, T0 + 1000), ("user/message", m, m, 1, T0 + 1000),
        ("step/start", 1, 1, 2, T0 + 2000), ("assistant/message", 1, 1, 2, T0 + 2000),
        ("tool/call", 1, 1, 2, T0 + 2000)]
    assert session.table.column("text")[3] == "Looking."
    assert session.table.column("model")[3] is None  # the first part names no model
    assert list(session.lines) == [1, 1, 2, 2, 2]


def test_records_taken_before_a_late_give_up_are_read_again_once(tmp_path: Path) -> None:
    """The route takes lines 1, 4 and 5 (not held), gives up at line 6 (another
    ``sessionId``); the plan reads those three again from their lines, which do not follow
    each other (a blank and an invalid line between), their diagnostics not given twice."""
    path = tmp_path / "s.jsonl"
    first, *rest = [_prompt(1, None), _call(2, 1, "c1"), _result(3, 2, "c1"),
                    {**_answer(4, 3), "sessionId": "older"}]
    path.write_bytes(b"\n".join([orjson.dumps(first), b"", b"not json",
                                 *map(orjson.dumps, rest)]) + b"\n")
    session = ledgerviz.load(path).sessions[0]
    assert isinstance(session.events, DerivedEvents)  # the typed route, after the plan
    m = MISSING
    assert _rows(session) == [
        ("turn/start", 1, m, 1, T0 + 1000), ("user/message", m, m, 1, T0 + 1000),
        ("step/start", 1, 1, 4, T0 + 2000), ("assistant/message", 1, 1, 4, T0 + 2000),
        ("tool/call", 1, 1, 4, T0 + 2000), ("tool/result", 1, 1, 5, T0 + 3000),
        ("step/end", 1, 1, 6, T0 + 4000), ("step/start", 1, 2, 6, T0 + 4000),
        ("assistant/message", 1, 2, 6, T0 + 4000), ("step/end", 1, 2, 6, T0 + 4000),
        ("turn/end", 1, m, 6, T0 + 4000)]
    assert [d.line for d in session.diagnostics if d.severity == "error"] == [2, 3]
    assert session.header["createdAt"] == T0 + 1000
    assert session.header.get("parentSession") is None
