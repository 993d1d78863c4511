"""A file of blank lines alone is not empty: its diagnostic says what it holds, and each of
its lines is counted as skipped (read whole, in chunks or as a stream alike)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.cli import main


@pytest.mark.parametrize(("content", "lines", "message"), [
    (b"\n\n\n", 3, "file holds only whitespace: 3 blank lines, 3 bytes: no header, no events"),
    (b" \r\n\t\n" * 1000, 2000,
     "file holds only whitespace: 2,000 blank lines, 5,000 bytes: no header, no events"),
    (b"\n  ", 2, "file holds only whitespace: 2 blank lines, 3 bytes: no header, no events"),
    (b"   ", 1, "file holds only whitespace: 1 blank line, 3 bytes: no header, no events")])
def test_a_file_of_blank_lines_says_how_many(tmp_path: Path, content: bytes, lines: int,
                                              message: str) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_bytes(content)
    for source in (path, io.BytesIO(content)):
        ledger = ledgerviz.load(source)
        assert [(d.kind, d.line, d.severity, d.message) for d in ledger.diagnostics] == [
            ("empty_file", 1, "warning", message)]
        assert ledger.sessions[0].lines_skipped == lines


def test_check_counts_a_blank_files_lines(tmp_path: Path, capsys) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_bytes(b"\n" * 3 * 1024 * 1024)  # longer than a read block
    for stream in ([], ["--stream"]):
        assert main(["check", *stream, str(path)]) == 0
        out = capsys.readouterr().out
        assert "lines skipped: 3145728" in out
        assert "file holds only whitespace: 3,145,728 blank lines, 3,145,728 bytes" in out
