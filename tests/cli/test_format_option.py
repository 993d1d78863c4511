"""``--format`` on check, report and export: passed to the read route (by content without it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerviz.cli import main

DATA = Path(__file__).parents[1] / "data"
PROJECTS = DATA / "claude_code" / "projects"
BASIC = DATA / "claude_code" / "basic.jsonl"


def test_check_reads_claude_code_by_content_and_when_named(
        capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ([], ["--format", "claude_code"]):
        assert main(["check", "--json", *extra, str(BASIC)]) == 0
        (session,) = json.loads(capsys.readouterr().out)["sessions"]
        assert (session["id"], session["format"], session["events"], session["turns"]) == (
            "basic", "claude_code", 41, 4)
        assert session["calls"] == {"ok": 1, "error": 1, "not_started": 1,
                                    "outcome_unknown": 2}


def test_check_text_names_the_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BASIC)]) == 0
    assert "  format claude_code · 41 events · 4 turns" in capsys.readouterr().out


def test_check_stream_reads_a_foreign_file_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json", "--stream", str(BASIC)]) == 0  # only dsh files stream
    (session,) = json.loads(capsys.readouterr().out)["sessions"]
    assert session["events"] == 41


def test_check_in_a_forced_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json", "--format", "dsh", str(BASIC)]) == 1
    (session,) = json.loads(capsys.readouterr().out)["sessions"]
    assert session["diagnostics"][0]["kind"] == "bad_header"  # read as dsh: no ledger
    with pytest.raises(SystemExit):
        main(["check", "--format", "nope", str(BASIC)])


def test_report_and_export_take_the_format(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    assert main(["report", str(PROJECTS), "--format", "claude_code", "-o", str(page)]) == 0
    text = page.read_text()
    assert "agent-a7f3" in text and "9d2f4a60-resumed" in text
    pytest.importorskip("pyarrow")
    out = tmp_path / "export"
    assert main(["export", str(PROJECTS), "-o", str(out), "--format", "claude_code"]) == 0
    manifest = json.loads((out / "ledgerviz-export.json").read_text())
    assert manifest["read_format"] == "claude_code"
    assert len(manifest["sessions"]) == 3
