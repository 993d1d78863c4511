"""Hostile input at the reader (issue 12): every problem a diagnostic, never a crash."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ledger_lines import HEADER, assistant_calls, encode, mark, tool_result, turn_start

import ledgerviz
from ledgerviz.ledger import (
    LedgerError,
    UnreadableSourceError,
    read_session,
    read_sessions,
    sources,
)
from ledgerviz.ledger.reader import read_chunks

Writer = Callable[..., Path]


def kinds(content: bytes, **options: Any) -> list[tuple[str, int]]:
    return [(d.kind, d.line) for d in read_session("x.jsonl", content, **options).diagnostics]


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()  # orjson refuses > 64-bit ints


def call_turn() -> list[dict]:
    return [turn_start(0), assistant_calls(1, "A"), tool_result(2, "A")]


UNUSUAL, UNOPENABLE, INVALID = "unusual_payload", "unopenable_event", "invalid_event"

SHAPES = [
    (1, ("data", "message", "content", 0, "id"), ["A"], UNUSUAL,
     "content[].id' must be string"),
    (1, ("data", "message", "content", 0, "name"), {"n": 1}, UNUSUAL,
     "content[].name' must be string"),
    (1, ("data", "message", "content", 0, "arguments"), 5, UNUSUAL,
     "content[].arguments' must be string, not number"),
    (1, ("data", "message", "content"), True, UNOPENABLE,
     "'data.message.content' is boolean, not an array"),
    (1, ("data", "message"), [1], UNOPENABLE, "'data.message' is array, not an object"),
    (1, ("data", "message", "content", 0), None, UNOPENABLE, "holds a null block"),
    (2, ("data", "message", "source"), ["tool"], UNUSUAL,
     "source' must be an object, not array"),
    (2, ("data", "message", "toolCallId"), {"id": 7}, UNUSUAL,
     "toolCallId' must be string, not object"),
    (1, ("data", "message", "role"), {"r": 1}, UNUSUAL,
     "'data.message.role' must be string, not object"),
    (2, ("data", "message", "source"), {"kind": ["tool"]}, UNUSUAL,
     "source.kind' must be string"),
    (1, ("data", "message", "source"), {"provider": {}}, UNUSUAL,
     "source.provider' must be string"),
    (1, ("data", "message", "source"), {"model": 5}, UNUSUAL,
     "source.model' must be string, not number"),
    (0, ("data", "turn"), "1", UNUSUAL, "'data.turn' must be an integer, not string"),
    (2, ("data", "step"), "1", UNUSUAL, "'data.step' must be an integer, not string"),
    (0, ("data", "turn"), True, UNUSUAL, "'data.turn' must be an integer, not boolean"),
    (0, ("data", "turn"), 1.5, UNUSUAL, "'data.turn' must be an integer, not number"),
    (2, ("data", "step"), False, UNUSUAL, "'data.step' must be an integer, not boolean"),
    (2, ("data", "step"), 2**53, UNUSUAL, "'data.step' 9007199254740992 is beyond"),
    (0, ("data", "turn"), 2**63, UNUSUAL, "'data.turn' 9223372036854775808 is beyond"),
    (0, ("seq",), 2**53, INVALID, "'seq' 9007199254740992 is beyond"),
    (0, ("seq",), 0.5, INVALID, "'seq' must be an integer, not number"),
    (0, ("time",), -(2**70), INVALID, "'time' -1180591620717411303424 is beyond"),
    (0, ("type",), {"t": 1}, INVALID, "'type' must be a string, not object"),
    (2, ("surfaceOp",), [], INVALID, "'surfaceOp' must be a string or an object, not array"),
    (2, ("surfaceOp",), {"op": {"x": 1}}, INVALID, "'surfaceOp.op' must be a string, not object"),
    (2, ("surfaceOp",), {"op": "replace", "startSeq": [1], "endSeq": 1}, INVALID,
     "'surfaceOp.startSeq'"),
    (2, ("surfaceOp",), {"op": "replace", "start": "1", "end": 2}, INVALID,
     "'surfaceOp.start' must be an integer, not string"),
    (2, ("surfaceOp",), {"op": "replace", "start": 1, "end": 2.5}, INVALID,
     "'surfaceOp.end' must be an integer, not number"),
    (2, ("surfaceOp",), {"op": "replace", "startSeq": 1, "endSeq": None}, INVALID,
     "'surfaceOp.endSeq' must be an integer, not null"),
    (2, ("sourceEventSeqs",), "4", INVALID, "'sourceEventSeqs' must be an array, not string"),
    (2, ("sourceEventSeqs",), [[3, 1]], INVALID, "range [3, 1] runs backwards"),
    (2, ("sourceEventSeqs",), [[1]], INVALID, "ranges must be [first, last] pairs"),
    (2, ("sourceEventSeqs",), {}, INVALID, "'sourceEventSeqs' must be an array, not object"),
    (2, ("sourceEventSeqs",), 4, INVALID, "'sourceEventSeqs' must be an array, not number"),
    (2, ("sourceEventSeqs",), [2**53], INVALID, "'sourceEventSeqs[]' 9007199254740992 is beyond"),
]


@pytest.mark.parametrize(("index", "path", "value", "kind", "message"), SHAPES)
def test_wrong_shaped_fields_are_left_out_with_the_runtimes_verdict(
    index: int, path: tuple, value: Any, kind: str, message: str
) -> None:
    """An envelope the runtime cannot use and a payload its repair scan fails on are errors;
    a payload only ledgerviz cannot read (the runtime reads it as it is) is a warning. All
    three leave the event out of the frames."""
    events = call_turn()
    target: Any = events[index]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    content = b"".join(dumps(line) + b"\n" for line in [HEADER, *events])
    log = read_session("x.jsonl", content)
    (problem,) = [d for d in log.diagnostics if d.kind in (UNUSUAL, UNOPENABLE, INVALID)]
    assert (problem.kind, problem.line) == (kind, index + 2) and message in problem.message
    assert problem.severity == ("warning" if kind == UNUSUAL else "error")
    assert len(log.events) == 2 and log.lines_skipped == 1
    if kind != UNUSUAL:
        with pytest.raises(LedgerError, match=r"x\.jsonl"):
            read_session("x.jsonl", content, strict=True)


@pytest.mark.parametrize(("index", "path"), [(0, ("seq",)), (0, ("time",)),
                                             (0, ("data", "turn")), (2, ("data", "step"))])
def test_whole_floats_are_read_as_the_runtime_reads_them(index: int, path: tuple) -> None:
    events = call_turn()
    target: Any = events[index]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = float(target[path[-1]])
    content = b"".join(dumps(line) + b"\n" for line in [HEADER, *events])
    log = read_session("x.jsonl", content)
    (warning,) = log.diagnostics
    assert (warning.kind, warning.severity, warning.line) == ("integer_as_float", "warning",
                                                              index + 2)
    assert log.events == call_turn()
    fields = log.event_fields()
    assert all(type(value) is int for value in [*fields.seqs, *fields.times, fields.turns[0]])


@pytest.mark.parametrize(("index", "path", "message"), [
    (1, ("data", "message"), "'data.message' is null, not an object"),
    (2, ("data", "message", "source"), "'data.message.source' is missing or null"),
])
def test_payloads_the_repair_scan_fails_on_are_errors_but_read(
    index: int, path: tuple, message: str
) -> None:
    """Frames read them as they are (nothing to leave out); the runtime refuses the log."""
    events = call_turn()
    target: Any = events[index]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = None
    log = read_session("x.jsonl", b"".join(dumps(line) + b"\n" for line in [HEADER, *events]))
    (problem,) = [d for d in log.diagnostics if d.kind == UNOPENABLE]
    assert (problem.severity, problem.line) == ("error", index + 2)
    assert message in problem.message and "runtime refuses to open this log" in problem.message
    assert len(log.events) == 3


def test_reason_kind_object_is_left_out(write_ledger: Writer) -> None:
    end = {"type": "turn/end", "seq": 1, "time": 0, "data": {"turn": 1, "reason": {"kind": {}}}}
    (log,) = read_sessions(write_ledger([HEADER, turn_start(0), end]))
    assert [(d.kind, d.line) for d in log.diagnostics] == [(UNUSUAL, 3)]
    assert "'data.reason.kind' must be a string, not object" in log.diagnostics[0].message


def test_integers_beyond_64_bits_are_exact_and_flagged() -> None:
    meta = {"inode": 2**70, "low": -(2**63) - 1, "edge": 2**64 - 1}
    result = tool_result(2, "A")
    result["data"]["meta"] = meta
    content = encode([HEADER, turn_start(0), assistant_calls(1, "A")]) + dumps(result) + b"\n"
    log = read_session("x.jsonl", content)
    assert [(d.kind, d.severity, d.line) for d in log.diagnostics] == [
        ("big_integer", "warning", 4)
    ]
    assert log.events[2]["data"]["meta"] == meta
    assert type(log.events[2]["data"]["meta"]["inode"]) is int


def test_the_big_integer_warning_says_the_value_was_kept_exact() -> None:
    result = tool_result(2, "A")
    result["data"]["meta"] = {"inode": 2**64}
    content = encode([HEADER, turn_start(0), assistant_calls(1, "A")]) + dumps(result) + b"\n"
    (warning,) = read_session("x.jsonl", content).diagnostics
    assert warning.message == (
        "holds an integer beyond 64 bits: kept exact (the runtime never writes one)"
    )


def test_an_integer_beyond_a_double_is_kept_exact_and_a_too_long_one_refused() -> None:
    """orjson reads an integer beyond 64 bits as a double, so it refuses one beyond a
    double's range (10**400, valid JSON): kept exact as 2**70 is, with the same warning.
    One of 5,000 digits (more than the interpreter converts) is refused saying so; a line
    with a long number and a syntax error keeps orjson's message about the syntax."""
    huge = 10**400 + 7
    result = tool_result(2, "A")
    result["data"]["meta"] = {"inode": huge}
    content = encode([HEADER, turn_start(0), assistant_calls(1, "A")]) + dumps(result) + b"\n"
    log = read_session("x.jsonl", content)
    assert [(d.kind, d.severity, d.line) for d in log.diagnostics] == [
        ("big_integer", "warning", 4)]
    assert log.events[2]["data"]["meta"]["inode"] == huge
    long_line = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"x":' + b"9" * 5000 \
        + b"}}"
    problem = read_session("x.jsonl", encode([HEADER]) + long_line + b"\n"
                           + encode([mark(1)])).diagnostics[0]
    assert (problem.kind, problem.line) == ("invalid_json", 2)
    assert problem.message == (f"not valid JSON: integer {'9' * 40}… of 5000 digits is longer "
                               "than the reader converts")
    broken = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"x":' + b"9" * 400 + b",}}"
    problem = read_session("x.jsonl", encode([HEADER]) + broken + b"\n"
                           + encode([mark(1)])).diagnostics[0]
    assert (problem.kind, problem.line) == ("invalid_json", 2)
    assert "number is infinity when parsed as double" in problem.message


