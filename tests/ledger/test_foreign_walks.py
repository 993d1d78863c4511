"""Codex and Gemini folders loaded as their CLIs lay them out: dated rollout folders with
``.jsonl.zst`` archives (a plain sibling wins), Gemini project chats with subagent folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import zstandard

import ledgerviz

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder holding ~/.codex/sessions and ~/.gemini/tmp as the CLIs write them."""
    day = tmp_path / ".codex" / "sessions" / "2026" / "01" / "05"
    day.mkdir(parents=True)
    shutil.copy(DATA / "codex" / "basic.jsonl", day / "rollout-2026-01-05T10-00-00-basic.jsonl")
    rollback = (DATA / "codex" / "rollback.jsonl").read_bytes()
    packed = zstandard.ZstdCompressor().compress(rollback[:900]) + \
        zstandard.ZstdCompressor().compress(rollback[900:])  # two frames, as appends make
    (day / "rollout-2026-01-05T11-00-00-rollback.jsonl.zst").write_bytes(packed)
    # an archive beside its plain copy: the plain file is read, once
    shutil.copy(DATA / "codex" / "compacted.jsonl", day / "rollout-c.jsonl")
    (day / "rollout-c.jsonl.zst").write_bytes(b"not even zstd")
    chats = tmp_path / ".gemini" / "tmp" / "9f2c" / "chats"
    (chats / "gem-basic").mkdir(parents=True)
    shutil.copy(DATA / "gemini" / "basic.jsonl", chats / "session-2026-01-05T10-00-gem-basi.jsonl")
    shutil.copy(DATA / "gemini" / "chats" / "gem-basic" / "sub-1.jsonl",
                chats / "gem-basic" / "sub-1.jsonl")
    legacy = "session-2025-09-01T08-00-legacy1.json"
    shutil.copy(DATA / "gemini" / legacy, chats / legacy)
    # a legacy chat a resume rewrote as .jsonl beside it: only the .jsonl is read
    shutil.copy(DATA / "gemini" / legacy, chats / "session-2025-09-02T08-00-resumed.json")
    shutil.copy(DATA / "gemini" / "rewind.jsonl", chats / "session-2025-09-02T08-00-resumed.jsonl")
    (tmp_path / ".gemini" / "settings.json").write_text("{}")  # no chat: not read
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_codex_sessions_load_from_the_home_folder(home: Path) -> None:
    ledger = ledgerviz.load("~/.codex/sessions")
    assert ledger.keys == ["thread-basic", "thread-rollback", "thread-compacted"]
    assert {log.format for log in ledger.sessions} == {"codex"}
    assert ledger.diagnostics == []
    rolled = ledger.session("thread-rollback").frames.calls
    assert rolled["branch"].astype(str).tolist() == ["active", "abandoned", "abandoned", "active"]


def test_a_zst_rollout_named_directly_is_decompressed(home: Path) -> None:
    day = home / ".codex" / "sessions" / "2026" / "01" / "05"
    ledger = ledgerviz.load(day / "rollout-2026-01-05T11-00-00-rollback.jsonl.zst")
    assert ledger.keys == ["thread-rollback"]
    assert len(ledger.sessions[0].events) == 46


def test_gemini_chats_subagents_and_legacy_chats_load_from_the_home_folder(home: Path) -> None:
    ledger = ledgerviz.load("~/.gemini")
    assert ledger.keys == ["sub-1", "gem-legacy", "gem-rewind", "gem-basic"]
    lineage = ledger.frames.lineage.set_index("session")
    assert lineage.loc["sub-1", "parent_session"] == "gem-basic"
    assert lineage.loc["sub-1", "relation"] == "subagent"
    assert lineage.loc["gem-basic", "relation"] == "root"


def test_a_legacy_gemini_json_named_directly_is_read() -> None:
    ledger = ledgerviz.load(DATA / "gemini" / "session-2025-09-01T08-00-legacy1.json")
    assert ledger.keys == ["gem-legacy"]
    assert ledger.frames.messages["text"].tolist() == ["hello", "hi"]
