import argparse
from pathlib import Path

import pytest

from ledgerviz.cli import simulate as simulate_command
from ledgerviz.simulate import SCENARIOS


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    simulate_command.register(parser.add_subparsers())
    args = parser.parse_args(["simulate", *argv])
    return args.run(args)


def test_list_shows_every_scenario_with_its_description(capsys: pytest.CaptureFixture) -> None:
    assert _run(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(SCENARIOS)
    assert all(SCENARIOS[line.split()[0]].description in line for line in lines)


def test_unknown_scenario_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert _run(["--scenario", "crash-mid-flight", "-o", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "unknown scenario 'crash-mid-flight'" in err
    assert "crash-mid-dispatch" in err
    assert not (tmp_path / "x.jsonl").exists()


def test_missing_output_is_an_error(capsys: pytest.CaptureFixture) -> None:
    assert _run(["--scenario", "clean"]) == 2
    assert "-o PATH" in capsys.readouterr().err


def test_writes_a_file_and_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert (
        _run(
            ["--scenario", "large", "--turns", "5", "--seed", "3", "-o", str(tmp_path / "l.jsonl")]
        )
        == 0
    )
    lines = (tmp_path / "l.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"type":"turn/end"' in line for line in lines) == 5
    assert _run(["--scenario", "subagent", "-o", str(tmp_path / "pair")]) == 0
    assert sorted(p.name for p in (tmp_path / "pair").iterdir()) == ["child.jsonl", "parent.jsonl"]
    assert capsys.readouterr().out.count("wrote ") == 3


def test_file_scenario_refuses_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert _run(["--scenario", "clean", "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_turns_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert _run(["--scenario", "clean", "--turns", "0", "-o", str(tmp_path / "c.jsonl")]) == 2
    assert "at least 1" in capsys.readouterr().err
