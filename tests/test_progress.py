"""Progress on long work: off when nobody watches, a stderr line in a terminal, reading
with progress gives the same sessions as reading without, and the commands that read or
write many bytes or files count every one of them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import ledgerviz
import ledgerviz.api
from ledgerviz import progress as progress_module
from ledgerviz.ledger import reader
from ledgerviz.ledger.read import read_sessions

DSH = sorted((Path(__file__).resolve().parent / "data" / "dsh").glob("*.jsonl"))


def test_nobody_watching_means_no_bar() -> None:
    assert progress_module.where_interactive() is None  # pytest captures stderr: no tty
    with progress_module.progress(10**9, 1, "reading") as step:
        assert step is None


def test_small_work_shows_no_bar_even_in_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module, "where_interactive", lambda: "terminal")
    with progress_module.progress(10, 1_000, "reading") as step:
        assert step is None
    with progress_module.progress(None, 1, "reading") as step:
        assert step is None


def test_reading_in_reported_chunks_gives_the_same_sessions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    whole = read_sessions(DSH)  # files under one block each: read whole
    monkeypatch.setattr(reader, "READ_BYTES", 97)  # chunks end mid-line
    reported: list[int] = []
    chunked = read_sessions(DSH, progress=reported.append)
    assert max(reported) == 97
    assert sum(reported) == sum(path.stat().st_size for path in DSH)
    assert [log.events for log in chunked] == [log.events for log in whole]
    assert [log.diagnostics for log in chunked] == [log.diagnostics for log in whole]
    assert [list(log.lines) for log in chunked] == [list(log.lines) for log in whole]


def test_terminal_load_and_analysis_draw_a_bar_on_stderr(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress_module, "where_interactive", lambda: "terminal")
    monkeypatch.setattr(ledgerviz.api, "BYTES_THRESHOLD", 1)  # type: ignore[attr-defined]
    monkeypatch.setattr(ledgerviz.api, "EVENTS_THRESHOLD", 1)
    ledger = ledgerviz.load(DSH)
    ledger.recovery("fork")
    err = capsys.readouterr().err
    # each bar is drawn with its total, then cleared (leave=False) when the work ends
    assert "reading:" in err and "B/s" in err and "analysing (fork):" in err
    assert progress_module.source_size(DSH) == sum(path.stat().st_size for path in DSH)


CRASHED = Path(ledgerviz.__file__).parent / "examples" / "crash-mid-dispatch.jsonl"

COMMANDS_READING_FILES = {
    "check": (["check", str(DSH[0].parent)], DSH),
    "check --stream": (["check", "--stream", str(DSH[0].parent)], DSH),
    "repair": (["repair", str(CRASHED)], [CRASHED]),
}


class Recorded:
    """Stands in for ``progress.progress``: records each bar's total and every step."""

    def __init__(self) -> None:
        self.totals: list[int | None] = []
        self.steps: list[int] = []

    @contextmanager
    def __call__(self, total: int | Callable[[], int | None], threshold: int,
                 description: str, unit: str) -> Iterator[Callable[[int], None]]:
        self.totals.append(total() if callable(total) else total)
        yield self.steps.append


@pytest.mark.parametrize("command", COMMANDS_READING_FILES)
def test_commands_report_every_byte_they_read(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str) -> None:
    from ledgerviz.cli import check, main, repair

    argv, files = COMMANDS_READING_FILES[command]
    code = main(argv)
    quiet = capsys.readouterr().out
    recorded = Recorded()
    monkeypatch.setattr(check, "progress", recorded)
    monkeypatch.setattr(repair, "progress", recorded)
    assert main(argv) == code
    assert capsys.readouterr().out == quiet
    assert recorded.totals == [sum(recorded.steps)] == [sum(f.stat().st_size for f in files)]


def test_export_reports_every_ledger_file_it_writes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ledgerviz.export import dataset as export

    recorded = Recorded()
    monkeypatch.setattr(export, "progress", recorded)
    export.export(DSH, tmp_path)
    assert recorded.totals == [sum(recorded.steps)] == [len(DSH)]
    export.export(DSH, tmp_path)  # nothing changed: nothing to write
    assert recorded.totals[1:] == [0] and sum(recorded.steps) == len(DSH)


def test_simulate_steps_once_per_turn_it_writes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ledgerviz.cli import main, simulate

    recorded = Recorded()
    monkeypatch.setattr(simulate, "progress", recorded)
    path = tmp_path / "large.jsonl"
    assert main(["simulate", "--scenario", "large", "--turns", "40", "-o", str(path)]) == 0
    turn_ends = sum(b'"type":"turn/end"' in line for line in path.read_bytes().splitlines())
    assert recorded.totals == [40] and recorded.steps == [1] * turn_ends == [1] * 40


@pytest.mark.parametrize(("argv", "bar"), [(["check", str(DSH[0].parent)], "checking:"),
                                           (["repair", str(CRASHED)], "reading:")])
def test_a_terminal_draws_the_bar_of_a_command_on_stderr(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        argv: list[str], bar: str) -> None:
    from ledgerviz.cli import check, main, repair

    monkeypatch.setattr(progress_module, "where_interactive", lambda: "terminal")
    monkeypatch.setattr(check, "BYTES_THRESHOLD", 1)
    monkeypatch.setattr(repair, "BYTES_THRESHOLD", 1)
    main(argv)
    err = capsys.readouterr().err
    assert bar in err and "B/s" in err
