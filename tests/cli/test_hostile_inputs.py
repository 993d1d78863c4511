"""Every command over every hostile input: exit 0/1/2, one clear line, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_inputs import HEADER, base_events, cases, encode

from ledgerviz.cli import main

Capture = pytest.CaptureFixture[str]
DATA = Path(__file__).parents[1] / "data"
HANG_SECONDS = 300  # the ``no_hang`` guard: a blocked open fails the test, never hangs CI
pytestmark = pytest.mark.usefixtures("no_hang")


@pytest.fixture(scope="module")
def bad_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bad")
    for name, content in cases().items():
        (folder / name).write_bytes(content)
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "squeezed.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00rest")
    (folder / "gzip-named-jsonl.jsonl").write_bytes(b"\x1f\x8b\x08\x00rest")
    (folder / "sub").mkdir()
    (folder / "sub" / "loop").symlink_to("..")
    (folder / "sub" / "ok.jsonl").write_bytes(encode(HEADER, base_events()))
    (folder / os.fsdecode(b"name-\xff\xfe.jsonl")).write_bytes(encode(HEADER, base_events()))
    for name in ("claude_code/basic.jsonl", "codex/basic.jsonl", "gemini/basic.jsonl"):
        # a Claude Code transcript makes the per-file routes look beside it for the session
        # it resumes, opening the folder's other files: the FIFO among them
        (folder / name.replace("/", "-")).write_bytes((DATA / name).read_bytes())
    return folder


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ledgerviz", *argv],
        capture_output=True, text=True, errors="backslashreplace", timeout=120,
    )


@pytest.mark.parametrize(
    "argv",
    [["check"], ["check", "--strict"], ["check", "--json"], ["report", "-o", "REPORT"],
     ["otlp", "-o", "REPORT"]],
)
def test_every_command_over_the_whole_folder(
    bad_folder: Path, tmp_path: Path, capsys: Capture, argv: list[str]
) -> None:
    argv = [str(tmp_path / "r.html") if a == "REPORT" else a for a in argv]
    assert main([*argv, str(bad_folder)]) == 1  # in-process: any exception fails the test
    captured = capsys.readouterr()
    if "--json" in argv:
        document = json.loads(captured.out)
        paths = {s["path"] for s in document["sessions"]}
        assert str(bad_folder / "name-\\xff\\xfe.jsonl") in paths
        kinds = {d["kind"] for s in document["sessions"] for d in s["diagnostics"]}
        assert {"not_a_file", "compressed_file", "not_a_ledger", "second_header",
                "byte_order_mark", "big_integer", "invalid_event", "seq_gap"} <= kinds


def test_otlp_reads_each_hostile_file_streamed_to_the_spans_it_loads(
    bad_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    import ledgerviz.export.dataset as dataset
    import ledgerviz.export.otlp as otlp

    def spans(path: Path) -> list[str]:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        return sorted(json.dumps(span) for line in lines for resource in line["resourceSpans"]
                      for scope in resource["scopeSpans"] for span in scope["spans"])

    # one file a batch, as a streamed file is read: keys are made unique within a batch
    monkeypatch.setattr(dataset, "_BATCH_FILES", 1)
    loaded, streamed = tmp_path / "loaded.json", tmp_path / "streamed.json"
    assert main(["otlp", "-o", str(loaded), str(bad_folder)]) == 1
    monkeypatch.setattr(otlp, "STREAM_BYTES", 0)  # every dsh file of one byte or more
    assert main(["otlp", "-o", str(streamed), str(bad_folder)]) == 1
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 2 and said[0].split(" to ")[0] == said[1].split(" to ")[0]
    assert spans(streamed) == spans(loaded)
    assert len(spans(loaded)) > 100


def test_repair_on_each_bad_input(bad_folder: Path, capsys: Capture) -> None:
    codes = {}
    for path in sorted(bad_folder.glob("*.jsonl")):
        if path.is_fifo():
            continue
        codes[path.name] = main(["repair", str(path)])
        captured = capsys.readouterr()
        if codes[path.name] != 0:
            assert captured.out == "", path.name  # nothing to append unless exit 0
    assert set(codes.values()) <= {0, 1}
    assert codes["open-tail.jsonl"] == 0 and codes["torn-tail.jsonl"] == 1
    assert codes["reason-kind-object.jsonl"] == 0  # the runtime reads it: nothing to cut
    assert codes["message-list.jsonl"] == 1  # its repair scan fails on it: refused


def test_a_fifo_or_device_named_directly_is_refused_at_once(
    bad_folder: Path, tmp_path: Path, capsys: Capture
) -> None:
    for path in (bad_folder / "pipe.jsonl", "/dev/zero"):
        for argv in (["check"], ["repair"], ["report", "-o", str(tmp_path / "r.html")]):
            assert main([*argv, str(path)]) == 2
            assert "not a file" in capsys.readouterr().err
    done = run_cli("check", str(bad_folder / "pipe.jsonl"))  # the real command, end to end
    assert done.returncode == 2
    assert "a named pipe (FIFO), not a file" in done.stderr and "Traceback" not in done.stderr


def test_check_text_neutralises_terminal_control_characters(tmp_path: Path,
                                                            capsys: Capture) -> None:
    path = tmp_path / "esc.jsonl"
    path.write_bytes(cases()["escape-codes.jsonl"])
    main(["check", str(path)])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\x0dsid" in out


def test_symlink_loops_end_and_check_ends_with_one_summary_line(
    tmp_path: Path, capsys: Capture
) -> None:
    (tmp_path / "ok.jsonl").write_bytes(encode(HEADER, base_events()))
    (tmp_path / "self").symlink_to(".")
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "up").symlink_to("..")
    for source in (tmp_path, tmp_path / "**" / "*.jsonl"):
        assert main(["check", str(source)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[-1] == "checked 1 session, 0 with errors, 0 errors, 0 warnings: ok"
    (tmp_path / "torn.jsonl").write_bytes(cases()["torn-tail.jsonl"])
    (tmp_path / "dup.jsonl").write_bytes(cases()["seq-duplicate.jsonl"])
    assert main(["check", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "checked 3 sessions, 1 with errors, 2 errors, 1 warning: FAILED"
    )


def test_not_a_ledger_is_said_once(tmp_path: Path) -> None:
    from ledgerviz.ledger import read_sessions

    path = tmp_path / "table.jsonl"
    path.write_bytes(cases()["not-a-ledger-csv.jsonl"])
    (log,) = read_sessions(path)
    assert [(d.kind, d.line) for d in log.diagnostics] == [("not_a_ledger", 1)]
    assert log.lines_skipped == 400  # every line, line 1 (no header) too
