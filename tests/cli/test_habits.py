"""Command-line habits (issue 11): help without arguments, --version, one exit-code table."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ledgerviz
from ledgerviz.cli import COMMANDS, EXIT_CODES, main


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
