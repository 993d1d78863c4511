"""The format registry: a file's format found by its content, a named format forced, and a
registered format's reader used by every route that reads files."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.ledger import SessionLog, formats
from ledgerviz.ledger.formats import Chunk, Format, ReadOptions
from ledgerviz.ledger.read import read_file
from ledgerviz.ledger.sources import SourceProblem

HEADER = b'{"type":"session","version":4,"id":"s-1","createdAt":0,"isSeeded":false}\n'


@pytest.fixture
def shouting() -> Iterator[Format]:
    """A toy format: files whose first byte is ``!``, read as one session named by line 1."""

    def read(path: str, chunks: Iterable[Chunk], options: ReadOptions) -> SessionLog:
        text = b"".join(c for c in chunks if isinstance(c, bytes))
        return SessionLog(path, text[1:].split(b"\n")[0].decode(), {}, None, [], format="shout")

    toy = Format("shout", lambda head: head.startswith(b"!"), read, "a test format")
    formats.register_format(toy)
    yield toy
    del formats._FORMATS["shout"]


def test_a_dsh_header_is_read_as_dsh() -> None:
    assert formats.detect_format(HEADER).name == "dsh"
    assert formats.detect_format(b"\xef\xbb\xbf" + HEADER).name == "dsh"


def test_files_no_format_claims_fall_back_to_dsh(tmp_path: Path) -> None:
    assert formats.detect_format(b"hello\n").name == "dsh"
    assert formats.detect_format(b"").name == "dsh"
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b"hello\n")
    assert [d.kind for d in ledgerviz.load(path).diagnostics] == ["not_a_ledger"]


CLAUDE_RECORD = (b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"c-1",'
                 b'"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}\n')


def test_a_damaged_first_line_is_passed_over_to_tell_the_format(tmp_path: Path) -> None:
    assert formats.detect_format(b'{"type":"us\n' + CLAUDE_RECORD).name == "claude_code"
    assert formats.detect_format(b"\n".join([b"{"] * 3) + b"\n" + CLAUDE_RECORD).name \
        == "claude_code"
    # past SNIFF_LINES lines, or after a whole JSON line no format claims: the fallback
    assert formats.detect_format(b"{\n" * 4 + CLAUDE_RECORD).name == "dsh"
    assert formats.detect_format(b'{"a":1}\n' + CLAUDE_RECORD).name == "dsh"
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(b'{"type":"us\n' + CLAUDE_RECORD)
    ledger = ledgerviz.load(path)
    assert ledger.sessions[0].format == "claude_code"
    assert [(d.kind, d.line) for d in ledger.diagnostics][:1] == [("invalid_json", 1)]


def test_an_unknown_format_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown format 'nope': choose from .*dsh"):
        formats.format_named("nope")


def test_a_name_is_registered_once(shouting: Format) -> None:
    with pytest.raises(ValueError, match="registered already"):
        formats.register_format(shouting)
    with pytest.warns(UserWarning, match="replaced"):
        formats.register_format(shouting, replace=True)


def test_a_registered_format_reads_the_files_it_claims(shouting: Format, tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b"!loud\n")
    (tmp_path / "b.jsonl").write_bytes(HEADER)
    assert formats.format_names() == ["shout", "gemini", "codex", "claude_code", "dsh"]
    ledger = ledgerviz.load(tmp_path)
    assert ledger.keys == ["loud", "s-1"]
    assert [log.format for log in ledger.sessions] == ["shout", "dsh"]


def test_a_named_format_is_used_whatever_the_content(shouting: Format, tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"!loud\n")
    assert [d.kind for d in ledgerviz.load(path, format="dsh").diagnostics] == ["not_a_ledger"]
    path.write_bytes(b"?quiet\n")
    assert ledgerviz.load(path, format="shout").keys == ["quiet"]


@pytest.mark.parametrize(("path", "name"), [("claude_code/basic.jsonl", "claude_code"),
                                            ("codex/basic.jsonl", "codex"),
                                            ("gemini/basic.jsonl", "gemini")])
def test_a_format_is_found_however_small_the_first_chunks(path: str, name: str) -> None:
    content = (Path(__file__).parents[1] / "data" / path).read_bytes()
    whole = read_file("t.jsonl", [content])
    assert whole.format == name
    for size in (1, 5):
        pieces = read_file("t.jsonl", [content[i:i + size]
                                       for i in range(0, len(content), size)])
        assert (pieces.format, pieces.events, pieces.lines) == (name, whole.events, whole.lines)


def test_the_format_is_found_from_the_chunks_before_an_unreadable_one() -> None:
    problem = SourceProblem("unreadable", "cannot read: gone")
    found, chunks = formats.file_format([HEADER[:3], HEADER[3:], problem, b"later"])
    assert found.name == "dsh"
    assert list(chunks) == [HEADER[:3], HEADER[3:], problem, b"later"]
    found, chunks = formats.file_format([problem])
    assert (found.name, list(chunks)) == ("dsh", [problem])
    found, chunks = formats.file_format([b"!lo", b"ud\n"], "dsh")
    assert (found.name, list(chunks)) == ("dsh", [b"!lo", b"ud\n"])


def test_sniffing_reads_no_further_than_it_needs(shouting: Format) -> None:
    taken: list[int] = []

    def chunks() -> Iterator[bytes]:
        for number in range(1, 10**6):
            taken.append(number)
            yield b"!" * (formats.SNIFF_BYTES // 4)

    found, _ = formats.file_format(chunks())
    assert (found.name, taken) == ("shout", [1, 2, 3, 4])
