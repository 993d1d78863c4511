"""OTLP export: the OTLP/JSON file parses as the protobuf schema, and its spans are the turns,
steps and calls of the examples, counted by hand from the files."""

from __future__ import annotations

import base64
import json
import math
import os
import socket
import stat
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

import ledgerviz
import ledgerviz.export.otlp as otlp
from ledgerviz.cli import main
from ledgerviz.examples import example_path, examples_dir
from ledgerviz.export.otlp import OtlpError, ledger_spans, to_otlp, traces_url
from ledgerviz.export.otlp_json import OtlpJson
from ledgerviz.export.otlp_sdk import readable_span
from ledgerviz.export.otlp_spans import CLIENT, ERROR, SpanLink, SpanRecord
from ledgerviz.recovery.vocab import POLICIES

CRASH = example_path("crash-mid-dispatch")
TOOL_ERROR = example_path("tool-error")
RESUME_FORK = example_path("resume-fork")


@pytest.fixture(params=["loaded", "streamed"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How ``ledgerviz otlp`` reads a file: loaded, or in two streamed passes (as it reads a
    dsh file over ``STREAM_BYTES``; here every one)."""
    if request.param == "streamed":
        monkeypatch.setattr(otlp, "STREAM_BYTES", -1)
    return str(request.param)


def read_otlp_json(path: Path) -> list[ExportTraceServiceRequest]:
    """Parse each line of an OTLP/JSON file as an ``ExportTraceServiceRequest``.

    OTLP/JSON writes ids as hex where protobuf's JSON mapping has base64 (OTLP spec, "JSON
    Protobuf Encoding"); they are turned back before ``json_format.Parse``, which refuses
    any field the schema does not have.
    """
    requests = []
    for line in path.read_text().splitlines():
        document = json.loads(line)
        for resource in document["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for holder in [span, *span.get("links", [])]:
                        for name in ("traceId", "spanId", "parentSpanId"):
                            if name in holder:
                                holder[name] = base64.b64encode(
                                    bytes.fromhex(holder[name])).decode()
        requests.append(json_format.Parse(json.dumps(document), ExportTraceServiceRequest()))
    return requests


def spans_of(requests: list[ExportTraceServiceRequest]) -> list[Span]:
    return [span for request in requests for resource in request.resource_spans
            for scope in resource.scope_spans for span in scope.spans]


def attributes(span: Span) -> dict[str, Any]:
    values = {}
    for pair in span.attributes:
        kind = pair.value.WhichOneof("value")
        values[pair.key] = getattr(pair.value, kind)
    return values


def operation(spans: list[Span], name: str) -> list[Span]:
    return [span for span in spans if attributes(span)["gen_ai.operation.name"] == name]


def export_file(tmp_path: Path, source: Path, policy: str, name: str = "spans.json") -> Path:
    out = tmp_path / name
    assert main(["otlp", str(source), "-o", str(out), "--policy", policy]) == 0
    return out


def event_times_ns(path: Path) -> dict[int, int]:
    """Return the recorded time of every seq of a ledger file, in epoch ns."""
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return {event["seq"]: event["time"] * 1_000_000 for event in lines}


def test_crash_mid_dispatch_under_fork_counted_by_hand(tmp_path: Path, route: str) -> None:
    # crash-mid-dispatch.jsonl, read line by line:
    #   turn 1 (seq 0..14): step 1 (seq 1..10) asks for edit + read (seq 5), both answered
    #   (results seq 8, 9); step 2 (seq 11..13) answers in text, no call.
    #   turn 2 (seq 15..): step 1 (seq 16..) asks for read, grep, read, web_fetch (seq 18);
    #   read and grep are dispatched (seq 19, 20), read answered (seq 21), then the file ends.
    # So 2 invoke_agent + 3 chat + 6 execute_tool = 11 spans, one trace. Fork point: seq 18
    # (grep, dispatched with no result): turn 2, its step and its 4 calls are abandoned.
    spans = spans_of(read_otlp_json(export_file(tmp_path, CRASH, "fork")))
    assert len(spans) == 11
    assert len({span.trace_id for span in spans}) == 1
    assert all(len(span.trace_id) == 16 and len(span.span_id) == 8 for span in spans)
    turns, chats = operation(spans, "invoke_agent"), operation(spans, "chat")
    tools = operation(spans, "execute_tool")
    assert (len(turns), len(chats), len(tools)) == (2, 3, 6)
    turn_ids = {attributes(span)["ledgerviz.turn"]: span.span_id for span in turns}
    assert Counter(turn_ids[attributes(c)["ledgerviz.turn"]] == c.parent_span_id
                   for c in chats) == {True: 3}
    assert Counter(attributes(c)["ledgerviz.turn"] for c in chats) == {1: 2, 2: 1}
    chat_of = {(attributes(c)["ledgerviz.turn"], attributes(c)["ledgerviz.step"]): c.span_id
               for c in chats}
    per_step = Counter(next(key for key, sid in chat_of.items() if sid == t.parent_span_id)
                       for t in tools)
    assert per_step == {(1, 1): 2, (2, 1): 4}
    calls = {attributes(t)["gen_ai.tool.call.id"]: attributes(t) for t in tools}
    assert {call: (a["gen_ai.tool.name"], a["ledgerviz.call.status"], a["ledgerviz.branch"])
            for call, a in calls.items()} == {
        "call-881eae2eb154": ("edit", "ok", "active"),
        "call-c6f86d76b07e": ("read", "ok", "active"),
        "call-eeea26e87555": ("read", "ok", "abandoned"),
        "call-6bf47d2caf82": ("grep", "outcome_unknown", "abandoned"),
        "call-f6460a097c97": ("read", "not_started", "abandoned"),
        "call-13deab1031d0": ("web_fetch", "not_started", "abandoned"),
    }
    assert {attributes(s)["ledgerviz.turn"]: attributes(s)["ledgerviz.branch"]
            for s in turns} == {1: "active", 2: "abandoned"}
    assert [attributes(s).get("ledgerviz.fork_point") for s in turns] == [None, 18]
    assert calls["call-6bf47d2caf82"]["langfuse.observation.level"] == "WARNING"
    assert calls["call-6bf47d2caf82"]["openinference.span.kind"] == "TOOL"
    by_call = {attributes(t)["gen_ai.tool.call.id"]: t for t in tools}
    times = event_times_ns(CRASH)
    edit = by_call["call-881eae2eb154"]  # dispatched at seq 6, answered at seq 8
    assert (edit.start_time_unix_nano, edit.end_time_unix_nano) == (times[6], times[8])
    assert edit.status.code == Status.STATUS_CODE_OK
    grep = by_call["call-6bf47d2caf82"]  # dispatched at seq 20; open until the last event
    assert (grep.start_time_unix_nano, grep.end_time_unix_nano) == (times[20], times[21])
    assert grep.status.code == Status.STATUS_CODE_UNSET
    never = by_call["call-13deab1031d0"]  # requested at seq 18, never dispatched
    assert (never.start_time_unix_nano, never.end_time_unix_nano) == (times[18], times[18])
    step_1 = next(c for c in chats if attributes(c)["ledgerviz.step"] == 1
                  and attributes(c)["ledgerviz.turn"] == 1)
    assert {name: attributes(step_1)[name] for name in (
        "gen_ai.request.model", "gen_ai.provider.name", "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens")} == {
        "gen_ai.request.model": "deepseek-v4-flash", "gen_ai.provider.name": "deepseek-official",
        "gen_ai.usage.input_tokens": 44, "gen_ai.usage.output_tokens": 46,
        "gen_ai.usage.cache_read.input_tokens": 0}
    assert step_1.kind == Span.SPAN_KIND_CLIENT and step_1.name == "chat deepseek-v4-flash"
    assert {attributes(s)["gen_ai.conversation.id"] for s in spans} == {"sim-crash-mid-dispatch-7"}


def test_tool_error_under_synthesize_counted_by_hand(tmp_path: Path, route: str) -> None:
    # tool-error.jsonl: turn 1 has steps 1 (read + web_fetch, both ok) and 2 (text);
    # turn 2 has steps 1 (read -> isError ENOENT, grep ok), 2 (read ok) and 3 (text).
    # 2 invoke_agent + 5 chat + 5 execute_tool = 12 spans; one call is an error.
    spans = spans_of(read_otlp_json(export_file(tmp_path, TOOL_ERROR, "synthesize")))
    assert Counter(attributes(s)["gen_ai.operation.name"] for s in spans) == {
        "invoke_agent": 2, "chat": 5, "execute_tool": 5}
    chats = operation(spans, "chat")
    assert Counter(attributes(c)["ledgerviz.turn"] for c in chats) == {1: 2, 2: 3}
    tools = {attributes(t)["gen_ai.tool.call.id"]: t for t in operation(spans, "execute_tool")}
    failed = tools["call-f6460a097c97"]
    assert failed.status.code == Status.STATUS_CODE_ERROR
    assert attributes(failed)["error.type"] == "ENOENT"
    assert attributes(failed)["langfuse.observation.level"] == "ERROR"
    assert Counter(attributes(t)["ledgerviz.call.status"] for t in tools.values()) == {
        "ok": 4, "error": 1}
    assert {attributes(s)["ledgerviz.synthetic"] for s in spans} == {False}  # nothing closed


def test_synthesize_marks_what_crash_repair_appended(tmp_path: Path, route: str) -> None:
    # crash repair answers grep (TOOL_OUTCOME_UNKNOWN), read and web_fetch (TOOL_NOT_STARTED)
    # with synthetic results, then appends step/end and turn/end (interrupted).
    spans = spans_of(read_otlp_json(export_file(tmp_path, CRASH, "synthesize")))
    synthetic = sorted(s.name for s in spans if attributes(s)["ledgerviz.synthetic"])
    assert synthetic == ["chat deepseek-v4-flash", "execute_tool grep", "execute_tool read",
                         "execute_tool web_fetch", "invoke_agent"]
    turn_2 = next(s for s in operation(spans, "invoke_agent")
                  if attributes(s)["ledgerviz.turn"] == 2)
    assert attributes(turn_2)["ledgerviz.turn.end_reason"] == "interrupted"


def test_a_reexport_has_the_same_ids_and_bytes(tmp_path: Path) -> None:
    first = export_file(tmp_path, CRASH, "fork", "first.json")
    again = export_file(tmp_path, CRASH, "fork", "again.json")
    assert first.read_bytes() == again.read_bytes()
    other_policy = spans_of(read_otlp_json(export_file(tmp_path, CRASH, "synthesize", "s.json")))
    ids = {(span.trace_id, span.span_id) for span in spans_of(read_otlp_json(first))}
    assert {(span.trace_id, span.span_id) for span in other_policy} == ids
    assert len(ids) == 11


def test_a_forked_child_links_to_its_parents_turn_at_the_boundary(tmp_path: Path,
                                                                   route: str) -> None:
    # resume-fork: the child's header names parentSession sim-resume-fork-7 and inherits
    # seqs 0..17 (boundary 17, in the parent's turn 2, seq 15..)
    spans = spans_of(read_otlp_json(export_file(tmp_path, RESUME_FORK, "fork")))
    by_session: dict[str, list[Span]] = {}
    for span in spans:
        by_session.setdefault(attributes(span)["gen_ai.conversation.id"], []).append(span)
    parent_turn_2 = next(s for s in operation(by_session["sim-resume-fork-7"], "invoke_agent")
                         if attributes(s)["ledgerviz.turn"] == 2)
    child_turns = operation(by_session["sim-resume-fork-7-fork"], "invoke_agent")
    assert len(child_turns) == 3
    for turn in child_turns:
        (link,) = turn.links
        assert (link.trace_id, link.span_id) == (parent_turn_2.trace_id, parent_turn_2.span_id)
        assert {pair.key: pair.value.WhichOneof("value") for pair in link.attributes} == {
            "ledgerviz.relation": "string_value", "ledgerviz.boundary_seq": "int_value"}
    assert all(not span.links for span in by_session["sim-resume-fork-7"])


def test_to_otlp_is_public_and_refuses_two_targets(tmp_path: Path) -> None:
    ledger = ledgerviz.load(CRASH)
    summary = ledgerviz.to_otlp(ledger, output=tmp_path / "a.json", policy="fork")
    assert (summary.sessions, summary.spans) == (["sim-crash-mid-dispatch-7"], 11)
    with pytest.raises(OtlpError, match="exactly one"):
        to_otlp(ledger, "http://127.0.0.1:1", output=tmp_path / "b.json")
    assert not (tmp_path / "b.json").exists()


def test_endpoint_urls() -> None:
    assert traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://127.0.0.1:6006/v1/traces") == "http://127.0.0.1:6006/v1/traces"
    with pytest.raises(OtlpError, match="not an http"):
        traces_url("127.0.0.1:4318")


def test_a_refused_endpoint_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    assert main(["otlp", str(CRASH), "--endpoint", f"http://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ledgerviz otlp: http://127.0.0.1:{port}/v1/traces: spans 1..11 ")
    assert err.count("\n") == 1


def test_bad_headers_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["otlp", str(CRASH), "-o", str(tmp_path / "x.json"), "--headers", "nope"]) == 2
    assert capsys.readouterr().err == "ledgerviz otlp: --headers 'nope': expected NAME=VALUE\n"
    assert not list(tmp_path.iterdir())


STREAMED_SOURCES = [examples_dir(), Path(__file__).parent / "data" / "dsh",
                    Path(__file__).parent / "data" / "scheduler-failure-unrecovered.jsonl"]


@pytest.mark.parametrize("policy", POLICIES)
def test_a_file_read_in_two_streamed_passes_gives_the_loaded_files_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: str
) -> None:
    from ledgerviz.ledger.sources import expand_found

    files = [found.path for source in STREAMED_SOURCES for found in expand_found(str(source))]
    assert len(files) > 20
    for path in files:
        monkeypatch.setattr(otlp, "STREAM_BYTES", 2**62)
        loaded = export_file(tmp_path, Path(path), policy, "loaded.json").read_bytes()
        monkeypatch.setattr(otlp, "STREAM_BYTES", -1)
        streamed = export_file(tmp_path, Path(path), policy, "streamed.json").read_bytes()
        assert streamed == loaded, path


def test_spans_go_out_a_turn_at_a_time(tmp_path: Path, route: str) -> None:
    # crash-mid-dispatch, as counted by hand above: turn 1 has 2 steps and 2 calls (both
    # in step 1), turn 2 one step and 4 calls; each turn's span, then its steps', then its
    # calls', before the next turn's
    spans = spans_of(read_otlp_json(export_file(tmp_path, CRASH, "fork")))
    assert [(span.name.split()[0], attributes(span)["ledgerviz.turn"]) for span in spans] == [
        ("invoke_agent", 1), ("chat", 1), ("chat", 1), ("execute_tool", 1),
        ("execute_tool", 1), ("invoke_agent", 2), ("chat", 2), *[("execute_tool", 2)] * 4]


def test_a_result_read_after_the_next_turn_began_holds_its_turn_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tool-error with turn 1's web_fetch result (seq 9) moved after turn 2's turn/start
    # (seq 15) and the seqs renumbered in file order: the turn numbers still never go down
    # and the seqs rise, so the file streams a turn at a time, and turn 1's spans wait
    # for that result; the bytes are the loaded file's

    header, *events = [json.loads(line) for line in
                       example_path("tool-error").read_text().splitlines()]
    late = events.pop(9)
    assert (late["type"], late["data"]["turn"]) == ("tool/result", 1)
    events.insert(next(n for n, event in enumerate(events)
                       if event["type"] == "turn/start" and event["data"]["turn"] == 2) + 1, late)
    for seq, event in enumerate(events):
        event["seq"] = seq
    path = tmp_path / "late-result.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *events]))
    assert_streamed_a_turn_at_a_time(tmp_path, path, monkeypatch)
    web_fetch = [span for span in spans_of(read_otlp_json(tmp_path / "streamed.json"))
                 if span.name == "execute_tool web_fetch"]
    assert [(attributes(span)["ledgerviz.call.result_seq"], attributes(span)["ledgerviz.turn"],
             span.end_time_unix_nano) for span in web_fetch] == [(15, 1, late["time"] * 10**6)]


def test_a_child_session_streams_a_turn_at_a_time_linked_to_the_turn_at_its_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a child of session "p": turn 1 (seqs 0-2), turn 2 begun at 3 and never ended, the
    # seed's end at 5 (inherited: seqs 0-4, boundary 4), then turn 3 (6-8): turn 2 holds
    # the boundary, so every turn span links to the parent's turn 2; the first pass finds
    # it without holding the turns, and the bytes are the loaded file's
    from ledgerviz.export.otlp_ids import span_id, trace_id

    def user(turn: int) -> dict[str, Any]:
        return {"turn": turn, "message": {"id": f"u{turn}", "role": "user", "content": [
            {"type": "text", "text": "go"}], "source": {"kind": "user"}}}

    kinds = [("turn/start", {"turn": 1}), ("user/message", user(1)),
             ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
             ("turn/start", {"turn": 2}), ("user/message", user(2)),
             ("session/end-seed", {"inherited": True}),
             ("turn/start", {"turn": 3}), ("user/message", user(3)),
             ("turn/end", {"turn": 3, "reason": {"kind": "completed"}})]
    lines = [{"type": "session", "version": 4, "id": "c", "createdAt": 1000, "parentSession": "p",
              "isSeeded": True}]
    for seq, (kind, data) in enumerate(kinds):
        lines.append({"type": kind, "seq": seq, "time": 1000 + seq, "data": data,
                      **({"surfaceOp": "append"} if kind == "user/message" else {})})
    path = tmp_path / "child.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert_streamed_a_turn_at_a_time(tmp_path, path, monkeypatch)
    turns = operation(spans_of(read_otlp_json(tmp_path / "streamed.json")), "invoke_agent")
    assert [attributes(span)["ledgerviz.turn"] for span in turns] == [1, 2, 3]
    for turn in turns:
        (link,) = turn.links
        assert (link.trace_id, link.span_id) == (trace_id("p").to_bytes(16, "big"),
                                                 span_id("p", "turn/2").to_bytes(8, "big"))
        assert attributes(link)["ledgerviz.boundary_seq"] == 4


def test_a_result_no_message_requested_is_an_error_on_both_routes(
    tmp_path: Path, route: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # the crashed example plus a tool/result answering "ghost", which no assistant message
    # requested: an orphan_result error, found by the streamed route's compact id set too
    lines = CRASH.read_text().splitlines()
    last = json.loads(lines[-1])
    ghost = {"type": "tool/result", "seq": last["seq"] + 1, "time": last["time"],
             "data": {"turn": last["data"].get("turn"), "message": {
                 "id": "r-ghost", "role": "tool", "toolCallId": "ghost", "isError": False,
                 "source": {"kind": "tool", "callId": "ghost"},
                 "content": [{"type": "text", "text": "out"}]}}, "surfaceOp": "append"}
    path = tmp_path / "ghost.jsonl"
    path.write_text("\n".join([*lines, json.dumps(ghost)]) + "\n")
    assert main(["otlp", str(path), "-o", str(tmp_path / "spans.json")]) == 1
    assert "1 session has error diagnostics" in capsys.readouterr().err


def test_only_large_dsh_files_stream_in_their_place_between_batches(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    from ledgerviz.ledger.sources import Found

    monkeypatch.setattr(otlp, "STREAM_BYTES", 100)
    (tmp_path / "not-a-ledger.jsonl").write_text("x" * 200)
    dsh = otlp._File(Found(str(CRASH), None), 200)
    other = otlp._File(Found(str(tmp_path / "not-a-ledger.jsonl"), None), 200)
    small = otlp._File(Found(str(TOOL_ERROR), None), 100)
    groups = list(otlp._groups([small, small, dsh, other, small]))
    # a file of no format falls back to dsh when read: it streams too
    assert groups == [[small, small], dsh, other, [small]]
    claude = Path(__file__).parent / "data" / "claude_code" / "basic.jsonl"
    large_claude = otlp._File(Found(str(claude), None), 10**9)  # loaded: not dsh
    assert list(otlp._groups([large_claude])) == [[large_claude]]


def test_many_spans_draw_a_bar_and_leave_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ledgerviz.export.otlp as otlp
    import ledgerviz.progress as progress_module

    monkeypatch.setattr(progress_module, "where_interactive", lambda: "terminal")
    monkeypatch.setattr(otlp, "SPANS_THRESHOLD", 1)
    out = tmp_path / "spans.json"
    summary = to_otlp(ledgerviz.load(CRASH), output=out, policy="fork", batch_spans=4)
    assert summary.spans == 11
    assert "sending spans" in capsys.readouterr().err
    assert [len(spans_of([request])) for request in read_otlp_json(out)] == [4, 4, 3]


def test_a_file_that_grows_between_the_two_passes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ledgerviz.export.otlp_stream as otlp_stream

    path = tmp_path / "growing.jsonl"
    path.write_bytes(CRASH.read_bytes())
    first_read = otlp_stream.found_chunks

    def then_appended(*args: Any) -> Any:
        chunks = list(first_read(*args))
        with open(path, "ab") as stream:  # a writer appends once the first pass is read
            stream.write(CRASH.read_bytes().splitlines(keepends=True)[-1])
        return iter(chunks)

    monkeypatch.setattr(otlp_stream, "found_chunks", then_appended)
    monkeypatch.setattr(otlp, "STREAM_BYTES", -1)
    assert main(["otlp", str(path), "-o", str(tmp_path / "s.json")]) == 2
    assert capsys.readouterr().err == (
        f"ledgerviz otlp: {path} changed while it was read; export it again\n")
    assert not (tmp_path / "s.json").exists()


def test_a_streamed_file_draws_a_bar_per_pass_and_for_its_spans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ledgerviz.export.otlp_stream as otlp_stream
    import ledgerviz.progress as progress_module

    monkeypatch.setattr(progress_module, "where_interactive", lambda: "terminal")
    monkeypatch.setattr(otlp, "STREAM_BYTES", -1)
    monkeypatch.setattr(otlp, "SPANS_THRESHOLD", 1)
    monkeypatch.setattr(otlp_stream, "BYTES_THRESHOLD", 1)
    summary = otlp.export_otlp([CRASH], output=tmp_path / "s.json", policy="fork")
    assert (summary.sessions, summary.spans) == (["sim-crash-mid-dispatch-7"], 11)
    err = capsys.readouterr().err
    assert "reading again" in err and "sending spans" in err


def test_a_folder_read_in_batches_gives_the_same_spans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # resume-fork/ holds parent.jsonl and child.jsonl, whose turns link to the parent's
    # trace: read one file per batch, every span (links included) is the same
    whole = spans_of(read_otlp_json(export_file(tmp_path, RESUME_FORK, "fork", "whole.json")))
    import ledgerviz.export.dataset as dataset

    monkeypatch.setattr(dataset, "_BATCH_FILES", 1)
    batched = read_otlp_json(export_file(tmp_path, RESUME_FORK, "fork", "batched.json"))
    assert len(batched) == 2  # one request per file batch
    assert sorted(s.SerializeToString() for s in spans_of(batched)) == sorted(
        s.SerializeToString() for s in whole)


RESOURCE = {"service.name": "ledgerviz", "service.version": "9.9"}


def sdk_json_line(spans: list[SpanRecord]) -> bytes:
    """The reference OTLP/JSON of ``spans``: the SDK's protobuf encoder, protobuf's JSON
    mapping with integer enums, then hex ids (the OTLP spec's one difference from it)."""
    resource, scope = Resource(RESOURCE), InstrumentationScope("ledgerviz", "9.9")
    message = encode_spans([readable_span(span, resource, scope) for span in spans])
    document = json_format.MessageToDict(message, use_integers_for_enums=True)
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                for holder in [span, *span.get("links", [])]:
                    for name in ("traceId", "spanId", "parentSpanId"):
                        if name in holder:
                            holder[name] = base64.b64decode(holder[name]).hex()
    return orjson.dumps(document) + b"\n"


def direct_json_line(spans: list[SpanRecord]) -> bytes:
    return OtlpJson(None, RESOURCE, ("ledgerviz", "9.9")).encode(spans)  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", POLICIES)
def test_the_direct_encoding_is_the_sdk_encoders_byte_for_byte(policy: str) -> None:
    spans = list(ledger_spans(ledgerviz.load(examples_dir()), policy))  # type: ignore[arg-type]
    assert len(spans) == 171  # 14 example sessions
    assert direct_json_line(spans) == sdk_json_line(spans)


def test_every_attribute_value_type_and_default_field_as_the_sdk_encodes_it() -> None:
    # values the examples never hold: doubles (finite, infinite, NaN), negative and int64's
    # extremes, empty strings, a zero start time, a link without attributes; then an int
    # past int64, which intValue cannot hold: written as its decimal string
    values = {"d": 1.5, "whole": 2.0, "inf": math.inf, "ninf": -math.inf, "nan": math.nan,
              "neg": -7, "max": 2**63 - 1, "min": -(2**63), "empty": "", "no": False}
    span = SpanRecord("n", 1, 2, 3, CLIENT, 0, 5, values, ERROR, "boom",
                      (SpanLink(4, 5, {}), SpanLink(2**127, 2**63, {"k": "v"})))
    assert direct_json_line([span]) == sdk_json_line([span])
    big = span._replace(attributes={"big": 2**63})
    (written,) = json.loads(direct_json_line([big]))["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert written["attributes"] == [{"key": "big", "value": {"stringValue": str(2**63)}}]
    with pytest.raises(TypeError, match="str, bool, int or float"):
        direct_json_line([span._replace(attributes={"x": [1]})])


@pytest.mark.parametrize("where", ["the input", "a hard link to it", "a file of the folder"])
def test_the_output_is_never_an_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      where: str) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    ledger = folder / "crash.jsonl"
    original = CRASH.read_bytes()
    ledger.write_bytes(original)
    source, out = {
        "the input": (ledger, ledger),
        "a hard link to it": (ledger, tmp_path / "link.jsonl"),
        "a file of the folder": (folder, ledger),
    }[where]
    if where == "a hard link to it":
        out.hardlink_to(ledger)
    assert main(["otlp", str(source), "-o", str(out)]) == 2
    assert "refusing to overwrite it" in capsys.readouterr().err
    assert ledger.read_bytes() == original
    assert sorted(p.name for p in folder.iterdir()) == ["crash.jsonl"]  # no temporary left


def test_two_exports_into_one_folder_write_temporary_files_of_their_own(
        tmp_path: Path) -> None:
    # two runs writing the same -o at once: each fills its own temporary file beside the
    # target (before, both opened ``.spans.json.tmp``), then renames it over the target
    target = tmp_path / "spans.json"
    spans = list(ledger_spans(ledgerviz.load(CRASH), "fork"))
    with otlp.span_exporter(None, target, None) as first:
        with otlp.span_exporter(None, target, None) as second:
            temporaries = sorted(path.name for path in tmp_path.iterdir())
            assert len(temporaries) == 2
            assert all(name.startswith(".spans.json.") and name.endswith(".tmp")
                       for name in temporaries)
            assert first(spans) and second(spans[:1])
        assert len(spans_of(read_otlp_json(target))) == 1  # the second run's file
    assert len(spans_of(read_otlp_json(target))) == len(spans)  # then the first's, whole
    assert [path.name for path in tmp_path.iterdir()] == ["spans.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # as an open() would make it


def test_a_failed_export_leaves_neither_a_temporary_file_nor_a_target(tmp_path: Path) -> None:
    target = tmp_path / "spans.json"
    with pytest.raises(RuntimeError), otlp.span_exporter(None, target, None) as sink:
        sink(list(ledger_spans(ledgerviz.load(CRASH), "fork")))
        raise RuntimeError("the export stopped")
    assert list(tmp_path.iterdir()) == []


def assert_streamed_a_turn_at_a_time(tmp_path: Path, path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Export ``path`` under fork loaded, then streamed in blocks of a line or two, and check
    the streamed route wrote the same bytes holding no rows (``streamed.json``)."""
    import ledgerviz.export.otlp_stream as otlp_stream

    monkeypatch.setattr(otlp, "STREAM_BYTES", 2**62)
    loaded = export_file(tmp_path, path, "fork", "loaded.json").read_bytes()
    held = []
    monkeypatch.setattr(otlp_stream, "_held_rows", lambda *args: held.append(args))
    monkeypatch.setattr(otlp, "STREAM_BYTES", -1)
    monkeypatch.setattr(otlp_stream, "READ_BYTES", 256)  # blocks of a line or two
    assert export_file(tmp_path, path, "fork", "streamed.json").read_bytes() == loaded
    assert held == []  # it took the turn-at-a-time route


def test_a_large_claude_code_file_opened_by_a_long_line_is_not_streamed_as_a_dsh_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every file counts as large here; the first line (a file-history snapshot) is 9,000+
    # bytes, so its first 4 KiB alone do not say Claude Code: the file must still be read
    # as a Claude Code session (keyed by its file name, with no error), not as a dsh ledger
    basic = (Path(__file__).parent / "data" / "claude_code" / "basic.jsonl").read_text()
    snapshot = {"type": "file-history-snapshot", "messageId": "u0", "isSnapshotUpdate": False,
                "snapshot": {"trackedFileBackups": {f"f{i}.txt": {"version": i}
                                                    for i in range(400)}}}
    path = tmp_path / "long-first-line.jsonl"
    path.write_text(json.dumps(snapshot) + "\n" + basic)
    assert len(path.read_text().splitlines()[0]) > 9_000
    monkeypatch.setattr(otlp, "STREAM_BYTES", -1)
    summary = otlp.export_otlp([path], output=tmp_path / "s.json", policy="fork")
    assert (summary.sessions, summary.error_sessions) == (["long-first-line"], [])

