"""The Claude Code reader's two passes: the first keeps each record's ``Entry`` (typed, with
``msgspec``, where it can) and its line's byte range; the second decodes each record again
from those bytes. Expected values are the literals written here, worked out by hand, or,
for the typed first pass, what the checked route (``record_of`` + ``entry_of``, tested in
``test_claude_code_records``) makes of the same line."""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from ledgerviz.ledger.diagnostics import PendingDiagnostics
from ledgerviz.ledger.formats import ReadOptions, claude_code, claude_code_entries
from ledgerviz.ledger.formats.claude_code_entries import Marks, RecordSource, entry_of
from ledgerviz.ledger.formats.claude_code_fields import Facts, Result
from ledgerviz.ledger.formats.claude_code_records import record_of
from ledgerviz.ledger.formats.claude_code_scan import scanned
from ledgerviz.ledger.numbers import number_marks
from ledgerviz.ledger.reader import READ_BYTES
from ledgerviz.ledger.reread import LedgerChangedError, LineSource
from ledgerviz.ledger.sources import FileChunks, FileOrigin, file_identity
from ledgerviz.recovery.vocab import MISSING

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"
JAN_5_10H_MS = 1_767_607_200_000
"""2026-01-05T10:00:00Z in epoch ms (see ``test_claude_code_records``)."""


def _progress(number: int) -> dict[str, Any]:
    return {"type": "progress", "uuid": f"p{number}", "parentUuid": None, "sessionId": "s",
            "data": {"n": number, "text": "é\u2028 line"}}


def _chunks(path: Path, origin: FileOrigin | None) -> Iterator[bytes]:
    """Yield the file 4 KiB at a time, noting it read to its end in ``origin``."""
    with path.open("rb") as file:
        while chunk := file.read(4096):
            yield chunk
        if origin is not None:
            origin.identity = file_identity(os.fstat(file.fileno()))


def _odd_file() -> bytes:
    """A transcript whose line offsets are not its lines' lengths added up: a byte order
    mark, leading blank lines, CRLF ends, a line past the cap, a last line with no newline."""
    lines = [orjson.dumps(_progress(n)) for n in range(1, 5)]
    too_long = b'{"type":"progress","x":"' + b"a" * READ_BYTES + b'"}'
    return (b"\xef\xbb\xbf\n \n" + lines[0] + b"\r\n" + lines[1] + b"\n" + too_long + b"\n\n"
            + lines[2] + b"\r\n" + lines[3])


@pytest.mark.parametrize("packed", [False, True], ids=["file read again", "lines held"])
def test_every_record_is_decoded_again_from_its_own_line(tmp_path: Path, packed: bool) -> None:
    content = _odd_file()
    path = tmp_path / "odd.jsonl"
    path.write_bytes(content)
    origin = None if packed else FileOrigin(str(path))  # None: the records' lines held
    chunks = FileChunks(_chunks(path, origin), origin)
    session = claude_code.read(str(path), chunks, ReadOptions(max_line=READ_BYTES,
                                                              origin=origin))
    logged = [(event["data"], line) for event, line in zip(session.events, session.lines,
                                                             strict=True)
              if event["type"] == "claude-code/progress"]
    # lines: 1 and 2 blank (after the mark), 3 and 4 the first records, 5 too long,
    # 6 blank, 7 and 8 the last records
    assert logged == [(_progress(1), 3), (_progress(2), 4), (_progress(3), 7),
                      (_progress(4), 8)]
    kinds = [d.kind for d in session.diagnostics]
    assert "line_too_long" in kinds and "byte_order_mark" in kinds


def test_a_record_whose_bytes_no_longer_decode_is_a_changed_file() -> None:
    source = RecordSource(LineSource("t.jsonl", b'{"a":1}\n\n{"b":2}\n'), array("q", [0, 9]),
                          array("q", [7, 16]))
    assert source.raw(1) == {"b": 2}
    assert source.raw(0) == {"a": 1}
    cut = RecordSource(LineSource("t.jsonl", b'{"a":1}\n{"b":'), array("q", [0, 8]),
                       array("q", [7, 13]))  # the second record's line cut short since
    with pytest.raises(LedgerChangedError, match="the line of record 1 is no longer where it"):
        cut.raw(1)


class _Spans(LineSource):
    """Bytes held, noting the spans of each read."""

    __slots__ = ("reads",)

    def __init__(self, content: bytes) -> None:
        super().__init__("t.jsonl", content)
        self.reads: list[list[tuple[int, int]]] = []

    def read(self, spans: Any) -> list[bytes]:
        self.reads.append(list(spans))
        return super().read(spans)


