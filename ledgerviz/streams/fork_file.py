"""Fork a ledger file as a stream: the child seed written without holding the parent.

:func:`write_fork` writes the child that ``Ledger.fork`` returns (``recovery.fork_seed``),
line for line, reading the parent once, one block at a time (``READ_BYTES``), as the
runtime reads it (``runtime_read``: a parent it refuses, or a boundary past the events it
uses, is refused). The same read finds the boundary (the fork policy's, the scan stopping
at the first fork point, or the seq asked for) and its position, and spools the child's
line of each event read, until the boundary's position is known, to an anonymous
temporary file (in ``TMPDIR``, as ``sort(1)`` spools). The spool's lines up to the
boundary are then copied out, and those from the boundary's turn on read back to close
the seed. Only the block being read, the reader's requested call ids (``CallIds``), the
position of each turn's start and end, and, until the boundary is known, the recovery
scan's state and the seqs read are held: a few numbers per event without ``at``, never the
events themselves.
"""

from __future__ import annotations

import json
import os
import tempfile
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from itertools import islice
from typing import IO, Any

import orjson

from ledgerviz.ledger.checks import CheckedEvents
from ledgerviz.ledger.compressed import stream_cut
from ledgerviz.ledger.diagnostics import Diagnostic
from ledgerviz.ledger.numbers import may_hold_big_integers
from ledgerviz.ledger.reader import READ_BYTES, FileScan, reported_chunks
from ledgerviz.ledger.runtime_read import RuntimeRead, refusal_line, runtime_read
from ledgerviz.ledger.sources import iter_source_chunks
from ledgerviz.ledger.writer import encode_line
from ledgerviz.progress import BYTES_THRESHOLD, progress, source_size
from ledgerviz.recovery import ForkRefused, PendingCalls, fork_header
from ledgerviz.recovery.analyze import ForkPointSearch
from ledgerviz.recovery.columns import columns_of
from ledgerviz.recovery.events import data_of
from ledgerviz.recovery.fork import SeqSearch, check_seedable, no_boundary, no_event_at, seed_end
from ledgerviz.recovery.tracker import TURN_BOUNDARIES


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
    with tempfile.TemporaryFile() as spooled:
        spool = _Spool(spooled)

        def see(scan: FileScan, block: CheckedEvents) -> None:
            finder.see(scan, block)
            spool.add(block, finder.events_wanted())

        reading = _runtime_reading(path, chunk_bytes, see)
        if reading.refusal is not None:
            raise ForkRefused(f"{path}: {reading.refusal}; no child written")
        parent, version, boundary, index = finder.found(path)
        why = no_child_at(path, boundary, index is not None, reading.used, reading.stop,
                          finder.last)
        if why is not None:
            raise ForkRefused(why)
        assert index is not None
        header = fork_header(parent,
                             session_id=session_id or f"{parent.get('id')}-fork-{boundary}",
                             created_at=created_at)
        write(encode_line(header))
        tracker = spool.copy(index + 1, write, chunk_bytes)
    tail = seed_end(version, boundary, tracker)
    write("".join(map(encode_line, tail)))
    return ForkWritten(header, index + 1, boundary + 1, len(tail) - 1)


def _unreadable(scan: FileScan, block: CheckedEvents, error: Exception) -> str:
    """Say what the fork policy's scan could not read (``error``) in ``block``: the first of
    its events of a shape the runtime reads as it is but the engine cannot (the check's
    ``unusual_payload``), or the file."""
    lines = set(block.lines)
    problem = next((d for d in scan.log.items
                    if d.kind == "unusual_payload" and d.line in lines), None)
    where = scan.path if problem is None else f"{scan.path}:{problem.line}: {problem.message}"
    return (f"{where}: the fork policy cannot read it ({error}), so its boundary is not known; "
            "`--at SEQ` forks at a seq of your choosing; no child written")


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
        self.last: Any = None
        """The last seq read."""

    def see(self, scan: FileScan, block: CheckedEvents) -> None:
        """Take the next block of the read (``scan`` reading it)."""
        self._scan, seqs = scan, block.fields.seqs
        if seqs:
            self.last = seqs[-1]
        if self._position is None:
            if self._points is None:
                self._points = ForkPointSearch(scan.version)
            self._held.append(seqs)
            try:
                point = self._points.feed(block.events,
                                          columns_of(block.events, envelope=block.fields))
            except (TypeError, AttributeError) as error:
                raise ForkRefused(_unreadable(scan, block, error)) from error
            if point is not None:
                self._searching(point - 1)
        else:
            self._position.feed(seqs)

    def events_wanted(self) -> int | None:
        """Return how many events the child inherits, once the boundary's position is
        final (None before)."""
        position = self._position
        if position is None or not position.done or position.position is None:
            return None
        return position.position + 1

    def _searching(self, boundary: int) -> None:
        """Search the seqs held for ``boundary``; search those read next as they come."""
        self._at, self._position = boundary, SeqSearch(boundary)
        for seqs in self._held:
            if self._position.feed(seqs):
                break
        self._held = []

    def found(self, path: str) -> tuple[dict[str, Any], int | None, int, int | None]:
        """Return the parent's header fields and version, the boundary seq and its
        position (None: no event read has that seq), once the read is done: the checks and
        refusals of ``fork_seed`` before its search, in its order."""
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
        return scan.header_fields, scan.version, self._at, self._position.position

    def _unreadable(self, path: str) -> tuple[dict[str, Any], int | None, int, int]:
        """Refuse a parent with no readable header (its first error, or no boundary)."""
        scan = self._scan
        error = None if scan is None else next(
            (d for d in scan.diagnostics() if d.severity == "error"), None)
        raise ForkRefused(str(error) if error is not None else no_boundary(path))


