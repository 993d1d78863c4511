"""Claude Code session transcripts (``~/.claude/projects/<project>/<sessionId>.jsonl`` and
``<sessionId>/subagents/agent-<agentId>.jsonl``) read into the dsh event model.

One file is one session; its id is the file's name without ``.jsonl`` (Claude Code names
the file by the session id). A subagent's file is a child of the session named by the
folder above ``subagents/`` (``origin: subagent``). Records at the start of a file whose
``sessionId`` is another session's, or (across the files of one load) whose ``uuid``s an
older session holds, are the prefix a resume copied: inherited, and counted once, in that
session (``session/end-seed {inherited: true}``, as a dsh fork seed). Inline sidechain
records of older builds are the file's further sessions, children of its main one
(``claude_code_sidechains``).
See ``claude_code_events`` for how records become events and ``claude_code_branches``
for rewinds and replays.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from ledgerviz.ledger.decode import BIG_INTEGER, UNREADABLE, decode_lines
from ledgerviz.ledger.diagnostics import (
    DiagnosticLog,
    DiagnosticSink,
    PendingDiagnostics,
    Severity,
)
from ledgerviz.ledger.formats import Chunk, Format, ReadOptions
from ledgerviz.ledger.formats.claude_code_branches import plan_branches
from ledgerviz.ledger.formats.claude_code_entries import Entry, RecordSource, entry_of
from ledgerviz.ledger.formats.claude_code_events import EventWriter, refusals
from ledgerviz.ledger.formats.claude_code_fields import Facts
from ledgerviz.ledger.formats.claude_code_records import (
    BOOKKEEPING_KINDS,
    CONVERSATION_KINDS,
    FOREIGN,
    Record,
    record_of,
)
from ledgerviz.ledger.formats.claude_code_resumes import link_resumes
from ledgerviz.ledger.formats.claude_code_scan import scanned
from ledgerviz.ledger.formats.claude_code_sidechains import (
    Sidechain,
    prompt_anchors,
    split_sidechains,
)
from ledgerviz.ledger.formats.claude_code_typed import takes, written
from ledgerviz.ledger.formats.foreign import BOM_WARNING, line_too_long
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.numbers import may_hold_big_integers, number_marks
from ledgerviz.ledger.reader import UTF8_BOM, LeadingBlanks, line_blocks, opened_chunks
from ledgerviz.ledger.reread import LineSource
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import FileOrigin
from ledgerviz.ledger.tabled import TableRows
from ledgerviz.wording import counted

NAME = "claude_code"
_KINDS = CONVERSATION_KINDS | BOOKKEEPING_KINDS


def sniff(head: bytes) -> bool:
    """Return whether ``head`` starts a Claude Code transcript: its first line a record with
    a Claude Code kind and ``uuid``/``sessionId``-style keys (a first line cut short by
    ``head`` is judged by its keys)."""
    first = head.removeprefix(UTF8_BOM).lstrip(b" \t\r\n").split(b"\n", 1)[0]
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return b'"parentUuid"' in first and b'"sessionId"' in first
    if not isinstance(value, dict) or not isinstance(value.get("type"), str) \
            or value["type"] not in _KINDS:
        return False
    return any(key in value for key in ("uuid", "parentUuid", "leafUuid", "sessionId",
                                        "messageId"))


def read(path: str, chunks: Iterable[Chunk], options: ReadOptions) -> SessionLog:
    """Return the session of one Claude Code transcript given as its chunks."""
    with paused_gc():  # millions of acyclic dicts: collections would cost more than reading
        return _read(path, chunks, DiagnosticLog(path, strict=options.strict), options)


def _read(path: str, chunks: Iterable[Chunk], log: DiagnosticLog, options: ReadOptions
          ) -> SessionLog:
    """Return the session of one transcript, its problems recorded in ``log``, with its
    inline sidechains as its children: a first pass keeps each record's ``Entry``, a
    second writes the events, each record decoded again from its line."""
    places = _Places(path, options.origin)
    records, total = _entries(chunks, places, log, options.max_line)
    source = places.source()
    identity = _Identity.of_file(path, records)
    own, sidechains = (records, []) if identity.subagent \
        else split_sidechains(records, identity.id)
    written = _Written(own, source, identity, log, prompt_anchors(own, sidechains, source))
    children = tuple(_child(path, s, source, identity, log.strict) for s in sidechains)
    inline = len(records) - len(own)
    unreadable = total - len(records)
    del records, own, sidechains, source  # not held while the events' table is joined
    log.add(1, "line_counts", f"{counted(total, 'line')}: {written.counts()}, "
            + (f"{counted(inline, 'inline sidechain record')} read as "
               f"{counted(len(children), 'child session')}, " if inline else "")
            + f"{unreadable} unreadable (blank, invalid, torn or not an object)", "info")
    return written.session(path, log, total - written.count - inline, children)


def _child(path: str, sidechain: Sidechain, source: RecordSource, parent: _Identity,
           strict: bool) -> SessionLog:
    """Return the child session of one inline sidechain of the file at ``path``."""
    log = DiagnosticLog(path, strict=strict)
    written = _Written(sidechain.records, source, parent.child(sidechain.key), log, {})
    log.add(sidechain.records[0].line, "line_counts",
            f"{counted(len(sidechain.records), 'inline sidechain record')} of session "
            f"{parent.id}: {written.counts()}", "info")
    return written.session(path, log, written.merged + written.copies, ())


class _Written:
    """The events one session's records are written as."""

    def __init__(self, records: Sequence[Entry], source: RecordSource, identity: _Identity,
                 log: DiagnosticLog, children: dict[str, str]) -> None:
        in_graph = [r.uuid is not None and r.kind != FOREIGN for r in records]
        in_chain = [owned and r.kind in ("user", "assistant")
                    for owned, r in zip(in_graph, records, strict=True)]
        branches = plan_branches(records, in_graph, log)
        self.reasons = refusals(records, branches.order, in_chain)
        self.inherited = identity.inherited(records, branches.order)
        typed = written(records, source, in_chain, branches.order) \
            if takes(branches, self.reasons, self.inherited, children, source) else None
        if typed is None:  # today's route: the writer's events, sealed a window at a time
            writer = EventWriter(records, source, in_chain, branches, self.reasons, log,
                                 children)
            for position, index in enumerate(branches.order):
                if position == self.inherited and self.inherited:
                    writer.emit("session/end-seed", {"inherited": True})
                writer.write(index)
            writer.finish()
        self.finished = (writer.store if typed is None else typed).finished
        """Returns the events written, their lines and their table (the writer, with what
        it kept of the records, let go)."""
        _count_unknown_kinds(records, log)
        self.merged = (writer if typed is None else typed).merged
        self.copies = branches.copies
        self.count = len(branches.order) - self.merged
        """Records written as events."""
        self.header = identity.header(records, self.inherited)
        self.id = identity.id

    def counts(self) -> str:
        """Say how many records were written as events, merged and skipped."""
        return (f"{counted(self.count, 'record')} written as events, "
                f"{counted(self.merged, 'assistant record')} merged into the step of an earlier "
                f"one (same message.id), "
                f"{counted(self.copies, 'replayed copy', plural='replayed copies')} skipped")

    def session(self, path: str, log: DiagnosticLog, skipped: int,
                children: tuple[SessionLog, ...]) -> SessionLog:
        """Return the session read, its diagnostics those of ``log`` so far."""
        events, lines, table = self.finished()
        return SessionLog(path, self.id, self.header, 4, events, log.finish(), skipped, lines,
                          format=NAME, call_reasons=self.reasons, children=children,
                          table=table)


