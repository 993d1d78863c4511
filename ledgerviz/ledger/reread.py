"""A ledger's lines read again by their byte ranges: checked to be the lines read, decoded.

Readers that hold no dict per line keep each line's byte range and read the line again when
its value is asked for: the dsh read route (``lazy_events``), the Claude Code reader's
second pass (``claude_code_entries.RecordSource``) and the Codex reader's derived events
(``codex_events``). The bytes come from a ``LineSource``: the file itself, checked on every
read to be the file read (the same inode, not shorter, the same bytes where the read ended;
appending, what a runtime does to a live ledger, keeps it so); or, for an input that cannot
be read again (a binary stream, a compressed file, bytes in memory), the bytes themselves,
held.

``lines_again`` reads many lines at once: the lines close together in one read, and each run
of consecutive lines (one newline apart) decoded in one ``orjson`` call, the lines joined
into one JSON array (a line holds no raw newline). Each run is checked to lie between two
newlines (or the file's start, past a byte order mark, or its end) and to hold as many
lines, and each line to be an object, so that a file changed since it was read is a
``LedgerChangedError`` naming the first line no longer where it was, never other values:
only an edit in place that keeps every newline where it was, and the file's end, goes
unseen. A line that may hold an integer beyond 64 bits is decoded the exact way, as the
readers read it first (``decode.exact_again``; its warning was given then).

A reader that reads only some fields of each line asks for them as a ``msgspec`` struct
(``Typed``): each run is then decoded by ``msgspec`` into one struct a line, the other fields
skipped in C, never made into Python objects. A line ``msgspec`` does not take that way (a
run that fails the struct's types, a line read alone) is decoded as above and converted.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from ledgerviz.ledger.decode import exact_again
from ledgerviz.ledger.diagnostics import UnreadableSourceError
from ledgerviz.ledger.numbers import may_hold_big_integers
from ledgerviz.ledger.sources import UTF8_BOM, file_identity, open_input

if TYPE_CHECKING:
    from ledgerviz.ledger.held import SparseBytes

END_KEPT = 4096
"""How many of the last bytes read of a file are kept to tell, before its lines are read
again, that it is still the file read (perhaps appended to since)."""

GAP = 64 * 1024
"""Bytes between two lines asked for at once below which both are in one read (the bytes
between read and passed over), rather than two."""


class LedgerChangedError(UnreadableSourceError):
    """A ledger file whose bytes changed since it was read: its lines cannot be decoded."""


class Typed:
    """The fields lines are decoded into: a ``msgspec`` struct type (whose fields take any
    JSON value their lines may hold, so that a line is one of them whatever its shapes)."""

    __slots__ = ("_array", "kind")

    def __init__(self, kind: type[msgspec.Struct]) -> None:
        self.kind = kind
        self._array = msgspec.json.Decoder(list[kind]).decode  # type: ignore[valid-type]

    def run(self, lines: bytes) -> list[Any] | None:
        """Return the structs of a JSON array of lines, or None when one of them is not of
        the struct's shape or nests deeper than ``msgspec`` decodes (``orjson``'s limit is
        above Python's default recursion limit)."""
        try:
            return self._array(lines)
        except (msgspec.DecodeError, RecursionError):  # a msgspec.ValidationError too
            return None

    def of(self, value: dict[str, Any]) -> Any:
        """Return the struct of a line's decoded object."""
        return msgspec.convert(value, self.kind)


class LineSource:
    """Where a ledger's lines are read from again: a file checked to be the one read, or
    the bytes read, held."""

    __slots__ = ("_content", "_end", "_identity", "_size", "path")

    def __init__(self, path: str, content: bytes | SparseBytes | None = None, *,
                 identity: tuple[int, int] | None = None, size: int = 0, end: bytes = b""
                 ) -> None:
        """``content``: the bytes read (``held.SparseBytes`` when some were let go); else
        the file's ``identity`` (``file_identity``), the ``size`` read and the ``end`` of what
        was read (up to ``END_KEPT`` bytes)."""
        if (identity is None) == (content is None):
            raise ValueError("a line source is a file's identity or its content, not both")
        self.path = path
        self._content = content
        self._identity = identity
        self._size = size
        self._end = end

    def read(self, spans: Sequence[tuple[int, int]]) -> list[bytes]:
        """Return the bytes of each ``(start, stop)`` of ``spans`` of what was read (shorter
        past its end); raise ``LedgerChangedError`` when the file is no longer the one read
        (another file, shorter, or other bytes where what was read ended: only appending
        leaves it the same), ``UnreadableSourceError`` when it cannot be read."""
        if self._content is not None:
            return [self._content[start:stop] for start, stop in spans]
        try:
            with open_input(self.path) as raw:
                stat = os.fstat(raw.fileno())
                end_at = self._size - len(self._end)
                raw.seek(end_at)
                if (file_identity(stat) != self._identity or stat.st_size < self._size
                        or raw.read(len(self._end)) != self._end):
                    raise LedgerChangedError(
                        f"{self.path}: the file changed since it was read (it is another file "
                        f"now, or its first {self._size:,} bytes are not the ones read): its "
                        "events cannot be read from it; load it again")
                read = []
                for start, stop in spans:
                    raw.seek(start)
                    read.append(raw.read(stop - start))
                return read
        except OSError as error:
            raise UnreadableSourceError(
                f"{self.path}: cannot read its events again: {error.strerror or error}"
            ) from error


