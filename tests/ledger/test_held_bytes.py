"""A ledger that cannot be read again (a ``.jsonl.zst``, a stream) keeps its bytes for its
events to be decoded on demand, but not the bytes no event is decoded from: a small
compressed file that decompresses to a torn tail of NUL bytes or to blank lines is measured,
not held (bounds in traced bytes, multiples of the reader's block), and the events around
what was let go decode as written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from ledger_lines import HEADER, encode, mark, turn_start

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.reader import READ_BYTES

zstandard = pytest.importorskip("zstandard")

TAIL = 48 * READ_BYTES


def _zst(path: Path, head: bytes, filler: bytes, tail: bytes = b"") -> None:
    """Write ``head``, ``TAIL`` bytes of ``filler`` (a block at a time), ``tail``, as zstd."""
    with path.open("wb") as out, zstandard.ZstdCompressor().stream_writer(out) as writer:
        writer.write(head)
        for _ in range(TAIL // READ_BYTES):
            writer.write(filler * (READ_BYTES // len(filler)))
        writer.write(tail)


def test_a_compressed_torn_tail_of_nul_bytes_is_measured_not_held(
        tmp_path: Path, traced_peak) -> None:
    path = tmp_path / "bomb.jsonl.zst"
    _zst(path, encode([HEADER, turn_start(0), mark(1)]), b"\0")
    logs: list = []
    peak = traced_peak(lambda: logs.extend(read_sessions(path)))
    assert peak < 8 * READ_BYTES  # the tail is 48 blocks: held, it would be 48 at least
    [log] = logs
    assert [(d.line, d.kind, d.message) for d in log.diagnostics] == [
        (4, "torn_tail", f"last line has no newline ({TAIL} bytes): an interrupted "
         "append, dropped")]
    assert list(log.events) == [turn_start(0), mark(1)]
    # blank lines, a NUL line and spaces before an event are let go too: the event after
    # them decodes as written
    gaps = READ_BYTES * 2
    content = (encode([HEADER, turn_start(0)]) + b"\n" * gaps + b"\0" * gaps + b"\n"
               + b" " * gaps + encode([mark(1)]))  # the mark's line opens with the spaces
    path.write_bytes(zstandard.ZstdCompressor().compress(content))
    for source in (path, io.BytesIO(content)):
        [log] = read_sessions(source)
        assert list(log.lines) == [2, 3 + gaps + 1]  # header, turn/start, blanks, NULs
        assert list(log.events) == [turn_start(0), mark(1)]
