"""Zstandard-compressed JSONL (``*.jsonl.zst``, as Codex CLI archives rollouts) read as a
stream of decompressed chunks. ``zstandard`` is optional, imported when first needed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ledgerviz.ledger.diagnostics import Diagnostic, LedgerError

ZSTD_SUFFIX = ".jsonl.zst"
ZSTD_HINT = 'pip install "ledgerviz[zstd]"'
CHUNK_BYTES = 1 << 20


def import_zstandard() -> Any:
    """Return the ``zstandard`` module; raise ``ImportError`` with a pip hint without it."""
    try:
        import zstandard
    except ImportError as error:
        raise ImportError(f"reading {ZSTD_SUFFIX} files needs zstandard: {ZSTD_HINT}") from error
    return zstandard


def zstd_chunks(raw: Any, size: int | None, end: StreamEnd | None = None) -> Iterator[bytes]:
    """Yield the decompressed bytes of the open binary file ``raw`` (read ``size`` bytes at
    a time; None: a mebibyte), frame after frame, at most ``CHUNK_BYTES`` at once: a small
    file that decompresses to gigabytes (a bomb) is held a chunk at a time, never whole.

    The decompressor is given one block at a time (``FrameWalk.cuts``), so that what it
    gave before a block it refuses is kept. A stream damaged inside a frame (a block the
    decompressor refuses, a checksum that does not match) ends after its last whole block,
    and a stream cut inside a frame where the decompressor's output ends (the reader then
    sees a torn last line, or none); both say so in ``end`` (``StreamEnd.cut_line``), as
    does one whose whole frames are followed by bytes that are no frame (read to there);
    one that gives no byte at all (cut short or damaged before its first line, or empty
    frames alone), or is no Zstandard from its start, raises ``ValueError``.
    """
    zstandard = import_zstandard()
    frames = FrameWalk()
    source = _Counted(raw, frames)
    decompressor = zstandard.ZstdDecompressor()
    frame = decompressor.decompressobj()
    held: list[bytes] = []
    gave = held_size = newlines = 0
    damage: str | None = None
    while damage is None and (data := source.read(size or CHUNK_BYTES)):
        for piece in _blocks(data, source.count - len(data), frames.cuts):
            try:
                out = frame.decompress(piece)
                while frame.eof:  # a frame ended in the piece: the next one takes the rest
                    rest, frame = frame.unused_data, decompressor.decompressobj()
                    out += frame.decompress(rest) if rest else b""
            except zstandard.ZstdError as error:
                damage = str(error)
                break
            if held_size + len(out) > CHUNK_BYTES:
                yield b"".join(held)
                held.clear()
                held_size = 0
            held.append(out)
            held_size += len(out)
            gave += len(out)
            newlines += out.count(b"\n")
    if held_size:
        yield b"".join(held)
    if damage is not None and not gave:
        raise ValueError(f"not a Zstandard stream ({damage})")
    if source.count and not gave:
        raise ValueError("Zstandard stream gives no line (cut short before its first, "
                         "or empty frames alone)")
    whole = f"({gave:,} bytes decompressed, {newlines:,} lines whole)"
    if end is None:
        return
    end.cut_line = newlines + 1
    if damage is not None:
        end.message = (f"Zstandard stream is damaged inside a frame ({damage}): read to its "
                       f"last whole block {whole}; the rest is not read")
    elif source.stopped:
        end.message = (f"Zstandard stream holds bytes that are no frame from compressed "
                       f"byte {source.count:,} on: read to there {whole}; the rest is not read")
    elif not frames.between_frames:
        end.message = (f"Zstandard stream is cut short inside a frame after "
                       f"{frames.seen:,} compressed bytes {whole}: what followed is lost")
    else:
        end.cut_line = None


def _blocks(data: bytes, start: int, cuts: list[int]) -> Iterator[bytes]:
    """Yield ``data``, the stream's bytes from ``start`` on, in pieces cut at ``cuts``
    (stream positions; the cuts used are removed from the list)."""
    at = 0
    stop = start + len(data)
    taken = 0
    for cut in cuts:
        if cut >= stop:
            break
        taken += 1
        if cut - start > at:
            yield data[at:cut - start]
            at = cut - start
    del cuts[:taken]
    if at < len(data):
        yield data[at:]


class StreamEnd:
    """How a compressed file's stream ended, once read to its end: ``cut_line`` is the
    line at which it was cut short inside a frame, or at which bytes that are no frame
    follow its whole ones (the one after its last whole line), and ``message`` says so;
    both None for a stream that ended between frames."""

    __slots__ = ("cut_line", "message")

    def __init__(self) -> None:
        self.cut_line: int | None = None
        self.message: str | None = None


def stream_cut(path: str, end: StreamEnd | None, strict: bool) -> list[Diagnostic]:
    """Return the ``stream_cut`` error of the compressed file ``path`` when ``end`` says its
    stream was cut short inside a frame (none otherwise): what was read stays read.
    Strict, raise ``LedgerError`` instead."""
    if end is None or end.cut_line is None or end.message is None:
        return []
    cut = Diagnostic(path, end.cut_line, "stream_cut", "error", end.message)
    if strict:
        raise LedgerError(str(cut))
    return [cut]


ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC = 0x184D2A50
"""A skippable frame's magic number (its last four bits are free)."""