def test_numbers_json_does_not_allow_stay_invalid() -> None:
    for number in (b"NaN", b"Infinity", b"1e400"):
        line = b'{"type":"turn/start","seq":0,"time":' + number + b',"data":{"turn":1}}'
        content = encode([HEADER]) + line + b"\n" + encode([mark(1)])
        assert kinds(content)[0] == ("invalid_json", 2)
    long_digits = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"x":"\\ud800"},' \
        b'"n":12345678901234567890123}'
    content = encode([HEADER]) + long_digits + b"\n" + encode([mark(1)])
    assert kinds(content)[0] == ("invalid_json", 2)  # a lone surrogate, even on the exact path


def test_a_second_header_and_its_restarted_seqs_are_reported_once() -> None:
    second = [dict(HEADER, id="other"), mark(0), mark(1), mark(2)]
    content = encode([HEADER, turn_start(0), mark(1), mark(2), *second])
    log = read_session("x.jsonl", content)
    assert [(d.kind, d.line) for d in log.diagnostics] == [("second_header", 5), ("seq_gap", 6)]
    assert log.diagnostics[0].message == (
        "a second session header (id 'other') in the middle of the file: two ledgers "
        "concatenated? Only the first header counts"
    )
    assert log.diagnostics[1].message == "seq 0 repeats or goes backwards (expected 3)"


