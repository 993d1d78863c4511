"""Output paths under attack (issue 38): two writers of one ``-o``, SIGTERM mid-write, a
dangling symbolic link as the output, TMPDIR on another file system, ``-o`` an input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledgerviz.cli import main
from ledgerviz.cli.output import OutputError, open_output

ROOT = Path(__file__).parents[2]
PARENT = ROOT / "ledgerviz" / "examples" / "crash-mid-dispatch.jsonl"
WROTE = ("wrote {}: session sim-crash-mid-dispatch-7-fork-17, 18 inherited events, seed "
         "marker at seq 18, 2 forked closers\n")


def fork(child: Path, parent: Path = PARENT) -> list[str]:
    return ["fork", str(parent), "-o", str(child), "--created-at", "0"]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".ledgerviz-"))


def test_of_two_writers_of_one_exclusive_output_the_second_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "child.jsonl"
    first, second = open_output(target, overwrite=False), open_output(target, overwrite=False)
    first.write("one\n")  # both were checked before either wrote: the race of two forks
    with pytest.raises(OutputError) as raised:
        second.write("two\n")
    assert str(raised.value) == (f"{target} already exists (written meanwhile by another "
                                 "process?); refusing to overwrite it")
    assert target.read_text() == "one\n"
    assert leftovers(tmp_path) == []


def test_two_forks_to_one_output_at_once_one_wins_the_other_says_so(tmp_path: Path) -> None:
    child = tmp_path / "child.jsonl"
    command = [sys.executable, "-m", "ledgerviz", *fork(child)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}) for _ in range(2)]
    results = sorted((run.wait(120), *run.communicate()) for run in runs)
    assert [code for code, _, _ in results] == [0, 2]
    assert results[0][1] == WROTE.format(child)
    assert results[1][1] == ""
    assert results[1][2].startswith(f"ledgerviz fork: {child} already exists")
    assert leftovers(tmp_path) == []
    assert main(["check", str(child)]) == 0  # one whole child, not two interleaved


def test_sigterm_while_the_report_is_written_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    import ledgerviz.report

    def pieces(*args: object, **kwargs: object) -> Iterator[str]:
        yield "<html>"
        assert leftovers(tmp_path) != []  # the temporary file is being written
        os.kill(os.getpid(), signal.SIGTERM)
        yield "never written"

    monkeypatch.setattr(ledgerviz.report, "report_pieces", pieces)
    out = tmp_path / "report.html"
    assert main(["report", str(PARENT), "-o", str(out)]) == 143
    assert capsys.readouterr().err == "ledgerviz report: terminated\n"
    assert leftovers(tmp_path) == [] and not out.exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored after the command


def test_a_dangling_link_as_output_is_refused_or_followed_to_a_new_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    link = tmp_path / "out.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    assert main(fork(link)) == 2
    assert capsys.readouterr().err == (
        f"ledgerviz fork: {link} is a symbolic link (to {tmp_path / 'elsewhere.html'}); "
        "refusing to write through it (remove it, choose another path, or pass "
        "--follow-symlinks to replace the file it points to)\n")
    assert main(["report", str(PARENT), "-o", str(link)]) == 2
    assert not (tmp_path / "elsewhere.html").exists()
    assert main(["report", str(PARENT), "-o", str(link), "--follow-symlinks"]) == 0
    assert link.is_symlink() and (tmp_path / "elsewhere.html").read_text().startswith("<!")


def test_the_temporary_file_is_in_the_targets_folder_whatever_tmpdir_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs /dev/shm on another file system than the tests' temporary folder")
    elsewhere = shm / f"lv-{os.getpid()}"
    elsewhere.mkdir()
    try:
        monkeypatch.setenv("TMPDIR", str(elsewhere))
        monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
        output = open_output(tmp_path / "child.jsonl", overwrite=False)
        with output.writing() as temporary:
            assert temporary.parent == tmp_path  # so the final rename stays on one device
            temporary.write_text("x\n")
        assert main(fork(tmp_path / "forked.jsonl")) == 0
        assert list(elsewhere.iterdir()) == [] and leftovers(tmp_path) == []
    finally:
        elsewhere.rmdir()


def test_output_equal_to_an_input_is_refused_and_the_input_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    parent = tmp_path / "parent.jsonl"
    parent.write_bytes(PARENT.read_bytes())
    os.link(parent, tmp_path / "hard.jsonl")
    assert main(fork(parent, parent)) == 2
    assert capsys.readouterr().err == (f"ledgerviz fork: {parent} is the input {parent}; "
                                       "refusing to overwrite it\n")
    assert main(["report", str(parent), "-o", str(tmp_path / "hard.jsonl")]) == 2
    assert capsys.readouterr().err == (f"ledgerviz report: {tmp_path / 'hard.jsonl'} is the same "
                                       f"file as the input {parent}; refusing to overwrite it\n")
    assert parent.read_bytes() == PARENT.read_bytes()
