"""A file in a Claude Code session's ``subagents/`` folder that no format claims by its
content (empty, garbage, a torn line, binary bytes) is that session's subagent file with
its problems said as Claude Code's reader says them; it was read as a standalone dsh file
(``not_a_ledger``, relation ``root``). A dsh ledger put there is still read as dsh."""

from __future__ import annotations

import shutil
from pathlib import Path

import ledgerviz

DATA = Path(__file__).resolve().parent / "data"
SESSION = "0b5e7c1e-main"
DSH = ("packages__test-support__session-snapshot__tests__fixtures__suite__plain-turn__"
       "session.v3.jsonl")


def test_unreadable_subagent_files_are_the_sessions_own(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(DATA / "claude_code" / "projects", projects)
    subagents = projects / "-home-dev-repo" / SESSION / "subagents"
    (subagents / "agent-garbage.jsonl").write_bytes(b"garbage\nmore\n")
    (subagents / "agent-empty.jsonl").write_bytes(b"")
    (subagents / "agent-torn.jsonl").write_bytes(b'{"type":"us')  # 11 bytes, no newline
    shutil.copy(DATA / "dsh" / DSH, subagents / "agent-dsh.jsonl")
    ledger = ledgerviz.load(projects)
    sessions = {Path(log.path).stem: log for log in ledger.sessions}
    for key in ("agent-garbage", "agent-empty", "agent-torn"):
        header = sessions[key].header
        assert (header.get("origin"), header.get("parentSession")) == ("subagent", SESSION)
        assert sessions[key].events == []
    said = {key: [(d.line, d.kind) for d in sessions[key].diagnostics if d.kind != "line_counts"]
            for key in ("agent-garbage", "agent-empty", "agent-torn")}
    assert said == {"agent-garbage": [(1, "invalid_json"), (2, "invalid_json")],
                    "agent-empty": [(1, "empty_file")], "agent-torn": [(1, "torn_tail")]}
    counts = [d.message for d in sessions["agent-garbage"].diagnostics
              if d.kind == "line_counts"]
    assert counts[0].startswith("2 lines: 0 records written as events")
    dsh = sessions["agent-dsh"]  # claimed by its content: read as the dsh ledger it is
    assert (dsh.key, dsh.version, "origin" in dsh.header) == ("{{session:1}}", 3, False)
    lineage = ledger.frames.lineage
    relations = dict(zip(lineage["session"].astype(str), lineage["relation"].astype(str),
                         strict=True))
    assert {key: relations[sessions[key].key] for key in (
        "agent-garbage", "agent-empty", "agent-torn", "agent-a7f3", "agent-dsh")} == {
        "agent-garbage": "subagent", "agent-empty": "subagent", "agent-torn": "subagent",
        "agent-a7f3": "subagent", "agent-dsh": "root"}