def test_one_stray_seq_is_not_followed_by_a_false_gap() -> None:
    events = [turn_start(0), mark(1), mark(2), mark(1), mark(3)]
    log = read_session("x.jsonl", encode([HEADER, *events]))
    assert [d.message for d in log.diagnostics] == [
        "seq 1 repeats or goes backwards (expected 3)"
    ]


def test_repeated_diagnostics_are_capped_with_a_count() -> None:
    content = encode([HEADER]) + b"{nope\n" * 30 + encode([turn_start(0)])
    log = read_session("x.jsonl", content)
    assert [d.kind for d in log.diagnostics] == ["invalid_json"] * 20 + ["more_diagnostics"]
    assert log.diagnostics[-1].message == (
        "10 more [invalid_json] diagnostics not listed, from line 22 on (30 in all)"
    )
    assert (log.diagnostics[-1].line, log.diagnostics[-1].severity) == (22, "error")
    assert log.diagnostics[-1].path == "x.jsonl"
    assert log.lines_skipped == 30


def test_a_file_that_is_not_a_ledger_says_so_once() -> None:
    log = read_session("x.jsonl", b"a,b\n1,2\n" * 500)
    assert [(d.kind, d.line) for d in log.diagnostics] == [("not_a_ledger", 1)]
    assert log.lines_skipped == 1000 and log.events == []  # line 1, no header, is lost too


