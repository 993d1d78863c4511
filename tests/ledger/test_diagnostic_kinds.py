"""One test per diagnostic kind: build the bad input, assert kind, severity and line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ledger_lines import HEADER, assistant_calls, mark, tool_result, turn_start

from ledgerviz.ledger import Diagnostic, SessionLog, read_sessions

Writer = Callable[..., Path]


def read_one(path: Path) -> SessionLog:
    (session,) = read_sessions(path)
    return session


def only(session: SessionLog, kind: str) -> Diagnostic:
    found = [d for d in session.diagnostics if d.kind == kind]
    assert len(found) == 1, session.diagnostics
    return found[0]


def test_torn_tail_without_newline_is_a_dropped_warning(write_ledger: Writer) -> None:
    path = write_ledger([HEADER, turn_start(0)], tail=b'{"type":"step/st')
    session = read_one(path)
    torn = only(session, "torn_tail")
    assert (torn.line, torn.severity, torn.path) == (3, "warning", str(path))
    assert [e["type"] for e in session.events] == ["turn/start"]
    assert session.lines_skipped == 1


def test_complete_json_without_newline_is_still_a_torn_tail(write_ledger: Writer) -> None:
    path = write_ledger([HEADER, turn_start(0)], tail=b'{"type":"turn/end","data":{}}')
    session = read_one(path)
    assert only(session, "torn_tail").line == 3
    assert len(session.events) == 1


def test_undecodable_last_line_with_newline_is_a_torn_tail(write_ledger: Writer) -> None:
    session = read_one(write_ledger([HEADER, turn_start(0), b'{"type":"tu']))
    torn = only(session, "torn_tail")
    assert (torn.line, torn.severity) == (3, "warning")
    assert session.lines_skipped == 1


def test_invalid_json_before_the_tail(write_ledger: Writer) -> None:
    path = write_ledger([HEADER, turn_start(0), b"{not json", turn_start(1, turn=2)])
    session = read_one(path)
    bad = only(session, "invalid_json")
    assert (bad.line, bad.severity) == (3, "error")
    assert [e["seq"] for e in session.events] == [0, 1]
    assert session.lines == [2, 4]
    assert session.lines_skipped == 1


def test_invalid_utf8(write_ledger: Writer) -> None:
    bad_line = b'{"type":"turn/start","seq":1,"data":{"turn":"\xff\xfe"}}'
    session = read_one(write_ledger([HEADER, turn_start(0), bad_line, turn_start(2, 3)]))
    bad = only(session, "invalid_utf8")
    assert (bad.line, bad.severity) == (3, "error")
    assert "not valid UTF-8" in bad.message


@pytest.mark.parametrize(
    ("event", "fragment", "kept"),
    [
        ({"type": 7, "seq": 0, "data": {}}, "'type' must be a string", False),
        ({"type": "turn/start", "seq": 0, "data": []}, "'data' must be an object", False),
        ({"type": "turn/start", "seq": "0", "data": {}}, "'seq' must be an integer", False),
        ({"type": "turn/start", "seq": 0, "time": 1.5, "data": {}}, "'time' must be", False),
        ({"type": "turn/start", "seq": 0, "data": {}, "surfaceOp": "append"}, "surface", True),
        ({"type": "user/message", "seq": 0, "data": {"role": "user"}}, "'surfaceOp' missing", True),
    ],
)
def test_invalid_event(write_ledger: Writer, event: dict, fragment: str, kept: bool) -> None:
    session = read_one(write_ledger([HEADER, event]))
    bad = only(session, "invalid_event")
    assert (bad.line, bad.severity) == (2, "error")
    assert fragment in bad.message
    assert len(session.events) == int(kept)


def test_an_event_that_is_not_an_object(write_ledger: Writer) -> None:
    session = read_one(write_ledger([HEADER, b"[1, 2]", turn_start(0)]))
    assert only(session, "invalid_event").line == 2
    assert only(session, "invalid_event").message == "an event must be an object, not array"


def test_surface_type_depends_on_version(write_ledger: Writer) -> None:
    system = {"type": "system/message", "seq": 0, "data": {"turn": 1, "step": 1, "message": {}}}
    system["surfaceOp"] = "append"
    v2 = read_one(write_ledger([{**HEADER, "version": 2}, system]))
    v3 = read_one(write_ledger([{**HEADER, "version": 3}, system]))
    assert only(v2, "invalid_event").line == 2
    assert v3.diagnostics == []


def test_seq_gap(write_ledger: Writer) -> None:
    session = read_one(write_ledger([HEADER, turn_start(0), turn_start(1), turn_start(3)]))
    gap = only(session, "seq_gap")
    assert (gap.line, gap.severity) == (4, "error")
    assert gap.message == "expected seq 2, found 3: 1 missing"
    assert len(session.events) == 3


def test_seq_that_does_not_start_at_zero(write_ledger: Writer) -> None:
    session = read_one(write_ledger([HEADER, turn_start(1), turn_start(2)]))
    assert only(session, "seq_gap").line == 2


def test_repeated_seq(write_ledger: Writer) -> None:
    session = read_one(write_ledger([HEADER, turn_start(0), turn_start(1), turn_start(1)]))
    gap = only(session, "seq_gap")
    assert gap.line == 4
    assert "repeats" in gap.message


def test_events_without_seq_are_numbered_by_position(write_ledger: Writer) -> None:
    events = [{"type": "turn/start", "data": {"turn": 1}}, {"type": "step/start", "data": {}}]
    session = read_one(write_ledger([HEADER, *events]))
    assert session.diagnostics == []


def test_unknown_required_event(write_ledger: Writer) -> None:
    odd = {"type": "brand/new", "seq": 1, "data": {}}
    session = read_one(write_ledger([HEADER, turn_start(0), odd]))
    unknown = only(session, "unknown_required_event")
    assert (unknown.line, unknown.severity) == (3, "error")
    assert "'brand/new'" in unknown.message
    assert session.events[1] == odd


def test_unknown_ignorable_event_is_kept_without_error(write_ledger: Writer) -> None:
    odd = {"type": "brand/new", "seq": 1, "data": {"x": 1}, "ignorable": True}
    session = read_one(write_ledger([HEADER, turn_start(0), odd]))
    note = only(session, "unknown_ignorable_event")
    assert (note.line, note.severity) == (3, "info")
    assert session.events[1] == odd
    assert not session.has_errors


@pytest.mark.parametrize(("kind", "version"), [
    ("surface/rewind", HEADER.get("version")), ("surface/restore", HEADER.get("version")),
    ("assistant/chunk", 1),
])
def test_plugin_and_legacy_types_are_known(write_ledger: Writer, kind: str, version: int) -> None:
    header = {**HEADER, "version": version}
    session = read_one(write_ledger([header, {"type": kind, "seq": 0, "data": {}}]))
    assert session.diagnostics == []


def test_chunk_events_are_unknown_from_v2_on(write_ledger: Writer) -> None:
    header = {**HEADER, "version": 2}
    session = read_one(write_ledger([header, {"type": "assistant/chunk", "seq": 0, "data": {}}]))
    assert [(d.kind, d.line) for d in session.diagnostics] == [("unknown_required_event", 2)]


def test_orphan_result(write_ledger: Writer) -> None:
    lines = [
        HEADER,
        turn_start(0),
        assistant_calls(1, "A"),
        tool_result(2, "A"),
        tool_result(3, "Z"),
    ]
    session = read_one(write_ledger(lines))
    orphan = only(session, "orphan_result")
    assert (orphan.line, orphan.severity) == (5, "error")
    assert "'Z'" in orphan.message
    assert len(session.events) == 4


def test_result_before_its_request_is_an_orphan(write_ledger: Writer) -> None:
    lines = [HEADER, turn_start(0), tool_result(1, "A"), assistant_calls(2, "A")]
    assert only(read_one(write_ledger(lines)), "orphan_result").line == 3


@pytest.mark.parametrize("version", [5, 99, "3", None, 2.0])
def test_unsupported_version_is_refused_not_misread(write_ledger: Writer, version: object) -> None:
    session = read_one(write_ledger([{**HEADER, "version": version}, turn_start(0), turn_start(1)]))
    refused = only(session, "unsupported_version")
    assert (refused.line, refused.severity) == (1, "error")
    assert repr(version) in refused.message
    assert session.events == []
    assert session.lines_skipped == 2


def test_missing_header_keeps_the_events(write_ledger: Writer) -> None:
    session = read_one(write_ledger([turn_start(0), turn_start(1, 2)]))
    bad = only(session, "bad_header")
    assert (bad.line, bad.severity) == (1, "error")
    assert "'turn/start' event" in bad.message
    assert [e["seq"] for e in session.events] == [0, 1]
    assert session.lines == range(1, 3)


def test_undecodable_header(write_ledger: Writer) -> None:
    session = read_one(write_ledger([b'{"type":"session",', turn_start(0)]))
    assert only(session, "bad_header").line == 1
    assert len(session.events) == 1


def test_header_without_id(write_ledger: Writer) -> None:
    path = write_ledger([{"type": "session", "version": 3, "createdAt": 0}], name="noid.jsonl")
    session = read_one(path)
    assert "'id'" in only(session, "bad_header").message
    assert session.key == "noid"


def test_unknown_header_key_is_an_error_the_runtime_refuses(write_ledger: Writer) -> None:
    session = read_one(write_ledger([{**HEADER, "colour": "red"}]))
    assert only(session, "unknown_header_key").severity == "error"


def test_header_without_version_reads_as_v0(write_ledger: Writer) -> None:
    header = {k: v for k, v in HEADER.items() if k != "version"}
    session = read_one(write_ledger([header, turn_start(0)]))
    assert only(session, "missing_version").severity == "info"
    assert session.version is None
    assert len(session.events) == 1


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    session = read_one(path)
    empty = only(session, "empty_file")
    assert (empty.line, empty.severity) == (1, "warning")
    assert (session.key, session.header, session.events) == ("empty", {}, [])


def test_blank_line_between_events_is_an_error_the_runtime_stops_at(
    write_ledger: Writer,
) -> None:
    session = read_one(write_ledger([HEADER, turn_start(0), b"", turn_start(1, 2)]))
    blank = only(session, "blank_line")
    assert (blank.line, blank.severity) == (3, "error")
    assert len(session.events) == 2


def test_a_blank_last_line_is_a_warning(write_ledger: Writer) -> None:
    session = read_one(write_ledger([HEADER, turn_start(0), b""]))
    assert (only(session, "blank_line").line, only(session, "blank_line").severity) == (
        3, "warning")


@pytest.mark.parametrize(("seed_length", "warned"), [(3, False), (10, True)])
def test_a_v1_seed_length_past_the_files_events(seed_length: int, warned: bool,
                                                write_ledger: Writer) -> None:
    header = {"type": "session", "version": 1, "id": "child", "createdAt": 0,
              "parentSession": "parent", "seedLength": seed_length}
    session = read_one(write_ledger([header, turn_start(0), turn_start(1), turn_start(2)]))
    found = [d for d in session.diagnostics if d.kind == "seed_too_long"]
    if not warned:
        assert found == []
        return
    assert [(d.line, d.severity) for d in found] == [(1, "warning")]
    assert found[0].message == ("header seedLength 10 counts more events than the file holds "
                                "(3): all of them are read as inherited from the parent")


@pytest.mark.parametrize(("seq", "warned"), [(2, False), (999, True)])
def test_an_end_seed_that_claims_more_events_than_come_before_it(
        seq: int, warned: bool, write_ledger: Writer) -> None:
    marker = {"type": "session/end-seed", "seq": seq, "time": 0, "data": {"inherited": True}}
    lines = [HEADER, turn_start(0), turn_start(1), marker, turn_start(seq + 1)]
    session = read_one(write_ledger(lines))
    found = [(d.line, d.severity, d.message) for d in session.diagnostics
             if d.kind == "seed_too_long"]
    assert found == ([(4, "warning", "session/end-seed says 999 events were inherited, but 2 "
                       "come before it: the first 4 events are read as inherited from the "
                       "parent")] if warned else [])


def test_an_event_without_seq_in_a_numbered_log_is_an_error(write_ledger: Writer) -> None:
    """A snapshot numbers every event by position; a raw log has a seq on each, and the
    runtime stops reading at one without."""
    unnumbered = {key: value for key, value in turn_start(1, 2).items() if key != "seq"}
    session = read_one(write_ledger([HEADER, turn_start(0), unnumbered]))
    missing = only(session, "missing_seq")
    assert (missing.line, missing.severity) == (3, "error")
    assert "runtime stops reading" in missing.message
    assert [event.get("seq") for event in session.events] == [0, None]
    snapshot = [{k: v for k, v in event.items() if k != "seq"}
                for event in (turn_start(0), mark(1))]
    assert read_one(write_ledger([HEADER, *snapshot])).diagnostics == []


@pytest.mark.parametrize(("created_at", "problem"), [
    (2**53, "9007199254740992 is beyond ±(2^53-1), outside what the runtime writes"),
    (-(2**53), "-9007199254740992 is beyond ±(2^53-1), outside what the runtime writes"),
    (1.5, "must be an integer, not number"),
])
def test_a_created_at_the_runtime_cannot_hold_is_a_bad_header(
    write_ledger: Writer, created_at: object, problem: str
) -> None:
    session = read_one(write_ledger([{**HEADER, "createdAt": created_at}]))
    assert only(session, "bad_header").message == f"header 'createdAt' {problem}: ignored"
