"""The streamed check's typed decoder: it reads a block only where the reader says nothing.

``typed_stream.stream_block`` is a fast path: a block it refuses is checked the usual way. So
its contract is that a streamed check gives the diagnostics and facts of the whole-file
check (``read_sessions``), on clean ledgers (where it must be the one reading) and on
lines where msgspec and orjson, or the schema and the reader's checks, could disagree.
Expected diagnostics are written by hand; the whole-file read is the reference for the
rest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger_lines import containers

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.reader import FileScan
from ledgerviz.ledger.sources import iter_source_chunks
from ledgerviz.ledger.typed_stream import StreamBlock
from ledgerviz.simulate import SCENARIOS, write_scenario
from ledgerviz.streams.recovery import event_facts
from ledgerviz.streams.summary import summarize


def typed_blocks(path: Path, chunk_bytes: int) -> list[Any]:
    ((_, chunks),) = iter_source_chunks(path, chunk_bytes)
    return list(FileScan(str(path), typed=True).blocks(chunks))


def file_events(path: Path) -> list[dict[str, Any]]:
    """The file's events as orjson decodes its lines (the header line dropped)."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]


def test_a_clean_ledger_is_read_by_the_typed_decoder_alone(tmp_path: Path) -> None:
    (path,) = write_scenario("large", tmp_path / "clean.jsonl", turns=40)
    blocks = typed_blocks(path, 4096)
    assert len(blocks) > 20 and all(isinstance(b, StreamBlock) for b in blocks)
    events = file_events(path)
    assert [t for b in blocks for t in b.types] == [e["type"] for e in events]
    assert [s for b in blocks for s in b.seqs] == [e["seq"] for e in events]
    assert [t for b in blocks for t in b.times] == [e["time"] for e in events]
    assert [d for b in blocks for d in b.datas[:]] == [e["data"] for e in events]
    requests = [("request", block["id"], e["seq"],
                 (e["data"]["turn"], e["data"]["step"], block["name"])) for e in events
                if e["type"] == "assistant/message"
                for block in e["data"]["message"]["content"] if block["type"] == "tool-call"]
    facts = [f for b in blocks for f in b.facts]
    assert [("request", call_id, seq, (*place, name)) for what, seq, place, calls in facts
            if what == "calls" for call_id, name in calls] == requests
    assert not [f for f in facts if f[0] == "request"]  # every message is in the context
    dispatches = [e["data"]["callId"] for e in events if e["type"] == "tool/call"]
    assert [f[1] for b in blocks for f in b.facts if f[0] == "dispatch"] == dispatches
    answers = [e["data"]["message"]["toolCallId"] for e in events if e["type"] == "tool/result"]
    assert [f[1] for b in blocks for f in b.facts if f[0] == "result"] == answers


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_scenario_streams_as_the_whole_file_reads(tmp_path: Path, scenario: str) -> None:
    for path in write_scenario(scenario, tmp_path / scenario, turns=6):
        whole = read_sessions(path)[0]
        for chunk_bytes in (300, 1 << 20):
            (summary,) = summarize(path, chunk_bytes=chunk_bytes)
            assert summary.diagnostics == whole.diagnostics
            assert summary.events == len(whole.events)
            assert summary.lines_skipped == whole.lines_skipped


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_typed_facts_are_the_facts_of_the_dicts(tmp_path: Path, scenario: str) -> None:
    """Each typed block's facts (calls, closes, typed messages, context shapes) are what
    ``event_facts`` reads from the same events' dicts with the recovery engine's own
    accessors (``context_message``, ``pairing_shape``)."""
    for path in write_scenario(scenario, tmp_path / scenario, turns=6):
        lines = path.read_bytes().splitlines()
        for block in typed_blocks(path, 4096):
            if isinstance(block, StreamBlock):
                events = [orjson.loads(lines[number - 1]) for number in block.lines]
                ops = [event.get("surfaceOp") for event in events]
                assert block.facts == event_facts(block.types, block.seqs, block.times,
                                                  block.datas[:], ops, block.lines)


def clean_lines(tmp_path: Path) -> list[bytes]:
    (path,) = write_scenario("clean", tmp_path / "base.jsonl", turns=3)
    return path.read_bytes().splitlines()


def index_of(lines: list[bytes], kind: str) -> int:
    return next(i for i, line in enumerate(lines) if orjson.loads(line).get("type") == kind)


def on_event(edit: Any) -> Any:
    """Return an edit of a line's bytes that applies ``edit`` to its decoded event."""
    def edited(line: bytes) -> bytes:
        event = orjson.loads(line)
        edit(event)
        return orjson.dumps(event)
    return edited


def first_call(event: dict[str, Any]) -> dict[str, Any]:
    return next(b for b in event["data"]["message"]["content"] if b["type"] == "tool-call")


