"""Lines read again by their byte ranges (``reread``): runs of lines, the reads they take,
and a file changed since it was read. Offsets and values are worked out by hand from the
bytes written here."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from msgspec import Struct

from ledgerviz.ledger import reread
from ledgerviz.ledger.reread import END_KEPT, LedgerChangedError, LineSource, Typed, lines_again
from ledgerviz.ledger.sources import file_identity

CONTENT = b'{"a":1}\n{"b":2}\n\n{"c":3}\r\n{"d":[1]}'
"""Line 1 is bytes 0-7 (its newline at 7), line 2 8-15, line 3 blank (16), line 4 17-25
(a CR at 24, its newline at 25), line 5 26-35 (no newline: the end at 35)."""
STARTS, STOPS = [0, 8, 17, 26], [7, 15, 25, 35]
VALUES = [{"a": 1}, {"b": 2}, {"c": 3}, {"d": [1]}]


def _named(at: int) -> str:
    return f"line {[1, 2, 4, 5][at]}"


def _file(tmp_path: Path, data: bytes, kept: int = END_KEPT) -> tuple[Path, LineSource]:
    """Write ``data`` and return it with its source, as the readers make it once read
    (``kept``: how many of its last bytes the source keeps)."""
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(data)
    return path, LineSource(str(path), identity=file_identity(path.stat()), size=len(data),
                            end=data[-kept:])


class _Counted(LineSource):
    """A source noting the spans of each read."""

    __slots__ = ("reads",)

    def __init__(self, content: bytes) -> None:
        super().__init__("t.jsonl", content)
        self.reads: list[list[tuple[int, int]]] = []

    def read(self, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        self.reads.append(list(spans))
        return super().read(spans)


@pytest.mark.parametrize("held", [False, True], ids=["file", "bytes held"])
def test_lines_and_runs_of_them_decode_to_their_objects(tmp_path: Path, held: bool) -> None:
    source = LineSource("t.jsonl", CONTENT) if held else _file(tmp_path, CONTENT)[1]
    assert lines_again(source, STARTS, STOPS, _named) == VALUES
    assert lines_again(source, [8, 26], [15, 35], _named) == [{"b": 2}, {"d": [1]}]
    assert lines_again(source, [17], [25], _named) == [{"c": 3}]  # a CR is JSON whitespace
    assert lines_again(source, [], [], _named) == []


def test_lines_far_apart_take_a_read_each(monkeypatch: pytest.MonkeyPatch) -> None:
    source = _Counted(CONTENT)
    assert lines_again(source, STARTS, STOPS, _named) == VALUES
    assert source.reads == [[(0, 36)]]  # one read, from the file's start to past the end
    monkeypatch.setattr(reread, "GAP", 1)  # lines 2 and 4 are 2 bytes apart, a blank between
    source.reads.clear()
    assert lines_again(source, STARTS, STOPS, _named) == VALUES
    assert source.reads == [[(0, 16), (16, 36)]]  # each from the byte before its first line


def test_a_line_after_a_byte_order_mark_reads() -> None:
    data = b'\xef\xbb\xbf{"a":1}\n{"b":2}\n'
    assert lines_again(LineSource("t.jsonl", data), [3, 11], [10, 18], _named) == [
        {"a": 1}, {"b": 2}]
    with pytest.raises(LedgerChangedError, match=r"line 1 is no longer where it was read"):
        lines_again(LineSource("t.jsonl", b'xy{"a":1}\n'), [2], [9], _named)


def test_an_integer_beyond_64_bits_is_kept_exact() -> None:
    source = LineSource("t.jsonl", b'{"n":123456789012345678901234}\n{"m":1}\n')
    exact = [{"n": 123456789012345678901234}, {"m": 1}]
    assert lines_again(source, [0, 31], [30, 38], _named) == exact  # found by the screen
    assert lines_again(source, [0, 31], [30, 38], _named, [0]) == exact  # named by the reader
    assert lines_again(source, [0, 31], [30, 38], _named, []) == [  # none, said the reader
        {"n": 1.2345678901234568e23}, {"m": 1}]


def test_a_file_replaced_since_it_was_read_is_an_error(tmp_path: Path) -> None:
    path, source = _file(tmp_path, CONTENT)
    other = tmp_path / "other.jsonl"
    other.write_bytes(CONTENT)  # the same bytes, another file
    os.replace(other, path)
    with pytest.raises(LedgerChangedError, match="changed since it was read"):
        lines_again(source, STARTS, STOPS, _named)


@pytest.mark.parametrize(("at", "put", "said"), [
    (10, b"\n", "line 2 is no longer where it was read (not a line between two newlines)"),
    (15, b" ", "line 2 is no longer where it was read (not a line between two newlines)"),
    (16, b" ", "line 4 is no longer where it was read (not a line between two newlines)"),
    (13, b"!", "line 2 is no longer where it was read (unexpected character"),
], ids=["split", "joined to the next", "joined to the one before", "not JSON"])
def test_a_line_moved_in_the_same_file_names_the_first_line_moved(
        tmp_path: Path, at: int, put: bytes, said: str) -> None:
    path, source = _file(tmp_path, CONTENT, kept=1)  # as a file longer than the end kept
    with path.open("r+b") as handle:  # the same file, size and end
        handle.seek(at)
        handle.write(put)
    with pytest.raises(LedgerChangedError, match=r"ledger\.jsonl: " + said.replace(
            "(", r"\(").replace(")", r"\)")):
        lines_again(source, STARTS, STOPS, _named)


def test_a_line_that_is_no_object_any_more_is_an_error() -> None:
    data = b'{"a":1}\n[1,2,3]\n'  # line 2 was an object of 7 bytes when read
    with pytest.raises(LedgerChangedError, match=r"line 2 is no longer where it was read "
                       r"\(not an object\)"):
        lines_again(LineSource("t.jsonl", data), [0, 8], [7, 15], _named)


def test_a_last_line_without_a_newline_reads_until_appended_to(tmp_path: Path) -> None:
    path, source = _file(tmp_path, CONTENT)
    with path.open("ab") as handle:  # a runtime ends the line and writes another
        handle.write(b'\n{"e":5}\n')
    assert lines_again(source, STARTS, STOPS, _named) == VALUES
    path, source = _file(tmp_path, CONTENT)
    with path.open("ab") as handle:  # the last line read was torn, and is now longer
        handle.write(b',"x":2}\n')
    with pytest.raises(LedgerChangedError, match="line 5 is no longer where it was read"):
        lines_again(source, STARTS, STOPS, _named)


def test_ranges_that_do_not_pair_are_refused() -> None:
    with pytest.raises(ValueError, match="2 starts for 1 stops"):
        lines_again(LineSource("t.jsonl", CONTENT), [0, 8], [7], _named)


class _Fields(Struct):
    """Two fields of a line: ``a`` any value, ``b`` an object's ``x`` or any other value."""

    a: Any = None
    b: _X | list | str | int | float | bool | None = None


