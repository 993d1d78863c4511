"""Turn a user's ``source`` argument into named byte blobs (or chunks), one per ledger file."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Union

from ledgerviz.ledger.diagnostics import UnreadableSourceError

Source = Union[str, "os.PathLike[str]", IO[bytes], list[Any], tuple[Any, ...]]

_GLOB_CHARS = frozenset("*?[")


def iter_sources(source: Source) -> Iterator[tuple[str, bytes]]:
    """Yield ``(path, content)`` for every ledger file ``source`` names, in a stable order.

    ``source`` is a file path, a folder (every ``*.jsonl`` below it, sorted), a glob
    pattern, a binary file object, or a list/tuple of those.
    """
    for name, chunks in iter_source_chunks(source):
        yield name, b"".join(chunks)  # one chunk: joined without a copy


def iter_source_chunks(
    source: Source, chunk_size: int | None = None
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """Yield ``(path, chunks)`` for every ledger file ``source`` names (see ``iter_sources``).

    A file is read as its chunks are consumed, ``chunk_size`` bytes at a time (None: the
    whole file as one chunk), so a caller can read a file larger than memory.
    """
    if isinstance(source, list | tuple):
        for item in source:
            yield from iter_source_chunks(item, chunk_size)
    elif hasattr(source, "read"):
        yield str(getattr(source, "name", "<stream>")), _stream_chunks(source, chunk_size)
    elif isinstance(source, str | os.PathLike):
        for path in expand_path(os.fspath(source)):
            yield str(path), _file_chunks(path, chunk_size)
    else:
        raise TypeError(f"cannot read a ledger from {type(source).__name__}")


def expand_path(text: str) -> list[Path]:
    """Return the files a path, folder or glob pattern names, in the order a load reads them.

    A folder gives every ``*.jsonl`` below it, sorted; a glob (``**`` recursive) gives its
    sorted matches, each expanded in turn. A name matching nothing raises
    ``UnreadableSourceError``.
    """
    path = Path(text)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        if not files:
            raise UnreadableSourceError(f"{text}: folder holds no *.jsonl file")
        return files
    if path.exists():
        return [path]
    if _GLOB_CHARS.intersection(text):
        matches = sorted(glob.glob(text, recursive=True))
        if not matches:
            raise UnreadableSourceError(f"{text}: no file matches this pattern")
        return [file for match in matches for file in expand_path(match)]
    raise UnreadableSourceError(f"{text}: no such file or folder")


def _file_chunks(path: Path, size: int | None) -> Iterator[bytes]:
    """Yield the file as it is now, ``size`` bytes at a time (None: all at once)."""
    try:
        if size is None:
            yield path.read_bytes()  # a snapshot, even while the file is appended to
            return
        with path.open("rb") as handle:
            while chunk := handle.read(size):
                yield chunk
    except OSError as error:
        raise UnreadableSourceError(f"{path}: cannot read: {error.strerror or error}") from error


def _stream_chunks(stream: IO[bytes], size: int | None) -> Iterator[bytes]:
    """Yield a binary file object's bytes to its end, ``size`` at a time (None: all at once)."""
    name = str(getattr(stream, "name", "<stream>"))
    while True:
        try:
            content = stream.read(-1 if size is None else size)
        except OSError as error:
            raise UnreadableSourceError(f"{name}: cannot read: {error}") from error
        if not isinstance(content, bytes | bytearray | memoryview):
            raise UnreadableSourceError(f"{name}: file object is in text mode; open it with 'rb'")
        if not content:
            return
        yield bytes(content)
        if size is None:
            return
