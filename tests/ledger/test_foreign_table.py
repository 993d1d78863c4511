"""The table a foreign reader fills as it writes its events (``foreign.EnvelopeColumns``) is
the table of those events read back from the dicts (``EventTable.of``), column by column,
for every fixture: a fork's inherited prefix (a row inserted), rejected calls (rows removed),
sidechains, subagents and resumes included."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.table import EventTable

DATA = Path(__file__).parent.parent / "data"
FOLDERS = [DATA / "claude_code", DATA / "codex", DATA / "gemini"]
FILES = sorted(path for folder in FOLDERS for path in folder.rglob("*.json*"))


def assert_same_table(made: EventTable, log: SessionLog) -> None:
    """``made`` holds what ``EventTable.of`` reads from ``log``'s events, column by column."""
    read = EventTable.of(log.events, log.lines)
    assert made.types == read.types
    for field in fields(EventTable):
        if field.name not in ("type_names", "type_code", "requests"):
            assert getattr(made, field.name) == getattr(read, field.name), field.name
    assert made.requests == read.requests


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(DATA)))
def test_the_readers_table_is_the_table_of_its_events(path: Path) -> None:
    logs = read_sessions(path)
    for log in logs:
        assert log.format != "dsh"
        assert log.table is not None, log.key  # filled by the reader, not on first use
        assert_same_table(log.table, log)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_a_folders_tables_are_the_tables_of_its_events(folder: Path) -> None:
    """Loaded together: a fork finds its parent (its copied prefix marked: a row inserted),
    a resume its earlier session."""
    for log in ledgerviz.load(folder).sessions:
        assert_same_table(log.event_table(), log)


def test_the_fixtures_hold_the_cases_that_move_rows() -> None:
    """The fixtures above hold a rejected Codex call (its tool/call removed) and a fork's
    inherited prefix (a session/end-seed inserted), each read by a writer's table."""
    codex = ledgerviz.load(DATA / "codex")
    types = {log.key: log.table.types for log in codex.sessions if log.table is not None}
    assert any("session/end-seed" in kinds for kinds in types.values())
    basic = next(log for log in codex.sessions if log.key == "thread-basic")
    assert "rejected by user" in basic.call_reasons.values()