def _entries(chunks: Iterable[Chunk], places: _Places, log: DiagnosticLog, max_line: int
             ) -> tuple[list[Entry], int]:
    """Return the entries of a file's records (lines of at most ``max_line`` UTF-16 code
    units), each line's place noted in ``places``, and how many lines the file has."""
    entries: list[Entry] = []
    shared: dict[Any, Any] = {}
    opened = opened_chunks(iter(places.kept(chunks)), log, BOM_WARNING)
    if opened is None:
        return entries, 0
    line = 1
    end = b""  # what follows the file's last newline
    leading = LeadingBlanks()
    for piece in line_blocks(opened, max_line, leading):
        lines = piece.lines
        offsets = places.offsets(lines, piece.cut + leading.lost, line)
        leading.lost = 0  # counted once
        if piece.too_long:  # its start only is held: said, not decoded
            line_too_long(log, line, piece.too_long, max_line)
            lines, offsets, line = lines[1:], offsets[1:], line + 1
        for at, entry, exact, facts in _scanned(lines, piece.block, line, len(entries), log,
                                                shared):
            entries.append(entry)
            places.add(lines[at], offsets[at], exact, facts)
        line += len(lines)
        end = piece.tail
        tail_at = offsets[-1]
    if end.strip():
        found = _Found()
        for _, record in _records([end], line, found, last=True,
                                  big=may_hold_big_integers(end)):
            entries.append(entry_of(record, len(entries), shared))
            places.add(end, tail_at, record.line in found.big, None)
        found.replay(log)
        line += 1
    return entries, line - 1


