"""The Codex reader's typed route (``codex_columns``): a rollout of the common shapes read
straight into its table's columns. Its contract is the dict route's result, field for
field (that route's figures are worked out by hand in test_codex.py); one rollout's table
is also checked against figures worked out by hand here. From the first line the typed
route does not take, the dict route reads on with the typed route's state."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

import ledgerviz
from ledgerviz.ledger.formats import ReadOptions, codex, codex_columns
from ledgerviz.ledger.formats.foreign import AT_END, epoch_ms
from ledgerviz.ledger.reread import LedgerChangedError
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import expand_found, found_chunks
from ledgerviz.recovery.vocab import MISSING

T0 = "2026-01-05T10:00:00.000Z"


def _line(second: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": f"2026-01-05T10:{second // 60:02d}:{second % 60:02d}.250Z",
            "type": kind, "payload": payload}


def _turn(number: int, second: int) -> list[dict[str, Any]]:
    """One turn: a prompt, reasoning and a call, usage, the output, a reply, usage."""
    call = f"call-{number}"
    usage = {"input_tokens": 100 + number, "cached_input_tokens": 40, "output_tokens": 7,
             "reasoning_output_tokens": 2, "total_tokens": 107 + number}
    return [
        _line(second, "event_msg", {"type": "task_started", "turn_id": f"t{number}"}),
        _line(second, "turn_context", {"model": "gpt-5-codex", "cwd": "/w"}),
        _line(second, "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"prompt {number}"}]}),
        _line(second, "event_msg", {"type": "user_message", "message": f"prompt {number}"}),
        _line(second + 1, "response_item", {"type": "reasoning", "summary": [
            {"type": "summary_text", "text": "plan"}], "encrypted_content": "gAAA"}),
        _line(second + 1, "response_item", {"type": "function_call", "name": "shell",
                                            "arguments": '{"command":["ls"]}', "call_id": call}),
        _line(second + 1, "event_msg", {"type": "token_count",
                                        "info": {"last_token_usage": usage}}),
        _line(second + 2, "response_item", {"type": "function_call_output", "call_id": call,
                                            "output": "Exit code: 1\nOutput:\nno"}),
        _line(second + 3, "response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "done"}, {"type": "output_text", "text": "!"}]}),
        _line(second + 3, "event_msg", {"type": "token_count",
                                        "info": {"last_token_usage": usage}}),
        _line(second + 4, "event_msg", {"type": "task_complete", "turn_id": f"t{number}"}),
    ]


def _rollout(path: Path, turns: int, extra: list[dict[str, Any]] | None = None) -> Path:
    lines = [_line(0, "session_meta", {"id": "thread-typed", "timestamp": T0, "cwd": "/w",
                                       "source": "cli", "instructions": "You are Codex."})]
    for number in range(1, turns + 1):
        lines += _turn(number, 10 * number)
    lines += extra or []
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    return path


def _read(path: Path, typed: bool) -> SessionLog:
    """Read ``path`` the typed route (handing over where it must) or the dict route."""
    found = next(iter(expand_found(str(path))))
    chunks = found_chunks(found, 1 << 16)
    options = ReadOptions(origin=chunks.origin)
    if typed:
        return codex._typed_session(str(path), codex._Taken(iter(chunks)), options)
    return codex._dict_session(str(path), iter(chunks), options)


@pytest.fixture
def handovers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The line of each hand-over to the dict route."""
    lines: list[int] = []
    handed_over = codex._handed_over

    def counted(path: str, typed: Any, line: int, *arguments: Any) -> SessionLog:
        lines.append(line)
        return handed_over(path, typed, line, *arguments)

    monkeypatch.setattr(codex, "_handed_over", counted)
    return lines


def _facts(log: SessionLog) -> dict[str, Any]:
    table = {field.name: getattr(log.table, field.name)
             for field in dataclasses.fields(log.table) if field.name != "requests"}
    table = {name: (value.typecode, value.tolist()) if hasattr(value, "tolist") else value
             for name, value in table.items()}
    table["requests"] = dataclasses.astuple(log.table.requests)
    return {"key": log.key, "header": log.header, "diagnostics": log.diagnostics,
            "skipped": log.lines_skipped, "lines": list(log.lines),
            "reasons": list(log.call_reasons.items()), "table": table,
            "events": list(log.events)}


