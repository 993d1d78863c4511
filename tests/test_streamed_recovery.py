"""Fork points and provider pairing of a ledger read as a stream (``check`` over 32 MiB).

The ledger is written here, so its facts are known by construction (worked out by hand
below); the streamed route and the whole-file route must both give them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from ledgerviz.cli import check, main
from ledgerviz.ledger.reader import FileScan
from ledgerviz.ledger.sources import iter_source_chunks
from ledgerviz.ledger.typed_stream import StreamBlock
from ledgerviz.simulate import write_scenario
from ledgerviz.streams.summary import summarize


def _message(role: str, content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **extra}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _call(call_id: str) -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": "ls", "arguments": "{}"}


def _result(turn: int, call_id: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    message = _message("tool", [_text("done")], toolCallId=call_id,
                       source={"kind": "tool", "callId": call_id})
    return "tool/result", {"turn": turn, "step": 1, "message": message, **extra}


def _user(text: str) -> tuple[str, dict[str, Any]]:
    return "user/message", _message("user", [_text(text)], source={"kind": "user"})


def _assistant(turn: int, *content: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "assistant/message", {"turn": turn, "step": 1, "message": _message(
        "assistant", list(content), source={"kind": "model"})}


def _turn(turn: int, *middle: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [("turn/start", {"turn": turn}), ("step/start", {"turn": turn, "step": 1}), *middle,
            ("step/end", {"turn": turn, "step": 1}),
            ("turn/end", {"turn": turn, "reason": {"kind": "completed"}})]


SURFACE = {"user/message", "assistant/message", "tool/result"}

EVENTS = [
    *_turn(1, _user("hi"), _assistant(1, _call("A")),  # seqs 0-7
           ("tool/call", {"turn": 1, "step": 1, "callId": "A", "name": "ls", "arguments": "{}"}),
           _result(1, "A")),
    *_turn(2, _user("go on"), _assistant(2, _call("B")),  # seqs 8-16
           ("tool/call", {"turn": 2, "step": 1, "callId": "B", "name": "ls", "arguments": "{}"}),
           _result(2, "B", error={"code": "TOOL_OUTCOME_UNKNOWN"}),
           _result(2, "Z")),
    *_turn(3, _user("retry"), _assistant(3, _text("done"))),  # seqs 17-22
]
"""Turn 1 is clean. In turn 2 the runtime recorded that call B's outcome is unknown
(seq 13), then a result answers Z, a call never requested (seq 14). Turn 3 starts with
a message the human typed (seq 19).

By hand:
- calls: A ok, B outcome_unknown; unanswered: B (TOOL_OUTCOME_UNKNOWN); no closers.
- fork point: seq 11, the assistant message requesting B (dispatched, no genuine result);
  the fork is applied at seq 19 (a typed message in a later turn), so seqs 11-14 are
  abandoned.
- recorded and synthesize (nothing left to synthesize): the context holds Z's result,
  which answers no open call (OpenAI) and follows no tool_use (Anthropic): invalid.
