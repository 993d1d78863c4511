"""Command-line habits (issue 11): help without arguments, --version, one exit-code table."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import ledgerviz
from ledgerviz.cli import COMMANDS, EXIT_CODES, main
from ledgerviz.examples import example_path


def test_no_arguments_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out = capsys.readouterr().out
    assert out.startswith("usage: ledgerviz")
    assert all(name in out for name in COMMANDS)
    assert EXIT_CODES in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"ledgerviz {ledgerviz.__version__}\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_documents_the_same_exit_codes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert EXIT_CODES in capsys.readouterr().out


def test_python_dash_m_runs_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "ledgerviz", "--version"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, f"ledgerviz {ledgerviz.__version__}\n")


@pytest.mark.parametrize("command", [["check"], ["check", "--json"], ["repair"]])
def test_a_closed_stdout_is_one_line_and_exit_2_not_a_traceback(command: list[str]) -> None:
    """``ledgerviz check PATH | head``: once the reader has gone, the write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads: the first write to stdout fails with EPIPE
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ledgerviz", *command, str(example_path("crash-mid-dispatch"))],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode == 2
    assert done.stderr == f"ledgerviz {command[0]}: cannot write stdout: Broken pipe\n"


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("ledgerviz.summary.summarize_file", interrupted)
    assert main(["check", "--stream", str(example_path("clean"))]) == 130
    assert capsys.readouterr().err == "ledgerviz check: interrupted\n"