class FrameWalk:
    """Follows the frames of a Zstandard stream (RFC 8878 section 3.1) as its bytes go by,
    reading only the headers and skipping each block's content, so that the stream's end
    tells whether it fell between two frames (``between_frames``). Bytes that are no frame
    are left to the decompressor, which refuses them: the walk stops there."""

    def __init__(self) -> None:
        self._held = b""
        self._want = 4
        self._skip = 0
        self._next: Callable[[bytes], None] = self._magic
        self._checksum = 0
        self._lost = False
        self.seen = 0
        """How many bytes were followed."""
        self.lost_at: int | None = None
        """Where the first bytes that are no frame start (None: none met)."""
        self.cuts: list[int] = []
        """Where each block's header and each frame's checksum start, in stream order (a
        reader takes those it has used away): between two, at most one block ends."""

    @property
    def unsure_magic(self) -> int:
        """Return how many of the last bytes given start a frame's magic number not yet
        whole (a frame, or bytes that are none)."""
        return len(self._held) if self._next == self._magic else 0

    @property
    def between_frames(self) -> bool:
        """Return whether the bytes given so far end where a frame ended (or none began)."""
        return self._lost or (self._next == self._magic and not self._held and not self._skip)

    def feed(self, data: bytes) -> None:
        """Follow the frames through the next bytes of the stream."""
        at, end = 0, len(data)
        while at < end and not self._lost:
            if self._skip:
                step = min(self._skip, end - at)
                self._skip -= step
                at += step
                self.seen += step
                continue
            taken = data[at:at + self._want - len(self._held)]
            at += len(taken)
            self.seen += len(taken)
            self._held += taken
            if len(self._held) == self._want:
                held, self._held = self._held, b""
                self._next(held)

    def _expect(self, want: int, then: Callable[[bytes], None], skip: int = 0) -> None:
        self._want, self._next, self._skip = want, then, skip

    def _magic(self, held: bytes) -> None:
        magic = int.from_bytes(held, "little")
        if magic == ZSTD_MAGIC:
            self._expect(1, self._descriptor)
        elif magic & ~0xF == SKIPPABLE_MAGIC:
            self._expect(4, self._skippable)
        else:
            self._lost = True
            self.lost_at = self.seen - len(held)

    def _skippable(self, held: bytes) -> None:
        self._expect(4, self._magic, skip=int.from_bytes(held, "little"))

    def _descriptor(self, held: bytes) -> None:
        flags = held[0]
        single_segment = flags >> 5 & 1
        self._checksum = 4 * (flags >> 2 & 1)
        window = 1 - single_segment
        dictionary = (0, 1, 2, 4)[flags & 3]
        content_size = (single_segment, 2, 4, 8)[flags >> 6]
        self._expect(3, self._block, skip=window + dictionary + content_size)

    def _block(self, held: bytes) -> None:
        header = int.from_bytes(held, "little")
        kind, size = header >> 1 & 3, header >> 3
        content = 1 if kind == 1 else size  # an RLE block holds its one byte
        self.cuts.append(self.seen - 3)
        if header & 1:  # the frame's last block, then its checksum if it has one
            if self._checksum:
                self.cuts.append(self.seen + content)
            self._expect(4, self._magic, skip=content + self._checksum)
        else:
            self._expect(3, self._block, skip=content)


class _Counted:
    """A binary file read through, counting the bytes it gave and following their frames:
    it ends (``stopped``) where bytes that are no frame follow whole ones, so that the
    decompressor gives the frames before them (it would refuse them with the rest), and it
    holds back the first bytes of a frame's magic until the walk knows whether they are one."""

    def __init__(self, raw: Any, frames: FrameWalk) -> None:
        self.raw = raw
        self.frames = frames
        self.count = 0
        self.stopped = False
        self._pending = b""

    def read(self, size: int = -1) -> bytes:
        """Return the next bytes for the decompressor (b"": none are left)."""
        data = b""
        while not data and not self.stopped:
            new = self.raw.read(size)
            if not new:
                return b""  # held magic bytes, if any, are a frame cut short: never given
            self.frames.feed(new)
            data, self._pending = self._pending + new, b""
            lost_at = self.frames.lost_at
            if lost_at:  # not at 0: a file that is no Zstandard is the decompressor's to refuse
                data = data[:lost_at - self.count]
                self.stopped = True
            elif unsure := self.frames.unsure_magic:
                data, self._pending = data[:-unsure], data[-unsure:]
        self.count += len(data)
        return data