- fork: the context is seqs 2, 3, 5, 10, 19, 20: every call answered, valid.
"""

HAND = {
    "calls": {"ok": 1, "outcome_unknown": 1},
    "unanswered": [{"call_id": "B", "code": "TOOL_OUTCOME_UNKNOWN"}],
    "closers": 0,
    "fork_points": [11],
    "provider_valid": {
        "recorded": {"openai": False, "anthropic": False},
        "synthesize": {"openai": False, "anthropic": False},
        "fork": {"openai": True, "anthropic": True},
    },
}


def write(path: Path, events: list[tuple[str, dict[str, Any]]]) -> Path:
    lines = [{"type": "session", "version": 4, "id": path.stem, "createdAt": 0}]
    for seq, (kind, data) in enumerate(events):
        event = {"type": kind, "seq": seq, "time": 1000 + seq, "data": data}
        if kind in SURFACE:
            event["surfaceOp"] = "append"
        lines.append(event)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def facts(session: dict[str, Any]) -> dict[str, Any]:
    return {key: session[key] for key in HAND}


def check_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    main(["check", "--json", *args])
    return json.loads(capsys.readouterr().out)["sessions"]


@pytest.mark.parametrize("chunk_bytes", [97, 1 << 20])
def test_streamed_fork_point_and_pairing_are_the_hand_worked_ones(
        tmp_path: Path, chunk_bytes: int) -> None:
    (summary,) = summarize(write(tmp_path / "hand.jsonl", EVENTS), chunk_bytes=chunk_bytes)
    assert summary.fork_points == HAND["fork_points"]
    assert summary.provider_valid == HAND["provider_valid"]
    assert summary.calls == HAND["calls"]
    assert summary.surface_edited is None


def test_big_file_route_gives_what_the_small_file_route_gives(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = str(write(tmp_path / "hand.jsonl", EVENTS))
    (whole,) = check_json(capsys, path)
    monkeypatch.setattr(check, "STREAM_ABOVE_BYTES", 0)  # every file is "over 32 MiB"
    (big,) = check_json(capsys, path)
    assert (whole["streamed"], big["streamed"]) == (False, True)
    assert facts(whole) == HAND
    assert facts(big) == HAND
    main(["check", path])
    text = capsys.readouterr().out
    assert "fork points: seq 11" in text
    assert "unpaired requests: recorded/openai, recorded/anthropic, synthesize/openai, " \
           "synthesize/anthropic" in text


def test_a_crash_mid_dispatch_forks_before_the_dispatched_call(tmp_path: Path) -> None:
    """The tail is open: B dispatched, C requested only. By hand: the fork point is the
    assistant message (seq 11); recorded is invalid (B and C unanswered), the crash
    closers answer both (synthesize valid) and the fork cuts before seq 11 (valid)."""
    events = [*EVENTS[:8], ("turn/start", {"turn": 2}), ("step/start", {"turn": 2, "step": 1}),
              _user("go on"), _assistant(2, _call("B"), _call("C")),
              ("tool/call", {"turn": 2, "step": 1, "callId": "B", "name": "ls",
                             "arguments": "{}"})]
    (summary,) = summarize(write(tmp_path / "crash.jsonl", events), chunk_bytes=97)
    assert summary.fork_points == [11]
    assert summary.provider_valid == {
        "recorded": {"openai": False, "anthropic": False},
        "synthesize": {"openai": True, "anthropic": True},
        "fork": {"openai": True, "anthropic": True},
    }
    assert summary.calls == {"ok": 1, "outcome_unknown": 1, "not_started": 1}
    assert summary.closers == 4  # results for B and C, step/end, turn/end


def test_an_edited_surface_says_where_and_computes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (path,) = write_scenario("compaction", tmp_path / "compaction.jsonl", turns=6)
    first_edit = next(number for number, line in enumerate(path.read_bytes().splitlines(), 1)
                      if isinstance(orjson.loads(line).get("surfaceOp"), dict))
    (session,) = check_json(capsys, "--stream", str(path))
    assert (session["surface_edited"], session["fork_points"], session["provider_valid"]) == (
        first_edit, None, None)
    main(["check", "--stream", str(path)])
    text = capsys.readouterr().out
    assert f"fork points: not computed (streamed; surface edited at line {first_edit})" in text


@pytest.mark.parametrize("odd", ["request", "asked"])
def test_messages_whose_role_is_not_their_types_pair_as_the_whole_file_reads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        odd: str) -> None:
    """"request": an assistant/message of role user requests C, dispatched and answered
    (ok); its shape is its text, not C's tool_use, so no message opens C and C's result
    breaks both rules. "asked": a user/message of role assistant names D in a tool-call
    block: no request, but its shape is D's tool_use, never answered: both rules broken.
    (Read as its type suggests, either ledger would be valid.) The typed decoder reads every
    block, giving the fact named; the streamed check says what the whole-file check says."""
    if odd == "request":
        middle = [("assistant/message", {"turn": 1, "step": 1, "message": _message(
            "user", [_text("x"), _call("C")], source={"kind": "model"})}),
            ("tool/call", {"turn": 1, "step": 1, "callId": "C", "name": "ls", "arguments": "{}"}),
            _result(1, "C")]
    else:
        middle = [("user/message", _message("assistant", [_text("y"), _call("D")],
                                             source={"kind": "user"}))]
    path = write(tmp_path / f"{odd}.jsonl", _turn(1, _user("hi"), *middle))
    ((_, chunks),) = iter_source_chunks(path, 1 << 20)
    blocks = list(FileScan(str(path), typed=True).blocks(chunks))
    assert all(isinstance(block, StreamBlock) for block in blocks)
    kinds = {fact[0] for block in blocks for fact in block.facts}
    assert odd in kinds and "calls" not in kinds
    (summary,) = summarize(path)
    assert summary.calls == ({"ok": 1} if odd == "request" else {})
    invalid = {"openai": False, "anthropic": False}
    assert summary.provider_valid == dict.fromkeys(("recorded", "synthesize", "fork"), invalid)
    (whole,) = check_json(capsys, str(path))
    monkeypatch.setattr(check, "STREAM_ABOVE_BYTES", 0)
    (big,) = check_json(capsys, str(path))
    assert (whole["streamed"], big["streamed"]) == (False, True)
    assert {key: big[key] for key in HAND} == {key: whole[key] for key in HAND}