def test_a_byte_order_mark_is_read_past_with_an_error() -> None:
    log = read_session("x.jsonl", b"\xef\xbb\xbf" + encode([HEADER, turn_start(0)]))
    assert [(d.kind, d.severity) for d in log.diagnostics] == [("byte_order_mark", "error")]
    assert log.header == HEADER and len(log.events) == 1


DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.mark.parametrize(("fmt", "sample"), [("dsh", None),
                                             ("claude_code", "claude_code/basic.jsonl"),
                                             ("codex", "codex/basic.jsonl"),
                                             ("gemini", "gemini/basic.jsonl")])
@pytest.mark.parametrize(("encoding", "order"), [("utf-16-le", "little"), ("utf-16-be", "big")])
def test_a_utf16_file_is_one_error_that_says_how_to_convert_it(
        tmp_path: Path, fmt: str, sample: str | None, encoding: str, order: str) -> None:
    # what a Windows shell redirect writes: a byte order mark, then two bytes per character
    text = (DATA / sample).read_text("utf-8") if sample else encode([HEADER]).decode()
    path = tmp_path / "redirected.jsonl"
    path.write_bytes("\ufeff".encode(encoding) + text.encode(encoding))
    (log,) = ledgerviz.load(path, format=fmt).sessions
    said = [(d.kind, d.line, d.severity, d.message) for d in log.diagnostics
            if d.severity != "info"]  # Claude Code's line counts are told as info
    assert said == [
        ("byte_order_mark", 1, "error",
         f"file is UTF-16 ({order}-endian byte order mark), not UTF-8: not read; "
         "convert it first (e.g. iconv -f UTF-16 -t UTF-8)")]
    assert log.events == []


@pytest.mark.parametrize(("magic", "name"), [(b"\x1f\x8b\x08", "gzip"),
                                             (b"\x28\xb5\x2f\xfd", "Zstandard")])
def test_compressed_content_says_it_is_compressed(magic: bytes, name: str) -> None:
    log = read_session("x.jsonl.gz", magic + b"\x00\x01rest")
    assert [(d.kind, d.line) for d in log.diagnostics] == [("compressed_file", 1)]
    assert log.diagnostics[0].message.startswith(f"{name}-compressed file")


@pytest.mark.parametrize("fmt", ["dsh", "claude_code", "codex", "gemini"])
def test_compressed_content_read_as_any_format_is_one_error(tmp_path: Path, fmt: str) -> None:
    # the Codex reader raised "tabled before it was read to its end"
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"\x1f\x8b\x08\x00rest")
    (log,) = ledgerviz.load(path, format=fmt).sessions
    assert [(d.kind, d.severity) for d in log.diagnostics if d.severity != "info"] == [
        ("compressed_file", "error")]


