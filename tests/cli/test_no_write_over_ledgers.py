"""No writer replaces a ledger: an existing file that holds a ledger or transcript of any
format ledgerviz reads (or Zstandard data, as an archived Codex rollout is) is refused as
an output by every writing command and by ``write_report`` and ``to_otlp``, input or not;
any other existing file is still replaced."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import zstandard

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.export.otlp import OtlpError, to_otlp

DATA = Path(__file__).parent.parent / "data"
DSH = b'{"type":"session","version":4,"id":"s","createdAt":0}\n' \
      b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'

HELD = [  # (file name, how it is made, what the refusal says it holds)
    ("dsh.jsonl", lambda path: path.write_bytes(DSH), "a ledger ledgerviz reads (dsh format)"),
    ("cc.jsonl", lambda path: shutil.copy(DATA / "claude_code" / "basic.jsonl", path),
     "a ledger ledgerviz reads (claude_code format)"),
    ("codex.jsonl", lambda path: shutil.copy(DATA / "codex" / "basic.jsonl", path),
     "a ledger ledgerviz reads (codex format)"),
    ("gemini.jsonl", lambda path: shutil.copy(DATA / "gemini" / "basic.jsonl", path),
     "a ledger ledgerviz reads (gemini format)"),
    ("rollout.jsonl.zst", lambda path: path.write_bytes(zstandard.ZstdCompressor().compress(
        (DATA / "codex" / "basic.jsonl").read_bytes())),
     "Zstandard-compressed data (a compressed transcript?)"),
]
COMMANDS = [
    lambda source, target: ["report", source, "-o", target],
    lambda source, target: ["simulate", "--scenario", "clean", "-o", target],
    lambda source, target: ["otlp", source, "-o", target],
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("name", "make", "held"), HELD)
def test_a_command_refuses_to_write_over_a_ledger(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, make, held: str,
        command) -> None:
    source = tmp_path / "source.jsonl"
    source.write_bytes(DSH)
    target = tmp_path / name
    make(target)
    before = target.read_bytes()
    assert main(command(str(source), str(target))) == 2
    assert f"{target} holds {held}; refusing to overwrite it" in capsys.readouterr().err
    assert target.read_bytes() == before


def test_any_other_existing_file_is_replaced(tmp_path: Path) -> None:
    source = tmp_path / "source.jsonl"
    source.write_bytes(DSH)
    old = tmp_path / "old.html"
    old.write_text("<p>last week's report</p>")
    assert main(["report", str(source), "-o", str(old)]) == 0
    assert old.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(("name", "make", "held"), HELD[:4])
def test_write_report_refuses_the_ledger_it_was_loaded_from(
        tmp_path: Path, name: str, make, held: str) -> None:
    path = tmp_path / name
    make(path)
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match=f"holds {held.replace('(', '.').replace(')', '.')}"):
        ledgerviz.write_report(ledgerviz.load(path), path)
    assert path.read_bytes() == before


def test_to_otlp_refuses_to_write_over_a_ledger(tmp_path: Path) -> None:
    source = tmp_path / "source.jsonl"
    source.write_bytes(DSH)
    other = tmp_path / "codex.jsonl"
    shutil.copy(DATA / "codex" / "basic.jsonl", other)
    before = other.read_bytes()
    with pytest.raises(OtlpError, match="codex format"):
        to_otlp(ledgerviz.load(source), output=other)
    assert other.read_bytes() == before


def test_a_folder_scenario_moves_none_of_its_ledgers_over_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``subagent`` writes parent.jsonl and child.jsonl: staged, then moved into place only
    when neither would replace a ledger; a ledger of another name stays beside them."""
    pair = tmp_path / "pair"
    pair.mkdir()
    shutil.copy(DATA / "codex" / "basic.jsonl", pair / "other.jsonl")
    assert main(["simulate", "--scenario", "subagent", "-o", str(pair)]) == 0
    names = ["child.jsonl", "other.jsonl", "parent.jsonl"]
    assert sorted(path.name for path in pair.iterdir()) == names
    before = {path.name: path.read_bytes() for path in pair.iterdir()}
    capsys.readouterr()
    assert main(["simulate", "--scenario", "subagent", "--seed", "1", "-o", str(pair)]) == 2
    err = capsys.readouterr().err
    assert "holds a ledger ledgerviz reads (dsh format); refusing to overwrite it" in err
    assert {path.name: path.read_bytes() for path in pair.iterdir()} == before  # no staging left

    codex = tmp_path / "codex"
    codex.mkdir()
    shutil.copy(DATA / "codex" / "basic.jsonl", codex / "parent.jsonl")
    assert main(["simulate", "--scenario", "subagent", "-o", str(codex)]) == 2
    assert f"{codex / 'parent.jsonl'} holds a ledger ledgerviz reads (codex format)" in \
        capsys.readouterr().err
    assert [path.name for path in codex.iterdir()] == ["parent.jsonl"]  # child not moved either
    assert (codex / "parent.jsonl").read_bytes() == (DATA / "codex" / "basic.jsonl").read_bytes()
