"""Huge lines, files growing while read, CRLF, and v0/v1 packed chunk rows."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from ledger_lines import HEADER, mark, turn_start

from ledgerviz.ledger import read_sessions

Writer = Callable[..., Path]

FIFTY_MB = 50 * 1024 * 1024


def big_message(seq: int) -> dict:
    text = "x" * FIFTY_MB
    data = {"id": "u", "role": "user", "content": [{"type": "text", "text": text}]}
    return {"type": "user/message", "seq": seq, "data": data, "surfaceOp": "append"}


def test_a_single_line_of_fifty_megabytes(write_ledger: Writer) -> None:
    (session,) = read_sessions(
        write_ledger([HEADER, turn_start(0), big_message(1), mark(2)])
    )
    assert session.diagnostics == []
    assert len(session.events[1]["data"]["content"][0]["text"]) == FIFTY_MB
    assert [e["seq"] for e in session.events] == [0, 1, 2]


def test_a_torn_fifty_megabyte_line(write_ledger: Writer) -> None:
    torn = orjson.dumps(big_message(1))[: FIFTY_MB // 2]
    (session,) = read_sessions(write_ledger([HEADER, turn_start(0)], tail=torn))
    assert [(d.kind, d.line) for d in session.diagnostics] == [("torn_tail", 3)]
    assert len(session.events) == 1


def test_crlf_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(b"\r\n".join(orjson.dumps(x) for x in [HEADER, turn_start(0)]) + b"\r\n")
    (session,) = read_sessions(path)
    assert session.diagnostics == []
    assert session.events == [turn_start(0)]


def test_a_file_caught_mid_append_then_completed(tmp_path: Path) -> None:
    path = tmp_path / "growing.jsonl"
    whole = orjson.dumps(mark(1)) + b"\n"
    path.write_bytes(orjson.dumps(HEADER) + b"\n" + orjson.dumps(turn_start(0)) + b"\n" + whole[:9])
    (snapshot,) = read_sessions(path)
    assert [d.kind for d in snapshot.diagnostics] == ["torn_tail"]
    assert not snapshot.has_errors
    with path.open("ab") as handle:
        handle.write(whole[9:])
    (later,) = read_sessions(path)
    assert later.diagnostics == []
    assert [e["seq"] for e in later.events] == [0, 1]


def test_reading_while_another_thread_appends(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(orjson.dumps(HEADER) + b"\n")
    total = 3000
    done = threading.Event()

    def append() -> None:
        with path.open("ab", buffering=0) as handle:
            for seq in range(total):
                line = orjson.dumps(mark(seq)) + b"\n"
                handle.write(line[:7])
                handle.write(line[7:])
        done.set()

    writer = threading.Thread(target=append)
    writer.start()
    snapshots = []
    while not done.is_set():
        (session,) = read_sessions(path)
        snapshots.append(session)
    writer.join()
    snapshots.extend(read_sessions(path))
    for session in snapshots:
        assert not session.has_errors, session.diagnostics
        assert {d.kind for d in session.diagnostics} <= {"torn_tail"}
        assert [e["seq"] for e in session.events] == list(range(len(session.events)))
    assert len(snapshots[-1].events) == total
    assert snapshots[-1].diagnostics == []


V0_HEADER = {"type": "session", "version": 0, "id": "old", "createdAt": 0, "delegationDepth": 0}


def test_packed_text_row_expands_into_chunk_events(write_ledger: Writer) -> None:
    packed = {
        "type": "text-chunks",
        "seq0": 2,
        "time0": 1000,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [3, 4], "texts": ["He", "llo", " there"]},
    }
    step = {"type": "step/start", "seq": 1, "time": 999, "data": {"turn": 1, "step": 1}}
    after = {"type": "step/end", "seq": 5, "time": 1010, "data": {"turn": 1, "step": 1}}
    (session,) = read_sessions(write_ledger([V0_HEADER, turn_start(0), step, packed, after]))
    assert session.diagnostics == []
    chunks = session.events[2:5]
    assert [(e["type"], e["seq"], e["time"]) for e in chunks] == [
        ("assistant/chunk", 2, 1000),
        ("assistant/chunk", 3, 1003),
        ("assistant/chunk", 4, 1007),
    ]
    assert [e["data"]["chunk"] for e in chunks] == [
        {"type": "text-delta", "index": 0, "text": "He"},
        {"type": "text-delta", "index": 0, "text": "llo"},
        {"type": "text-delta", "index": 0, "text": " there"},
    ]
    assert list(session.lines) == [2, 3, 4, 4, 4, 5]
    assert session.events[5] is not None and session.events[5]["seq"] == 5


def test_packed_tool_call_row(write_ledger: Writer) -> None:
    packed = {
        "type": "tool-call-chunks",
        "seq0": 0,
        "time0": 50,
        "data": {
            "turn": 1,
            "step": 1,
            "index": 1,
            "dt": [1],
            "id": "c1",
            "name": "ls",
            "args": ['{"p', 'ath":1}'],
        },
    }
    (session,) = read_sessions(write_ledger([{**V0_HEADER, "version": 1}, packed]))
    assert [e["data"]["chunk"] for e in session.events] == [
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "ls", "argumentsDelta": '{"p'},
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "ls",
         "argumentsDelta": 'ath":1}'},
    ]
    assert [e["time"] for e in session.events] == [50, 51]


def test_malformed_packed_row(write_ledger: Writer) -> None:
    packed = {"type": "text-chunks", "seq0": 0, "data": {"dt": [1, 2], "texts": ["a"]}}
    (session,) = read_sessions(write_ledger([V0_HEADER, packed]))
    assert [(d.kind, d.line) for d in session.diagnostics] == [("invalid_event", 2)]
    assert session.events == []
    assert session.lines_skipped == 1


@pytest.mark.parametrize("version", [2, 3, 4])
def test_packed_rows_are_expanded_in_every_version(write_ledger: Writer, version: int) -> None:
    """The runtime's reader expands packed rows whatever the header version (issue 12), into
    assistant/chunk events, a type only v0/v1 know: a later runtime refuses the log."""
    data = {"turn": 1, "step": 1, "index": 0, "dt": [2], "texts": ["a", "b"]}
    packed = {"type": "text-chunks", "seq0": 0, "time0": 7, "data": data}
    (session,) = read_sessions(write_ledger([{**V0_HEADER, "version": version}, packed]))
    assert [(d.kind, d.line) for d in session.diagnostics] == [("unknown_required_event", 2)]
    rows = [(e["type"], e["seq"], e["time"], e["data"]["chunk"]["text"]) for e in session.events]
    assert rows == [
        ("assistant/chunk", 0, 7, "a"),
        ("assistant/chunk", 1, 9, "b"),
    ]


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"type": {"a": 1}, "seq0": 0, "data": {}}, "'type' must be a string, not object"),
        ({"type": "text-chunks", "seq0": 2**60, "time0": 0,
          "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a"]}}, "'seq0'"),
        ({"type": "text-chunks", "seq0": 0, "time0": 0,
          "data": {"turn": "1", "step": 1, "index": 0, "dt": [], "texts": ["a"]}}, "'turn'"),
        ({"type": "tool-call-chunks", "seq0": 0, "time0": 0,
          "data": {"turn": 1, "step": 1, "index": 0, "id": "A", "dt": [], "args": [{"x": 1}]}},
         "list of strings"),
        ({"type": "text-chunks", "seq0": 0, "time0": 0,
          "data": {"turn": 1, "step": 1, "index": 0, "dt": [0.5], "texts": ["a", "b"]}},
         "safe integers"),
    ],
)
def test_wrong_shaped_packed_rows(write_ledger: Writer, row: dict, problem: str) -> None:
    (session,) = read_sessions(write_ledger([V0_HEADER, row]))
    assert [(d.kind, d.line) for d in session.diagnostics] == [("invalid_event", 2)]
    assert problem in session.diagnostics[0].message
    assert session.events == []


def test_a_file_holding_only_a_partial_header(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    path.write_bytes(b'{"type":"session","vers')
    (session,) = read_sessions(path)
    assert [(d.kind, d.line, d.severity) for d in session.diagnostics] == [
        ("torn_tail", 1, "warning")
    ]
    assert (session.key, session.header, session.events) == ("new", {}, [])
