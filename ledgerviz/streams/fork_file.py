"""Fork a ledger file as a stream: the child seed written without holding the parent.

:func:`write_fork` writes the child that ``Ledger.fork`` returns (``recovery.fork_seed``),
line for line, reading the parent twice one block at a time (``READ_BYTES``): first as the
runtime reads it (``runtime_read``: a parent it refuses, or a boundary past the events it
uses, is refused), finding in the same read the boundary (the fork policy's, the scan
stopping at the first fork point, or the seq asked for) and its position; then to copy
the events up to it, as the runtime reads them, and close the seed.
Only the block being read, the reader's set of requested call ids, and, until the
boundary is known, the recovery scan's state and the seqs read are held: a few numbers
per event without ``at``, never the events themselves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice
from typing import Any

from ledgerviz.ledger.checks import CheckedEvents
from ledgerviz.ledger.reader import READ_BYTES, FileScan, reported_chunks
from ledgerviz.ledger.runtime_read import RuntimeRead, runtime_read
from ledgerviz.ledger.sources import iter_source_chunks
from ledgerviz.ledger.writer import encode_line
from ledgerviz.progress import BYTES_THRESHOLD, progress, source_size
from ledgerviz.recovery import ForkRefused, PendingCalls, fork_header
from ledgerviz.recovery.analyze import ForkPointSearch
from ledgerviz.recovery.fork import SeqSearch, check_seedable, no_boundary, no_event_at, seed_end


@dataclass(frozen=True)
class ForkWritten:
    """The child :func:`write_fork` wrote: its header, how many events it inherits, the seq
    of its seed marker and how many forked closers follow it (every line of the parent up
    to the boundary gave one event: the runtime reads no further than a line that does
    not)."""

    header: dict[str, Any]
    inherited: int
    marker_seq: int
    closers: int


def write_fork(
    path: str | os.PathLike[str],
    write: Callable[[str], object],
    at: int | None = None,
    *,
    session_id: str | None = None,
    created_at: int,
    chunk_bytes: int = READ_BYTES,
) -> ForkWritten:
    """Write the fork child of the one ledger file ``path``, a few lines at a time, to
    ``write``.

    The lines are those of the child ``Ledger.fork(at, session_id=...,
    created_at=...)`` returns: boundary ``at``, by default the fork policy's;
    ``session_id`` defaults to ``<parent id>-fork-<boundary>``. Raises ``ForkRefused``
    where ``Ledger.fork`` does, ``NotOneFile`` when ``path`` names several ledger files and
    ``UnreadableSourceError`` when it names nothing. A v2/v3 parent cut inside a turn is
    refused once its prefix has been written: write to a temporary file and keep it only
    when this returns, as ``ledgerviz fork`` does.
    """
    path = _one_file(path)
    finder = _BoundaryFinder(at)
    reading = _runtime_reading(path, chunk_bytes, finder.see)
    if reading.refusal is not None:
        raise ForkRefused(f"{path}: {reading.refusal}; no child written")
    parent, version, boundary, index = finder.found(path)
    if boundary >= reading.used:
        raise ForkRefused(_past_the_runtimes_read(path, boundary, reading))
    header = fork_header(parent, session_id=session_id or f"{parent.get('id')}-fork-{boundary}",
                         created_at=created_at)
    write(encode_line(header))
    tracker = _copy_events(path, index, boundary, write, chunk_bytes)
    tail = seed_end(version, boundary, tracker)
    write("".join(map(encode_line, tail)))
    return ForkWritten(header, index + 1, boundary + 1, len(tail) - 1)


class _BoundaryFinder:
    """Finds the boundary seq and its position in the blocks of the runtime's read, as
    they come (``see``): the fork policy's (the seqs held until its first fork point is
    found), or the seq asked for (searched block by block, nothing held)."""

    def __init__(self, at: int | None) -> None:
        self._at = at
        self._points: ForkPointSearch | None = None  # the fork policy's scan, once read
        self._held: list[Sequence[Any]] = []  # seqs read while the boundary is unknown
        self._position = None if at is None else SeqSearch(at)
        self._scan: FileScan | None = None
        self._last: Any = None  # the last seq read

    def see(self, scan: FileScan, block: CheckedEvents) -> None:
        """Take the next block of the read (``scan`` reading it)."""
        self._scan, seqs = scan, block.fields.seqs
        if seqs:
            self._last = seqs[-1]
        if self._position is None:
            if self._points is None:
                self._points = ForkPointSearch(scan.version)
            self._held.append(seqs)
            point = self._points.feed(block.events, block.fields)
            if point is not None:
                self._searching(point - 1)
        else:
            self._position.feed(seqs)

    def _searching(self, boundary: int) -> None:
        """Search the seqs held for ``boundary``; search those read next as they come."""
        self._at, self._position = boundary, SeqSearch(boundary)
        for seqs in self._held:
            if self._position.feed(seqs):
                break
        self._held = []

    def found(self, path: str) -> tuple[dict[str, Any], int | None, int, int]:
        """Return the parent's header fields and version, the boundary seq and its
        position, once the read is done: the checks and refusals of ``fork_seed``, in its
        order."""
        scan = self._scan
        if scan is None or not scan.readable:
            return self._unreadable(path)
        if self._position is None:
            point = self._points.finish() if self._points is not None else None
            if point is None:
                raise ForkRefused(no_boundary(path))
            self._searching(point - 1)
        check_seedable(scan.version)
        assert self._position is not None and self._at is not None
        if self._position.position is None:
            raise ForkRefused(no_event_at(self._at, self._last))
        return scan.header_fields, scan.version, self._at, self._position.position

    def _unreadable(self, path: str) -> tuple[dict[str, Any], int | None, int, int]:
        """Refuse a parent with no readable header (its first error, or no boundary)."""
        scan = self._scan
        error = None if scan is None else next(
            (d for d in scan.diagnostics() if d.severity == "error"), None)
        raise ForkRefused(str(error) if error is not None else no_boundary(path))


def _copy_events(path: str, index: int, boundary: int, write: Callable[[str], object],
                 chunk_bytes: int) -> PendingCalls:
    """Write the parent's events up to position ``index``, whose seq is ``boundary``;
    return a tracker that has observed them (raise ForkRefused if the file changed so that
    they are not there)."""
    tracker, count = PendingCalls(), index + 1
    _, blocks = _blocks(path, chunk_bytes, "writing")
    for block in blocks:
        taken, fields = min(count, len(block.events)), block.fields
        write("".join(map(encode_line, islice(block.events, taken))))
        tracker.observe_columns(fields.types[:taken], fields.seqs[:taken],
                                fields.times[:taken], fields.datas[:taken])
        count -= taken
        if not count:
            break
    if count or tracker.last_seq != boundary:
        raise ForkRefused(f"{path} changed while it was read; fork it again")
    return tracker


def _runtime_reading(path: str, chunk_bytes: int,
                     seen: Callable[[FileScan, CheckedEvents], object]) -> RuntimeRead:
    """Return how the runtime reads the file (its events are not kept: each block read is
    handed to ``seen``)."""
    ((_, chunks),) = iter_source_chunks(path, chunk_bytes)
    with progress(source_size(path), BYTES_THRESHOLD, "reading", unit="B") as step:
        return runtime_read(path, reported_chunks(chunks, step), lambda _: None, seen)


def _past_the_runtimes_read(path: str, boundary: int, reading: RuntimeRead) -> str:
    """Return why there is no fork at ``boundary``, past the events the runtime uses."""
    used = f"seqs 0..{reading.used - 1}" if reading.used else "no event"
    stop = reading.stop
    where = f" (it stops at line {stop.line}: {stop.message})" if stop is not None else ""
    return (f"{path}: the runtime reads {used}{where}, so a child inheriting seq {boundary} "
            "is one it would not resume; fork at an earlier seq")


class NotOneFile(ValueError):
    """The path given as the parent names several ledger files (a bad argument)."""


def _one_file(path: str | os.PathLike[str]) -> str:
    """Return the one ledger file ``path`` names (raise NotOneFile for several)."""
    found = [name for name, _ in iter_source_chunks(os.fspath(path))]
    if len(found) != 1:
        raise NotOneFile(f"{os.fspath(path)} holds {len(found)} ledgers; give one file")
    return found[0]


def _blocks(path: str, chunk_bytes: int, doing: str) -> tuple[FileScan, Iterator[CheckedEvents]]:
    """Return a new scan of the file, reading its events as the runtime does, and its blocks,
    with the file's header read (progress drawn as ``doing`` for a large file)."""
    scan = FileScan(path, runtime=True)
    blocks = _scanned(scan, path, chunk_bytes, doing)
    first = next(blocks, None)  # reads the header
    return scan, chain([first] if first is not None else [], blocks)


def _scanned(scan: FileScan, path: str, chunk_bytes: int, doing: str
             ) -> Iterator[CheckedEvents]:
    """Yield the blocks of ``scan`` over the file's chunks, drawing progress."""
    ((_, chunks),) = iter_source_chunks(path, chunk_bytes)
    with progress(source_size(path), BYTES_THRESHOLD, doing, unit="B") as step:
        yield from scan.blocks(reported_chunks(chunks, step))


