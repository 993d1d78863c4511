"""A Codex rollout or Gemini chat whose first line is lost or damaged is still found by its
content: its other lines are a rollout's envelopes or a chat's records, never dsh events
(which would make every line a false ``invalid_event``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ledgerviz

DATA = Path(__file__).parents[1] / "data"

CODEX_STATUSES = ["ok", "not_started", "outcome_unknown", "ok", "error", "outcome_unknown",
                  "outcome_unknown"]
"""codex/basic.jsonl's calls, worked out by hand (tests/data/codex/README.md)."""
GEMINI_STATUSES = ["ok", "error", "error", "outcome_unknown", "not_started",
                   "outcome_unknown", "not_started"]
"""gemini/basic.jsonl's calls, worked out by hand (tests/data/gemini/README.md)."""


def _first_line(name: str, how: str) -> bytes:
    first, rest = (DATA / name).read_bytes().split(b"\n", 1)
    return rest if how == "lost" else first[:30] + b"\n" + rest


@pytest.mark.parametrize("how", ["lost", "damaged"])
@pytest.mark.parametrize(("name", "format", "statuses"), [
    ("codex/basic.jsonl", "codex", CODEX_STATUSES),
    ("gemini/basic.jsonl", "gemini", GEMINI_STATUSES)])
def test_a_transcript_without_its_first_line_is_read_in_its_format(
        tmp_path: Path, name: str, format: str, statuses: list[str], how: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_first_line(name, how))
    ledger = ledgerviz.load(path)
    assert [session.format for session in ledger.sessions] == [format]
    damage = [("invalid_json", 1)] if how == "damaged" else []
    found = [(d.kind, d.line) for d in ledger.diagnostics if d.kind != "unknown_record"]
    assert found == damage
    assert list(ledger.frames.calls["status"]) == statuses
