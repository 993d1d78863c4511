"""Streaming summaries: facts counted in the files, the simulator's faults, and flat memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.ledger import read_sessions
from ledgerviz.simulate import write_scenario
from ledgerviz.streams.summary import SessionSummary, summarize

DSH = Path(__file__).parent / "data" / "dsh"
EXAMPLES = Path(ledgerviz.__file__).parent / "examples"


def one(path: Path, **options: int) -> SessionSummary:
    (summary,) = summarize(path, **options)
    return summary


@pytest.mark.parametrize("chunk_bytes", [97, 8 << 20])
def test_fixture_facts_counted_in_the_files(chunk_bytes: int) -> None:
    showcase = one(next(DSH.glob("*preview-showcase*")), chunk_bytes=chunk_bytes)
    assert (showcase.key, showcase.events, showcase.turns) == ("preview-showcase", 199, 29)
    assert showcase.calls == {"ok": 9, "error": 1}
    assert (showcase.unanswered, showcase.closers, showcase.diagnostics) == ([], 0, [])
    semantic = one(next(DSH.glob("*semantic-checkpoint*")), chunk_bytes=chunk_bytes)
    assert semantic.calls == {"outcome_unknown": 1}
    assert semantic.unanswered == [("unknown-outcome-call", "outcome_unknown")]
    assert semantic.closers == 0
    settlement = one(next(DSH.glob("*subagent-settlement*")), chunk_bytes=chunk_bytes)
    assert (settlement.calls, settlement.closers, settlement.open_turn) == ({}, 2, 1)


def test_crash_mid_dispatch_tail(tmp_path: Path) -> None:
    # The scenario: after two ordinary turns, the process dies right after the first of
    # four results of turn 3's first step, one more call dispatched, two never dispatched.
    (path,) = write_scenario("crash-mid-dispatch", tmp_path / "crash.jsonl", seed=3, turns=2)
    summary = one(path, chunk_bytes=1000)
    assert summary.open_turn == 3 and summary.open_step == 1
    assert [status for _, status in summary.unanswered] == [
        "outcome_unknown",
        "not_started",
        "not_started",
    ]
    assert summary.pending == [call_id for call_id, _ in summary.unanswered]
    assert summary.closers == 3 + 2  # three synthetic results, step/end, turn/end
    assert summary.calls["outcome_unknown"] == 1 and summary.calls["not_started"] == 2


def test_keys_are_unique_as_in_a_load() -> None:
    sources = [EXAMPLES / "clean.jsonl", EXAMPLES / "clean.jsonl"]
    assert [s.key for s in summarize(sources)] == ledgerviz.load(sources).keys


def test_streamed_check_agrees_with_the_whole_file_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    assert main(["check", "--json", str(DSH), str(EXAMPLES)]) == 0
    whole = json.loads(capsys.readouterr().out)["sessions"]
    assert main(["check", "--json", "--stream", str(DSH), str(EXAMPLES)]) == 0
    streamed = json.loads(capsys.readouterr().out)["sessions"]
    shared = ("path", "id", "format", "version", "events", "turns", "lines_skipped", "diagnostics",
              "calls", "unanswered", "closers")  # fmt: skip
    assert [{k: s[k] for k in shared} for s in streamed] == [
        {k: s[k] for k in shared} for s in whole
    ]
    assert all(s["streamed"] for s in streamed)
    assert not any(s["streamed"] for s in whole)
    # fork points and pairing too, for every session whose surface is not edited
    kept = [(s, w) for s, w in zip(streamed, whole, strict=True) if s["surface_edited"] is None]
    assert len(kept) >= len(whole) - 2
    assert [(s["fork_points"], s["provider_valid"]) for s, _ in kept] == [
        (w["fork_points"], w["provider_valid"]) for _, w in kept]


def test_streamed_and_whole_list_diagnostics_in_the_same_line_order(tmp_path: Path) -> None:
    events = [{"type": "plan/mode", "seq": seq, "data": {"active": True}} for seq in range(3000)]
    header = {"type": "session", "version": 4, "id": "mixed", "createdAt": 0}
    lines = [orjson.dumps(e) for e in [header, *events]]
    lines[5] = orjson.dumps({"type": "tool/result", "seq": 4, "surfaceOp": "append", "data": {
        "message": {"role": "tool", "toolCallId": "never-asked", "content": [],
                    "source": {"kind": "tool", "callId": "never-asked"}}}})  # line 6
    lines[2500] = b"{oops"  # line 2501, seq 2499 lost: the seq at line 2502 jumps
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    expected = [("orphan_result", 6), ("invalid_json", 2501), ("seq_gap", 2502)]
    (whole,) = read_sessions(path)
    assert [(d.kind, d.line) for d in whole.diagnostics] == expected
    for chunk_bytes in (97, 5000, 1 << 20):  # the two problems in one block, or not
        assert one(path, chunk_bytes=chunk_bytes).diagnostics == whole.diagnostics


def test_streaming_memory_stays_flat_as_the_file_grows(
    tmp_path: Path, traced_peak: Callable[[Callable[[], object]], int]
) -> None:
    small = write_scenario("large", tmp_path / "small.jsonl", turns=150)[0]
    big = write_scenario("large", tmp_path / "big.jsonl", turns=600)[0]
    small_peak, big_peak = (traced_peak(lambda p=path: summarize(p, chunk_bytes=64 << 10))
                            for path in (small, big))
    big_calls = sum(one(big).calls.values())
    growth_allowed = 200 * (big_calls - sum(one(small).calls.values()))
    # The one thing kept per event read is the reader's set of requested call ids
    # (about 110 bytes a call, for the orphan_result check); everything else is a block.
    assert big_peak - small_peak <= growth_allowed + (256 << 10)
    assert big_peak * 10 < traced_peak(lambda: read_sessions(big))  # holding it whole


def event(seq: int, kind: str, data: dict, **envelope: object) -> dict:
    return {"type": kind, "seq": seq, "time": 100 + seq, "data": data, **envelope}


def assistant(seq: int, step: int, *call_ids: str) -> dict:
    blocks = [{"type": "tool-call", "id": c, "name": "ls", "arguments": "{}"} for c in call_ids]
    message = {"id": f"a{seq}", "role": "assistant", "content": blocks}
    return event(seq, "assistant/message", {"turn": 1, "step": step, "message": message},
                 surfaceOp="append")


def test_calls_counted_as_settled_in_any_chunk_size(tmp_path: Path) -> None:
    result = {"id": "r4", "role": "tool", "toolCallId": "A", "isError": True,
              "source": {"kind": "tool", "callId": "A"},
              "content": [{"type": "text", "text": "no such file"}]}
    events = [
        {"type": "session", "version": 4, "id": "calls", "createdAt": 0},
        event(0, "turn/start", {"turn": 1}),
        event(1, "step/start", {"turn": 1, "step": 1}),
        assistant(2, 1, "A", "B"),
        event(3, "tool/call", {"turn": 1, "step": 1, "callId": "A", "name": "ls"}),
        event(4, "tool/result", {"turn": 1, "step": 1, "message": result}, surfaceOp="append"),
        event(5, "step/end", {"turn": 1, "step": 1}),
        event(6, "step/start", {"turn": 1, "step": 2}),
        assistant(7, 2, "B"),  # asks for B again: the first B was never started
        event(8, "tool/call", {"turn": 1, "step": 2, "callId": "B", "name": "ls"}),
        assistant(9, 2, "C"),
    ]  # the file ends in turn 1, step 2: B dispatched and unanswered, C never dispatched
    path = tmp_path / "calls.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    for chunk_bytes in (64, 300, 1 << 20):
        summary = one(path, chunk_bytes=chunk_bytes)
        assert (summary.events, summary.turns) == (10, 1)
        assert [(d.line, d.kind, d.message) for d in summary.diagnostics] == [
            (9, "repeated_call", "assistant/message requests 'B' again")]  # seq 7
        assert summary.calls == {"error": 1, "not_started": 2, "outcome_unknown": 1}
        assert summary.unanswered == [
            ("B", "not_started"), ("B", "outcome_unknown"), ("C", "not_started")
        ]
        assert (summary.open_turn, summary.open_step, summary.pending) == (1, 2, ["B", "C"])
        assert summary.closers == 2 + 1 + 1  # a result for B and C, step/end, turn/end
