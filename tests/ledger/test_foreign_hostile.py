"""Codex and Gemini transcripts that are damaged or hostile: every line is read, kept as a
log-only event or diagnosed, and none stops the read with a traceback (FOREIGN_FORMATS.md
§6, §7)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ledgerviz
from ledgerviz.ledger import LedgerError, SessionLog, read_file, read_session

CODEX_META = {"timestamp": "2026-01-05T10:00:00Z", "type": "session_meta",
              "payload": {"id": "t", "timestamp": "2026-01-05T10:00:00Z"}}
GEMINI_HEADER = {"sessionId": "g", "projectHash": "p", "startTime": "2026-01-05T10:00:00Z",
                 "lastUpdated": "2026-01-05T10:00:00Z"}


def _codex(*payloads: dict | str) -> bytes:
    lines = [CODEX_META]
    for payload in payloads:
        if isinstance(payload, str):
            lines.append(payload)
        else:
            kind = "event_msg" if payload.get("type") in ("task_started", "task_complete") \
                else "response_item"
            lines.append({"timestamp": "2026-01-05T10:00:01Z", "type": kind, "payload": payload})
    return b"".join((line.encode() if isinstance(line, str) else orjson.dumps(line)) + b"\n"
                    for line in lines)


def _gemini(*records: dict | str) -> bytes:
    return b"".join((r.encode() if isinstance(r, str) else orjson.dumps(r)) + b"\n"
                    for r in (GEMINI_HEADER, *records))


def _read(content: bytes, **options: bool) -> SessionLog:
    return read_session("t.jsonl", content, **options)


def _accounted(log: SessionLog, content: bytes) -> bool:
    """Whether every line gave an event or was counted as skipped (and not both)."""
    lines = content.count(b"\n") + (not content.endswith(b"\n"))
    return len(set(log.lines)) + log.lines_skipped == lines


USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
CALL = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}


def test_a_torn_last_line_is_a_warning_and_the_rest_is_kept() -> None:
    content = _codex(USER, CALL)[:-1] + b'\n{"timestamp":"2026-01-05T10:00:02Z","type":"resp'
    log = _read(content)
    assert log.format == "codex"
    assert [(d.kind, d.severity, d.line) for d in log.diagnostics] == [
        ("torn_tail", "warning", 4)]
    assert log.lines_skipped == 1
    assert _accounted(log, content)
    gemini = _gemini({"id": "u1", "type": "user", "content": "hi"})[:-1] + b'\n{"id":"g1","ty'
    glog = _read(gemini)
    assert [d.kind for d in glog.diagnostics] == ["torn_tail"]
    assert _accounted(glog, gemini)
    # with its newline written, an undecodable last line is still a torn append
    ended = _read(content + b"\n")
    assert [(d.kind, d.line) for d in ended.diagnostics] == [("torn_tail", 4)]


@pytest.mark.parametrize("build", [_codex, _gemini])
def test_a_complete_last_line_whose_newline_was_not_written_is_read(build) -> None:
    # Codex and Gemini CLI write a record and its newline in one append, and their own
    # loaders read a last line without one (docs/formats.md): a whole record is kept
    last = USER if build is _codex else {"id": "u1", "type": "user", "content": "hi"}
    whole = build(last)
    content = whole[:-1]  # the record complete, its newline never written
    log = _read(content)
    assert [(d.kind, d.severity, d.line) for d in log.diagnostics] == [
        ("no_final_newline", "info", 2)]
    assert log.lines_skipped == 0
    assert _accounted(log, content)
    kept = _read(whole)  # with its newline: the same record, no diagnostic
    assert (kept.diagnostics, kept.lines_skipped) == ([], 0)
    assert log.events == kept.events
    assert [e["type"] for e in log.events if e["type"] == "user/message"] == ["user/message"]


@pytest.mark.parametrize("build", [_codex, _gemini])
def test_a_file_whose_last_record_has_no_newline_loads_it(build, tmp_path: Path) -> None:
    last = USER if build is _codex else {"id": "u1", "type": "user", "content": "hi"}
    path = tmp_path / "t.jsonl"
    path.write_bytes(build(last)[:-1])  # a plain file: Codex's typed route hands it over
    ledger = ledgerviz.load(path)
    assert [(d.kind, d.line) for d in ledger.diagnostics] == [("no_final_newline", 2)]
    assert ledger.sessions[0].lines_skipped == 0
    assert len(ledger.frames.messages) == 1


@pytest.mark.parametrize("build", [_codex, _gemini])
def test_a_bad_middle_line_is_diagnosed_and_reading_goes_on(build) -> None:
    later = USER if build is _codex else {"id": "u1", "type": "user", "content": "hi"}
    content = build("{not json", "[1, 2]", "", later)
    log = _read(content)
    assert [(d.kind, d.line) for d in log.diagnostics] == [
        ("invalid_json", 2), ("not_an_object", 3), ("blank_line", 4)]
    assert [e["type"] for e in log.events if e["type"] == "user/message"] == ["user/message"]
    assert log.lines_skipped == 3
    assert _accounted(log, content)
    with pytest.raises(LedgerError, match="invalid_json"):
        _read(content, strict=True)


def test_unknown_kinds_are_kept_as_log_only_events_and_counted() -> None:
    content = _codex(
        '{"timestamp":"2026-01-05T10:00:01Z","type":"inter_agent_communication","payload":{}}',
        '{"timestamp":"2026-01-05T10:00:01Z","type":"event_msg","payload":{"type":"brand_new"}}',
        {"type": "hologram", "id": "h1"})
    log = _read(content)
    assert [d.kind for d in log.diagnostics] == ["unknown_record"] * 3
    assert [e["type"] for e in log.events[1:]] == [
        "codex/inter_agent_communication", "codex/brand_new", "codex/hologram"]
    gemini = _gemini({"id": "x", "type": "hologram"}, {"weird": True})
    glog = _read(gemini)
    assert [d.kind for d in glog.diagnostics] == ["unknown_record"] * 2
    assert _accounted(glog, gemini)


def test_many_unknown_lines_are_listed_twenty_times_then_counted() -> None:
    content = _codex(*[{"type": f"hologram{i}"} for i in range(100)])
    log = _read(content)
    kinds = [d.kind for d in log.diagnostics]
    assert kinds == ["unknown_record"] * 20 + ["more_diagnostics"]
    assert "80 more" in log.diagnostics[-1].message
    assert len(log.events) == 101


WRONG_SHAPES_CODEX = [
    {"type": "message", "role": "user", "content": 7},
    {"type": "message", "role": ["x"], "content": [1, None, {"type": 3}]},
    {"type": "function_call", "name": {"a": 1}, "arguments": {"command": ["ls"]}, "call_id": "c9"},
    {"type": "function_call", "call_id": 12},
    {"type": "function_call_output", "call_id": "c9", "output": {"content": [{"type": "x"}]}},
    {"type": "function_call_output", "output": "no id"},
    {"type": "reasoning", "summary": "not a list"},
    '{"timestamp":17,"type":"event_msg","payload":{"type":"token_count","info":[1]}}',
    '{"timestamp":"never","type":"event_msg","payload":{"type":"thread_rolled_back",'
    '"num_turns":"2"}}',
    '{"timestamp":"2026-01-05T10:00:01Z","type":"compacted","payload":["x"]}',
    '{"timestamp":"2026-01-05T10:00:01Z","type":"event_msg","payload":{"type":"exec_command_end",'
    '"call_id":"c9","exit_code":"1"}}',
]
WRONG_SHAPES_GEMINI = [
    {"id": "u1", "type": "user", "content": {"nested": [1, 2]}, "timestamp": 5},
    {"id": "g1", "type": "gemini", "content": None, "toolCalls": "many", "tokens": [1],
     "thoughts": {"subject": 1}},
    {"id": "g2", "type": "gemini", "toolCalls": [None, 3, {"id": 4, "status": "success",
                                                           "result": "text"}]},
    {"$rewindTo": 5},
    {"$set": {"messages": "all of them"}},
    {"$set": {"messages": [1, {"id": None, "type": "user"}]}},
]


@pytest.mark.parametrize(("build", "records"), [(_codex, WRONG_SHAPES_CODEX),
                                                (_gemini, WRONG_SHAPES_GEMINI)])
def test_wrong_shaped_fields_never_raise(build, records) -> None:
    content = build(*records)
    log = _read(content)
    assert _accounted(log, content)
    ledger = ledgerviz.load([_write(content)])
    assert len(ledger.frames.events) == len(log.events)
    ledger.context("synthesize", provider="openai")


def _write(content: bytes, name: str = "t.jsonl") -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / name
    path.write_bytes(content)
    return path


def test_a_50_mb_line_is_read() -> None:
    big = {"type": "function_call_output", "call_id": "c1", "output": "x" * (50 << 20)}
    content = _codex(USER, CALL, big)
    ledger = ledgerviz.load(_write(content))
    log = ledger.sessions[0]
    assert log.diagnostics == []
    result = next(e for e in log.events if e["type"] == "tool/result")
    assert len(result["data"]["message"]["content"][0]["text"]) == 50 << 20
    assert ledger.frames.calls["status"].astype(str).tolist() == ["ok"]


def test_a_file_mixing_formats_is_diagnosed_line_by_line() -> None:
    dsh = b'{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}'
    gemini = orjson.dumps({"id": "u1", "type": "user", "content": "hi"})
    content = _codex(USER, dsh.decode(), gemini.decode(), json.dumps(GEMINI_HEADER))
    log = _read(content)
    assert log.format == "codex"
    assert [(d.kind, d.line) for d in log.diagnostics] == [
        ("unknown_record", 3), ("unknown_record", 4), ("unknown_record", 5)]
    assert _accounted(log, content)
    flipped = _gemini(orjson.loads(_codex(USER).split(b"\n")[1]), {"type": "session"})
    glog = _read(flipped)
    assert glog.format == "gemini"
    assert [d.kind for d in glog.diagnostics] == ["unknown_record"] * 2


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(
                        ["type", "id", "payload", "content", "call_id", "toolCalls", "status",
                         "$set", "$rewindTo", "messages", "role", "output", "arguments"]),
                        inner, max_size=4), max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JSON, max_size=6), st.booleans())
def test_arbitrary_json_lines_never_raise(values: list, gemini: bool) -> None:
    build = _gemini if gemini else _codex
    content = build(*[json.dumps(v) for v in values])
    log = _read(content)
    assert _accounted(log, content)


@pytest.mark.parametrize("path", ["codex/basic.jsonl", "gemini/rewind.jsonl"])
def test_the_same_file_read_in_tiny_chunks_gives_the_same_session(path: str) -> None:
    content = (Path(__file__).parent.parent / "data" / path).read_bytes() + b'{"torn'
    whole = _read(content)
    pieces = read_file("t.jsonl", [content[i:i + 7] for i in range(0, len(content), 7)],
                       format=whole.format)
    assert pieces.events == whole.events
    assert pieces.lines == whole.lines
    assert pieces.diagnostics == whole.diagnostics
    assert [d.kind for d in whole.diagnostics] == ["torn_tail"]


@pytest.mark.parametrize("path", ["codex/basic.jsonl", "gemini/rewind.jsonl"])
def test_bad_lines_at_block_ends_are_told_apart_from_a_torn_tail(path: str) -> None:
    lines = (Path(__file__).parent.parent / "data" / path).read_bytes().splitlines()
    # line 3 is no JSON, line 4 an array; the last line is torn: a block ending on line 3
    # (the tiny chunks below end blocks everywhere) must not take it for the torn tail
    content = b"\n".join([*lines[:2], b"{not json", b"[1]", *lines[2:], b'{"torn']) + b"\n"
    whole = _read(content)
    last = len(lines) + 3
    assert [(d.kind, d.line) for d in whole.diagnostics] == [
        ("invalid_json", 3), ("not_an_object", 4), ("torn_tail", last)]
    for size in (1, 7, 64):
        pieces = read_file("t.jsonl", [content[i:i + size] for i in range(0, len(content), size)],
                           format=whole.format)
        assert (pieces.events, pieces.lines, pieces.diagnostics) == (
            whole.events, whole.lines, whole.diagnostics)
    assert _accounted(whole, content)


@pytest.mark.parametrize("kind", [None, 1, 2.5, True, [], ["user"], {}, {"type": "user"}])
def test_a_first_line_whose_type_is_of_any_shape_is_read(kind: object) -> None:
    # every format's sniff looks at the first line's "type": an unhashable one once raised
    for first in ({"type": kind, "uuid": "u", "sessionId": "s"},
                  {"type": kind, "payload": {"id": "t"}}):
        content = orjson.dumps(first) + b"\n" + orjson.dumps(USER) + b"\n"
        log = _read(content)
        assert len(set(log.lines)) + log.lines_skipped == 2


WRONG_VALUES = [None, 2**70, -1.5, True, "x", [], {}, [1, "a"], {"type": "text"},
                "2026-01-05T10:00:00.000Z"]


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Return the path of every value inside a decoded line (its own first)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths(inner, (*prefix, index))
    return found


def _replaced(line: bytes, path: tuple, new: object) -> bytes:
    record = orjson.loads(line)
    if not path:
        return json.dumps(new).encode()
    inner = record
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = new
    return json.dumps(record).encode()  # json: 2**70 stays an exact big integer


@pytest.mark.parametrize("path", ["codex/basic.jsonl", "gemini/basic.jsonl",
                                  "claude_code/basic.jsonl"])
def test_every_field_of_every_line_may_hold_a_wrong_type(path: str) -> None:
    # each value of each line replaced in turn by one wrong value (rotating through them):
    # never a traceback, frames built, and every line accounted for
    lines = (Path(__file__).parent.parent / "data" / path).read_bytes().splitlines()
    cases = 0
    for number, line in enumerate(lines):
        for path_in, new in zip(_paths(orjson.loads(line)),
                                WRONG_VALUES * 1000, strict=False):
            content = b"\n".join([*lines[:number], _replaced(line, path_in, new),
                                  *lines[number + 1:]]) + b"\n"
            log = _read(content)
            if log.format in ("codex", "gemini"):
                assert _accounted(log, content), (number + 1, path_in, new)
            elif log.format == "claude_code":
                counts = [d.message for d in log.diagnostics if d.kind == "line_counts"]
                assert counts[0].startswith(f"{len(lines)} lines:"), (number + 1, path_in, new)
            # else a first line no longer in the format: read as dsh, which says why
            ledger = ledgerviz.Ledger([log])
            assert len(ledger.frames.events) == len(log.events)
            ledger.frames.all()  # every frame built without raising
            cases += 1
    assert cases > 100


def test_a_mapping_that_fails_on_a_shape_is_a_diagnostic_and_the_line_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ledgerviz.ledger.formats import codex

    def fails(self: object, usage: dict) -> None:
        raise ZeroDivisionError

    monkeypatch.setattr(codex._Rollout, "_usage", fails)
    token_count = ('{"timestamp":"2026-01-05T10:00:01Z","type":"event_msg","payload":'
                   '{"type":"token_count","info":{}}}')
    content = _codex(USER, token_count, CALL)
    log = _read(content)
    assert [(d.kind, d.line) for d in log.diagnostics] == [("bad_record", 3)]
    assert [e["type"] for e in log.events if log.lines[e["seq"]] == 3] == ["codex/token_count"]
    assert _accounted(log, content)
    assert "tool/call" in {e["type"] for e in log.events}


@pytest.mark.parametrize(("value", "said"), [
    ([], "array"), ({}, "object"), ([1, "a"], "array"), (7, "number"), (True, "boolean")])
@pytest.mark.parametrize(("path", "line", "key", "models"), [
    # basic.jsonl's one turn_context (line 6) names the model of its six steps
    ("codex/basic.jsonl", 6, ("payload", "model"), [None] * 6),
    # the first of basic.jsonl's three gemini replies (line 4) names its own step's model
    ("gemini/basic.jsonl", 4, ("model",), [None, "gemini-2.5-pro", "gemini-2.5-pro"]),
])
def test_a_model_name_of_another_type_is_warned_of_and_not_used(
        path: str, line: int, key: tuple, models: list, value: object, said: str) -> None:
    """A model name that is not a string crashed the steps frame's categories (unhashable);
    its type is said in JSON's words."""
    lines = (Path(__file__).parent.parent / "data" / path).read_bytes().splitlines()
    lines[line - 1] = _replaced(lines[line - 1], key, value)
    log = _read(b"\n".join(lines) + b"\n")
    (warning,) = [d for d in log.diagnostics if d.kind == "wrong_shape"]
    assert (warning.line, warning.message) == (
        line, f"'model' is {said}, not a string: ignored")
    steps = ledgerviz.Ledger([log]).frames.steps
    assert [None if model != model else model for model in steps["model"]] == models
