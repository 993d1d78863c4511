"""Reading a file in chunks gives the session reading it whole gives, wherever chunks break."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ledger_lines import HEADER, assistant_calls, encode, mark, tool_result, turn_start

import ledgerviz
from ledgerviz.ledger import SessionLog, read_session, reader

DATA = Path(__file__).parents[1] / "data"
EXAMPLES = Path(ledgerviz.__file__).parent / "examples"
REAL_FILES = sorted((DATA / "dsh").glob("*.jsonl")) + sorted(EXAMPLES.rglob("*.jsonl"))

V1_HEADER = {"type": "session", "version": 1, "id": "packed", "createdAt": 0}
PACKED = {
    "type": "text-chunks",
    "seq0": 2,
    "time0": 5,
    "data": {"turn": 1, "step": 1, "index": 0, "texts": ["a", "b", "c"], "dt": [1, 2]},
}

# Broken files, each with a different problem for the block boundaries to cut through.
BROKEN = {
    "empty": b"",
    "whitespace only": b"\n  \n\n",
    "leading blank lines": b"\n\n" + encode([HEADER, turn_start(0)]),
    "leading whitespace of all kinds": b"  \t\n \n\n\r\n \t \n  " + encode([HEADER, turn_start(0)]),
    "only a torn header": b'{"type":"sess',
    "header only": encode([HEADER]),
    "torn tail": encode([HEADER, turn_start(0)]) + b'{"type":"turn/e',
    "undecodable last line": encode([HEADER, turn_start(0), b'{"type":"tu']),
    "blank and bad lines": encode([HEADER, turn_start(0), b"", b"{oops", b"[1]", mark(5)]),
    "orphan result and bad envelope": encode(
        [
            HEADER,
            turn_start(0),
            assistant_calls(1, "c1"),
            tool_result(2, "c1"),
            tool_result(3, "never-asked"),
            {"type": 7, "seq": 4, "data": {}},
            {"type": "mystery/event", "seq": 4, "time": 1, "data": {}},
        ]
    ),
    "a check problem before a decoding problem": encode(
        [HEADER, turn_start(0), tool_result(1, "never-asked"), b"{oops", mark(3)]
    ),
    "unsupported version": encode([{**HEADER, "version": 99}, turn_start(0), b"", mark(1)]),
    "no header": encode([turn_start(0), mark(1)]),
    "packed rows": encode(
        [
            V1_HEADER,
            turn_start(0),
            {"type": "step/start", "seq": 1, "data": {}},
            PACKED,
            {"type": "step/end", "seq": 5, "data": {}},
        ]
    ),
    "events without seqs": encode(
        [
            {"type": "session", "id": "v0", "createdAt": 0},
            {"type": "turn/start", "data": {"turn": 1}},
            {"type": "turn/end", "data": {"turn": 1}},
        ]
    ),
}


def chunked(content: bytes, size: int) -> list[bytes]:
    return [content[i : i + size] for i in range(0, len(content), size)]


def read_in_chunks(chunks: list[bytes]) -> SessionLog:
    return reader.read_chunks("ledger.jsonl", chunks)


def assert_same(whole: SessionLog, in_chunks: SessionLog) -> None:
    assert in_chunks.diagnostics == whole.diagnostics
    assert (in_chunks.key, in_chunks.header, in_chunks.version) == (
        whole.key,
        whole.header,
        whole.version,
    )
    assert in_chunks.events == whole.events
    assert list(in_chunks.lines) == list(whole.lines)
    assert in_chunks.lines_skipped == whole.lines_skipped
    assert in_chunks.event_table() == whole.event_table()


@pytest.mark.parametrize("name", sorted(BROKEN))
@pytest.mark.parametrize("size", [1, 3, 17, 64, 1 << 20])
def test_broken_files_read_alike_in_any_chunk_size(name: str, size: int) -> None:
    content = BROKEN[name]
    whole = read_session("ledger.jsonl", content)
    assert_same(whole, read_in_chunks(chunked(content, size)))


def test_the_broken_files_do_produce_their_diagnostics() -> None:
    kinds = {
        name: [d.kind for d in read_session("ledger.jsonl", content).diagnostics]
        for name, content in BROKEN.items()
    }
    assert kinds["empty"] == kinds["whitespace only"] == ["empty_file"]
    assert kinds["torn tail"] == ["torn_tail"]
    assert kinds["undecodable last line"] == ["torn_tail"]
    assert kinds["blank and bad lines"] == [
        "blank_line",
        "invalid_json",
        "invalid_event",
        "seq_gap",
    ]
    assert kinds["a check problem before a decoding problem"] == [  # line order
        "orphan_result",
        "invalid_json",
        "seq_gap",
    ]
    lines = [(d.line, d.kind) for d in read_session(
        "ledger.jsonl", BROKEN["leading whitespace of all kinds"]).diagnostics]
    assert lines == [(1, "bad_header"), *((line, "blank_line") for line in range(2, 6)),
                     (6, "second_header")]
    assert kinds["orphan result and bad envelope"] == [
        "orphan_result",
        "invalid_event",
        "unknown_required_event",
    ]


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_chunk_longer_than_a_block_is_read_in_pieces(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    content = BROKEN[name]
    whole = read_session("ledger.jsonl", content)
    monkeypatch.setattr(reader, "READ_BYTES", 5)
    assert_same(whole, read_in_chunks([content]))


def test_chunks_are_cut_to_the_block_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "READ_BYTES", 5)
    pieces = list(reader._bounded([b"abcdefghijklm", b"", b"nopqr", b"st"]))
    assert pieces == [b"abcde", b"fghij", b"klm", b"", b"nopqr", b"st"]


def test_a_line_longer_than_a_chunk_is_joined_once_when_it_ends() -> None:
    pieces = list(reader._lines_of([b"ab", b"cd", b"e\nf", b"g", b"h"]))
    assert pieces == [([b"abcde"], b"f", b"abcde\nf", 1, 0, 0), ([], b"fgh", b"fgh", 3, 0, 0)]
    ends_with_a_newline = list(reader._lines_of([b"ab", b"c\n"]))
    assert ends_with_a_newline == [([b"abc"], b"", b"abc\n", 0, 0, 0)]
    assert list(reader._lines_of([])) == []


def test_leading_whitespace_is_held_in_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [b"  ", b" \n \n", b"\t\n  ", b" ", b"{x", b"\n"]
    given_back = list(reader._after_leading_blanks(chunks))
    # line 1 and the line the first other byte is on are kept; the blank lines between
    # are given back as bare newlines
    assert given_back == [b"  ", b" ", b"\n\n\n", b"   {x", b"\n"]
    assert list(reader._after_leading_blanks([b" \n", b"", b"\n\t"])) == []
    monkeypatch.setattr(reader, "READ_BYTES", 4)
    given_back = list(reader._after_leading_blanks([b"\n\n\n\n"] * 10 + [b"{x"]))
    assert b"".join(given_back) == b"\n" * 40 + b"{x"
    assert max(map(len, given_back)) == 4


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_real_files_read_alike_in_small_chunks(path: Path) -> None:
    content = path.read_bytes()
    whole = read_session("ledger.jsonl", content)
    assert_same(whole, read_in_chunks(chunked(content, 257)))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(BROKEN)), st.lists(st.integers(0, 400), max_size=6))
def test_any_cut_points(name: str, cuts: list[int]) -> None:
    content = BROKEN[name]
    points = sorted({min(c, len(content)) for c in cuts} | {0, len(content)})
    chunks = [content[a:b] for a, b in pairwise(points)]
    assert_same(read_session("ledger.jsonl", content), read_in_chunks(chunks))
