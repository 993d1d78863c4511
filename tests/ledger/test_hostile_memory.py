"""Memory bounds against files built to exhaust it (issue 38): a torn tail of NUL bytes
far larger than a block, and a packed row standing for millions of deltas. Bounds are in
traced bytes (tracemalloc): multiples of the reader's block (``READ_BYTES``, 1 MiB), or of the
hostile row."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ledger_lines import encode, turn_start

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.reader import READ_BYTES
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