def test_a_turn_is_tabled_as_worked_out_by_hand(tmp_path: Path, handovers: list[int]) -> None:
    log = _read(_rollout(tmp_path / "one.jsonl", 1), typed=True)
    assert handovers == []
    table = log.table
    assert table.types == [
        "codex/session_meta", "turn/start", "codex/turn_context", "user/message",
        "codex/user_message", "step/start", "assistant/message", "tool/call",
        "codex/token_count", "tool/result", "step/end", "step/start", "assistant/message",
        "codex/token_count", "step/end", "turn/end"]
    assert table.line.tolist() == [1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10, 10, 10, 11, 12, 12]
    # each line's own time: 10:00:00.250, the turn's first lines 10:00:10.250, then +1 s
    assert table.time.tolist()[:4] == [1767607200250, 1767607210250, 1767607210250,
                                      1767607210250]
    assert table.time.tolist()[6:8] == [1767607211250, 1767607211250]
    assert table.turn.tolist() == [MISSING, 1, MISSING, MISSING, MISSING, 1, 1, 1, MISSING, 1,
                                   1, 1, 1, MISSING, 1, 1]
    assert table.step.tolist()[5:8] == [1, 1, 1] and table.step.tolist()[10:13] == [1, 2, 2]
    assert table.column("text")[3] == "prompt 1" and table.column("text")[12] == "done\n!"
    assert table.column("text")[6] == ""  # reasoning and a call: no text block
    assert table.column("text")[9] == "Exit code: 1\nOutput:\nno"
    assert table.column("is_error")[9] == 1
    assert table.column("call_id")[7] == table.column("call_id")[9] == "call-1"
    assert table.calls.values_at(7) == ("call-1", "shell", '{"command":["ls"]}')
    # the usage of each step's model call: last_token_usage, input less the cached
    assert table.column("input_tokens")[6] == table.column("input_tokens")[12] == 101 - 40
    assert table.column("cache_read_tokens")[6] == 40 and table.column("output_tokens")[12] == 7
    assert table.column("model")[6] == "gpt-5-codex" and table.column("provider")[6] == "openai"
    assert table.column("end_reason")[15] == "completed"
    assert table.requests.row.tolist() == [6] and table.requests.call_id == ["call-1"]
    assert log.diagnostics == [] and log.call_reasons == {}


@pytest.mark.parametrize("turns", [1, 3, 700])
def test_the_typed_route_gives_the_dict_routes_session(tmp_path: Path, turns: int,
                                                      handovers: list[int]) -> None:
    path = _rollout(tmp_path / "r.jsonl", turns, [
        _line(9000, "response_item", {"type": "function_call", "name": "shell",
                                      "arguments": "{}", "call_id": "left"})])
    typed, held = _read(path, typed=True), _read(path, typed=False)
    assert handovers == []
    assert _facts(typed) == _facts(held)
    # the call after the last turn opens a turn of its own, open at the end of the file
    assert typed.call_reasons == {"left": "no result at end of file"}


def test_facts_scattered_a_few_rows_at_a_time_are_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, handovers: list[int]) -> None:
    # 1,500 turns: several blocks of lines, each block's facts scattered (the open step's
    # message given its text after its row was scattered, and the held rows' facts); then
    # handed over at a refusal
    monkeypatch.setattr(codex_columns, "FLUSH_ROWS", 7)
    path = _rollout(tmp_path / "r.jsonl", 1500, [
        ROLLBACK, COMPACTION, *_turn(1501, 90000)[:6], ABORTED_OUTPUT, ABORTED_TURN,
        *_turn(1502, 90100)[:6], GIVE_UPS["refused call"]])
    assert path.stat().st_size > 2 << 20
    typed = _read(path, typed=True)
    assert handovers == [1 + 11 * 1500 + 2 + 6 + 2 + 6 + 1]
    assert _facts(typed) == _facts(_read(path, typed=False))


def test_frames_are_the_dict_routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _rollout(tmp_path / "r.jsonl", 5)
    typed = ledgerviz.load(path).frames
    monkeypatch.setattr(codex, "first_chunk_taken", lambda first: False)
    held = ledgerviz.load(path).frames
    for name in ("events", "turns", "steps", "calls", "messages", "lineage"):
        mine, theirs = getattr(typed, name), getattr(held, name)
        assert mine.equals(theirs) and list(mine.dtypes) == list(theirs.dtypes), name