def lines_again(source: LineSource, starts: Sequence[int], stops: Sequence[int],
                named: Callable[[int], str], exact: Sequence[int] | None = None,
                typed: Typed | None = None) -> list[Any]:
    """Return the object each line ``starts[i]`` to ``stops[i]`` of ``source`` decodes to
    (``starts``: the offset of each line's first byte, ascending; ``stops``: of the newline
    ending it, or of the end for a last line without one; ``exact``: the lines, ascending,
    that held an integer beyond 64 bits when read, where the reader knows them, else None:
    each run is screened for one), or its ``typed`` struct when given; raise
    ``LedgerChangedError``, naming the first line no longer where it was read (``named(i)``,
    as "line 5"), when the file changed (see the module docstring)."""
    count = len(starts)
    if len(stops) != count:
        raise ValueError(f"{count} starts for {len(stops)} stops")
    if not count:
        return []
    firsts = [0]  # the first line of each read
    if stops[-1] - starts[0] - sum(stops) + sum(starts) > GAP:  # the bytes between lines
        firsts += [at for at in range(1, count) if starts[at] - stops[at - 1] > GAP]
    reads = list(zip(firsts, [*firsts[1:], count], strict=True))
    spans = [(_read_from(starts[first]), stops[stop - 1] + 1) for first, stop in reads]
    values: list[Any] = []
    for (first, stop), (base, _), data in zip(reads, spans, source.read(spans), strict=True):
        lines = _Lines(source.path, data, base, (starts, stops), named, exact, typed)
        if stops[stop - 1] - starts[first] == (sum(stops[first:stop]) - sum(starts[first:stop])
                                              + stop - first - 1):
            values += lines.run(first, stop)  # one run of consecutive lines
            continue
        begin = first
        for at in range(first + 1, stop + 1):
            if at < stop and starts[at] == stops[at - 1] + 1:
                continue
            values += lines.run(begin, at)
            begin = at
    return values


def _read_from(start: int) -> int:
    """Return where a read for a line starting at ``start`` begins: at the byte before it,
    or at the file's start when no more than a byte order mark may be before it."""
    return 0 if start <= len(UTF8_BOM) else start - 1


class _Lines:
    """The lines one read holds, checked and decoded a run at a time."""

    def __init__(self, path: str, data: bytes, base: int,
                 ranges: tuple[Sequence[int], Sequence[int]], named: Callable[[int], str],
                 exact: Sequence[int] | None, typed: Typed | None) -> None:
        """``data``: the bytes read from offset ``base``; ``ranges``, ``named``, ``exact``,
        ``typed``: as ``lines_again`` was given them."""
        self._path = path
        self._data = data
        self._base = base
        self._starts, self._stops = ranges
        self._named = named
        self._exact = exact
        self._typed = typed

    def run(self, first: int, stop: int) -> list[Any]:
        """Return the objects (or structs) of lines ``first`` to ``stop`` (excluded),
        consecutive."""
        data, base = self._data, self._base
        start, end = self._starts[first] - base, self._stops[stop - 1] - base
        lines = data[start:end]
        if (self._between(start, end) and lines.count(b"\n") == stop - first - 1
                and not self._may_be_exact(first, stop, lines)):
            values = self._decoded(b"[%b]" % lines.replace(b"\n", b","))
            if values is not None:
                return values
        lone = [self._line(at) for at in range(first, stop)]  # says which line moved
        return lone if self._typed is None else list(map(self._typed.of, lone))

    def _decoded(self, array: bytes) -> list[Any] | None:
        """Return the objects (or structs) of a JSON array of lines, or None when it does
        not decode to objects (of the struct's shape)."""
        if self._typed is not None:
            return self._typed.run(array)
        try:
            values = orjson.loads(array)
        except orjson.JSONDecodeError:
            return None
        return values if all(value.__class__ is dict for value in values) else None

    def _may_be_exact(self, first: int, stop: int, lines: bytes) -> bool:
        """Return whether some of lines ``first`` to ``stop`` (excluded), ``lines``, may hold
        an integer beyond 64 bits."""
        exact = self._exact
        if exact is None:
            return may_hold_big_integers(lines)
        return bisect_left(exact, first) != bisect_left(exact, stop)

    def _between(self, start: int, end: int) -> bool:
        """Return whether bytes ``start`` to ``end`` of the read lie between two newlines
        (or the file's start, past a byte order mark, or its end)."""
        data = self._data
        if data[end:end + 1] not in (b"\n", b""):
            return False
        if self._base + start <= len(UTF8_BOM):  # read from the file's start
            return data[:start] in (b"", UTF8_BOM) or data[start - 1] == 10
        return data[start - 1] == 10

    def _line(self, at: int) -> dict[str, Any]:
        """Return the object of line ``at`` alone, the exact way when it may hold an integer
        beyond 64 bits; raise ``LedgerChangedError`` if it is not the line read."""
        start, end = self._starts[at] - self._base, self._stops[at] - self._base
        line = self._data[start:end]
        reason = "not a line between two newlines"
        if self._between(start, end) and b"\n" not in line:
            try:
                exact = self._may_be_exact(at, at + 1, line)
                value = exact_again(line) if exact else orjson.loads(line)
            except ValueError as error:  # orjson.JSONDecodeError is one
                reason = str(error)
            else:
                if value.__class__ is dict:
                    return value
                reason = "not an object"
        raise LedgerChangedError(
            f"{self._path}: {self._named(at)} is no longer where it was read ({reason}): the "
            "file changed; load it again")
