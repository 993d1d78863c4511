"""The typed routes of Codex and Gemini give up (the dict route reads on) only for what a
give-up is: their own ``GiveUp``, msgspec's decode and validation errors. Any other
exception in them is a bug, and a load shows it rather than reading on more slowly. The
shapes that had reached the typed route as an ``AttributeError`` or a ``TypeError`` now
give up by name, and read as the dict route reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.formats import codex_columns, gemini_columns

DATA = Path(__file__).parent.parent / "data"

CODEX_META = (b'{"timestamp":"2026-01-05T10:00:00.000Z","type":"session_meta",'
              b'"payload":{"id":"t","timestamp":"2026-01-05T10:00:00.000Z","cwd":"/w"}}\n')
GEMINI_HEADER = (b'{"sessionId":"g","projectHash":"9f2c","startTime":"2026-01-05T10:00:00.000Z",'
                 b'"lastUpdated":"2026-01-05T10:00:00.000Z"}\n')


class Bug(Exception):
    """What a typed route's handler raises in these tests: no shape, a bug."""


def raising(*_: object) -> None:
    raise Bug


def test_a_bug_in_a_codex_handler_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codex_columns.ColumnRollout, "turn_start", raising)
    with pytest.raises(Bug):
        read_sessions(DATA / "codex" / "basic.jsonl")


def test_a_bug_in_a_gemini_handler_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gemini_columns.ColumnChat, "prompt", raising)
    with pytest.raises(Bug):
        read_sessions(DATA / "gemini" / "basic.jsonl")


def test_a_codex_line_whose_payload_is_null(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(CODEX_META + b'{"timestamp":"2026-01-05T10:00:01.000Z",'
                                  b'"type":"event_msg","payload":null}\n')
    [log] = read_sessions(path)
    assert [e["type"] for e in log.events] == ["codex/session_meta", "codex/event_msg"]
    assert [(d.line, d.kind) for d in log.diagnostics] == [(2, "unknown_record")]


def test_gemini_a_list_as_a_message_type_or_a_call_status(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(
        GEMINI_HEADER
        + b'{"id":"u1","timestamp":"2026-01-05T10:00:01.000Z","type":["user"],"content":"hi"}\n'
        + b'{"id":"g1","timestamp":"2026-01-05T10:00:02.000Z","type":"gemini","content":"ok",'
          b'"toolCalls":[{"id":"c1","name":"ls","args":{},"status":["success"]}]}\n')
    [log] = read_sessions(path)
    assert [(d.line, d.kind) for d in log.diagnostics] == [(2, "bad_record"), (3, "bad_record")]
    assert [e["type"] for e in log.events][:2] == ["gemini/session", "gemini/message"]


def test_a_gemini_line_that_is_no_record_gives_up(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(GEMINI_HEADER + b"[1, 2]\n")
    [log] = read_sessions(path)
    assert [(d.line, d.kind) for d in log.diagnostics] == [(2, "not_an_object")]
