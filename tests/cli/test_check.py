"""``ledgerviz check`` run in-process: text and JSON output, exit codes 0/1/2."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from unanswered import write_unanswered

from ledgerviz.cli import main
from ledgerviz.simulate import write_scenario

DSH = Path(__file__).parents[1] / "data" / "dsh"
SHOWCASE = next(DSH.glob("*preview-showcase*"))
SEMANTIC = next(DSH.glob("*semantic-checkpoint*"))
SETTLEMENT = next(DSH.glob("*subagent-settlement*"))


def check_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["check", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_json_on_all_fixtures(capsys: pytest.CaptureFixture[str]) -> None:
    code, document = check_json(capsys, str(DSH))
    assert code == 0
    sessions = document["sessions"]
    assert len(sessions) == 10
    assert all(s["diagnostics"] == [] for s in sessions)
    assert sum(s["events"] for s in sessions) == 538
    by_id = {s["id"]: s for s in sessions}
    showcase = by_id["preview-showcase"]
    assert showcase["path"] == str(SHOWCASE)
    assert (showcase["events"], showcase["turns"], showcase["calls"]) == (
        199,
        29,
        {"ok": 9, "error": 1},
    )
    assert (showcase["unanswered"], showcase["closers"], showcase["fork_points"]) == ([], 0, [])
    settlement = by_id["subagent-settlement-child"]
    assert (settlement["calls"], settlement["closers"]) == ({}, 2)


def test_json_recovery_facts_of_the_crashed_session(capsys: pytest.CaptureFixture[str]) -> None:
    code, document = check_json(capsys, str(SEMANTIC))
    assert code == 0
    (session,) = document["sessions"]
    assert session["calls"] == {"outcome_unknown": 1}
    assert session["unanswered"] == [
        {"call_id": "unknown-outcome-call", "code": "TOOL_OUTCOME_UNKNOWN"}
    ]
    assert session["closers"] == 0
    assert session["fork_points"] == [3]
    assert session["abandoned_seqs"] == [3, 5]


def test_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SHOWCASE)]) == 0
    out = capsys.readouterr().out
    assert "preview-showcase" in out
    assert "199 events · 29 turns · calls: error 1, ok 9" in out


def test_errors_exit_1_with_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(SETTLEMENT.read_bytes() + b"{oops\n" + b'{"type":"x/y","data":{}}\n')
    code, document = check_json(capsys, str(broken), str(SHOWCASE))
    assert code == 1
    diagnostics = document["sessions"][0]["diagnostics"]
    assert [(d["kind"], d["severity"], d["line"]) for d in diagnostics] == [
        ("invalid_json", "error", 9),
        ("unknown_required_event", "error", 10),
    ]
    assert main(["check", str(broken)]) == 1
    assert "line 9: error [invalid_json]" in capsys.readouterr().out


def test_warnings_alone_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(SETTLEMENT.read_bytes() + b'{"type":"tu')
    code, document = check_json(capsys, str(torn))
    assert code == 0
    assert document["sessions"][0]["diagnostics"][0]["kind"] == "torn_tail"


def test_strict_stops_at_the_first_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(SETTLEMENT.read_bytes() + b"{oops\n" + b'{"type":"x/y","data":{}}\n')
    assert main(["check", "--strict", str(broken), str(SHOWCASE)]) == 1
    captured = capsys.readouterr()
    assert f"{broken}:9: error [invalid_json]" in captured.err
    assert "preview-showcase" in captured.out


def test_unreadable_source_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.jsonl"
    code, document = check_json(capsys, str(missing), str(SHOWCASE))
    assert code == 2
    assert [s["id"] for s in document["sessions"]] == ["preview-showcase"]
    assert document["failures"] == [f"{missing}: no such file or folder"]


def test_provider_validity_of_a_crashed_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crashed = tmp_path / "crashed.jsonl"
    crashed.write_bytes(b"".join(SHOWCASE.read_bytes().splitlines(keepends=True)[:175]))
    code, document = check_json(capsys, str(crashed))
    assert code == 0
    (session,) = document["sessions"]
    assert session["provider_valid"] == {
        "recorded": {"openai": False, "anthropic": False},
        "synthesize": {"openai": True, "anthropic": True},
        "fork": {"openai": True, "anthropic": True},
    }
    assert session["calls"] == {"outcome_unknown": 1, "not_started": 9}
    assert session["unanswered"][0] == {"call_id": "preview-read", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert [u["code"] for u in session["unanswered"][1:]] == ["TOOL_NOT_STARTED"] * 9
    assert session["closers"] == 12
    assert session["fork_points"] == [172]
    assert main(["check", str(crashed)]) == 0
    assert "unpaired requests: recorded/openai, recorded/anthropic" in capsys.readouterr().out


def test_a_folder_is_checked_one_file_at_a_time(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    traced_peak: Callable[[Callable[[], object]], int],
) -> None:
    def check_peak(folder: Path) -> int:
        peak = traced_peak(lambda: main(["check", "--json", str(folder)]))
        assert json.loads(capsys.readouterr().out)["failures"] == []
        return peak

    one = write_scenario("large", tmp_path / "one.jsonl", turns=100)[0]
    folders = {}
    for count in (2, 8):
        folder = folders[count] = tmp_path / f"{count}-sessions"
        folder.mkdir()
        for number in range(count):
            shutil.copy(one, folder / f"{number}.jsonl")
    check_peak(folders[2])  # the modules check imports on first use
    growth = check_peak(folders[8]) - check_peak(folders[2])
    # Six more sessions add six summaries (a few KB each); holding the sessions read
    # would add about 2 MB each (their events, analyses and contexts).
    assert growth < 6 * (64 << 10)


def test_text_lists_the_first_unanswered_calls_and_counts_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ledgerviz.cli.check import LISTED

    path = tmp_path / "no-results.jsonl"
    requested = write_unanswered(path, turns=8, seed=1)
    assert len(requested) > LISTED
    assert check_json(capsys, str(path))[1]["sessions"][0]["unanswered"] == [
        {"call_id": call_id, "code": "TOOL_OUTCOME_UNKNOWN"} for call_id in requested]
    assert main(["check", str(path)]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "unanswered:" in line]
    more = len(requested) - LISTED
    assert (f"{requested[LISTED - 1]} (TOOL_OUTCOME_UNKNOWN) … and {more} more"
            " (--json lists every one)") in line
    assert requested[LISTED] not in line


def test_text_names_fork_points_as_seqs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SEMANTIC)]) == 0
    out = capsys.readouterr().out
    assert "fork points: seq 3" in out  # the JSON above: fork_points [3]
    assert main(["check", str(SHOWCASE)]) == 0
    assert "fork points: none" in capsys.readouterr().out