ROLLBACK = _line(999, "event_msg", {"type": "thread_rolled_back", "num_turns": 1})
COMPACTION = _line(999, "compacted", {"message": "summary"})
ABORTED_TURN = _line(999, "event_msg", {"type": "turn_aborted", "reason": "interrupted"})
ABORTED_OUTPUT = _line(999, "response_item", {"type": "function_call_output",
                                              "call_id": "call-1501", "output": "aborted by user"})


def test_a_rollback_is_tabled_as_worked_out_by_hand(tmp_path: Path, handovers: list[int]
                                                   ) -> None:
    # two turns, a third cut after its call, then a rollback of one turn: the third
    # turn's prompt and message (rows 33 and 36) leave the surface; its call says why
    path = _rollout(tmp_path / "r.jsonl", 2, [*_turn(3, 30)[:6], ROLLBACK])
    log = _read(path, typed=True)
    assert handovers == []
    assert log.table.types[31:] == ["turn/start", "codex/turn_context", "user/message",
                                    "codex/user_message", "step/start", "assistant/message",
                                    "tool/call", "surface/rewind"]
    assert log.events[38] == {"type": "surface/rewind", "seq": 38, "time": 1767608199250,
                              "data": {"start": 33, "end": 36, "shadowedSeqs": [33, 36]}}
    assert log.table.line[38] == 1 + 11 * 2 + 6 + 1 and log.table.surface_op[38] == 0
    assert log.table.turn[38] == MISSING and log.table.column("text")[38] is None
    assert log.call_reasons == {"call-3": "rolled back"}
    assert _facts(log) == _facts(_read(path, typed=False))


def test_a_second_rollback_takes_back_the_prompt_before(tmp_path: Path,
                                                        handovers: list[int]) -> None:
    # each turn's surface: its prompt, two assistant messages and a result (offsets 3, 6,
    # 9, 12 of its 15 rows); the first rollback hides turn 2's, the second turn 1's
    path = _rollout(tmp_path / "r.jsonl", 2, [ROLLBACK, ROLLBACK])
    log = _read(path, typed=True)
    assert handovers == []
    assert [log.events[row]["data"]["shadowedSeqs"] for row in (31, 32)] == [
        [18, 21, 24, 27], [3, 6, 9, 12]]
    assert _facts(log) == _facts(_read(path, typed=False))


def test_a_compaction_is_tabled_as_worked_out_by_hand(tmp_path: Path,
                                                      handovers: list[int]) -> None:
    # the compaction's message replaces the surface of both turns; a rollback after it
    # has no prompt left to take back (handed over, to be diagnosed)
    path = _rollout(tmp_path / "r.jsonl", 2, [COMPACTION, ROLLBACK])
    log = _read(path, typed=True)
    assert handovers == [1 + 11 * 2 + 2]
    event = log.events[31]
    assert event["data"] == {"id": "codex-compacted-24", "role": "user",
                             "content": [{"type": "text", "text": "summary"}],
                             "source": {"kind": "compact-checkpoint"}}
    assert event["surfaceOp"] == {"op": "replace", "startSeq": 3, "endSeq": 27}
    assert event["sourceEventSeqs"] == [3, 6, 9, 12, 18, 21, 24, 27]
    table = log.table
    assert (table.types[31], table.surface_op[31]) == ("user/message", 2)
    assert table.messages.values_at(31) == ("user", "compact-checkpoint", "summary")
    assert [(d.line, d.kind) for d in log.diagnostics] == [(1 + 11 * 2 + 2, "bad_rollback")]
    assert _facts(log) == _facts(_read(path, typed=False))


