"""``ledgerviz repair`` prints closers as JSONL and never touches the file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ledgerviz.cli import main

from .ledgers import CONFORMANCE, DSH


def run_repair(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:
    code = main(["repair", *argv])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()]


def test_open_tail_gets_step_and_turn_end(capsys: pytest.CaptureFixture[str]) -> None:
    path = CONFORMANCE / "inputs" / "fixture-plain-turn__session.v3.jsonl"  # seqs filled in
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    code, events = run_repair(capsys, str(path))
    assert code == 0
    assert [(e["type"], e["seq"]) for e in events] == [("step/end", 5), ("turn/end", 6)]
    assert events[1]["data"]["reason"] == {"kind": "interrupted"}
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_a_snapshot_without_seqs_is_not_read_by_the_runtime(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The runtime numbers nothing itself: it stops at the first event without ``seq``."""
    (path,) = DSH.glob("*plain-turn__session.v3.jsonl")
    assert main(["repair", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert ":2: error [invalid_event] turn/start: no 'seq'" in captured.err
    assert "stops reading at line 2" in captured.err


def test_fork_policy_points_to_fork(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (CONFORMANCE / "inputs" / "random-01-v4.jsonl").read_text().splitlines()
    cases = [json.loads(line) for line in (CONFORMANCE / "closers.jsonl").open()]
    unknown = next(
        c
        for c in cases
        if c["input"] == "random-01-v4.jsonl"
        and c["cause"] == "interrupted"
        and any(
            e["data"].get("error", {}).get("code") == "TOOL_OUTCOME_UNKNOWN" for e in c["closers"]
        )
    )
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[: unknown["cut"] + 1]) + "\n")
    code, synth = run_repair(capsys, str(path))
    assert code == 0 and synth == unknown["closers"]
    before = path.read_bytes()
    assert main(["repair", str(path), "--policy", "fork"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "never appends to the parent" in captured.err
    assert f"ledgerviz fork {path} -o CHILD.jsonl" in captured.err
    assert path.read_bytes() == before


def test_missing_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["repair", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err