def appended(field: bytes) -> Any:
    """Return an edit that adds ``field`` (``"key":value`` bytes) to a line's object."""
    return lambda line: line[:-1] + b"," + field + b"}"


EDITS: dict[str, tuple[str, Any, str]] = {
    # name: (type of the event edited, edit of its line's bytes, diagnostic kind)
    "a number beyond a double": ("tool/result", appended(b'"x":[1.5E+400]'), "invalid_json"),
    "a number beyond a double after digits that follow an e": (
        "tool/result", appended(b'"y":"file1000","x":[1.5E+400]'), "invalid_json"),
    "bytes that are not UTF-8": ("tool/result", appended(b'"x":"\xff\xfe"'), "invalid_utf8"),
    "nested deeper than orjson reads": (
        "step/start", appended(b'"x":' + b"[" * 1030 + b"]" * 1030), "invalid_json"),
    "an integer beyond 64 bits": (
        "step/end", appended(b'"x":123456789012345678901234'), "big_integer"),
    "a tool-call id that is a number": (
        "assistant/message", on_event(lambda e: first_call(e).update(id=5)), "unusual_payload"),
    "a tool-call name that is a list": (
        "assistant/message", on_event(lambda e: first_call(e).update(name=["ls"])),
        "unusual_payload"),
    "a dispatch with no call id": (
        "tool/call", on_event(lambda e: e["data"].pop("callId")), "unusual_payload"),
    "a seq that skips one": (
        "step/start", on_event(lambda e: e.update(seq=e["seq"] + 1)), "seq_gap"),
    "a time that is a float": (
        "turn/start", on_event(lambda e: e.update(time=1.5)), "invalid_event"),
    "a time that is a whole float": (
        "turn/start", on_event(lambda e: e.update(time=float(e["time"]))), "integer_as_float"),
    "a tool result with no source": (
        "tool/result", on_event(lambda e: e["data"]["message"].pop("source")),
        "unopenable_event"),
    "a turn that is a string": (
        "step/end", on_event(lambda e: e["data"].update(turn="1")), "unusual_payload"),
    "an unknown type": (
        "step/end", on_event(lambda e: e.update(type="step/ended")), "unknown_required_event"),
    "a surface op on a step": (
        "step/start", on_event(lambda e: e.update(surfaceOp="append")), "invalid_event"),
    "a surface op not understood": (
        "tool/result", on_event(lambda e: e.update(surfaceOp="prepend")), "invalid_event"),
    "a message with no surface op": (
        "assistant/message", on_event(lambda e: e.pop("surfaceOp")), "invalid_event"),
    "a result for a call never requested": (
        "tool/result", on_event(lambda e: e["data"]["message"]["source"].update(callId="nobody")),
        "orphan_result"),
    "a reason that is a string": (
        "turn/end", on_event(lambda e: e["data"].update(reason="done")), "unusual_payload"),
    "a request's provider that is a number": (
        "request/header", on_event(lambda e: e["data"]["header"]["config"].update(provider=7)),
        "unusual_payload"),
    "a type given twice, the last one unknown": (
        "step/end", appended(b'"type":"step/ended"'), "unknown_required_event"),
    "a blank line": ("step/end", lambda line: b"", "blank_line"),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_a_line_the_reader_would_flag_is_checked_the_usual_way(
    tmp_path: Path, name: str
) -> None:
    kind, edit, diagnostic = EDITS[name]
    lines = clean_lines(tmp_path)
    at = index_of(lines, kind)
    lines[at] = edit(lines[at])
    path = tmp_path / "edited.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    whole = read_sessions(path)[0]
    assert (at + 1, diagnostic) in [(d.line, d.kind) for d in whole.diagnostics]
    for chunk_bytes in (200, 1 << 20):
        (summary,) = summarize(path, chunk_bytes=chunk_bytes)
        assert summary.diagnostics == whole.diagnostics
        assert (summary.events, summary.lines_skipped) == (len(whole.events), whole.lines_skipped)


JSON_VALUES = st.sampled_from(
    [None, True, 0, -1, 1.5, 2**53, 2**70, "", "x", "append", [], [1, [2, 3]], {}, {"op": "x"}]
)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(1, 400), path_choice=st.integers(0, 10_000), value=JSON_VALUES,
       chunk_bytes=st.sampled_from([150, 700, 1 << 20]))
def test_any_one_value_changed_streams_as_the_whole_file_reads(
    tmp_path: Path, line: int, path_choice: int, value: Any, chunk_bytes: int
) -> None:
    lines = clean_lines(tmp_path)
    at = 1 + line % (len(lines) - 1)
    event = orjson.loads(lines[at])
    places = list(containers(event))
    container, key = places[path_choice % len(places)]
    container[key] = value
    lines[at] = json.dumps(event, separators=(",", ":")).encode()  # orjson refuses 2**70
    path = tmp_path / "changed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    whole = read_sessions(path)[0]
    (summary,) = summarize(path, chunk_bytes=chunk_bytes)
    assert summary.diagnostics == whole.diagnostics
    assert (summary.events, summary.lines_skipped) == (len(whole.events), whole.lines_skipped)