def test_duplicate_keys_are_a_warning_when_asked_for() -> None:
    line = b'{"type":"turn/start","seq":0,"seq":0,"time":1,"data":{"turn":1,"turn":1}}'
    content = encode([HEADER]) + line + b"\n"
    assert kinds(content) == []
    log = read_session("x.jsonl", content, duplicate_keys=True)
    assert [(d.kind, d.severity, d.line) for d in log.diagnostics] == [
        ("duplicate_key", "warning", 2)
    ]
    assert "'turn', 'seq' repeated within one object" in log.diagnostics[0].message
    spaced = b'{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}\n'
    assert kinds(encode([HEADER]) + spaced, duplicate_keys=True) == []


def test_read_chunks_looks_for_duplicate_keys_only_when_asked() -> None:
    content = encode([HEADER]) + b'{"type":"turn/start","seq":0,"seq":0,"data":{}}\n'
    assert [d.kind for d in read_chunks("x.jsonl", [content]).diagnostics] == []
    checked = read_chunks("x.jsonl", [content], duplicate_keys=True)
    assert [(d.kind, d.line) for d in checked.diagnostics] == [("duplicate_key", 2)]


def test_read_sessions_looks_for_duplicate_keys_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_bytes(encode([HEADER]) + b'{"type":"turn/start","seq":0,"seq":0,"data":{}}\n')
    assert [d.kind for d in read_sessions(path)[0].diagnostics] == []
    checked = read_sessions(path, duplicate_keys=True)[0]
    assert [(d.kind, d.line) for d in checked.diagnostics] == [("duplicate_key", 2)]


def test_every_line_with_a_repeated_key_is_named_not_only_the_first() -> None:
    plain = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}'
    twice = b'{"type":"plan/mode","seq":1,"time":1,"time":2,"data":{"active":true}}'
    log = read_session("x.jsonl", encode([HEADER, plain, twice]), duplicate_keys=True)
    assert [(d.kind, d.line, d.message) for d in log.diagnostics] == [
        ("duplicate_key", 3, "key 'time' repeated within one object: the last value is used")
    ]


def test_repeated_keys_are_looked_for_in_lines_with_big_integers_and_not_in_broken_ones() -> None:
    big = b'{"type":"turn/start","seq":0,"time":1,"x":1,"x":2,"n":18446744073709551616,' \
        b'"data":{"turn":1,"turn":1}}'
    broken = b'{"type":"turn/start","seq":1,"seq":1,'
    content = encode([HEADER, big, broken, mark(1)])
    log = read_session("x.jsonl", content, duplicate_keys=True)
    assert sorted((d.kind, d.line, d.message) for d in log.diagnostics if d.line == 2) == [
        ("big_integer", 2,
         "holds an integer beyond 64 bits: kept exact (the runtime never writes one)"),
        # an inner object is complete (and checked) before the one holding it
        ("duplicate_key", 2, "keys 'turn', 'x' repeated within one object: the last value is used"),
    ]
    assert [(d.kind, d.line) for d in log.diagnostics if d.line == 3] == [("invalid_json", 3)]


def test_a_dangling_symlink_in_a_folder_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "ok.jsonl").write_bytes(encode([HEADER, turn_start(0)]))
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "missing.jsonl")
    logs = read_sessions(tmp_path)
    found = {Path(log.path).name: [(d.kind, d.line, d.message) for d in log.diagnostics]
             for log in logs}
    assert found == {"gone.jsonl": [("unreadable", 1, "cannot read: No such file or directory")],
                     "ok.jsonl": []}


def test_special_files_named_directly_are_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    with pytest.raises(UnreadableSourceError, match=r"named pipe \(FIFO\), not a file"):
        read_sessions(tmp_path / "pipe.jsonl")
    with pytest.raises(UnreadableSourceError, match="a device, not a file"):
        read_sessions("/dev/zero")
    (tmp_path / "loop.jsonl").symlink_to(tmp_path / "loop.jsonl")
    with pytest.raises(UnreadableSourceError) as raised:
        read_sessions(tmp_path / "loop.jsonl")
    assert str(raised.value) == f"{tmp_path / 'loop.jsonl'}: cannot read: " \
        "Too many levels of symbolic links"