class _Places:
    """Where each record's line is decoded again from: its byte range in the file, or,
    for an input that cannot be read again (``origin`` None), in the records' lines held
    (those alone: a line past the cap, or one that is no record, is not held)."""

    def __init__(self, path: str, origin: FileOrigin | None) -> None:
        self._rows = None if origin is None else TableRows(path, origin)
        self._held: list[bytes] | None = [] if origin is None else None
        self._size = 0
        """The bytes held."""
        self.path = path
        self.starts = array("q")
        self.stops = array("q")
        self.exact = array("q")
        """The records holding an integer beyond 64 bits, in order."""
        self.facts: list[Facts | None] = []
        """Each record's ``Facts`` kept by the first pass (None: read with ``orjson``)."""

    def kept(self, chunks: Iterable[Chunk]) -> Iterable[Chunk]:
        """Return the file's chunks, noted as they are read when the file is read again."""
        return chunks if self._rows is None else self._rows.kept(chunks)

    def offsets(self, lines: list[bytes], cut: int, first_line: int) -> list[int]:
        """Return the file offset of each of a piece's ``lines`` and of the line after them
        (see ``TableRows.lines_read``; all 0 when the lines are held instead)."""
        if self._rows is None:
            return [0] * (len(lines) + 1)
        self._rows.lines_read(lines, cut, first_line)
        return self._rows.offsets()

    def add(self, line: bytes, offset: int, exact: bool, facts: Facts | None) -> None:
        """Note the place of the next record's ``line``, at ``offset`` in the file
        (``exact``: it holds an integer beyond 64 bits), and its ``facts``."""
        if exact:
            self.exact.append(len(self.starts))
        self.facts.append(facts)
        if self._held is not None:  # held one a line, as in a file
            self._held += (line, b"\n")
            offset = self._size
            self._size += len(line) + 1
        self.starts.append(offset)
        self.stops.append(offset + len(line))

    def source(self) -> RecordSource:
        """Return where the records are decoded again from."""
        if self._held is not None or not self.starts:  # held, or nothing to read again
            return RecordSource(LineSource(self.path, b"".join(self._held or ())),
                                self.starts, self.stops, self.exact, self.facts)
        assert self._rows is not None
        return RecordSource(self._rows.source(), self.starts, self.stops, self.exact,
                            self.facts)


def _scanned(lines: Sequence[bytes], block: bytes, first: int, start: int, log: DiagnosticLog,
             shared: dict[Any, Any]) -> list[tuple[int, Entry, bool, Facts | None]]:
    """Return the entries of the records ``lines`` hold (the first is line ``first`` and
    becomes entry ``start``; ``block``: the bytes they were split from), each with its place
    among them, whether it holds an integer beyond 64 bits and its ``Facts`` (None: read with
    ``orjson``); their diagnostics are added in line order."""
    found = _Found()
    marks = number_marks(block)
    typed = scanned(lines, block, marks, first, start, found, shared)
    if typed is not None:
        entries = [(at, entry, False, facts) for at, entry, facts in typed]
    else:  # read with orjson
        records = _records(lines, first, found, last=False,
                           big=may_hold_big_integers(block, marks))
        entries = [(at, entry_of(record, start + number, shared), record.line in found.big,
                    None) for number, (at, record) in enumerate(records)]
    found.replay(log)
    return entries