def test_an_aborted_turn_and_call_are_tabled_as_worked_out_by_hand(
        tmp_path: Path, handovers: list[int]) -> None:
    # turn 2 cut after its call (rows 16-22), the call's output says it was aborted (row
    # 23, held with its error code), the turn is aborted (its step and turn end, 24-25);
    # turn 3 cut after its call, aborted too: its call has no output
    aborted_output = {**ABORTED_OUTPUT, "payload": {**ABORTED_OUTPUT["payload"],
                                                    "call_id": "call-2"}}
    path = _rollout(tmp_path / "r.jsonl", 1, [*_turn(2, 20)[:6], aborted_output, ABORTED_TURN,
                                              *_turn(3, 30)[:6], ABORTED_TURN])
    log = _read(path, typed=True)
    assert handovers == []
    table = log.table
    assert table.types[22:26] == ["tool/call", "tool/result", "step/end", "turn/end"]
    assert log.events[23]["data"] == {
        "turn": 2, "step": 1, "message": {
            "id": "codex-result-call-2", "role": "tool",
            "source": {"kind": "tool", "callId": "call-2"}, "toolCallId": "call-2",
            "content": [{"type": "text", "text": "aborted by user"}], "isError": True},
        "error": {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}}
    assert log.events[23]["sourceEventSeqs"] == [22] and log.events[23]["surfaceOp"] == "append"
    assert table.results.values_at(23)[:3] == ("call-2", "TOOL_OUTCOME_UNKNOWN", 1)
    assert log.events[25]["data"] == {"turn": 2, "reason": {"kind": "aborted",
                                                            "reason": {"kind": "interrupted"}}}
    assert table.column("end_reason")[25] == "aborted" and table.turn[25] == 2
    assert log.call_reasons == {"call-2": "interrupted mid-run", "call-3": "aborted"}
    assert _facts(log) == _facts(_read(path, typed=False))


GIVE_UPS = {
    "rollback of no turn": _line(999, "event_msg", {"type": "thread_rolled_back",
                                                    "num_turns": 0}),
    "rollback of a string": _line(999, "event_msg", {"type": "thread_rolled_back",
                                                     "num_turns": "1"}),
    "unknown record": _line(999, "surprise", {"type": "x"}),
    "unknown event": _line(999, "event_msg", {"type": "surprise"}),
    "a fork's copy": _line(999, "session_meta", {"id": "parent"}),
    "refused call": _line(999, "response_item", {"type": "function_call_output",
                                                 "call_id": "call-1",
                                                 "output": "exec command rejected by user"}),
    "output for no call": _line(999, "response_item", {"type": "function_call_output",
                                                       "call_id": "nobody", "output": "x"}),
    "provider's call": _line(999, "response_item", {"type": "web_search_call"}),
    "model of a number": _line(999, "turn_context", {"model": 5}),
    "integer beyond 64 bits": _line(999, "event_msg", {"type": "user_message",
                                                       "n": 2 ** 70}),
    "payload of a string": {"timestamp": T0, "type": "event_msg", "payload": "x"},
    "a legacy bare item": {"type": "message", "role": "user", "content": []},
}


UNDECODED = {"integer beyond 64 bits"}
"""The lines whose block goes the dict route from its start (a line that decodes as no
``_Line``, such as a payload of a string, is handed over at that line)."""


@pytest.mark.parametrize("line", [ROLLBACK, COMPACTION, ABORTED_TURN])
def test_rollbacks_compactions_and_aborts_stay_on_the_typed_route(
        tmp_path: Path, line: dict[str, Any], handovers: list[int]) -> None:
    path = _rollout(tmp_path / "r.jsonl", 600, [line, *_turn(601, 9100), line])
    typed = _read(path, typed=True)
    assert handovers == []
    assert _facts(typed) == _facts(_read(path, typed=False))


@pytest.mark.parametrize("name", sorted(GIVE_UPS))
@pytest.mark.parametrize("turns", [2, 600])
def test_the_dict_route_reads_on_from_a_line_it_does_not_take(
        tmp_path: Path, name: str, turns: int, handovers: list[int]) -> None:
    path = _rollout(tmp_path / "r.jsonl", turns, [GIVE_UPS[name], *_turn(turns + 1, 9100)])
    typed = _read(path, typed=True)
    line = 1 + 11 * turns + 1  # the line after the meta and the turns
    if name in UNDECODED:  # the block it is in, from its first line
        assert len(handovers) == 1 and 1 <= handovers[0] <= line
    else:
        assert handovers == [line]
    assert _facts(typed) == _facts(_read(path, typed=False))


@pytest.mark.parametrize("damage", ["blank line", "torn tail", "byte order mark", "bad json"])
def test_damaged_lines_are_the_dict_routes_diagnostics(tmp_path: Path, damage: str) -> None:
    path = _rollout(tmp_path / "r.jsonl", 2)
    data = path.read_bytes()
    data = {"blank line": data.replace(b"\n", b"\n\n", 3),
            "torn tail": data + b'{"timestamp": "2026',
            "byte order mark": b"\xef\xbb\xbf" + data,
            "bad json": data + b"{nope}\n"}[damage]
    path.write_bytes(data)
    loaded = ledgerviz.load(path).sessions[0]
    assert loaded.diagnostics  # said, as the dict route says it
    assert _facts(loaded) == _facts(_read(path, typed=False))


