"""Shared paths and file-derived facts for the widget tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
DSH = sorted((TESTS / "data" / "dsh").glob("*.jsonl"))
SEMANTIC = next(p for p in DSH if "semantic-checkpoint" in p.name)
PLAIN_TURN = next(p for p in DSH if "plain-turn" in p.name)
HOSTILE = TESTS / "browser" / "data" / "hostile.v4.jsonl"
UNRECOVERED = TESTS / "data" / "scheduler-failure-unrecovered.jsonl"
HOSTILE_RAW = ("<script", "<img", "<a ", 'onerror="', 'href="javascript:')


def events_of(path: Path) -> list[dict[str, Any]]:
    """The event lines of a ledger file (header dropped), decoded independently of ledgerviz."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def seq_at(events: list[dict[str, Any]], index: int) -> int:
    """The seq of the event at ``index``: its own, or its index in a normalised snapshot."""
    return events[index].get("seq", index)
