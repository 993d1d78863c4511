"""The transcript formats ledgerviz reads, and which one a file is in.

A format is a name, a test of a file's first bytes (``sniff``) and a reader that turns the
file's chunks into one ``SessionLog`` in the dsh event model (``read``): turns, steps,
assistant messages with tool calls, tool results. Everything above the reader (recovery,
frames, plots, reports) sees that model only, whatever the file was.

A file's format is found by content, never by its name: the registered formats are asked
in turn, and ``dsh``, the runtime's own ledger, answers for any file no other claims (its
reader says "not a ledger" where nothing fits).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import NamedTuple

import orjson

from ledgerviz.ledger.reader import MAX_LINE_UNITS
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import FileOrigin, SourceProblem, same_file

Chunk = bytes | SourceProblem

SNIFF_BYTES = 64 * 1024
"""How much of a file's start ``sniff`` is shown: this much, or the whole file when it is
shorter, however its chunks are cut."""
SNIFF_LINES = 4
"""How many lines are shown to the sniffers: when none claims a file by its first line and
that line is not JSON (damaged), the file is judged again from its next line."""


class ReadOptions(NamedTuple):
    """What a caller asks of every format's reader."""

    strict: bool = False
    """Raise ``LedgerError`` at the first error-level problem instead of a diagnostic."""
    duplicate_keys: bool = False
    """Also look for keys repeated within a line (a warning; it costs time)."""
    origin: FileOrigin | None = None
    """The plain file the chunks are read from (``sources.FileChunks``), whose events a
    reader may decode again on demand instead of holding them (None: hold them)."""
    max_line: int = MAX_LINE_UNITS
    """The longest line read, in UTF-16 code units: a longer one is said and skipped, only
    its start held (``reader.line_blocks``)."""


class Format(NamedTuple):
    """One transcript format: how to recognise a file in it and how to read one."""

    name: str
    """What ``--format`` and ``ledgerviz.load(format=...)`` call it."""
    sniff: Callable[[bytes], bool]
    """Whether a file starting with these bytes (at most ``SNIFF_BYTES``) is in it."""
    read: Callable[[str, Iterable[Chunk], ReadOptions], SessionLog]
    """The session of a file, from its path and its chunks (the first may be a
    ``SourceProblem``: the reader reports it as the file's one diagnostic), with any further
    sessions the file holds inline as its ``children``."""
    description: str
    """One line for help texts."""
    relate: Callable[[list[SessionLog]], list[SessionLog]] | None = None
    """Links sessions of one load that descend from one another across files (a resume's
    copy of another file's records): given every session of the load, keys unique, it
    returns them with those it links replaced. None: a file's lineage is its own."""
    lays_out: Callable[[str], bool] | None = None
    """Whether a file at this path is one of the format's by where its writer puts it (a
    Claude Code session's ``subagents/`` folder): such a file that no format claims by its
    content (empty, damaged) is read by it, its problems that session's. None: no place."""


_FORMATS: dict[str, Format] = {}
FALLBACK = "dsh"
"""The format of a file no other format claims."""

_SNIFFED: dict[tuple[str, ...], list[Format]] = {}
"""The formats a file's first bytes are tested against, in order (the fallback not among
them), by the names registered: made once per set of formats, not once per file."""


def register_format(format: Format, *, replace: bool = False) -> None:
    """Add ``format`` to those files are tested against (sniffed before the ones already
    registered, the fallback last). A name already taken is refused unless ``replace``, and
    then replaced with a warning."""
    if format.name in _FORMATS:
        if not replace:
            raise ValueError(f"a format named {format.name!r} is registered already")
        warnings.warn(f"format {format.name!r} replaced", stacklevel=2)
    _FORMATS[format.name] = format
    _SNIFFED.clear()  # a format replaced under its name


def format_names() -> list[str]:
    """Return the registered formats' names, in the order files are tested against them."""
    _register_builtins()
    return [name for name in reversed(_FORMATS) if name != FALLBACK] + [FALLBACK]


def format_named(name: str) -> Format:
    """Return the format called ``name``; an unknown name raises ``ValueError`` listing all."""
    _register_builtins()
    if name not in _FORMATS:
        raise ValueError(f"unknown format {name!r}: choose from {', '.join(format_names())}")
    return _FORMATS[name]


def detect_format(head: Chunk) -> Format:
    """Return the format of a file whose first chunk is ``head`` (the fallback for an empty
    or unreadable file, or one no format claims)."""
    sniffed = _SNIFFED.get(tuple(_FORMATS))
    if sniffed is None:
        sniffed = [_FORMATS[name] for name in format_names()[:-1]]
        _SNIFFED.clear()
        _SNIFFED[tuple(_FORMATS)] = sniffed
    if isinstance(head, bytes) and head:
        start = head[:SNIFF_BYTES]
        for _ in range(SNIFF_LINES):
            for format in sniffed:
                if format.sniff(start):
                    return format
            first, _, start = start.lstrip(b" \t\r\n").partition(b"\n")
            if not start or _is_json(first):  # a whole record no format claims
                break
    return _FORMATS[FALLBACK]


def _is_json(line: bytes) -> bool:
    """Whether ``line`` is one JSON value."""
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def claiming_format(head: bytes) -> Format | None:
    """Return the format that claims a file starting with ``head``, the fallback's own test
    included; None when none does (the file holds no ledger or transcript ledgerviz reads)."""
    found = detect_format(head)
    return found if found.name != FALLBACK or found.sniff(head[:SNIFF_BYTES]) else None


def file_format(chunks: Iterable[Chunk], name: str | None = None, path: str | None = None
                ) -> tuple[Format, Iterator[Chunk]]:
    """Return the format called ``name`` (None: the one the file given as ``chunks`` is in,
    found from its first ``SNIFF_BYTES`` however small its chunks are, or, when no format
    claims them, from where the file lies, its ``path``: ``Format.lays_out``) and the
    file's chunks, all still to read."""
    if name is not None:
        return format_named(name), iter(chunks)
    source, chunks = chunks, iter(chunks)
    held: list[Chunk] = []
    size = 0
    for chunk in chunks:
        held.append(chunk)
        if not isinstance(chunk, bytes):  # unreadable: what came before is the head
            break
        size += len(chunk)
        if size >= SNIFF_BYTES:
            break
    first = held[0] if held else b""
    head = b"".join([c for c in held if isinstance(c, bytes)])  # one chunk: not copied
    found = detect_format(head if isinstance(first, bytes) else first)
    if path is not None and found.name == FALLBACK and not found.sniff(head[:SNIFF_BYTES]):
        found = next((f for f in _FORMATS.values() if f.lays_out and f.lays_out(path)), found)
    return found, same_file(chain(held, chunks), source)


def related(logs: list[SessionLog]) -> list[SessionLog]:
    """Return the sessions of one load with the links across files every format finds."""
    _register_builtins()
    for format in list(_FORMATS.values()):
        if format.relate is not None:
            logs = format.relate(logs)
    return logs


def _register_builtins() -> None:
    """Register the formats ledgerviz ships (once, on first use)."""
    if FALLBACK in _FORMATS:
        return
    from ledgerviz.ledger.formats import claude_code, codex, dsh, gemini

    register_format(dsh.FORMAT)
    register_format(claude_code.FORMAT)
    register_format(codex.FORMAT)
    register_format(gemini.FORMAT)
