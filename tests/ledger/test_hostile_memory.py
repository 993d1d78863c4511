"""Memory bounds against files built to exhaust it (issue 38): a torn tail of NUL bytes
far larger than a block, a line or torn tail of printable text longer than the line cap
(``MAX_LINE_UNITS``), and a packed row standing for millions of deltas. Bounds are in
traced bytes (tracemalloc): multiples of the reader's block (``READ_BYTES``, 1 MiB), or of the
hostile row."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ledger_lines import encode, mark, turn_start

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.reader import (
    MAX_LINE_UNITS,
    READ_BYTES,
    FileScan,
    line_blocks,
    utf16_units,
)
from ledgerviz.ledger.runtime_read import Fragment, runtime_read
from ledgerviz.ledger.sources import iter_source_chunks

Peak = Callable[[Callable[[], object]], int]
V0_HEADER = {"type": "session", "version": 0, "id": "h0", "createdAt": 0, "delegationDepth": 0}
TAIL = 48 * READ_BYTES  # 48 MiB of NUL bytes after the last newline


def nul_tail(path: Path) -> bytes:
    """Write a two-line ledger followed by ``TAIL`` NUL bytes (written a block at a time)."""
    good = encode([V0_HEADER, turn_start(0)])
    with path.open("wb") as out:
        out.write(good)
        for _ in range(TAIL // READ_BYTES):
            out.write(bytes(READ_BYTES))
    return good


def test_a_torn_tail_of_nul_bytes_is_measured_not_held(tmp_path: Path, traced_peak: Peak) -> None:
    path = tmp_path / "torn.jsonl"
    good = nul_tail(path)
    found: list[object] = []

    def repair_read() -> None:
        ((_, chunks),) = iter_source_chunks(str(path), READ_BYTES)
        found.append(runtime_read(str(path), chunks, lambda fields: None))

    peak = traced_peak(repair_read)
    assert peak < 6 * READ_BYTES  # the tail is 48 blocks: held, it would be 48 at least
    [read] = found
    assert read.cut == Fragment(3, len(good), TAIL)  # type: ignore[attr-defined]
    assert [(d.line, d.kind, d.message) for d in read.diagnostics] == [  # type: ignore[attr-defined]
        (3, "torn_tail", f"last line has no newline ({TAIL} bytes): an interrupted append, "
         "dropped")]


def test_a_long_line_of_nul_bytes_mid_file_is_one_error_at_its_first_byte(
    tmp_path: Path, traced_peak: Peak,
) -> None:
    path = tmp_path / "nul-line.jsonl"
    nul_tail(path)
    with path.open("ab") as out:
        out.write(b"\n" + encode([turn_start(1)]))
    logs: list[object] = []
    peak = traced_peak(lambda: logs.extend(read_sessions(path)))
    assert peak < 6 * READ_BYTES
    [log] = logs
    assert [(d.line, d.kind, d.message) for d in log.diagnostics][:1] == [  # type: ignore[attr-defined]
        (3, "invalid_json", "not valid JSON: unexpected character, expected a JSON value: "
         "line 1 column 1 (char 0)")]


def test_a_packed_row_of_too_many_deltas_is_refused_before_it_is_expanded(
    tmp_path: Path, traced_peak: Peak,
) -> None:
    deltas = 200_000  # 1 MB of row; expanded, some 140 MB of chunk events
    row = (b'{"type":"text-chunks","seq0":1,"time0":0,"data":{"turn":1,"step":1,"index":0,'
           b'"dt":[' + b",".join([b"0"] * (deltas - 1)) + b'],"texts":['
           + b",".join([b'""'] * deltas) + b"]}}\n")
    path = tmp_path / "bomb.jsonl"
    path.write_bytes(encode([V0_HEADER, turn_start(0)]) + row)
    logs: list[object] = []
    peak = traced_peak(lambda: logs.extend(read_sessions(path)))
    # its decoded lists cost some 17 bytes a byte of row; its chunk events would cost 140
    assert peak < 20 * len(row)
    [log] = logs
    assert [(d.line, d.kind, d.message) for d in log.diagnostics] == [  # type: ignore[attr-defined]
        (3, "invalid_event", "packed text-chunks row stands for 200,000 deltas, more than the "
         "65,536 one row is expanded into: not expanded")]


CAP = 4 * READ_BYTES  # a line cap of 4 MiB, to keep the files small


def scanned(path: Path, max_line: int = CAP) -> FileScan:
    """Return a ``FileScan`` of ``path`` (capped at ``max_line`` code units) read to its end."""
    scan = FileScan(str(path), max_line=max_line)
    ((_, chunks),) = iter_source_chunks(str(path), READ_BYTES)
    for _ in scan.blocks(chunks):
        pass
    return scan


def test_the_default_cap_is_the_longest_string_v8_makes() -> None:
    assert MAX_LINE_UNITS == 536_870_888  # 2**29 - 24: V8's String::kMaxLength on 64 bits


@pytest.mark.parametrize(("text", "units"), [("", 0), ("abc", 3), ("é", 1), ("€", 1),
                                              ("😀", 2), ("aé😀", 4), ("\u0000x", 2)])
def test_utf16_units_counts_as_javascript_length(text: str, units: int) -> None:
    assert utf16_units(text.encode()) == units
    encoded = text.encode()  # cut inside a character, the two halves still count it once
    assert sum(utf16_units(encoded[:i]) + utf16_units(encoded[i:])
               for i in range(len(encoded) + 1)) == units * (len(encoded) + 1)


def test_a_torn_tail_of_printable_text_is_measured_not_held(
    tmp_path: Path, traced_peak: Peak,
) -> None:
    path = tmp_path / "torn-text.jsonl"
    good = encode([V0_HEADER, turn_start(0)])
    with path.open("wb") as out:
        out.write(good)
        for _ in range(TAIL // READ_BYTES):
            out.write(b"a" * READ_BYTES)
    found: list[FileScan] = []
    peak = traced_peak(lambda: found.append(scanned(path)))
    assert peak < CAP + 6 * READ_BYTES  # the tail is 48 blocks: held, it would be 48 at least
    [scan] = found
    assert [(d.line, d.kind, d.message) for d in scan.log.items] == [
        (3, "torn_tail", f"last line has no newline ({TAIL} bytes): an interrupted append, "
         "dropped")]


def test_a_line_longer_than_the_cap_is_one_error_and_the_next_lines_are_read(
    tmp_path: Path, traced_peak: Peak,
) -> None:
    path = tmp_path / "long-line.jsonl"
    size = 12 * READ_BYTES  # 12,582,912 bytes of "a", then its newline
    with path.open("wb") as out:
        out.write(encode([V0_HEADER, turn_start(0)]))
        for _ in range(size // READ_BYTES):
            out.write(b"a" * READ_BYTES)
        out.write(b"\n" + encode([mark(1)]))
    found: list[FileScan] = []
    peak = traced_peak(lambda: found.append(scanned(path)))
    assert peak < CAP + 6 * READ_BYTES
    [scan] = found
    assert [(d.line, d.kind, d.severity, d.message) for d in scan.log.items] == [
        (3, "line_too_long", "error", "line is 12,582,912 bytes, longer than the 4,194,304 "
         "UTF-16 code units a runtime can write as one line: skipped, not read")]
    assert scan.skipped == 1 and scan.lines_read == 4


def test_a_line_over_the_cap_in_bytes_but_not_in_code_units_is_read(
    tmp_path: Path, write_ledger: Callable[..., Path],
) -> None:
    # 3,000,000 "é" are 6,000,000 bytes but 3,000,000 code units, under the 4 MiB cap;
    # 1,100,000 "😀" are 4,400,000 bytes and 2,200,000 code units
    for text in ("é" * 3_000_000, "😀" * 1_100_000):
        message = {"type": "user/message", "seq": 1, "time": 0,
                   "data": {"id": "u", "role": "user", "content": [{"type": "text",
                                                                    "text": text}]},
                   "surfaceOp": "append"}
        scan = scanned(write_ledger([V0_HEADER, turn_start(0), message]))
        assert [d.kind for d in scan.log.items] == [] and scan.skipped == 0


def test_a_last_line_past_the_cap_in_its_final_chunk_is_too_long(
    tmp_path: Path, write_ledger: Callable[..., Path],
) -> None:
    """The cap is passed in the chunk holding the line's newline: still one error."""
    path = write_ledger([V0_HEADER, turn_start(0)], tail=b"b" * (CAP + 10) + b"\n")
    scan = scanned(path)
    assert [(d.line, d.kind) for d in scan.log.items] == [(3, "line_too_long")]
    assert f"line is {CAP + 10:,} bytes" in scan.log.items[0].message


def test_a_cap_under_a_block_is_refused() -> None:
    with pytest.raises(ValueError, match="max_line must be at least 1,048,576, got 1,000"):
        line_blocks([], max_line=1_000)


DSH_FIXTURES = sorted((Path(__file__).parents[1] / "data" / "dsh").glob("*.jsonl"))


@pytest.mark.parametrize("path", DSH_FIXTURES, ids=lambda path: path.name)
def test_the_real_ledgers_read_without_a_line_too_long_at_the_smallest_cap(path: Path) -> None:
    scan = scanned(path, max_line=READ_BYTES)
    assert "line_too_long" not in {d.kind for d in scan.log.items}
    assert scan.lines_read == len(path.read_bytes().splitlines())
