"""An empty or whitespace-only file says the same in every format, whether its format is
sniffed or forced (``format=``): one ``empty_file`` warning at line 1 measuring what it
holds, and each blank line counted as skipped."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ledgerviz.ledger import read_sessions

FORMATS = [None, "dsh", "claude_code", "codex", "gemini"]

CASES = [
    (b"", 0, "file is empty: no header, no events"),
    (b"\n\n  \n", 3, "file holds only whitespace: 3 blank lines, 5 bytes: no header, no events"),
    (b"  ", 1, "file holds only whitespace: 1 blank line, 2 bytes: no header, no events"),
    (b"\r\n", 1, "file holds only whitespace: 1 blank line, 2 bytes: no header, no events"),
]


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize(("content", "blank", "message"), CASES)
def test_an_empty_file_says_so_in_every_format(
        tmp_path: Path, format: str | None, content: bytes, blank: int, message: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    for source in (path, io.BytesIO(content)):
        [log] = read_sessions(source, format=format)
        assert len(log.events) == 0
        assert log.lines_skipped == blank
        said = [(d.line, d.kind, d.severity, d.message) for d in log.diagnostics
                if d.kind != "line_counts"]
        assert said == [(1, "empty_file", "warning", message)]


def test_claude_codes_line_count_counts_the_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"\n\n  \n")
    [log] = read_sessions(path, format="claude_code")
    [counts] = [d.message for d in log.diagnostics if d.kind == "line_counts"]
    assert counts.startswith("3 lines: 0 records written as events")
    assert counts.endswith(", 3 unreadable (blank, invalid, torn or not an object)")
