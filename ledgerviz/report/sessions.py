"""The sessions a report draws, a batch at a time: those of a loaded ``Ledger``, or those of
ledger files, read once for their keys and lineage and again as each batch is drawn."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import pandas as pd

from ledgerviz.api import Ledger
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.formats.claude_code_siblings import ResumeFinder
from ledgerviz.ledger.lineage import LINEAGE_EVENTS, with_parent_warnings
from ledgerviz.ledger.read import file_sessions, read_file
from ledgerviz.ledger.reader import READ_BYTES, reported_chunks, with_unique_keys
from ledgerviz.ledger.sources import Found, expand_found, found_chunks
from ledgerviz.progress import BYTES_THRESHOLD, progress, source_size

BATCH_EVENTS = 50_000
"""About how many events a report analyses, frames and draws at once (whole lineage trees
per batch: a session, with its fork children, is never split)."""


def batches(trees: Iterable[list[int]], sizes: Sequence[int]) -> Iterator[list[int]]:
    """Yield the sessions of ``trees`` in order, whole trees gathered until a batch holds
    :data:`BATCH_EVENTS` events (``sizes``: each session's)."""
    batch: list[int] = []
    events = 0
    for tree in trees:
        batch += tree
        events += sum(sizes[i] for i in tree)
        if events >= BATCH_EVENTS:
            yield batch
            batch, events = [], 0
    if batch:
        yield batch


class LoadedSessions:
    """The sessions of a loaded ``Ledger``: each batch a ``Ledger`` of some of them (the
    ledger itself when it is all of them: its analyses are then kept, as a ledger keeps
    what it computes)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._sessions = ledger.sessions
        self.keys = ledger.keys
        self.sizes = [len(log.events) for log in self._sessions]
        self.lineage = _lineage([_lineage_stub(log) for log in self._sessions])

    def part(self, batch: Sequence[int]) -> Ledger:
        """Return a ledger of the sessions ``batch`` (the ledger itself when it is all of them)."""
        if len(batch) == len(self._sessions):
            return self._ledger
        return Ledger([self._sessions[i] for i in batch])


class LedgerFiles:
    """The sessions of ledger files, as a report reads them to hold one batch at a time.

    :meth:`read` reads the files one at a time and keeps of each session (a file's own,
    then those it holds inline) its key, its event count, whether it has errors, and its
    lineage events (the lineage frame of those is the files'); :meth:`part` reads a batch's
    files again. While the files hold at most
    :data:`BATCH_EVENTS` events in all, or there is one, they are kept instead and read once.
    """

    def __init__(self, found: list[Found], origins: list[tuple[int, int]],
                 stubs: list[SessionLog], sizes: list[int], has_errors: list[bool],
                 kept: list[SessionLog] | None, format: str | None = None) -> None:
        self._found = found
        self._origins = origins
        """Each session's file (an index into ``found``) and place among its sessions."""
        self._format = format
        self._resumes = _resume_finder(format)
        self._kept = kept
        self._warnings = [stub.diagnostics for stub in with_parent_warnings(stubs)]
        self.keys = [stub.key for stub in stubs]
        self.sizes = sizes
        self.has_errors = has_errors
        self.paths = [item.path for item in found]
        self.lineage = _lineage(stubs)

    @classmethod
    def read(cls, sources: Sequence[str | os.PathLike[str]], *, format: str | None = None
             ) -> LedgerFiles:
        """Read every ledger file ``sources`` name (files, folders, globs, as ``load``), in
        ``format`` (None: each file's own); a name that gives no file raises
        ``UnreadableSourceError``."""
        found = [item for source in sources for item in expand_found(os.fspath(source))]
        stubs, sizes, has_errors = [], [], []
        origins: list[tuple[int, int]] = []
        kept: list[SessionLog] | None = []
        kept_events = 0
        resumes = _resume_finder(format)
        with progress(partial(source_size, list(sources)), BYTES_THRESHOLD, "reading",
                      unit="B") as step:
            for file, item in enumerate(found):
                logs = _sessions(resumes, item, step, format)
                origins += [(file, place) for place in range(len(logs))]
                for log in logs:
                    sizes.append(len(log.events))
                    has_errors.append(log.has_errors)
                    stubs.append(_lineage_stub(log))
                if kept is not None:
                    kept += logs
                    kept_events += sum(len(log.events) for log in logs)
                    if len(found) > 1 and kept_events > BATCH_EVENTS:
                        kept = None  # read again, a batch at a time
        return cls(found, origins, with_unique_keys(stubs), sizes, has_errors, kept, format)

    def part(self, batch: Sequence[int]) -> Ledger:
        """Return a ledger of the sessions ``batch``, their files read again unless kept."""
        if self._kept is not None:
            logs = [self._kept[i] for i in batch]
        else:
            files: dict[int, list[SessionLog]] = {}  # each file of the batch read once
            logs = []
            for i in batch:
                file, place = self._origins[i]
                if file not in files:
                    files[file] = _sessions(self._resumes, self._found[file], None,
                                            self._format)
                logs.append(files[file][place])
        return Ledger([replace(log, key=self.keys[i], diagnostics=[*log.diagnostics,
                                                                   *self._warnings[i]])
                       for i, log in zip(batch, logs, strict=True)])


ReportSessions = LoadedSessions | LedgerFiles


def _read(found: Found, step: Callable[[int], Any] | None, format: str | None) -> SessionLog:
    """Return the session of one file in ``format`` (None: its own; ``step``: told the size
    of each chunk read)."""
    chunks = found_chunks(found, READ_BYTES)
    return read_file(found.path, reported_chunks(chunks, step), format=format)


def _sessions(resumes: ResumeFinder, found: Found, step: Callable[[int], Any] | None,
              format: str | None) -> list[SessionLog]:
    """Return the sessions of one file (its own, linked to the session it resumes, then
    those it holds inline), read as ``_read`` reads it."""
    return file_sessions(resumes.linked(_read(found, step, format)))


def _resume_finder(format: str | None) -> ResumeFinder:
    """Return what links each Claude Code resume read alone, in ``format``, to the session
    it copies when that one's file is beside it (as a load of both links it)."""
    return ResumeFinder(lambda path: read_file(path, found_chunks(Found(path, None), READ_BYTES),
                                               format=format))


def _lineage(stubs: list[SessionLog]) -> pd.DataFrame:
    """Return the lineage frame of sessions (keys unique) from their lineage stubs
    (:func:`_lineage_stub`): theirs, without analysing their other events."""
    return Ledger(stubs).frames.lineage


def _lineage_stub(log: SessionLog) -> SessionLog:
    """Return ``log`` with only the events its row of the lineage frame reads (their seqs and
    payloads as the reader's columns give them): its lineage events, and the ``tool/call`` of
    each call a catalog names (a subagent's anchor is that call's seq)."""
    fields = log.event_fields()
    types, datas = fields.types, fields.datas
    named = {call for kind, data in zip(types, datas, strict=True)
             if kind == "subagent/catalog" and isinstance(call := data.get("callId"), str)}
    positions = [i for i, kind in enumerate(types) if kind in LINEAGE_EVENTS or (
        kind == "tool/call" and isinstance(call := datas[i].get("callId"), str) and call in named)]
    return SessionLog(log.path, log.key, log.header, log.version,
                      [log.events[i] for i in positions], fields=fields.taken(positions))
