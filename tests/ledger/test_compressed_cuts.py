"""A ``.jsonl.zst`` whose compressed stream was cut short says so (``stream_cut``, an
error naming the file and the line it was cut at), whatever its format and whichever entry
point reads it; what was read stays read. The frames are written by hand (RFC 8878: raw
blocks, one line each), so which prefixes end between frames is known without a
decompressor's word."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from ledger_lines import HEADER, encode, mark, turn_start

from ledgerviz.ledger import LedgerError, read_sessions
from ledgerviz.ledger.compressed import FrameWalk, StreamEnd, zstd_chunks

zstandard = pytest.importorskip("zstandard")

LINES = [encode([line]) for line in (HEADER, turn_start(0), mark(1), mark(2))]
"""Four dsh lines: the header, a turn/start and two log-only marks."""


def frame(blocks: list[bytes], checksum: bool = False) -> bytes:
    """Return one Zstandard frame holding ``blocks`` as raw blocks: the magic, a descriptor
    (single segment, one byte of content size, ``checksum`` flag), the size, each block's
    three-byte header (last-block bit, raw type 0, size) and content, then the checksum."""
    content = b"".join(blocks)
    assert len(content) < 256
    descriptor = 0x20 | (0x04 if checksum else 0)
    out = bytearray(b"\x28\xb5\x2f\xfd" + bytes([descriptor, len(content)]))
    for index, block in enumerate(blocks):
        header = len(block) << 3 | (index == len(blocks) - 1)
        out += header.to_bytes(3, "little") + block
    if checksum:  # XXH64 of the content, its low four bytes: what zstd writes
        out += zstandard.ZstdCompressor(write_checksum=True).compress(content)[-4:]
    return bytes(out)


FRAME = frame(LINES)
FRAME_SIZE = 6 + sum(3 + len(line) for line in LINES)


def test_the_hand_written_frame_is_zstandard() -> None:
    assert len(FRAME) == FRAME_SIZE
    assert zstandard.ZstdDecompressor().decompress(FRAME) == b"".join(LINES)


def test_the_walk_is_between_frames_only_at_their_ends() -> None:
    skippable = b"\x5a\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"abc"
    checked = frame(LINES[:2], checksum=True)
    stream = FRAME + skippable + checked
    ends = {0, FRAME_SIZE, FRAME_SIZE + 11, len(stream)}
    for size in range(len(stream) + 1):
        for step in (1, 7, len(stream)):  # fed a byte at a time, in pieces, whole
            walk = FrameWalk()
            for at in range(0, size, step):
                walk.feed(stream[at:min(at + step, size)])
            assert walk.between_frames == (size in ends), (size, step)


def cut_inside_third_line(tmp_path: Path) -> Path:
    """Write the frame cut two bytes into its third block's content (the first mark)."""
    third = 6 + 3 + len(LINES[0]) + 3 + len(LINES[1]) + 3 + 2
    path = tmp_path / "cut.jsonl.zst"
    path.write_bytes(FRAME[:third])
    return path


def test_a_cut_stream_keeps_what_was_read_and_says_where_it_was_cut(tmp_path: Path) -> None:
    path = cut_inside_third_line(tmp_path)
    [log] = read_sessions(path)
    assert list(log.events) == [turn_start(0)]
    (cut,) = [d for d in log.diagnostics if d.kind == "stream_cut"]
    assert (cut.path, cut.line, cut.severity) == (str(path), 3, "error")
    size = len(LINES[0]) + len(LINES[1]) + 2  # a raw block's bytes come as they are read
    assert cut.message == (f"Zstandard stream is cut short inside a frame after "
                           f"{path.stat().st_size} compressed bytes ({size} bytes "
                           f"decompressed, 2 lines whole): what followed is lost")
    assert [(d.kind, d.line) for d in log.diagnostics] == [("torn_tail", 3), ("stream_cut", 3)]
    with pytest.raises(LedgerError, match=r"cut\.jsonl\.zst:3: error \[stream_cut\]"):
        read_sessions(path, strict=True)


def test_a_whole_stream_or_a_missing_checksum(tmp_path: Path) -> None:
    path = tmp_path / "whole.jsonl.zst"
    path.write_bytes(FRAME)
    [log] = read_sessions(path)
    assert [d.kind for d in log.diagnostics] == []
    checked = frame(LINES, checksum=True)
    path.write_bytes(checked[:-1])  # every line there, the checksum's last byte gone
    [log] = read_sessions(path)
    assert len(log.events) == 3
    assert [(d.kind, d.line) for d in log.diagnostics] == [("stream_cut", 5)]


def test_bytes_that_are_no_frame_after_whole_ones(tmp_path: Path) -> None:
    path = tmp_path / "tail.jsonl.zst"
    path.write_bytes(FRAME + b"garbage!")  # the frames before them were refused with them
    [log] = read_sessions(path)
    assert list(log.events) == [turn_start(0), mark(1), mark(2)]
    size = sum(map(len, LINES))
    assert [(d.kind, d.line, d.message) for d in log.diagnostics] == [
        ("stream_cut", 5, f"Zstandard stream holds bytes that are no frame from compressed "
         f"byte {FRAME_SIZE} on: read to there ({size} bytes decompressed, 4 lines whole); "
         "the rest is not read")]


