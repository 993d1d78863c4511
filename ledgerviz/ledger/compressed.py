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
    a time; None: a mebibyte), frame after frame.

    A stream cut inside a frame ends where its last whole block ends (the reader then sees
    a torn last line); one that gives no byte at all, or is no Zstandard, raises
    ``ValueError``.
    """
    zstandard = import_zstandard()
    frame: Any = None
    gave = False
    try:
        while block := raw.read(size or CHUNK_BYTES):
            while block:
                if frame is None:
                    frame = zstandard.ZstdDecompressor().decompressobj()
                out = frame.decompress(block)
                if out:
                    gave = True
                    yield out
                block = frame.unused_data if frame.eof else b""
                if frame.eof:
                    frame = None
    except zstandard.ZstdError as error:
        raise ValueError(f"not a Zstandard stream ({error})") from error
    if frame is not None and not gave:
        raise ValueError("Zstandard stream cut short before its first line")
