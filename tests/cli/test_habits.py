"""Command-line habits (issue 11): help without arguments, --version, one exit-code table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_inputs import HEADER, base_events, encode

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

    monkeypatch.setattr("ledgerviz.streams.summary.summarize_file", interrupted)
    assert main(["check", "--stream", str(example_path("clean"))]) == 130
    assert capsys.readouterr().err == "ledgerviz check: interrupted\n"


def test_text_escapes_what_an_ascii_stdout_cannot_hold_and_json_stays_utf8(tmp_path: Path
                                                                         ) -> None:
    """Under ``PYTHONIOENCODING=ascii`` the text for people escapes a non-ASCII id; what
    programs read (check --json, repair's JSONL, meant for ``>> PATH``) is UTF-8 as is."""
    header = {**HEADER, "id": "séance"}
    events = base_events()[:5]  # the call is requested (seq 3) and dispatched (seq 4)
    events[3]["data"]["message"]["content"][0]["id"] = "appel-é"
    events[4]["data"]["callId"] = "appel-é"
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(encode(header, events))

    def run(*command: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "ledgerviz", *command, str(path)],
                              capture_output=True, timeout=120,
                              env={**os.environ, "PYTHONIOENCODING": "ascii"})

    text, document, closers = run("check"), run("check", "--json"), run("repair")
    assert b"Traceback" not in text.stderr + document.stderr + closers.stderr
    assert text.stdout.startswith(b"s\\xe9ance  (")
    helped = run("fork", "--help")  # its description cites LEDGER_FORMAT \u00a711
    assert (helped.returncode, helped.stderr) == (0, b"") and b"\\xa711" in helped.stdout
    assert json.loads(document.stdout.decode("utf-8"))["sessions"][0]["id"] == "séance"
    result = json.loads(closers.stdout.decode("utf-8").splitlines()[0])
    assert result["data"]["message"]["toolCallId"] == "appel-é"


@pytest.mark.parametrize("command", [["check"], ["repair"], ["report", "-o", "r.html"],
                                     ["fork", "-o", "c.jsonl"], ["export", "-o", "out"],
                                     ["otlp", "-o", "spans.json"]])
def test_an_empty_path_is_refused_not_read_as_the_current_folder(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # a folder with a ledger, which "" must not read
    (tmp_path / "here.jsonl").write_bytes(example_path("clean").read_bytes())
    assert main([command[0], "", *command[1:]]) == 2
    assert capsys.readouterr().err == (
        f"ledgerviz {command[0]}: an empty path names no file (an unset variable?)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here.jsonl"]  # nothing written


def test_json_for_a_stdout_closed_from_the_start_is_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ledgerviz", "repair", str(example_path("crash-mid-dispatch"))],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, timeout=120, preexec_fn=lambda: os.close(1))  # started without fd 1
    assert (done.returncode, done.stderr) == (
        2, "ledgerviz repair: cannot write stdout: it is closed\n")


@pytest.mark.parametrize("command", [["check"], ["export", "-o", "out"]])
def test_text_to_a_full_disk_is_one_line_and_exit_2(command: list[str], tmp_path: Path) -> None:
    """``ledgerviz check PATH > /dev/full``: the text the command prints cannot be written."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "ledgerviz", command[0], str(example_path("clean")),
             *command[1:]], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
            cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2, f"ledgerviz {command[0]}: cannot write stdout: No space left on device\n")
