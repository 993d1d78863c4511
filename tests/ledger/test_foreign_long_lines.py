"""A line longer than one line is read, and a torn last line held only in part, in the
transcripts of other agents: said with their real size, never held whole.

A ``.jsonl.zst`` of a few kilobytes can decompress to a line of gigabytes (a bomb); the
decompressed bytes come a mebibyte at a time and the line past the cap is counted, not
kept. The sizes below are the bytes written by the tests themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

import ledgerviz
from ledgerviz.ledger import formats
from ledgerviz.ledger.compressed import zstd_chunks
from ledgerviz.ledger.session import SessionLog

DATA = Path(__file__).parent.parent / "data"
FOREIGN = ["claude_code/basic.jsonl", "codex/basic.jsonl", "gemini/basic.jsonl"]
CAP = 4 << 20  # a line cap of 4 MiB (UTF-16 code units), to keep the files small
LONG = (64 << 20) + 3  # a line of that many ASCII bytes is that many code units


def zst_with_long_line(path: Path, first_lines: bytes, length: int) -> Path:
    """Write ``first_lines``, then a line of ``length`` letters and its newline, zst-packed."""
    with path.open("wb") as file, zstandard.ZstdCompressor(level=1).stream_writer(file) as out:
        out.write(first_lines)
        block = b"a" * (1 << 24)
        for _ in range(length // len(block)):
            out.write(block)
        out.write(b"a" * (length % len(block)) + b"\n")
    return path


def test_a_zstd_bomb_comes_a_mebibyte_at_a_time(tmp_path: Path) -> None:
    path = zst_with_long_line(tmp_path / "bomb.jsonl.zst", b"", 64 << 20)
    assert path.stat().st_size < 64 << 10  # 64 MiB of one letter packs into a few KiB
    with path.open("rb") as raw:
        sizes = [len(chunk) for chunk in zstd_chunks(raw, None)]
    assert sum(sizes) == (64 << 20) + 1
    assert max(sizes) <= 1 << 20


@pytest.mark.parametrize("name", FOREIGN)
def test_a_line_past_the_cap_is_said_with_its_size_and_not_held(
        name: str, tmp_path: Path, traced_peak: Callable[[Callable[[], object]], int]) -> None:
    head = (DATA / name).read_bytes().splitlines(keepends=True)[:2]
    path = zst_with_long_line(tmp_path / "long.jsonl.zst", b"".join(head), LONG)
    reader = formats.format_named(name.split("/")[0])
    read: list[SessionLog] = []

    def run() -> None:
        with path.open("rb") as raw:
            read.append(reader.read(str(path), zstd_chunks(raw, None),
                                    formats.ReadOptions(max_line=CAP)))

    assert traced_peak(run) < 4 * CAP  # the line is 16 times the cap
    found = [(d.line, d.kind, d.message) for d in read[0].diagnostics
             if d.kind == "line_too_long"]
    assert found == [(3, "line_too_long", f"line is {LONG:,} bytes, longer than the "
                      f"{CAP:,} UTF-16 code units read as one line: skipped, not read")]


@pytest.mark.parametrize("name", ["codex/basic.jsonl", "gemini/basic.jsonl"])
def test_a_torn_last_line_held_in_part_says_its_whole_size(name: str, tmp_path: Path) -> None:
    """A crash left 3 MiB of NUL bytes after the start of a line and no newline: the reader
    holds the line up to its first NUL only, and the warning gives every byte."""
    torn = b'{"timestamp":' + b"\x00" * (3 << 20)
    path = tmp_path / "torn.jsonl"
    path.write_bytes((DATA / name).read_bytes() + torn)
    ledger = ledgerviz.load(path)
    (warning,) = [d for d in ledger.diagnostics if d.kind == "torn_tail"]
    assert warning.message == (f"last line has no newline and is no JSON ({len(torn)} bytes): "
                               "an interrupted append, dropped")
