"""The examples sent to a real Phoenix server (started here, on 127.0.0.1) and read back through
Phoenix's own client: one span per call, with the status and branch the calls frame gives."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from phoenix.client import Client
from phoenix_server import phoenix_server

import ledgerviz
from ledgerviz.examples import examples_dir

POLICY = "fork"
INGEST_TIMEOUT = 60.0


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Phoenix server for this module (start-up costs about 10 s and 500 MB)."""
    started = time.monotonic()
    with phoenix_server(tmp_path_factory.mktemp("phoenix")) as url:
        print(f"phoenix answered after {time.monotonic() - started:.1f} s")
        yield url


@pytest.fixture(scope="module")
def ledger() -> ledgerviz.Ledger:
    return ledgerviz.load(examples_dir())


def read_spans(url: str, expected: int, timeout: float = INGEST_TIMEOUT) -> list[dict[str, Any]]:
    """Return every span of Phoenix's default project once ``expected`` have been ingested
    (Phoenix inserts in the background), or what it holds after ``timeout`` seconds."""
    client = Client(base_url=url)
    deadline = time.monotonic() + timeout
    while True:
        spans = client.spans.get_spans(project_identifier="default", limit=10_000, timeout=30)
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


@pytest.fixture(scope="module")
def phoenix_spans(phoenix: str, ledger: ledgerviz.Ledger) -> list[dict[str, Any]]:
    """The examples' spans as Phoenix holds them after two exports of the same sessions."""
    first = ledgerviz.to_otlp(ledger, phoenix, policy=POLICY)
    again = ledgerviz.to_otlp(ledger, phoenix, policy=POLICY)
    assert first.spans == again.spans
    frames = ledger.recovery(POLICY).frames
    assert first.spans == len(frames.turns) + len(frames.steps) + len(frames.calls)
    read_spans(phoenix, first.spans)
    time.sleep(2)  # a second copy, if Phoenix kept one, would be in by now
    return read_spans(phoenix, first.spans + 1, timeout=0)


def tool_spans(spans: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Return the execute_tool spans' attributes by session, then by call id."""
    found: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for span in spans:
        attributes = span["attributes"]
        if attributes.get("gen_ai.operation.name") == "execute_tool":
            session = attributes["gen_ai.conversation.id"]
            assert attributes["gen_ai.tool.call.id"] not in found[session], "a call twice"
            found[session][attributes["gen_ai.tool.call.id"]] = {
                **attributes, "status_code": span["status_code"], "span_kind": span["span_kind"]}
    return found


def test_a_reexport_stores_no_duplicate(phoenix_spans: list[dict[str, Any]],
                                        ledger: ledgerviz.Ledger) -> None:
    frames = ledger.recovery(POLICY).frames
    assert len(phoenix_spans) == len(frames.turns) + len(frames.steps) + len(frames.calls)
    assert len({span["context"]["span_id"] for span in phoenix_spans}) == len(phoenix_spans)


def test_every_session_has_one_span_per_call_with_its_frame_status(
        phoenix_spans: list[dict[str, Any]], ledger: ledgerviz.Ledger) -> None:
    calls = ledger.recovery(POLICY).frames.calls
    by_session = tool_spans(phoenix_spans)
    assert set(by_session) == set(calls["session"].unique())
    for session, rows in calls.groupby("session", observed=True):
        assert {call: (span["ledgerviz.call.status"], span["ledgerviz.branch"])
                for call, span in by_session[session].items()} == {
            row.call_id: (row.status, row.branch) for row in rows.itertuples()}, session


def test_the_crashed_session_reads_back_as_counted_by_hand(
        phoenix_spans: list[dict[str, Any]]) -> None:
    # crash-mid-dispatch.jsonl: turn 1 asks for edit + read (both answered); turn 2 asks for
    # read, grep, read, web_fetch at seq 18; read and grep are dispatched, read answered,
    # then the file ends. Fork point 18: turn 2 is the abandoned suffix.
    crash = tool_spans(phoenix_spans)["sim-crash-mid-dispatch-7"]
    assert {call: (span["tool.name"], span["ledgerviz.call.status"], span["ledgerviz.branch"],
                   span["status_code"], span["langfuse.observation.level"])
            for call, span in crash.items()} == {
        "call-881eae2eb154": ("edit", "ok", "active", "OK", "DEFAULT"),
        "call-c6f86d76b07e": ("read", "ok", "active", "OK", "DEFAULT"),
        "call-eeea26e87555": ("read", "ok", "abandoned", "OK", "DEFAULT"),
        "call-6bf47d2caf82": ("grep", "outcome_unknown", "abandoned", "UNSET", "WARNING"),
        "call-f6460a097c97": ("read", "not_started", "abandoned", "UNSET", "DEFAULT"),
        "call-13deab1031d0": ("web_fetch", "not_started", "abandoned", "UNSET", "DEFAULT"),
    }
    assert {span["span_kind"] for span in crash.values()} == {"TOOL"}
    marked = sorted((span["name"], span["attributes"].get("ledgerviz.fork_point"))
                    for span in phoenix_spans
                    if span["attributes"]["gen_ai.conversation.id"] == "sim-crash-mid-dispatch-7"
                    and span["attributes"]["ledgerviz.branch"] == "abandoned")
    # the four calls were requested by the assistant message at the fork point
    assert marked == [("chat deepseek-v4-flash", 18), ("execute_tool grep", 18),
                      ("execute_tool read", 18), ("execute_tool read", 18),
                      ("execute_tool web_fetch", 18), ("invoke_agent", 18)]


def test_an_error_call_is_an_error_span(phoenix_spans: list[dict[str, Any]]) -> None:
    # tool-error.jsonl: the read of turn 2, step 1 answers isError with code ENOENT
    failed = tool_spans(phoenix_spans)["sim-tool-error-7"]["call-f6460a097c97"]
    assert (failed["status_code"], failed["error.type"]) == ("ERROR", "ENOENT")


def test_the_phoenix_log_has_no_rejected_span(phoenix: str, tmp_path_factory: Any) -> None:
    logs = list(Path(tmp_path_factory.getbasetemp()).glob("phoenix*/phoenix.log"))
    assert logs
    text = logs[0].read_text(errors="replace")
    assert "Traceback" not in text