@pytest.mark.parametrize("turns", [2, 600])
def test_blank_lines_to_the_end_are_each_said(tmp_path: Path, turns: int) -> None:
    # every line before them on the typed route: the blank lines are still the dict route's
    path = _rollout(tmp_path / "r.jsonl", turns)
    path.write_bytes(path.read_bytes() + b"\n \t\n\r\n")
    loaded = ledgerviz.load(path).sessions[0]
    last = 1 + 11 * turns
    assert [(d.line, d.kind) for d in loaded.diagnostics] == [
        (last + 1, "blank_line"), (last + 2, "blank_line"), (last + 3, "blank_line")]
    assert loaded.lines_skipped == 3
    assert _facts(loaded) == _facts(_read(path, typed=False))


def test_the_open_step_is_handed_over_as_dicts(tmp_path: Path, handovers: list[int]) -> None:
    # a call without its output yet, then a refusal: the dict route takes the open step's
    # message (to add the next call to) and the dispatch (to take back) from the typed route
    turn = _turn(1, 10)[:7]
    refusal = _line(20, "response_item", {"type": "function_call_output", "call_id": "call-1",
                                          "output": "exec command rejected by user"})
    call = _line(21, "response_item", {"type": "function_call", "name": "shell",
                                       "arguments": "{}", "call_id": "call-2"})
    path = _rollout(tmp_path / "r.jsonl", 700, [*turn, refusal, call])
    typed = _read(path, typed=True)
    assert handovers == [1 + 11 * 700 + 8]
    assert _facts(typed) == _facts(_read(path, typed=False))
    assert typed.call_reasons["call-1"] == "rejected by user"
    assert typed.table.requests.call_id[-2:] == ["call-1", "call-2"]