@pytest.mark.parametrize("source", ["claude_code/basic.jsonl", "codex/basic.jsonl",
                                    "gemini/basic.jsonl"])
def test_every_foreign_format_says_its_stream_was_cut(tmp_path: Path, source: str) -> None:
    lines = (Path(__file__).parent.parent / "data" / source).read_bytes().splitlines(True)
    blocks = b"".join(zstandard.ZstdCompressor().compress(line) for line in lines[:3])
    path = tmp_path / "cut.jsonl.zst"
    path.write_bytes(blocks + zstandard.ZstdCompressor().compress(lines[3])[:-2])
    [log, *_] = read_sessions(path)
    assert [(d.kind, d.line) for d in log.diagnostics if d.severity == "error"] == [
        ("stream_cut", 4)]


def test_check_reports_it_whether_read_whole_or_streamed(tmp_path: Path) -> None:
    path = cut_inside_third_line(tmp_path)
    for stream in ([], ["--stream"]):
        done = subprocess.run([sys.executable, "-m", "ledgerviz", "check", *stream, str(path)],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 1, done.stderr
        assert "line 3: error [stream_cut]" in done.stdout


def test_repair_prints_no_closers_for_a_cut_stream(tmp_path: Path) -> None:
    path = cut_inside_third_line(tmp_path)  # the turn is open: a whole file would get closers
    done = subprocess.run([sys.executable, "-m", "ledgerviz", "repair", str(path)],
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (1, "")
    assert f"{path}:3: error [stream_cut]" in done.stderr
    assert done.stderr.rstrip().endswith("what followed is lost; nothing printed")


def damaged_third_block(tmp_path: Path) -> Path:
    """Write the frame with its third block's header made a reserved block type (3): the
    decompressor refuses that block, after giving the two before it."""
    third = 6 + 3 + len(LINES[0]) + 3 + len(LINES[1])
    damaged = bytearray(FRAME)
    damaged[third] |= 0b110
    path = tmp_path / "damaged.jsonl.zst"
    path.write_bytes(bytes(damaged))
    return path


def test_a_damaged_block_keeps_the_blocks_before_it(tmp_path: Path) -> None:
    """The decompressor's whole read (up to a mebibyte) was lost with the block it refused,
    and the file said 'not a Zstandard stream' (unreadable, no event): now the two lines
    before the damaged block are read, and the damage is an error at the first lost line."""
    path = damaged_third_block(tmp_path)
    [log] = read_sessions(path)
    assert list(log.events) == [turn_start(0)]
    size = len(LINES[0]) + len(LINES[1])
    (damage,) = log.diagnostics
    assert (damage.kind, damage.line, damage.severity) == ("stream_cut", 3, "error")
    said, zstd_said = damage.message.split(" (zstd decompressor error: ")  # zstd's words
    assert said == "Zstandard stream is damaged inside a frame"
    assert zstd_said.endswith(f"): read to its last whole block ({size} bytes decompressed, "
                              "2 lines whole); the rest is not read")
    with pytest.raises(LedgerError, match=r"damaged\.jsonl\.zst:3: error \[stream_cut\]"):
        read_sessions(path, strict=True)


def test_a_checksum_that_does_not_match_keeps_every_block(tmp_path: Path) -> None:
    """Every block was given before the frame's checksum was found wrong: the four lines
    are read, and the damage is named after them."""
    checked = bytearray(frame(LINES, checksum=True))
    checked[-1] ^= 0xFF
    path = tmp_path / "checksum.jsonl.zst"
    path.write_bytes(bytes(checked))
    [log] = read_sessions(path)
    assert list(log.events) == [turn_start(0), mark(1), mark(2)]
    (damage,) = log.diagnostics
    assert (damage.kind, damage.line) == ("stream_cut", 5)
    assert "doesn't match checksum" in damage.message


def test_check_names_a_damaged_block(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "ledgerviz", "check",
                           str(damaged_third_block(tmp_path))],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert "line 3: error [stream_cut] Zstandard stream is damaged inside a frame" in done.stdout


@pytest.mark.parametrize("size", [1, 3, 5, len(FRAME) + 2])
def test_bytes_that_are_no_frame_are_known_whatever_the_reads(size: int) -> None:
    """Read ``size`` bytes at a time, the first bytes of the garbage reached the
    decompressor before the walk had its four bytes to know them: it refused them, and the
    whole file with them ('not a Zstandard stream')."""
    end = StreamEnd()
    chunks = zstd_chunks(io.BytesIO(FRAME + b"garbage!"), size, end)
    assert b"".join(chunks) == b"".join(LINES)
    assert (end.cut_line, end.message) == (
        5, f"Zstandard stream holds bytes that are no frame from compressed byte "
           f"{FRAME_SIZE} on: read to there ({sum(map(len, LINES))} bytes decompressed, "
           "4 lines whole); the rest is not read")
