"""The dsh runtime's own session ledger (``LEDGER_FORMAT.md``): the format every other one
is read into, and the fallback for files no other format claims."""

from __future__ import annotations

from collections.abc import Iterable

from ledgerviz.ledger.formats import Chunk, Format, ReadOptions
from ledgerviz.ledger.reader import read_chunks
from ledgerviz.ledger.session import SessionLog


def sniff(head: bytes) -> bool:
    """Return whether ``head`` starts a dsh ledger: its first line a session header."""
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:4096]
    return first.startswith(b"{") and b'"session"' in first.split(b"\n", 1)[0]


def read(path: str, chunks: Iterable[Chunk], options: ReadOptions) -> SessionLog:
    """Return the session of one ledger file given as its chunks."""
    return read_chunks(path, chunks, strict=options.strict,
                       duplicate_keys=options.duplicate_keys, origin=options.origin)


FORMAT = Format("dsh", sniff, read, "the dsh runtime's session ledger (JSONL)")