def test_a_named_file_that_cannot_be_opened_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "secret.jsonl"
    path.write_bytes(encode([HEADER, turn_start(0)]))

    def refusing_open(name: str) -> Any:
        raise PermissionError(13, "Permission denied", name)

    # root (as CI runs) may open any file: the reader's open is refused instead
    monkeypatch.setattr(sources, "open_identified", refusing_open)
    with pytest.raises(UnreadableSourceError) as raised:
        read_sessions(path)
    assert str(raised.value) == f"{path}: cannot read: Permission denied"


def test_a_source_of_another_type_is_refused_by_name() -> None:
    with pytest.raises(TypeError) as raised:
        read_sessions(42)  # type: ignore[arg-type]
    assert str(raised.value) == "cannot read a ledger from int"
    with pytest.raises(TypeError) as raised:
        read_sessions([2.5])  # type: ignore[list-item]
    assert str(raised.value) == "cannot read a ledger from float"


def test_folder_walk_reports_what_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok.jsonl").write_bytes(encode([HEADER, turn_start(0)]))
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "old.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    (tmp_path / "old.jsonl.gz").write_bytes(b"\x1f\x8b")
    (tmp_path / "notes.txt").write_text("not a ledger name: not read")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "hidden.jsonl").write_bytes(b"")
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    logs = read_sessions(tmp_path)
    found = {Path(log.path).name: [(d.kind, d.message) for d in log.diagnostics] for log in logs}
    assert found == {
        "locked": [("unreadable", "cannot read folder: Permission denied")],
        "ok.jsonl": [],
        "old.jsonl.gz": [("compressed_file", "compressed ledger: decompress it to read it "
                                             "(ledgerviz reads JSONL)")],
        "old.jsonl.zst": [("compressed_file", "Zstandard stream gives no line (cut short "
                                              "before its first, or empty frames alone)")],
        "pipe.jsonl": [("not_a_file", "a named pipe (FIFO), not a file: skipped")],
    }


def request_header(seq: int, config: Any) -> dict[str, Any]:
    return {"type": "request/header", "seq": seq, "time": 1000 + seq,
            "data": {"turn": 1, "step": 1, "header": {"config": config, "tools": []}}}


@pytest.mark.parametrize(("config", "message"), [
    ({"provider": {"p": 1}, "model": "m"}, "'data.header.config.provider' must be string"),
    ({"provider": "p", "model": [1]}, "'data.header.config.model' must be string, not array"),
])
def test_request_route_labels_must_be_strings(config: dict, message: str) -> None:
    events = [turn_start(0), request_header(1, config), assistant_calls(2, "A")]
    content = b"".join(dumps(line) + b"\n" for line in [HEADER, *events])
    log = read_session("x.jsonl", content)
    (problem,) = [d for d in log.diagnostics if d.kind == UNUSUAL]
    assert problem.line == 3 and message in problem.message
    assert [event["seq"] for event in log.events] == [0, 2]


def test_integers_at_the_limits_are_in_range() -> None:
    # an object surfaceOp sends the event through the full shape check
    events = call_turn()
    events[2]["surfaceOp"] = {"op": "replace", "startSeq": 2**53 - 1, "endSeq": -(2**53 - 1)}
    log = read_session("x.jsonl", b"".join(dumps(line) + b"\n" for line in [HEADER, *events]))
    assert [d.kind for d in log.diagnostics] == []
    assert len(log.events) == 3


def test_a_turn_key_inside_a_user_message_is_not_the_envelopes_turn() -> None:
    # user/message data is the message itself (format §7: no turn/step)
    said = {"type": "user/message", "seq": 1, "surfaceOp": {"op": "replace", "startSeq": 0,
                                                           "endSeq": 0},
            "data": {"id": "u1", "role": "user", "content": [], "source": {"kind": "user"},
                     "turn": "first"}}
    log = read_session("x.jsonl", encode([HEADER, turn_start(0), said]))
    assert log.diagnostics == []
    assert len(log.events) == 2


