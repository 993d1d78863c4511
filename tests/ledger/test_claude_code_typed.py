"""The Claude Code reader's typed route (``claude_code_typed``): a session of the common shapes
written straight into its table's columns, its events derived on demand
(``claude_code_typed_events``); every other session written by the event writer, as before.

Expected values are the literals written here, worked out by hand from the records, or, for
"the same as the writer's", what the event writer (the route tested in ``test_claude_code``)
makes of the same file with the typed route turned off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

import ledgerviz
from ledgerviz.ledger.formats import claude_code
from ledgerviz.ledger.formats.sealed import DerivedEvents
from ledgerviz.ledger.reread import LedgerChangedError
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.table import FACTS
from ledgerviz.recovery.vocab import MISSING

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"
T0 = 1_767_607_200_000
"""2026-01-05T10:00:00Z in epoch ms (see ``test_claude_code_records``)."""
_COLUMNS = ("type_code", "seq", "time", "turn", "step", "surface_op", "line", *FACTS)


def _record(number: int, kind: str, message: Any, parent: int | None, **more: Any
            ) -> dict[str, Any]:
    return {"type": kind, "uuid": f"u{number}",
            "parentUuid": None if parent is None else f"u{parent}", "sessionId": "s",
            "timestamp": f"2026-01-05T10:00:0{number}.000Z", "message": message, **more}


def _turn() -> list[dict[str, Any]]:
    """A prompt; a step of two records (one message id: thinking, then text and a call); a
    progress record; the call's result; a closing text step."""
    usage = {"input_tokens": 10, "output_tokens": 4, "cache_read_input_tokens": 7,
             "cache_creation_input_tokens": 1}
    return [
        _record(1, "user", {"role": "user", "content": "fix it"}, None),
        _record(2, "assistant", {"id": "m1", "model": "claude-x", "usage": usage,
                                 "content": [{"type": "thinking", "thinking": "hmm"}]}, 1),
        _record(3, "assistant", {"id": "m1", "model": "claude-x", "usage": usage, "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "c1", "name": "Read", "input": {"path": "a.py"}}]}, 2),
        {"type": "progress", "uuid": "p4", "parentUuid": "u3", "sessionId": "s",
         "toolUseID": "c1", "turn": 7, "step": "2"},
        _record(5, "user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "print(1)"}]}, 3),
        _record(6, "assistant", {"id": "m2", "model": "claude-x", "content": [
            {"type": "text", "text": "Done."}]}, 5),
    ]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def _load(path: Path) -> SessionLog:
    return ledgerviz.load(path).sessions[0]


def _writer_route(path: Path, monkeypatch: pytest.MonkeyPatch) -> SessionLog:
    """Return the session the event writer reads (the typed route turned off)."""
    with monkeypatch.context() as patched:
        patched.setattr(claude_code, "takes", lambda *_: False)
        return _load(path)


@pytest.mark.parametrize("kept", [True, False], ids=["facts kept", "records read again"])
def test_a_turn_of_the_common_shapes_is_written_into_columns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: bool) -> None:
    if not kept:  # every block read with orjson: the first pass keeps no record's facts
        monkeypatch.setattr(claude_code, "scanned", lambda *_: None)
    session = _load(_write(tmp_path / "s.jsonl", _turn()))
    assert isinstance(session.events, DerivedEvents)
    table = session.table
    rows = [(table.type_names[code], turn, step, line) for code, turn, step, line in zip(
        table.type_code, table.turn, table.step, table.line, strict=True)]
    m = MISSING
    assert rows == [("turn/start", 1, m, 1), ("user/message", m, m, 1),
                    ("step/start", 1, 1, 2), ("assistant/message", 1, 1, 2),
                    ("tool/call", 1, 1, 2), ("claude-code/progress", 7, m, 4),
                    ("tool/result", 1, 1, 5), ("step/end", 1, 1, 6), ("step/start", 1, 2, 6),
                    ("assistant/message", 1, 2, 6), ("step/end", 1, 2, 6),
                    ("turn/end", 1, m, 6)]
    # the third record is merged into the step of the second (same message.id)
    assert list(session.lines) == list(table.line)
    assert table.column("text")[1] == "fix it" and table.column("text")[3] == "Reading."
    assert table.column("text")[6] == "print(1)" and table.column("text")[9] == "Done."
    assert table.column("role")[6] == "tool" and table.column("source_kind")[6] == "tool"
    assert table.calls.values_at(4) == ("c1", "Read", '{"path":"a.py"}')
    assert table.results.values_at(6) == ("c1", None, 0, 0)
    assert (table.column("provider")[3], table.column("model")[3]) == ("anthropic", "claude-x")
    # usage: the last record of the step that has one (the third), counted once
    assert table.usage.values_at(3) == (10, 4, 7, m)
    assert table.column("input_tokens")[9] == m  # the second step has no usage
    assert table.column("end_reason")[11] == "completed"
    assert list(table.time[:3]) == [T0 + 1000, T0 + 1000, T0 + 2000]
    assert list(table.requests.row) == [3] and list(table.requests.call_id) == ["c1"]


def test_its_events_are_derived_from_the_rows_and_the_records(tmp_path: Path) -> None:
    session = _load(_write(tmp_path / "s.jsonl", _turn()))
    events = session.events
    assert events[0] == {"type": "turn/start", "seq": 0, "time": T0 + 1000,
                         "data": {"turn": 1}}
    assert events[1] == {"type": "user/message", "seq": 1, "time": T0 + 1000,
                         "data": {"id": "u1", "role": "user",
                                  "content": [{"type": "text", "text": "fix it"}],
                                  "source": {"kind": "user"}}, "surfaceOp": "append"}
    assert events[3]["data"] == {
        "turn": 1, "step": 1, "stream": [],
        "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "Reading."},
            {"type": "tool-call", "id": "c1", "name": "Read", "arguments": '{"path":"a.py"}'}],
            "source": {"kind": "model", "provider": "anthropic", "model": "claude-x"}},
        "usage": {"inputTokens": 10, "outputTokens": 4, "cacheReadTokens": 7,
                  "cacheWriteTokens": 1}}
    assert events[4] == {"type": "tool/call", "seq": 4, "time": T0 + 2000, "data": {
        "turn": 1, "step": 1, "callId": "c1", "name": "Read", "arguments": '{"path":"a.py"}'}}
    assert events[5]["data"] == _turn()[3]  # a log-only event holds its record
    assert events[6] == {"type": "tool/result", "seq": 6, "time": T0 + 5000, "data": {
        "turn": 1, "step": 1, "message": {
            "id": "u5", "role": "tool", "toolCallId": "c1", "isError": False,
            "source": {"kind": "tool", "callId": "c1"},
            "content": [{"type": "text", "text": "print(1)"}]}},
        "surfaceOp": "append", "sourceEventSeqs": [4]}
    assert events[11] == {"type": "turn/end", "seq": 11, "time": T0 + 6000,
                          "data": {"turn": 1, "reason": {"kind": "completed"}}}
    assert events[-1] is events[11]  # derived once, then kept


