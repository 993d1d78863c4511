"""The one route from a user's source to sessions: files found, read in chunks with their
progress reported, each file's format detected by content, and read by that format."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from ledgerviz.ledger import reader
from ledgerviz.ledger.compressed import stream_cut
from ledgerviz.ledger.formats import FALLBACK, Chunk, ReadOptions, file_format, related
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.lineage import with_parent_warnings
from ledgerviz.ledger.runs import RunReader
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import Source, iter_source_chunks


def read_file(
    path: str,
    chunks: Iterable[Chunk],
    *,
    format: str | None = None,
    strict: bool = False,
    duplicate_keys: bool = False,
) -> SessionLog:
    """Return the session of one file given as its chunks, read in ``format`` (None: the
    format its first bytes show, ``file_format``; see ``ledgerviz.ledger.formats``),
    with the sessions it holds inline as its ``children`` (see ``file_sessions``)."""
    origin = getattr(chunks, "origin", None)  # a file its events can be read from again
    end = getattr(chunks, "end", None)  # how a compressed file's stream ended
    reader, chunks = file_format(chunks, format, path)
    log = reader.read(path, chunks, ReadOptions(strict, duplicate_keys, origin))
    cut = stream_cut(log.path, end, strict)
    return replace(log, diagnostics=[*log.diagnostics, *cut]) if cut else log


def file_sessions(log: SessionLog) -> list[SessionLog]:
    """Return the sessions one file was read into: ``log``, then the sessions it holds
    inline (its ``children``, each with none of its own)."""
    if not log.children:
        return [log]
    return [replace(log, children=()), *log.children]


def read_sessions(
    source: Source,
    *,
    format: str | None = None,
    strict: bool = False,
    progress: Callable[[int], None] | None = None,
    duplicate_keys: bool = False,
) -> list[SessionLog]:
    """Return one ``SessionLog`` per session in ``source``, keys unique within the load: one
    per file, followed by the sessions it holds inline (``file_sessions``).

    Lenient by default: every readable event is kept and every problem becomes a
    diagnostic. ``strict=True`` raises ``LedgerError`` at the first error-level problem.
    A source that cannot be read at all raises ``UnreadableSourceError``. ``format``
    names the format of every file (None: each file's own, by content). ``progress``, if
    given, is called with the size of each chunk read, once the reader has taken it.
    ``duplicate_keys=True`` also looks for keys repeated within a line (a warning; it
    costs a re-encoding of every line). Files are read ``reader.READ_BYTES`` at a time.
    Sessions that copy other files' records are linked to them (``Format.relate``).
    A lenient read reads small dsh files in runs (``runs.RunReader``): the same sessions.
    """
    def alone(path: str, chunks: Iterator[Chunk]) -> list[SessionLog]:
        return file_sessions(read_file(path, chunks, format=format, strict=strict,
                                       duplicate_keys=duplicate_keys))

    runs = RunReader(alone, runs=format in (None, FALLBACK) and not strict and not duplicate_keys)
    with paused_gc():  # once for the whole source, not once per file (nested: no work)
        logs = [session
                for path, chunks in iter_source_chunks(source, reader.READ_BYTES)
                for session in runs.take(path, reader.reported_chunks(chunks, progress))]
        logs += runs.finish()
    return with_parent_warnings(related(reader.with_unique_keys(logs)))


def read_session(
    path: str, content: Chunk, *, format: str | None = None, strict: bool = False,
    duplicate_keys: bool = False,
) -> SessionLog:
    """Return the session in one file's bytes (its key is the header id or the file stem).

    ``content`` may be the ``SourceProblem`` of a file that could not be read; options
    as in ``read_sessions``.
    """
    return read_file(path, [content], format=format, strict=strict,
                     duplicate_keys=duplicate_keys)
