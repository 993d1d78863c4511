"""``ledgerviz diff``: exit codes like diff(1), the JSON document, the text summary."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from ledgerviz.cli import main
from tests.compare.pairs import example, renumbered, write


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """Return a ledger and a copy whose seq 9 result differs and whose turn 1 second step
    (seqs 11-13) is gone."""
    header, events = example("tool-error.jsonl")
    other = copy.deepcopy(events)
    other[9]["data"]["message"]["content"][0]["text"] = "Fetched nothing."
    other = renumbered(other[:11] + other[14:])
    return write(tmp_path / "a.jsonl", header, events), write(tmp_path / "b.jsonl", header, other)


def test_json_document(pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(pair[0]), str(pair[1]), "--json"]) == 1
    document = orjson.loads(capsys.readouterr().out)
    assert document["same"] is False
    assert document["first_divergence"] == {"a_seq": 9, "b_seq": 9, "kind": "changed",
                                             "differs": ["result text"]}
    assert document["a_only"] == [11, 12, 13]
    assert document["b_only"] == []
    assert document["changed"] == [[9, 9]]
    assert document["counts"] == {"same": 29, "changed": 1, "a_only": 3, "b_only": 0}
    assert document["status_changes"] == []
    assert document["policy"] == "synthesize"


def test_text_summary_lists_the_first_rows(pair: tuple[Path, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(pair[0]), str(pair[1]), "--rows", "2"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "first divergence: a seq 9, b seq 9: changed (result text)"
    assert lines[3] == "29 same, 1 changed, 3 only in a, 0 only in b"
    assert lines[4].split() == ["kind", "a", "seq", "a", "type", "b", "seq", "b", "type",
                                "differs"]
    assert lines[5].split() == ["changed", "9", "tool/result", "9", "tool/result", "result",
                                "text"]
    assert lines[6].split() == ["only", "in", "a", "11", "step/start"]
    assert lines[7] == "… 2 more differing rows not shown"
    assert lines[8] == "call status changes under synthesize: 0"


def test_the_same_session_exits_0(pair: tuple[Path, Path],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(pair[0]), str(pair[0])]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "the same: every event is matched by an equal one")
    assert main(["diff", str(pair[0]), str(pair[0]), "--json"]) == 0
    document = orjson.loads(capsys.readouterr().out)
    assert (document["same"], document["first_divergence"]) == (True, None)


def test_bad_input_exits_2(pair: tuple[Path, Path], tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(pair[0]), str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert main(["diff", str(tmp_path), str(pair[0])]) == 2  # a folder of two sessions
    assert "holds 2 sessions" in capsys.readouterr().err
    with pytest.raises(SystemExit) as bad_argument:
        main(["diff", str(pair[0]), str(pair[1]), "--policy", "nope"])
    assert bad_argument.value.code == 2


def test_two_files_that_are_no_ledgers_are_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Neither holds an event, so they would align as "the same": exit 2 instead."""
    broken, binary = tmp_path / "broken.jsonl", tmp_path / "binary.jsonl"
    broken.write_bytes(b'{"type":"session"\n')
    binary.write_bytes(b"\x00\x01\n\x02\n")
    assert main(["diff", str(broken), str(binary)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"ledgerviz diff: {broken}: not a ledger: no line is a JSON "
                                   "event (line 1: '{\"type\":\"session\"'; 1 line skipped)")