class _X(Struct):
    x: Any = None


TYPED = Typed(_Fields)


def test_lines_decode_to_the_structs_of_the_fields_asked_for() -> None:
    data = (b'{"a":1,"z":{"skipped":[1,2]}}\n{"b":{"x":"s","y":2}}\n'
            b'{"a":[true,null],"b":[1]}\n{"b":"t","a":2.5}\n')
    source = LineSource("t.jsonl", data)
    got = lines_again(source, [0, 30, 52, 78], [29, 51, 77, 95], _named, typed=TYPED)
    assert got == [_Fields(1), _Fields(b=_X("s")), _Fields([True, None], [1]), _Fields(2.5, "t")]
    with pytest.raises(LedgerChangedError, match=r"line 2 is no longer where it was read "
                       r"\(not an object\)"):  # a non-object is no struct either
        lines_again(LineSource("t.jsonl", b'{"a":1}\n[1,2,3]\n'), [0, 8], [7, 15], _named,
                    typed=TYPED)


def test_a_line_msgspec_does_not_decode_is_decoded_by_orjson_and_converted() -> None:
    deep = b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}"  # within orjson's depth, not msgspec's
    big = b'{"a":123456789012345678901234,"b":{"x":1}}'
    source = LineSource("t.jsonl", deep + b"\n" + big + b"\n")
    first, second = lines_again(source, [0, 2007], [2006, 2007 + len(big)], _named, typed=TYPED)
    assert second == _Fields(123456789012345678901234, _X(1))  # exact, as orjson cannot
    assert first.__class__ is _Fields and first.b is None
    depth, value = 0, first.a
    while value:
        depth, value = depth + 1, value[0]
    assert depth == 999 and value == []  # 1000 lists, the innermost empty
