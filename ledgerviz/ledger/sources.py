"""Turn a user's ``source`` argument into named byte blobs, one per ledger file."""

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
    if isinstance(source, list | tuple):
        for item in source:
            yield from iter_sources(item)
    elif hasattr(source, "read"):
        yield _read_stream(source)
    elif isinstance(source, str | os.PathLike):
        for path in expand_path(os.fspath(source)):
            yield str(path), _read_file(path)
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


def _read_file(path: Path) -> bytes:
    """Return the whole file as it is now (a snapshot, even while it is appended to)."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise UnreadableSourceError(f"{path}: cannot read: {error.strerror or error}") from error


def _read_stream(stream: IO[bytes]) -> tuple[str, bytes]:
    """Return ``(name, content)`` of a binary file object, read to its end."""
    name = str(getattr(stream, "name", "<stream>"))
    try:
        content = stream.read()
    except OSError as error:
        raise UnreadableSourceError(f"{name}: cannot read: {error}") from error
    if not isinstance(content, bytes | bytearray | memoryview):
        raise UnreadableSourceError(f"{name}: file object is in text mode; open it with 'rb'")
    return name, bytes(content)