def wrapped_result(seq: int, call_id: str, is_error: bool) -> dict[str, Any]:
    """A v0-v3 tool/result: a user-role wrapper whose one block names the call (§9.2; its
    source names none)."""
    block = {"type": "tool-result", "toolCallId": call_id, "isError": is_error,
             "content": [{"type": "text", "text": "done"}]}
    message = {"id": f"r{seq}", "role": "user", "source": {"kind": "tool"}, "content": [block]}
    return {"type": "tool/result", "seq": seq, "data": {"turn": 1, "step": 1, "message": message},
            "surfaceOp": "append"}


def test_wrapped_results_are_counted_by_their_block(tmp_path: Path) -> None:
    calls = [{"type": "tool-call", "id": c, "name": "ls", "arguments": "{}"} for c in "AB"]
    lines = [
        {"type": "session", "version": 3, "id": "wrapped", "createdAt": 0},
        {"type": "turn/start", "seq": 0, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 2, "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "message": {"role": "assistant", "content": calls}}},
        {"type": "tool/call", "seq": 3, "data": {"turn": 1, "step": 1, "callId": "A"}},
        wrapped_result(4, "A", True),
        {"type": "tool/call", "seq": 5, "data": {"turn": 1, "step": 1, "callId": "B"}},
        wrapped_result(6, "B", False),
        {"type": "step/end", "seq": 7, "data": {"turn": 1, "step": 1}},
    ]
    path = tmp_path / "wrapped.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    assert all(isinstance(b, StreamBlock) for b in typed_blocks(path, 1 << 20))
    (summary,) = summarize(path)
    assert (summary.diagnostics, summary.calls) == ([], {"error": 1, "ok": 1})
    assert (summary.open_turn, summary.open_step, summary.closers) == (1, None, 1)


def test_an_event_without_a_seq_is_reported_as_the_whole_file_reports_it(
        tmp_path: Path) -> None:
    """Line 4 (the third event) has no seq: the whole-file check numbers it by position
    with an error, so the streamed check must too (the typed decoder used to number it
    quietly)."""
    lines = clean_lines(tmp_path)[:6]
    event = orjson.loads(lines[3])
    del event["seq"]
    lines[3] = orjson.dumps(event)
    path = tmp_path / "no-seq.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    (summary,) = summarize(path)
    assert [(d.line, d.kind, d.severity) for d in summary.diagnostics] == [
        (4, "missing_seq", "error")]
    assert summary.diagnostics == read_sessions(path)[0].diagnostics


def test_a_call_requested_in_an_earlier_block_is_warned_as_the_whole_file_warns(
        tmp_path: Path) -> None:
    """The last request of the file names the first call again: the whole-file check
    warns ``repeated_call`` on its line; so does the streamed check, whose requested ids
    (``CallIds``) hold the first one from an earlier block."""
    lines = clean_lines(tmp_path)
    requests = [i for i, line in enumerate(lines)
                if b'"tool-call"' in line and orjson.loads(line)["type"] == "assistant/message"]
    first_id = first_call(orjson.loads(lines[requests[0]]))["id"]
    lines[requests[-1]] = on_event(lambda e: first_call(e).update(id=first_id))(
        lines[requests[-1]])
    path = tmp_path / "again.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    whole = read_sessions(path)[0]
    assert (requests[-1] + 1, "repeated_call") in [(d.line, d.kind) for d in whole.diagnostics]
    for chunk_bytes in (200, 1 << 20):
        (summary,) = summarize(path, chunk_bytes=chunk_bytes)
        assert summary.diagnostics == whole.diagnostics


@pytest.mark.parametrize("route", [{"typed": True}, {"tabled": True}, {}])
def test_an_event_without_a_seq_after_typed_blocks_is_reported(tmp_path: Path,
                                                               route: dict[str, bool]) -> None:
    """The last line's event has no seq: its error is the same whether the blocks before
    it were read by the typed check (which used to leave the file marked as not numbered,
    so the error went unsaid) or by the dicts."""
    lines = clean_lines(tmp_path)
    event = orjson.loads(lines[-1])
    del event["seq"]
    lines[-1] = orjson.dumps(event)
    content = b"\n".join(lines) + b"\n"
    scan = FileScan("no-seq.jsonl", **route)
    blocks = list(scan.blocks([content[at:at + 300] for at in range(0, len(content), 300)]))
    assert len(blocks) > 10
    assert [(d.line, d.kind, d.severity) for d in scan.diagnostics()] == [
        (len(lines), "missing_seq", "error")]
