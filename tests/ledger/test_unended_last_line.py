"""A last line that no newline ends, in each format: what its writer proves decides it.

The dsh runtime drops such a line (LEDGER_FORMAT §1.2): ``torn_tail``. Claude Code, Codex
and Gemini CLI append a record and its newline at once, and their own loaders read a last
line without one: a whole record there is read, with a ``no_final_newline`` info; only a
last line that is no JSON is torn (docs/formats.md)."""

from __future__ import annotations

import json
from pathlib import Path

import ledgerviz

DATA = Path(__file__).parents[1] / "data"


def _kinds(ledger: ledgerviz.Ledger) -> list[tuple[str, int]]:
    return [(d.kind, d.line) for d in ledger.diagnostics if d.kind != "line_counts"]


def test_a_compact_legacy_gemini_chat_on_one_line_is_read_whole(tmp_path: Path) -> None:
    # gemini-cli writes a legacy session-*.json whole (no append, no newline needed); the
    # fixture's two messages are "hello" (u1) and "hi" (g1)
    chat = json.loads((DATA / "gemini" / "session-2025-09-01T08-00-legacy1.json").read_text())
    path = tmp_path / "session-2025-09-01T08-00-legacy1.json"
    path.write_text(json.dumps(chat, separators=(",", ":")))
    ledger = ledgerviz.load(path)
    assert _kinds(ledger) == [("no_final_newline", 1)]
    assert ledger.sessions[0].lines_skipped == 0
    messages = ledger.frames.messages
    assert list(messages["role"]) == ["user", "assistant"]
    assert [text.strip() for text in messages["text"]] == ["hello", "hi"]


def test_each_format_says_what_its_writer_proves_of_an_unended_last_line(
        tmp_path: Path) -> None:
    transcript = (DATA / "claude_code" / "basic.jsonl").read_bytes()
    lines = transcript.count(b"\n")  # 21: the last one a whole record
    cut = tmp_path / "basic.jsonl"
    cut.write_bytes(transcript[:-1])
    read = ledgerviz.load(cut)
    whole = ledgerviz.load(DATA / "claude_code" / "basic.jsonl")
    assert ("no_final_newline", lines) in _kinds(read)
    assert len(read.frames.events) == len(whole.frames.events)
    assert read.sessions[0].lines_skipped == whole.sessions[0].lines_skipped
    # the dsh runtime drops it: a torn tail, the event not read
    ledger = DATA / "dsh" / ("packages__test-support__session-snapshot__tests__fixtures__"
                             "suite__plain-turn__session.v3.jsonl")
    content = ledger.read_bytes()
    dsh = tmp_path / "plain-turn.jsonl"
    dsh.write_bytes(content[:-1])
    dropped = ledgerviz.load(dsh)
    assert _kinds(dropped) == [("torn_tail", content.count(b"\n"))]
    assert len(dropped.sessions[0].events) == content.count(b"\n") - 2  # header, last line