def test_a_subagent_call_result_derives_its_catalog_entry(tmp_path: Path) -> None:
    records = _turn()
    records[4]["toolUseResult"] = {"agentId": "a7", "status": "completed"}
    session = _load(_write(tmp_path / "s.jsonl", records))
    assert isinstance(session.events, DerivedEvents)
    catalog = session.events[7]
    assert catalog == {"type": "subagent/catalog", "seq": 7, "time": T0 + 5000, "data": {
        "version": 1, "childId": "agent-a7", "mode": "unknown", "callId": "c1"}}


def test_an_interrupt_note_after_a_result_ends_the_turn_aborted(tmp_path: Path) -> None:
    records = _turn()[:5]
    records[4]["message"]["content"].append({"type": "text",
                                             "text": "[Request interrupted by user]"})
    session = _load(_write(tmp_path / "s.jsonl", records))
    assert isinstance(session.events, DerivedEvents)
    table = session.table
    kinds = [table.type_names[code] for code in table.type_code]
    assert kinds[-4:] == ["tool/result", "user/message", "step/end", "turn/end"]
    assert table.column("source_kind")[-3] == "interrupt"
    assert table.column("end_reason")[-1] == "aborted"
    assert session.events[-1]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}


def _shaped(change: str) -> list[dict[str, Any]]:
    records = _turn()
    result = records[4]["message"]["content"][0]
    if change == "is_error not a boolean":
        result["is_error"] = "yes"
    elif change == "no string tool_use_id":
        result["tool_use_id"] = 5
    elif change == "answering no call":
        result["tool_use_id"] = "c9"
    elif change == "a compaction summary":
        records[4]["isCompactSummary"] = True
    elif change == "a refusal":
        result.update(is_error=True, content="The user doesn't want to proceed with this tool "
                      "use. The tool use was rejected (eg. if it was a file edit, the new_string"
                      " was NOT written to the file). STOP what you are doing and wait for the "
                      "user to tell you how to proceed.")
        del records[3]
    return records


@pytest.mark.parametrize("change", ["is_error not a boolean", "no string tool_use_id",
                                    "answering no call", "a compaction summary", "a refusal"])
def test_a_session_the_route_does_not_take_is_the_writers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    path = _write(tmp_path / "s.jsonl", _shaped(change))
    session = _load(path)
    assert not isinstance(session.events, DerivedEvents)
    expected = _writer_route(path, monkeypatch)
    assert list(session.events) == list(expected.events)
    assert session.diagnostics == expected.diagnostics


def test_the_diagnostics_a_give_up_leaves_are_the_writers_alone(tmp_path: Path) -> None:
    session = _load(_write(tmp_path / "s.jsonl", _shaped("is_error not a boolean")))
    said = [(d.line, d.kind) for d in session.diagnostics if d.kind != "line_counts"]
    assert said == [(5, "wrong_shape")]


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.jsonl")))
def test_every_fixture_reads_as_the_writer_reads_it(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    session = _load(DATA / name)
    expected = _writer_route(DATA / name, monkeypatch)
    assert json.dumps(list(session.events)) == json.dumps(list(expected.events))  # key order
    assert list(session.lines) == list(expected.lines)
    assert session.diagnostics == expected.diagnostics
    for column in _COLUMNS:
        assert list(session.table.column(column)) == list(expected.table.column(column))
    assert session.table.start is expected.table.start is None  # no line's byte range held
    assert session.table.stop is expected.table.stop is None
    assert session.table.type_names == expected.table.type_names


def test_a_fixture_of_the_common_shapes_goes_the_typed_route() -> None:
    """``projects/…/0b5e7c1e-main.jsonl``: a prompt, a Task call whose result names a
    subagent, an answer; no rewind, no refusal."""
    session = _load(next(DATA.glob("projects/*/0b5e7c1e-main.jsonl")))
    assert isinstance(session.events, DerivedEvents)


def test_a_file_changed_before_its_events_are_derived_is_said(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _turn())
    session = _load(path)
    content = path.read_bytes()
    path.write_bytes(content.replace(b'"fix it"', b'"fix!it"').replace(b"\n", b" \n", 1))
    with pytest.raises(LedgerChangedError, match="the file changed"):
        session.events[1]
