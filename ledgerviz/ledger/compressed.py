"""Zstandard-compressed JSONL (``*.jsonl.zst``, as Codex CLI archives rollouts) read as a
stream of decompressed chunks. ``zstandard`` is optional, imported when first needed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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


def zstd_chunks(raw: Any, size: int | None) -> Iterator[bytes]:
    """Yield the decompressed bytes of the open binary file ``raw`` (read ``size`` bytes at
    a time; None: a mebibyte), frame after frame, at most ``CHUNK_BYTES`` at once: a small
    file that decompresses to gigabytes (a bomb) is held a chunk at a time, never whole.

    A stream cut inside a frame ends where its last whole block ends (the reader then sees
    a torn last line); one that gives no byte at all (cut short before its first line, or
    empty frames alone), or is no Zstandard, raises ``ValueError``.
    """
    zstandard = import_zstandard()
    source = _Counted(raw)
    reader = zstandard.ZstdDecompressor().stream_reader(
        source, read_size=size or CHUNK_BYTES, read_across_frames=True)
    gave = False
    try:
        while chunk := reader.read(CHUNK_BYTES):
            gave = True
            yield chunk
    except zstandard.ZstdError as error:
        raise ValueError(f"not a Zstandard stream ({error})") from error
    if source.count and not gave:
        raise ValueError("Zstandard stream gives no line (cut short before its first, "
                         "or empty frames alone)")


class _Counted:
    """A binary file read through, counting the bytes it gave."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.count += len(data)
        return data
