"""A Codex rollout's events re-derived from its table and its lines (``codex_events.py``):
every kind of event the reader writes, worked out by hand from a rollout written here, is
what the session gives, sealed every two events or never, read from a file or a stream,
after a byte order mark or with CRLF line ends; a file changed since it was read is an
error, never other events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ledgerviz.ledger import formats, read_sessions
from ledgerviz.ledger.formats import sealed
from ledgerviz.ledger.reread import END_KEPT, LedgerChangedError

T0 = 1767607200000
"""2026-01-05T10:00:00Z in epoch ms; line n is written at second n."""

META = {"id": "derive", "timestamp": "2026-01-05T10:00:00Z"}
CONTEXT = {"type": "turn_context", "turn_id": "t1", "model": "gpt-5-codex"}
TOKENS = {"type": "token_count", "info": {"last_token_usage": {
    "input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 3,
    "reasoning_output_tokens": 1, "total_tokens": 13}}}
SAID = {"type": "agent_message", "message": "done"}

ROLLOUT: list[tuple[str, dict[str, Any]]] = [
    ("session_meta", META),  # 1
    ("event_msg", {"type": "task_started", "turn_id": "t1"}),  # 2
    ("turn_context", CONTEXT),  # 3
    ("response_item", {"type": "message", "role": "developer",
                       "content": [{"type": "input_text", "text": "be brief"}]}),  # 4
    ("response_item", {"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "hi"}]}),  # 5
    ("response_item", {"type": "reasoning",
                       "summary": [{"type": "summary_text", "text": "think"}]}),  # 6
    ("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                       "arguments": "{}"}),  # 7
    ("event_msg", TOKENS),  # 8
    ("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}),  # 9
    ("response_item", {"type": "function_call", "name": "shell", "call_id": "c2",
                       "arguments": "[]"}),  # 10
    ("response_item", {"type": "function_call_output", "call_id": "c2",
                       "output": "exec command rejected by user"}),  # 11
    ("response_item", {"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": "done"}]}),  # 12
    ("event_msg", SAID),  # 13
    ("event_msg", {"type": "task_complete", "turn_id": "t1"}),  # 14
]


def _event(seq: int, line: int, kind: str, data: Any, **more: Any) -> dict[str, Any]:
    return {"type": kind, "seq": seq, "time": T0 + 1000 * line, "data": data, **more}


def _assistant(line: int, step: int, content: list[Any]) -> dict[str, Any]:
    return {"turn": 1, "step": step, "message": {
        "id": f"codex-message-{line}", "role": "assistant", "content": content,
        "source": {"kind": "model", "provider": "openai", "model": "gpt-5-codex"}}}


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {"id": f"codex-result-{call_id}", "role": "tool",
            "source": {"kind": "tool", "callId": call_id}, "toolCallId": call_id,
            "content": [{"type": "text", "text": text}]}


C1 = {"type": "tool-call", "id": "c1", "name": "shell", "arguments": "{}"}
C2 = {"type": "tool-call", "id": "c2", "name": "shell", "arguments": "[]"}
APPEND = {"surfaceOp": "append"}
EXPECTED = [
    _event(0, 1, "codex/session_meta", META),
    _event(1, 2, "turn/start", {"turn": 1}),
    _event(2, 3, "codex/turn_context", CONTEXT),
    _event(3, 4, "developer/message", {"turn": 1, "step": None, "message": {
        "id": "codex-developer-4", "role": "developer",
        "content": [{"type": "text", "text": "be brief"}],
        "source": {"kind": "runtime-context"}}}, **APPEND),
    _event(4, 5, "user/message", {"id": "codex-user-5", "role": "user",
                                  "content": [{"type": "text", "text": "hi"}],
                                  "source": {"kind": "user"}}, **APPEND),
    _event(5, 6, "step/start", {"turn": 1, "step": 1}),
    # the reasoning and the call of lines 6-7, the usage of line 8 (10 in, 4 of them cached)
    _event(6, 6, "assistant/message", {
        **_assistant(6, 1, [{"type": "reasoning", "text": "think"}, C1]),
        "usage": {"inputTokens": 6, "outputTokens": 3, "cacheReadTokens": 4,
                  "reasoningTokens": 1, "totalTokens": 13}}, **APPEND),
    _event(7, 7, "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "shell",
                               "arguments": "{}"}),
    _event(8, 8, "codex/token_count", TOKENS),
    _event(9, 9, "tool/result", {"turn": 1, "step": 1, "message": _result("c1", "ok")},
           **APPEND, sourceEventSeqs=[7]),
    _event(10, 10, "step/end", {"turn": 1, "step": 1}),  # an output came: a new model call
    _event(11, 10, "step/start", {"turn": 1, "step": 2}),
    _event(12, 10, "assistant/message", _assistant(10, 2, [C2]), **APPEND),
    # c2's tool/call is gone (rejected: never ran), so its result names no dispatch
    _event(13, 11, "tool/result", {"turn": 1, "step": 2, "message": {
        **_result("c2", "exec command rejected by user"), "isError": True},
        "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}}, **APPEND),
    _event(14, 12, "step/end", {"turn": 1, "step": 2}),
    _event(15, 12, "step/start", {"turn": 1, "step": 3}),
    _event(16, 12, "assistant/message",
           _assistant(12, 3, [{"type": "text", "text": "done"}]), **APPEND),
    _event(17, 13, "codex/agent_message", SAID),
    _event(18, 14, "step/end", {"turn": 1, "step": 3}),
    _event(19, 14, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
]


def _rollout(line_end: bytes = b"\n") -> bytes:
    return b"".join(
        orjson.dumps({"timestamp": f"2026-01-05T10:00:{line:02d}Z", "type": kind,
                      "payload": payload}) + line_end
        for line, (kind, payload) in enumerate(ROLLOUT, 1))


@pytest.mark.parametrize("window", [2, 10**9])
@pytest.mark.parametrize("form", ["plain", "bom", "crlf", "stream"])
def test_every_event_is_what_the_reader_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              form: str, window: int) -> None:
    monkeypatch.setattr(sealed, "WINDOW", window)
    data = _rollout(b"\r\n" if form == "crlf" else b"\n")
    if form == "stream":  # no file to read again: its lines are held, 7 bytes a chunk
        log = formats.format_named("codex").read(
            "stream", [data[i:i + 7] for i in range(0, len(data), 7)], formats.ReadOptions())
    else:
        path = tmp_path / "rollout.jsonl"
        path.write_bytes(b"\xef\xbb\xbf" + data if form == "bom" else data)
        (log,) = read_sessions(path)
    assert [d.kind for d in log.diagnostics] == (["byte_order_mark"] if form == "bom" else [])
    assert list(log.lines) == [1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10, 10, 10, 11, 12, 12, 12, 13,
                               14, 14]
    assert len(log.events) == len(EXPECTED)
    for seq in (12, 3, 19, 0):  # asked for one at a time, out of order
        assert log.events[seq] == EXPECTED[seq]
    assert list(log.events) == EXPECTED
    assert log.events[6] is log.events[6]  # derived once, kept


def test_a_rollout_changed_since_it_was_read_is_an_error_not_other_events(
        tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    data = _rollout()
    path.write_bytes(data)
    (log,) = read_sessions(path)
    path.write_bytes(data.replace(b'"text":"hi"', b'"text":"ho"'))  # same size, other bytes
    with pytest.raises(LedgerChangedError, match="changed since it was read"):
        log.events[4]


def test_a_line_moved_in_the_same_rollout_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    notes = b"".join(orjson.dumps({"type": "event_msg", "payload": SAID}) + b"\n"
                     for _ in range(200))
    data = _rollout() + notes
    path.write_bytes(data)
    (log,) = read_sessions(path)
    start = data.index(b'"text":"hi"')  # line 5, far before the end kept
    assert len(data) - start > END_KEPT
    with path.open("r+b") as handle:  # same file, size and end: line 5 split in two
        handle.seek(start)
        handle.write(b"\n")
    with pytest.raises(LedgerChangedError, match="line 5 is no longer where it was read"):
        log.events[4]