class _Spool:
    """The child's line of each event read (``add``), in a binary file, and the position of
    each turn/start and turn/end among them; ``copy`` writes the first lines out."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._count = 0  # events spooled
        self._turn_marks = array("q")  # positions of the turn/start and turn/end events

    def add(self, block: CheckedEvents, wanted: int | None) -> None:
        """Spool the events of the next block read, no more than ``wanted`` in all."""
        start, events = self._count, block.events
        taken = len(events) if wanted is None else max(0, min(len(events), wanted - start))
        if not taken:
            return
        types = block.fields.types
        self._turn_marks.extend(start + i for i in range(taken)
                                if types[i] in TURN_BOUNDARIES)
        text = "".join(map(encode_line, islice(events, taken)))
        self._file.write(text.encode("utf-8", "surrogatepass"))  # as written, read back
        self._count += taken

    def copy(self, count: int, write: Callable[[str], object], size: int) -> PendingCalls:
        """Write the first ``count`` lines spooled, about ``size`` bytes at a time; return
        a tracker that has observed their events (from the last turn/start or turn/end
        among them on: that event resets all the tracker keeps but the last seq and
        time)."""
        marks = self._turn_marks
        found = bisect_right(marks, count - 1)
        turn = marks[found - 1] if found else 0
        tracker = PendingCalls()
        self._file.seek(0)
        position = 0
        for batch in _batches(islice(self._file, count), size):
            write(b"".join(batch).decode("utf-8", "surrogatepass"))
            for at in range(max(turn - position, 0), len(batch)):
                event = _spooled_event(batch[at])
                tracker.observe_fields(event.get("type"), event.get("seq", position + at),
                                       event.get("time"), data_of(event))
            position += len(batch)
        return tracker


def _batches(lines: Iterable[bytes], size: int) -> Iterator[list[bytes]]:
    """Yield ``lines`` in runs of about ``size`` bytes (a line longer is a run alone)."""
    batch: list[bytes] = []
    held = 0
    for line in lines:
        batch.append(line)
        held += len(line)
        if held >= size:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def _spooled_event(line: bytes) -> dict[str, Any]:
    """Return the event a spooled line encodes, as it was read: orjson's decode, or the
    standard library's where a line may hold an integer beyond 64 bits (orjson would make
    it a float) or a lone surrogate (which orjson refuses)."""
    if not may_hold_big_integers(line):
        with suppress(orjson.JSONDecodeError):
            return orjson.loads(line)
    return json.loads(line.decode("utf-8", "surrogatepass"))


def _runtime_reading(path: str, chunk_bytes: int,
                     seen: Callable[[FileScan, CheckedEvents], object]) -> RuntimeRead:
    """Return how the runtime reads the file (its events are not kept: each block read is
    handed to ``seen``). A compressed file whose stream was cut short is refused, as
    ``Ledger.fork`` refuses its load: the fork policy's boundary, and whether the runtime
    would read the parent to any boundary, depend on what was lost."""
    ((_, chunks),) = iter_source_chunks(path, chunk_bytes)
    with progress(source_size(path), BYTES_THRESHOLD, "reading", unit="B") as step:
        reading = runtime_read(path, reported_chunks(chunks, step), lambda _: None, seen)
    cut = stream_cut(path, getattr(chunks, "end", None), strict=False)
    if cut and reading.refusal is None:  # refused for an error before it: said first
        return reading._replace(refusal=refusal_line(cut[0]), cut=None)
    return reading


def no_child_at(path: str, boundary: int, found: bool, used: int, stop: Diagnostic | None,
                last: Any) -> str | None:
    """Return why the runtime would resume no child inheriting the parent's events up to seq
    ``boundary``, or None: no event read has that seq (``found``) and the runtime reads to
    the end or stops past it, or the runtime uses only ``used`` events (seqs 0..used-1),
    stopping at ``stop``, and the boundary is not among them. ``last``: the last seq read.
    ``write_fork`` and ``Ledger.fork`` judge alike by it."""
    if not found and (stop is None or boundary < used):
        return no_event_at(boundary, last)
    if boundary < used:
        return None
    seqs = f"seqs 0..{used - 1}" if used else "no event"
    where = f" (it stops at line {stop.line}: {stop.message})" if stop is not None else ""
    return (f"{path}: the runtime reads {seqs}{where}, so a child inheriting seq {boundary} "
            "is one it would not resume; fork at an earlier seq")


class NotOneFile(ValueError):
    """The path given as the parent names several ledger files (a bad argument)."""


def _one_file(path: str | os.PathLike[str]) -> str:
    """Return the one ledger file ``path`` names (raise NotOneFile for several)."""
    found = [name for name, _ in iter_source_chunks(os.fspath(path))]
    if len(found) != 1:
        raise NotOneFile(f"{os.fspath(path)} holds {len(found)} ledgers; give one file")
    return found[0]