def test_a_file_replaced_before_its_lines_are_read_again_is_a_changed_ledger(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _rollout(tmp_path / "r.jsonl", 50, [GIVE_UPS["unknown event"]])
    other = _rollout(tmp_path / "other.jsonl", 50, [GIVE_UPS["unknown event"]])
    handed_over = codex._handed_over

    def replaced_first(*arguments: Any) -> SessionLog:
        os.replace(other, path)  # the same bytes, another file
        return handed_over(*arguments)

    monkeypatch.setattr(codex, "_handed_over", replaced_first)
    with pytest.raises(LedgerChangedError):
        ledgerviz.load(path)


@pytest.mark.parametrize("stamp", [
    "2026-01-05T10:00:00.000Z", "2026-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z",
    "2026-01-05T10:00:60.000Z", "2026-13-05T10:00:00.000Z", "2026-01-05T24:00:00.000Z",
    "2026-01-05T10:00:0٣.000Z", "2026-01-05T10:00:00.٣00Z", "2026-01-05 10:00:00.000Z",
    "20260105T1000:00:00.000Z", "2026-01-05T10:00:00.000000Z", "2026-01-05T10:00:00Z",
    "2026-01-05T10:00:00.000+01:00", "", None, 5])
def test_codex_stamps_read_as_every_stamp_is(stamp: Any) -> None:
    assert codex_columns._epoch_ms(stamp) == epoch_ms(stamp)
    assert codex_columns._epoch_ms(stamp) == epoch_ms(stamp)  # from the minute kept


def _call_line(second: int, call_id: str) -> dict[str, Any]:
    return _line(second, "response_item", {"type": "function_call", "name": "shell",
                                           "arguments": "{}", "call_id": call_id})


# after turn 1 (call-1 answered, exit code 1): call-1 requested again and call-9 requested
# (a new step, in a turn opened for it), call-1 answered a second time ("Exit code: 0"), then
# call-1's exec end with exit code 3
AFTER_AN_ANSWER = [
    _call_line(30, "call-1"), _call_line(31, "call-9"),
    _line(32, "response_item", {"type": "function_call_output", "call_id": "call-1",
                                "output": "Exit code: 0\nOutput:\nyes"}),
    _line(33, "event_msg", {"type": "exec_command_end", "call_id": "call-1", "exit_code": 3}),
]


def test_an_answered_call_requested_and_answered_again_is_tabled_as_worked_out_by_hand(
        tmp_path: Path, handovers: list[int]) -> None:
    path = _rollout(tmp_path / "r.jsonl", 1, AFTER_AN_ANSWER)
    typed = _read(path, typed=True)
    assert handovers == []
    table = typed.table
    assert table.types[16:] == ["turn/start", "step/start", "assistant/message", "tool/call",
                                "tool/call", "tool/result", "codex/exec_command_end"]
    assert table.requests.call_id == ["call-1", "call-1", "call-9"]
    assert table.requests.row.tolist() == [6, 18, 18]
    # the second output: call-1's last request's turn and step, its error from the exit code
    assert (table.turn[21], table.step[21], table.column("call_id")[21]) == (2, 1, "call-1")
    assert table.column("is_error")[9] == 1 and table.column("is_error")[21] == 1
    # call-1 stays answered; call-9's turn is still open at the end
    assert typed.call_reasons == {"call-9": AT_END}
    assert _facts(typed) == _facts(_read(path, typed=False))


def test_answered_calls_are_handed_over_as_the_dict_route_keeps_them(
        tmp_path: Path, handovers: list[int]) -> None:
    path = _rollout(tmp_path / "r.jsonl", 600, [*AFTER_AN_ANSWER, GIVE_UPS["unknown record"],
                                                *_turn(601, 9100), _call_line(9200, "call-9"),
                                                _call_line(9201, "call-600")])
    typed = _read(path, typed=True)
    assert handovers == [1 + 11 * 600 + 4 + 1]
    assert _facts(typed) == _facts(_read(path, typed=False))


def test_message_and_call_shapes_read_directly_are_tabled_as_worked_out_by_hand(
        tmp_path: Path, handovers: list[int]) -> None:
    # contents of one text part and calls of string fields are read without their blocks
    # (codex32); an empty call_id falls back to the item's id, a number as a name is its JSON
    def message(role: str, *texts: str) -> dict[str, Any]:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role,
                "content": [{"type": kind, "text": text} for text in texts]}

    lines = [
        _line(0, "session_meta", {"id": "thread-shapes", "timestamp": T0}),
        _line(1, "event_msg", {"type": "task_started"}),
        _line(1, "response_item", message("developer", "be brief")),
        _line(1, "response_item", message("user", "  <environment_context>/w")),
        _line(2, "response_item", message("user", "prompt")),
        _line(3, "response_item", {"type": "function_call", "call_id": "", "id": "alt-1",
                                   "name": 5, "arguments": '{"a":1}'}),
        _line(4, "response_item", {"type": "function_call_output", "call_id": "alt-1",
                                   "output": "ok"}),
        _line(5, "response_item", message("assistant", "")),
        _line(5, "response_item", message("assistant", "fine")),
        _line(5, "response_item", message("assistant", "a", "", "b")),
        _line(6, "event_msg", {"type": "task_complete"}),
    ]
    path = tmp_path / "shapes.jsonl"
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    log = _read(path, typed=True)
    assert handovers == []
    table = log.table
    assert table.types == [
        "codex/session_meta", "turn/start", "developer/message", "user/message",
        "user/message", "step/start", "assistant/message", "tool/call", "tool/result",
        "step/end", "step/start", "assistant/message", "codex/message", "codex/message",
        "step/end", "turn/end"]
    assert table.line.tolist() == [1, 2, 3, 4, 5, 6, 6, 6, 7, 8, 8, 8, 9, 10, 11, 11]
    assert [table.column("source_kind")[row] for row in (2, 3, 4)] == [
        "runtime-context", "runtime-context", "user"]
    assert [table.column("text")[row] for row in (2, 3, 4)] == [
        "be brief", "  <environment_context>/w", "prompt"]
    assert table.turn[2] == 1 and table.step[2] == MISSING  # no step open yet
    assert table.calls.values_at(7) == ("alt-1", "5", '{"a":1}')
    assert table.results.values_at(8)[::2] == ("alt-1", 0) and table.column("text")[8] == "ok"
    assert table.column("text")[11] == "fine\na\nb"  # the empty texts show nothing
    assert table.requests.call_id == ["alt-1"] and table.requests.name == ["5"]
    assert _facts(log) == _facts(_read(path, typed=False))