class _Found(PendingDiagnostics):
    """Diagnostics held for later, noting the lines found to hold an integer beyond 64 bits
    (their records are decoded again the exact way)."""

    __slots__ = ("big",)

    def __init__(self) -> None:
        super().__init__()
        self.big: set[int] = set()

    def add(self, line: int, kind: str, message: str, severity: Severity = "error") -> None:
        if kind == "big_integer":
            self.big.add(line)
        super().add(line, kind, message, severity)


def _records(lines: Sequence[bytes], first: int, found: DiagnosticSink, *, last: bool,
             big: bool) -> list[tuple[int, Record]]:
    """Return the records ``lines`` decode to with ``orjson`` (the first is line ``first``;
    ``big``: they may hold integers beyond 64 bits, kept exact), each with its place among
    them; their diagnostics go to ``found``, in line order."""
    records = []
    values = decode_lines(lines, first, found, last_may_be_torn=last, big_integers=big,
                          big_integer=BIG_INTEGER)
    for offset, value in enumerate(values):
        if value is not UNREADABLE:
            record = record_of(value, first + offset, found)
            if record is not None:
                records.append((offset, record))
    return records


def _count_unknown_kinds(records: Sequence[Entry], log: DiagnosticLog) -> None:
    """Add one warning per record kind the reader does not know (kept as log-only events)."""
    known = CONVERSATION_KINDS | BOOKKEEPING_KINDS | {FOREIGN}
    counts = Counter(r.kind for r in records if r.kind not in known)
    first: dict[str, int] = {}
    for record in records if counts else ():
        first.setdefault(record.kind, record.line)
    for kind, count in counts.items():
        log.add(first[kind], "unknown_record", f"{counted(count, 'record')} of unknown kind "
                f"{kind[:60]!r} kept as log-only events (first at line {first[kind]})",
                "warning")


class _Identity:
    """Which session a file (or an inline sidechain) is, and what it inherits or descends
    from."""

    def __init__(self, id: str, *, subagent: bool, parent: str | None,
                 own: str | None) -> None:
        self.id = id
        self.subagent = subagent
        self.parent = parent
        self.own = own
        """The ``sessionId`` of this session's own records (None: a subagent's)."""

    @classmethod
    def of_file(cls, path: str, records: Sequence[Entry]) -> _Identity:
        """Return the identity of the file at ``path`` holding ``records``."""
        where = Path(path)
        subagent = where.parent.name == "subagents" or any(
            r.sidechain for r in records[:1] if r.uuid is not None)
        sessions = [r.session for r in records if r.session is not None]
        if subagent:
            above = where.parent.parent.name if where.parent.name == "subagents" else None
            return cls(where.stem, subagent=True, own=None,
                       parent=above or (sessions[0] if sessions else None))
        own = where.stem if where.stem in sessions else (sessions[-1] if sessions else None)
        return cls(where.stem, subagent=False, parent=None, own=own)

    def child(self, key: str) -> _Identity:
        """Return the identity of this session's inline sidechain ``key``."""
        return _Identity(key, subagent=True, parent=self.id, own=None)

    def inherited(self, records: Sequence[Entry], order: Sequence[int]) -> int:
        """Return how many records, in writing order, a resume copied from another session
        (those before the first of this session's own, if they name another session)."""
        if self.own is None:
            return 0
        count = 0
        for index in order:
            session = records[index].session
            if session == self.own:
                break
            if session is not None and self.parent is None:
                self.parent = session
            count += 1
        else:
            return 0
        return count if self.parent is not None else 0

    def header(self, records: Sequence[Entry], inherited: int) -> dict[str, Any]:
        """Return the dsh header this session is read with."""
        times = [r.time for r in records if r.time is not None]
        cwd = next((r.cwd for r in records if r.cwd is not None), None)
        header: dict[str, Any] = {"type": "session", "version": 4, "id": self.id,
                                  "createdAt": min(times) if times else 0,
                                  "isSeeded": inherited > 0}
        if cwd is not None:
            header["cwd"] = cwd
        if self.parent is not None:
            header["parentSession"] = self.parent
        if self.subagent:
            header.update(origin="subagent", delegationDepth=1)
        return header


def relate(logs: list[SessionLog]) -> list[SessionLog]:
    """Return the sessions of one load with resumes linked to the sessions they copy."""
    return link_resumes(logs, NAME)


FORMAT = Format(NAME, sniff, read, "Claude Code session transcripts (~/.claude/projects)",
                relate)