def test_a_request_header_without_a_config_object_has_no_labels_to_check() -> None:
    headers = [{"reason": "initial"}, {"header": "h"}, {"header": {}},
               {"header": {"config": "fast"}}]
    events = [turn_start(0), *({"type": "request/header", "seq": seq, "data": data}
                               for seq, data in enumerate(headers, 1))]
    log = read_session("x.jsonl", b"".join(dumps(line) + b"\n" for line in [HEADER, *events]))
    assert log.diagnostics == []
    assert [event["seq"] for event in log.events] == [0, 1, 2, 3, 4]


def test_label_fields_of_another_json_type_never_reach_the_frames(tmp_path: Path) -> None:
    """A role or source label that is an object used to crash the frames' categoricals
    (unhashable dict); now that event is an invalid_event and every frame builds."""
    import ledgerviz

    events = call_turn()
    events[1]["data"]["message"]["role"] = {"r": 1}
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"".join(dumps(line) + b"\n" for line in [HEADER, *events]))
    ledger = ledgerviz.load(path)
    for policy in ("synthesize", "fork"):
        frames = ledger.recovery(policy).frames
        assert frames.messages["seq"].tolist() == [2]


def test_a_packed_row_whose_times_run_past_2_53_is_dropped_on_its_line() -> None:
    import ledgerviz as lv
    from ledgerviz.ledger import read_session

    v0 = {"type": "session", "version": 0, "id": "dt", "createdAt": 0, "delegationDepth": 0}
    turn = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}
    # 3 chunks at time0, time0 + 2^53 - 1, time0 + 2 * (2^53 - 1): past what the runtime writes
    row = {"type": "text-chunks", "seq0": 1, "time0": 5,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [2**53 - 1] * 2,
                    "texts": ["a", "b", "c"]}}
    content = b"".join(json.dumps(line).encode() + b"\n" for line in (v0, turn, row))
    log = read_session("dt.jsonl", content)
    assert [(d.line, d.kind) for d in log.diagnostics] == [(3, "invalid_event")]
    assert "times must stay safe integers" in log.diagnostics[0].message
    assert len(log.events) == 1
    frames = lv.Ledger([log]).recovery("synthesize").frames
    assert list(frames.events["seq"]) == [0, 1]  # the turn and its interrupted closer


def test_arguments_nested_too_deep_are_a_warning_on_their_line_in_either_check() -> None:
    import ledgerviz as lv
    from ledgerviz.ledger import read_session
    from ledgerviz.recovery.nesting import MAX_ARGUMENT_DEPTH
    from ledgerviz.streams.summary import summarize_file

    def line_of(depth: int) -> bytes:
        asked = assistant_calls(1, "A")
        asked["data"]["message"]["content"][0]["arguments"] = "[" * depth + "]" * depth
        return encode([HEADER, turn_start(0), asked])

    for depth, expected in ((MAX_ARGUMENT_DEPTH, []),
                            (MAX_ARGUMENT_DEPTH + 1, [(3, "deep_arguments", "warning")])):
        content = line_of(depth)
        log = read_session("deep.jsonl", content)
        streamed = summarize_file("deep.jsonl", iter([content]))
        for diagnostics in (log.diagnostics, streamed.diagnostics):
            assert [(d.line, d.kind, d.severity) for d in diagnostics] == expected
        assert len(log.events) == 2  # kept
        lv.Ledger([log]).context("synthesize", provider="anthropic")


def test_a_result_nested_hundreds_deep_shows_its_text_in_the_messages_frame() -> None:
    import ledgerviz as lv
    from ledgerviz.ledger import read_session

    content = (b'[{"type":"tool-result","toolCallId":"A","content":' * 400  # 800 levels,
               + b'[{"type":"text","text":"bottom"}]' + b"}]" * 400)  # within orjson's 1024
    answer = encode([tool_result(2, "A")]).replace(b'"content":[', b'"content":' + content
                                                   + b',"was":[', 1)
    log = read_session("nested.jsonl", encode([HEADER, turn_start(0), assistant_calls(1, "A")])
                       + answer)
    assert log.diagnostics == []
    messages = lv.Ledger([log]).frames.messages
    assert messages["text"].iloc[-1] == "bottom"
