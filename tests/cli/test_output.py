"""Every writing command goes through ``cli.output``: never over an input, atomic, one line."""

from __future__ import annotations

import errno
import io
import os
import sys
from pathlib import Path

import pytest

from ledgerviz.cli import main
from ledgerviz.cli.output import OutputError, open_output

HEADER = b'{"type":"session","version":4,"id":"s","createdAt":0}\n'
EVENT = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'


def ledger(path: Path) -> Path:
    path.write_bytes(HEADER + EVENT)
    return path


def test_refuses_an_input_by_path_link_and_inode(tmp_path: Path) -> None:
    source = ledger(tmp_path / "a.jsonl")
    os.link(source, tmp_path / "hard.jsonl")
    (tmp_path / "soft.jsonl").symlink_to(source)
    with pytest.raises(OutputError, match="is the input"):
        open_output(tmp_path / "sub" / ".." / "a.jsonl", inputs=[source])
    with pytest.raises(OutputError, match="same file as the input"):
        open_output(tmp_path / "hard.jsonl", inputs=[source])
    with pytest.raises(OutputError, match="is the input"):
        open_output(tmp_path / "soft.jsonl", inputs=[source], follow_symlinks=True)


def test_symlink_is_refused_unless_followed_and_then_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.html"
    real.write_text("old")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    with pytest.raises(OutputError, match="symbolic link"):
        open_output(link)
    open_output(link, follow_symlinks=True).write("new")
    assert link.is_symlink() and real.read_text() == "new"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing/out.html", "does not exist"),
        ("folder", "is a folder"),
        ("a.jsonl/x", "Not a directory"),
    ],
)
def test_unusable_paths_are_one_clear_error(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "folder").mkdir()
    ledger(tmp_path / "a.jsonl")
    with pytest.raises(OutputError, match=message):
        open_output(tmp_path / name)


def test_fifo_and_existing_file_without_overwrite(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OutputError, match="not a regular file"):
        open_output(tmp_path / "pipe")
    ledger(tmp_path / "a.jsonl")
    with pytest.raises(OutputError, match="already exists"):
        open_output(tmp_path / "a.jsonl", overwrite=False)


def test_write_is_atomic_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o640)
    output = open_output(target)
    with pytest.raises(RuntimeError), output.writing() as temporary:
        temporary.write_text("half")
        raise RuntimeError("writer failed")
    assert target.read_text() == "old"
    output.write("new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


@pytest.mark.parametrize(
    ("code", "reason"), [(errno.EACCES, "Permission denied"), (errno.ENOSPC, "No space left")]
)
def test_os_errors_while_writing_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, reason: str
) -> None:
    def fail(self: Path, data: bytes) -> int:
        raise OSError(code, os.strerror(code), str(self))

    monkeypatch.setattr(Path, "write_bytes", fail)
    with pytest.raises(OutputError, match=f"cannot write .*out.html: {reason}") as caught:
        open_output(tmp_path / "out.html").write("x")
    assert "\n" not in str(caught.value)
    assert sorted(tmp_path.iterdir()) == []


def test_full_disk_on_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    with open("/dev/full", "wb", buffering=0) as full:
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(full))
        with pytest.raises(OutputError, match="cannot write stdout: No space left"):
            open_output("-").write(b"x")


def test_report_refuses_to_overwrite_a_ledger_found_in_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "logs").mkdir()
    source = ledger(tmp_path / "logs" / "a.jsonl")
    before = source.read_bytes()
    assert main(["report", str(tmp_path / "logs"), "-o", str(source)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to overwrite" in err
    assert source.read_bytes() == before


def test_report_to_stdout_and_the_note_says_how_to_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = ledger(tmp_path / "a.jsonl")
    assert main(["report", str(source), "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("<!DOCTYPE html>") or captured.out.lstrip().startswith("<")
    assert "stdout" in captured.err
    target = tmp_path / "r.html"
    assert main(["report", str(source), "-o", str(target)]) == 0
    assert target.as_uri() in capsys.readouterr().out
    assert main(["report", str(source), "-o", str(tmp_path / "nope" / "r.html")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_simulate_writes_atomically_and_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--scenario", "clean", "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith('{"type":"session"')
    assert "wrote stdout" in captured.err
    assert main(["simulate", "--scenario", "clean", "-o", str(tmp_path)]) == 2
    assert main(["simulate", "--scenario", "subagent", "-o", "-"]) == 2
    assert "folder of ledgers" in capsys.readouterr().err
    assert sorted(tmp_path.iterdir()) == []
