"""A file's key in the Parquet export and the Dask frames: read from its lines up to its
first one that is not blank, as a load reads it (a rollout opened by blank lines is keyed
by its ``session_meta``, not by its file name)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ledgerviz
import ledgerviz.export.dask as lvd
from ledgerviz.export import export, read_export
from ledgerviz.export.dataset import Head, key_of_head

CODEX_META = (b'{"timestamp":"2026-01-05T10:00:00.000Z","type":"session_meta","payload":'
              b'{"id":"thread-blank","timestamp":"2026-01-05T10:00:00.000Z","cwd":"/w"}}')
CODEX_PROMPT = (b'{"timestamp":"2026-01-05T10:00:01.000Z","type":"response_item","payload":'
                b'{"type":"message","role":"user","content":[{"type":"input_text",'
                b'"text":"hi"}]}}')
GEMINI_HEADER = (b'{"sessionId":"gem-blank","projectHash":"9f2c",'
                 b'"startTime":"2026-01-05T10:00:00.000Z",'
                 b'"lastUpdated":"2026-01-05T10:00:00.000Z"}')
GEMINI_PROMPT = (b'{"id":"u1","timestamp":"2026-01-05T10:00:01.000Z","type":"user",'
                 b'"content":[{"text":"fix the build"}]}')
DSH_HEADER = b'{"type":"session","version":4,"id":"dsh-blank","createdAt":1,"isSeeded":false}'

FILES = {
    # name: (bytes, the key a load gives it, worked out by hand)
    "rollout-a.jsonl": (b"\n" + CODEX_META + b"\n" + CODEX_PROMPT + b"\n", "thread-blank"),
    "session-b.jsonl": (b"\r\n  \n" + GEMINI_HEADER + b"\n" + GEMINI_PROMPT + b"\n",
                        "gem-blank"),
    # a dsh ledger's header must be line 1: after a blank line the file is keyed by its stem
    "ledger-c.jsonl": (b"\n" + DSH_HEADER + b"\n", "ledger-c"),
    # the first record is the last line, its newline never written: a whole record, read
    # (docs/formats.md), so its session_meta's id; a dsh ledger drops it, so the stem
    "rollout-d.jsonl": (b"\n\n" + CODEX_META.replace(b"thread-blank", b"thread-unended"),
                        "thread-unended"),
    "ledger-e.jsonl": (DSH_HEADER.replace(b"dsh-blank", b"dsh-unended"), "ledger-e"),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding ``FILES``."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name, (content, _) in FILES.items():
        (inputs / name).write_bytes(content)
    return inputs


def test_a_load_gives_the_hand_worked_keys(folder: Path) -> None:
    """The keys the tests below expect are the load's, which these files' bytes give."""
    assert sorted(ledgerviz.load(folder).keys) == sorted(key for _, key in FILES.values())


@pytest.mark.parametrize("size", [1, 3, 1 << 20])
def test_the_head_ends_with_the_first_line_that_is_not_blank(size: int) -> None:
    content = b"\r\n \n" + CODEX_META + b"\n" + CODEX_PROMPT + b"\n"
    head = Head()
    for start in range(0, len(content), size):
        head.take(content[start:start + size])
    assert head.complete
    assert head.bytes == b"\r\n \n" + CODEX_META + b"\n"


def test_a_head_without_a_record_is_not_complete() -> None:
    head = Head()
    head.take(b"\n \n" + CODEX_META)  # the record's line has no newline yet
    assert (head.complete, head.bytes) == (False, b"\n \n" + CODEX_META)


@pytest.mark.parametrize("name", list(FILES))
def test_key_of_head_is_the_loads_key(folder: Path, name: str) -> None:
    content, key = FILES[name]
    head = Head()
    head.take(content)
    assert key_of_head(str(folder / name), head.bytes) == key


def test_dask_session_keys_are_the_loads(folder: Path) -> None:
    paths = [str(folder / name) for name in FILES]
    assert lvd.session_keys(paths) == [key for _, key in FILES.values()]


def test_the_parquet_export_keys_sessions_as_a_load(tmp_path: Path, folder: Path) -> None:
    summary = export([folder], tmp_path / "out")
    assert sorted(summary.sessions) == sorted(key for _, key in FILES.values())
    lineage = read_export(tmp_path / "out")["lineage"]  # one row per session
    assert sorted(lineage["session"]) == sorted(key for _, key in FILES.values())