def test_records_are_read_again_in_runs_that_end_at_a_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # five 8-byte lines: record n is bytes 8n to 8n + 7, its newline at 8n + 7
    lines = _Spans(b"".join(b'{"n":%d}\n' % n for n in range(5)))
    monkeypatch.setattr(claude_code_entries, "RUN_BYTES", (8, 16))
    source = RecordSource(lines, array("q", range(0, 40, 8)), array("q", range(7, 47, 8)))
    assert source.raw(0) == {"n": 0}  # a run of 16 bytes from record 0: records 0 to 2
    assert [source.raw(n) for n in (1, 2)] == [{"n": 1}, {"n": 2}]
    assert source.raw(3) == {"n": 3}  # the next run, from record 3: 3 and 4
    assert source.raw(4) == {"n": 4}
    assert source.raw(1) == {"n": 1}  # out of order: 8 bytes from record 1, records 1 and 2
    assert lines.reads == [[(0, 24)], [(23, 40)], [(7, 24)]]  # from the byte before each


def _line(**fields: Any) -> bytes:
    record = {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": "s",
              "timestamp": "2026-01-05T10:00:00Z", **fields}
    return orjson.dumps(record)


REFUSAL = "The user doesn't want to proceed with this tool use. The tool use was rejected."


def test_the_typed_pass_reads_the_facts_of_a_refusal_by_hand() -> None:
    refused = _line(toolUseResult={"stdout": ""}, message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
         "content": [{"type": "text", "text": REFUSAL}]},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok"}]})
    note = _line(uuid="u3", message={"role": "user", "content": [
        {"type": "text", "text": "[Request interrupted by user for tool use]"}]})
    answer = _line(type="assistant", uuid="a2", message={"id": "msg_1", "content": []})
    progress = _line(type="progress", uuid="p1", toolUseID="toolu_3",
                     parentToolUseID="toolu_4", cwd="/repo")
    lines = [refused, note, answer, progress]
    found = PendingDiagnostics()
    block = b"\n".join(lines)
    entries = scanned(lines, block, number_marks(block), 10, 0, found, {})
    assert entries is not None
    assert [at for at, _, _ in entries] == [0, 1, 2, 3]
    first, second, third, fourth = (entry for _, entry, _ in entries)
    assert (first.line, first.time, first.prompt, first.key) == (10, JAN_5_10H_MS, False, None)
    assert first.marks == Marks(("toolu_1", "toolu_2"), ("toolu_1",), False)
    assert second.marks == Marks((), (), True) and not second.prompt
    assert (third.key, third.marks) == ("msg_1", None)
    assert (fourth.marks, fourth.cwd) == (Marks(("toolu_3", "toolu_4"), (), False), "/repo")
    # what the typed route writes of each, kept so that it reads no line again
    m = MISSING
    assert [facts for _, _, facts in entries] == [
        Facts(m, m, False, (), (Result(0, "toolu_1", True, REFUSAL), Result(1, "toolu_2", None,
              "ok")), False, False, False, None, None, ()),
        Facts(m, m, False, ("[Request interrupted by user for tool use]",), (), True, True,
              False, None, None, ()),
        Facts(m, m, False, (), (), False, False, False, None, None, ()),
        Facts(m, m, False, (), (), False, False, False, None, None, ())]


class _Sink:
    def __init__(self) -> None:
        self.seen: list[tuple[int, str, str, str]] = []

    def add(self, line: int, kind: str, message: str, severity: str = "error") -> None:
        self.seen.append((line, kind, message, severity))


WRONG = [None, 7, True, "", "x", [], {}, {"type": "text"}, "2026-01-05T10:00:00",
         "[Request interrupted by user]", 12345678901234567890123]
"""Values put in place of each field of each fixture line."""


def _variants() -> list[bytes]:
    """Every line of the fixtures, and each with one field (top level, of its message, or of
    its first content block) given each of ``WRONG``."""
    variants = []
    for path in sorted(DATA.rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            record = orjson.loads(raw)
            variants.append(raw)
            message = record.get("message")
            places: list[dict[str, Any]] = [record]
            if isinstance(message, dict):
                places.append(message)
                content = message.get("content")
                if isinstance(content, list) and content and isinstance(content[0], dict):
                    places.append(content[0])
            for place in places:
                for key in list(place):
                    kept = place[key]
                    for value in WRONG:
                        place[key] = value
                        variants.append(_dumped(record))
                    place[key] = kept
    return variants


def _dumped(record: dict[str, Any]) -> bytes:
    """Return ``record`` as a JSON line (an integer beyond 64 bits written as its digits)."""
    try:
        return orjson.dumps(record)
    except TypeError:
        return json.dumps(record).encode()


def test_the_typed_pass_makes_the_entries_and_diagnostics_of_the_checked_route() -> None:
    typed = checked = 0
    for line in _variants():
        typed_found, checked_found = _Sink(), _Sink()
        entries = scanned([line], line, number_marks(line), 5, 3, typed_found, {})
        if entries is None:  # msgspec refused it: read the checked way anyway
            checked += 1
            continue
        typed += 1
        record = record_of(orjson.loads(line), 5, checked_found)
        assert [(at, entry) for at, entry, _ in entries] == (
            [] if record is None else [(0, entry_of(record, 3, {}))]), line
        assert typed_found.seen == checked_found.seen, line
    assert typed > 1000 and checked > 100  # both routes were taken, many times
