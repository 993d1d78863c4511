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
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from operator import add
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
from ledgerviz.ledger.formats.claude_code_branches import Branches, plan_branches
from ledgerviz.ledger.formats.claude_code_entries import Entry, RecordSource, entry_of
from ledgerviz.ledger.formats.claude_code_events import EventWriter, refusals
from ledgerviz.ledger.formats.claude_code_fields import Facts, converted_facts
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
from ledgerviz.ledger.formats.claude_code_typed import ColumnWriter, FileOrder, takes, written
from ledgerviz.ledger.formats.foreign import BOM_WARNING, line_too_long, no_final_newline
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.numbers import may_hold_big_integers, number_marks
from ledgerviz.ledger.reader import (
    UTF8_BOM,
    LeadingBlanks,
    empty_file,
    line_blocks,
    opened_chunks,
)
from ledgerviz.ledger.reread import LedgerChangedError, LineSource
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
    inline sidechains as its children: a first pass writes a session of the typed route's
    shapes in file order, keeping only the ``_Gist`` of its records, and of any other
    keeps each record's ``Entry`` (those read while the route was taking made again from
    their lines); a second writes the events of such a session, each record decoded again
    from its line."""
    places = _Places(path, options.origin)
    kept, total, in_file_order = _entries(chunks, places, log, options.max_line)
    source = places.source()
    identity = _Identity.of_file(path, kept.gist)
    if in_file_order is not None and (identity.subagent or not kept.gist.sidechains):
        written = _Written((), kept.gist, source, identity, log, {}, in_file_order)
        children: tuple[SessionLog, ...] = ()
        inline = 0
    else:
        records = kept.entries(places)
        own, sidechains = (records, []) if identity.subagent \
            else split_sidechains(records, identity.id)
        written = _Written(own, _Gist.of(own) if sidechains else kept.gist, source, identity,
                           log, prompt_anchors(own, sidechains, source))
        children = tuple(_child(path, s, source, identity, log.strict) for s in sidechains)
        inline = len(records) - len(own)
        del records, own, sidechains  # not held while the events' table is joined
    unreadable = total - kept.gist.count
    del kept, source
    log.add(1, "line_counts", f"{counted(total, 'line')}: {written.counts()}, "
            + (f"{counted(inline, 'inline sidechain record')} read as "
               f"{counted(len(children), 'child session')}, " if inline else "")
            + f"{unreadable} unreadable (blank, invalid, torn or not an object)", "info")
    return written.session(path, log, total - written.count - inline, children)


def _child(path: str, sidechain: Sidechain, source: RecordSource, parent: _Identity,
           strict: bool) -> SessionLog:
    """Return the child session of one inline sidechain of the file at ``path``."""
    log = DiagnosticLog(path, strict=strict)
    written = _Written(sidechain.records, _Gist.of(sidechain.records), source,
                       parent.child(sidechain.key), log, {})
    log.add(sidechain.records[0].line, "line_counts",
            f"{counted(len(sidechain.records), 'inline sidechain record')} of session "
            f"{parent.id}: {written.counts()}", "info")
    return written.session(path, log, written.merged + written.copies, ())


class _Written:
    """The events one session's records are written as."""

    def __init__(self, records: Sequence[Entry], gist: _Gist, source: RecordSource,
                 identity: _Identity, log: DiagnosticLog, children: dict[str, str],
                 in_file_order: ColumnWriter | None = None) -> None:
        """``gist``: that of ``records``; ``in_file_order``: the typed route's rows written
        by the first pass (``records`` then not held), which proved the plan to be the file
        order, found no refusal and one ``sessionId`` (none inherited)."""
        typed = in_file_order
        if in_file_order is not None:  # what the plan, the refusal scan and ``inherited`` find
            branches, planned = Branches([], {}, 0), gist.count
            self.reasons, self.inherited = {}, 0
        else:
            in_graph, in_chain = _in_graph(records)
            branches = plan_branches(records, in_graph, log)
            planned = len(branches.order)
            self.reasons = refusals(records, branches.order, in_chain)
            self.inherited = identity.inherited(records, branches.order)
            if takes(branches, self.reasons, self.inherited, children, source):
                typed = written(records, source, in_chain, branches.order)
        if typed is None:  # today's route: the writer's events, sealed a window at a time
            writer = EventWriter(records, source, in_chain, branches, self.reasons, log,
                                 children)
            for position, index in enumerate(branches.order):
                if position == self.inherited and self.inherited:
                    writer.emit("session/end-seed", {"inherited": True})
                writer.write(index)
            writer.finish()
        self.finished = writer.store.finished if typed is None \
            else partial(typed.finished, source)
        """Returns the events written, their lines and their table (the writer, with what
        it kept of the records, let go)."""
        _count_unknown_kinds(gist, log)
        self.merged = (writer if typed is None else typed).merged
        self.copies = branches.copies
        self.count = planned - self.merged
        """Records written as events."""
        self.header = identity.header(gist, self.inherited)
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


def _in_graph(records: Sequence[Entry]) -> tuple[list[bool], list[bool]]:
    """Return which ``records`` take part in the ``parentUuid`` graph, and which are of the
    session's conversation (a user or assistant record of the graph)."""
    in_graph = [r.uuid is not None and r.kind != FOREIGN for r in records]
    return in_graph, [owned and r.kind in ("user", "assistant")
                      for owned, r in zip(in_graph, records, strict=True)]


def _entries(chunks: Iterable[Chunk], places: _Places, log: DiagnosticLog, max_line: int
             ) -> tuple[_Kept, int, ColumnWriter | None]:
    """Return what is kept of a file's records (lines of at most ``max_line`` UTF-16 code
    units), each line's place noted in ``places``, how many lines the file has, and the
    typed route's rows of the records written in file order (None: see ``FileOrder``)."""
    kept = _Kept()
    shared: dict[Any, Any] = {}
    route = FileOrder()
    opened = opened_chunks(iter(places.kept(chunks)), log, BOM_WARNING)
    if opened is None:
        return kept, 0, route.written()
    line = 1
    end, end_size = b"", 0  # what follows the file's last newline, and its size
    leading = LeadingBlanks()
    for piece in line_blocks(opened, max_line, leading):
        lines = piece.lines
        offsets = places.offsets(lines, piece.cut + leading.lost, line)
        leading.lost = 0  # counted once
        if piece.too_long:  # its start only is held: said, not decoded
            line_too_long(log, line, piece.too_long, max_line)
            lines, offsets, line = lines[1:], offsets[1:], line + 1
        ats, found, exact, facts = _scanned(lines, piece.block, line, kept.gist.count, log,
                                            shared, route.taking())
        places.add(lines, offsets, ats, exact, line)
        route.take(found, facts)
        kept.add(found, route.taking())
        line += len(lines)
        end, end_size = piece.tail, piece.tail_size
        tail_at = offsets[-1]
    if end.strip():
        found = _Found()
        for _, record in _records([end], line, found, tail_size=end_size,
                                  big=may_hold_big_integers(end)):
            tail = [entry_of(record, kept.gist.count, shared)]
            exact = record.line in found.big
            places.add([end], [tail_at], (0,), [0] if exact else [], line)
            route.take(tail, [None if exact or not route.taking()
                              else converted_facts(record.kind, record.raw)])
            kept.add(tail, route.taking())
            no_final_newline(found, line)
        found.replay(log)
        line += 1
    if line == 1:  # no line but blank ones
        line += empty_file(log, leading)
    return kept, line - 1, route.written()


class _Kept:
    """What the first pass keeps of a file's records: the ``_Gist`` of them all, and the
    ``Entry`` of each read once the typed route gave up (those before it, taken by the
    route, are not held: ``entries`` makes them again from their lines)."""

    def __init__(self) -> None:
        self.gist = _Gist()
        self.held: list[Entry] = []
        self.unheld = 0
        """The records before the first held."""

    def add(self, found: Sequence[Entry], taking: bool) -> None:
        """Keep the file's next records (``taking``: whether the route still takes them)."""
        self.gist.add(found)
        if taking:
            self.unheld += len(found)
        else:
            self.held += found

    def entries(self, places: _Places) -> list[Entry]:
        """Return the entry of every record, those not held made again from their lines
        read from ``places`` (their diagnostics were given when first read)."""
        again: list[Entry] = []
        lines = places.lines_source()
        shared: dict[Any, Any] = {}
        for first, stop in _runs(places.lines, self.unheld):
            read = lines.read(list(zip(places.starts[first:stop], places.stops[first:stop],
                                       strict=True)))
            found = _scanned(read, b"\n".join(read), places.lines[first], first,
                             DiagnosticLog(places.path, strict=False), shared, False)[1]
            if len(found) != stop - first:
                raise LedgerChangedError(f"{places.path}: the file changed while it was read "
                                         "(its records read again are not those read)")
            again += found
        self.held[:0] = again
        self.unheld = 0
        return self.held


def _runs(lines: Sequence[int], count: int) -> Iterator[tuple[int, int]]:
    """Return the runs ``(first, stop)`` of the first ``count`` records, each of at most
    ``_RUN`` records on lines that follow each other (``lines``: each record's)."""
    first = 0
    for at in range(1, count + 1):
        if at == count or at - first == _RUN or lines[at] != lines[at - 1] + 1:
            yield first, at
            first = at


_RUN = 8192
"""Records made again from their lines a run at a time, at most."""


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
        self.lines = array("q")
        """Each record's line number."""

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

    def add(self, lines: Sequence[bytes], offsets: Sequence[int], ats: Sequence[int],
            exact: Sequence[int], first_line: int) -> None:
        """Note the places of the next records: ``lines[at]``, line ``first_line + at``, at
        ``offsets[at]`` in the file, for each ``at`` of ``ats`` (``exact``: the places among
        them of those holding an integer beyond 64 bits)."""
        first = len(self.starts)
        self.exact.extend(first + place for place in exact)
        self.lines.extend(map(first_line.__add__, ats))
        picked = list(map(lines.__getitem__, ats))
        if self._held is not None:  # held one a line, as in a file
            starts = array("q")
            for line in picked:
                self._held += (line, b"\n")
                starts.append(self._size)
                self._size += len(line) + 1
        else:
            starts = array("q", map(offsets.__getitem__, ats))
        self.starts += starts
        self.stops.extend(map(add, starts, map(len, picked)))

    def source(self) -> RecordSource:
        """Return where the records are decoded again from."""
        return RecordSource(self.lines_source(), self.starts, self.stops, self.exact)

    def lines_source(self) -> LineSource:
        """Return where the records' lines are read again from (once all are noted)."""
        if self._held is not None or not self.starts:  # held, or nothing to read again
            return LineSource(self.path, b"".join(self._held or ()))
        assert self._rows is not None
        return self._rows.source()


def _scanned(lines: Sequence[bytes], block: bytes, first: int, start: int,
             log: DiagnosticLog, shared: dict[Any, Any] | None, facts: bool
             ) -> tuple[Sequence[int], Sequence[Entry], list[int], Sequence[Facts | None]]:
    """Return the entries of the records ``lines`` hold (the first is line ``first`` and
    becomes entry ``start``; ``block``: the bytes they were split from): the place of each
    among the lines, the entries, the places among them of those holding an integer beyond
    64 bits, and the ``Facts`` of each, when ``facts`` asks for them (else None; None too for
    a record read with ``orjson`` that holds such an integer or that ``msgspec`` does not
    take); their diagnostics are added in line order."""
    found = _Found()
    marks = number_marks(block)
    if facts:  # taken by the route, the entries are not held: nothing to share
        shared = None
    typed = scanned(lines, block, marks, first, start, found, shared, facts)
    if typed is not None:
        ats, entries, kept = zip(*typed, strict=True) if typed else ((), (), ())
        found.replay(log)
        return ats, entries, [], kept
    records = _records(lines, first, found, tail_size=None,  # read with orjson
                       big=may_hold_big_integers(block, marks))
    entries = [entry_of(record, start + number, shared)
               for number, (_, record) in enumerate(records)]
    exact = [place for place, (_, record) in enumerate(records) if record.line in found.big]
    converted = [None if not facts or record.line in found.big
                 else converted_facts(record.kind, record.raw) for _, record in records]
    found.replay(log)
    return [at for at, _ in records], entries, exact, converted


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


def _records(lines: Sequence[bytes], first: int, found: DiagnosticSink, *,
             tail_size: int | None, big: bool) -> list[tuple[int, Record]]:
    """Return the records ``lines`` decode to with ``orjson`` (the first is line ``first``;
    ``tail_size``: the file's size of the last of them, the line no newline ends, which may
    be torn; ``big``: they may hold integers beyond 64 bits, kept exact), each with its place
    among them; their diagnostics go to ``found``, in line order."""
    records = []
    values = decode_lines(lines, first, found, last_may_be_torn=tail_size is not None,
                          big_integers=big, big_integer=BIG_INTEGER, tail_size=tail_size)
    for offset, value in enumerate(values):
        if value is not UNREADABLE:
            record = record_of(value, first + offset, found)
            if record is not None:
                records.append((offset, record))
    return records


_KNOWN = CONVERSATION_KINDS | BOOKKEEPING_KINDS | {FOREIGN}


class _Gist:
    """What a session's identity, header and warnings are made of, of its records (all the
    first pass keeps of them while the typed route takes them)."""

    def __init__(self) -> None:
        self.count = 0
        self.sidechain_first = False
        """Whether the first record is of the graph (has a ``uuid``) and ``isSidechain``."""
        self.sidechains = False
        """Whether any record is ``isSidechain``."""
        self.sessions: dict[str, None] = {}
        """The ``sessionId``s named, in the order first met."""
        self.last_session: str | None = None
        self.least_time: int | None = None
        self.cwd: str | None = None
        """The first ``cwd``."""
        self.unknown: dict[str, list[int]] = {}
        """Of each kind the reader does not know: its records' count and first line."""

    @classmethod
    def of(cls, records: Sequence[Entry]) -> _Gist:
        """Return the gist of ``records``."""
        gist = cls()
        gist.add(records)
        return gist

    def add(self, records: Sequence[Entry]) -> None:
        """Add the session's next ``records``."""
        if not records:
            return
        if not self.count:
            self.sidechain_first = records[0].uuid is not None and records[0].sidechain
        self.count += len(records)
        self.sidechains = self.sidechains or any(r.sidechain for r in records)
        sessions = [r.session for r in records if r.session is not None]
        if sessions:
            self.last_session = sessions[-1]
            self.sessions.update(dict.fromkeys(sessions))
        times = [r.time for r in records if r.time is not None]
        if times:
            least = min(times)
            self.least_time = least if self.least_time is None else min(self.least_time, least)
        if self.cwd is None:
            self.cwd = next((r.cwd for r in records if r.cwd is not None), None)
        unknown = {r.kind for r in records} - _KNOWN
        for record in records if unknown else ():
            if record.kind in unknown:
                self.unknown.setdefault(record.kind, [0, record.line])[0] += 1


def _count_unknown_kinds(gist: _Gist, log: DiagnosticLog) -> None:
    """Add one warning per record kind the reader does not know (kept as log-only events)."""
    for kind, (count, first) in gist.unknown.items():
        log.add(first, "unknown_record", f"{counted(count, 'record')} of unknown kind "
                f"{kind[:60]!r} kept as log-only events (first at line {first})", "warning")


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
    def of_file(cls, path: str, gist: _Gist) -> _Identity:
        """Return the identity of the file at ``path`` whose records' gist is ``gist``."""
        where = Path(path)
        subagent = in_subagents_folder(path) or gist.sidechain_first
        sessions = gist.sessions
        if subagent:
            above = where.parent.parent.name if in_subagents_folder(path) else None
            return cls(where.stem, subagent=True, own=None,
                       parent=above or next(iter(sessions), None))
        own = where.stem if where.stem in sessions else gist.last_session
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

    def header(self, gist: _Gist, inherited: int) -> dict[str, Any]:
        """Return the dsh header this session is read with (``gist``: its records')."""
        header: dict[str, Any] = {"type": "session", "version": 4, "id": self.id,
                                  "createdAt": gist.least_time or 0,
                                  "isSeeded": inherited > 0}
        if gist.cwd is not None:
            header["cwd"] = gist.cwd
        if self.parent is not None:
            header["parentSession"] = self.parent
        if self.subagent:
            header.update(origin="subagent", delegationDepth=1)
        return header


def relate(logs: list[SessionLog]) -> list[SessionLog]:
    """Return the sessions of one load with resumes linked to the sessions they copy."""
    return link_resumes(logs, NAME)


def in_subagents_folder(path: str) -> bool:
    """Whether ``path`` lies in a session's ``subagents/`` folder, where Claude Code writes
    the transcript of each subagent the session ran (``agent-<agentId>.jsonl``)."""
    return Path(path).parent.name == "subagents"


FORMAT = Format(NAME, sniff, read, "Claude Code session transcripts (~/.claude/projects)",
                relate, in_subagents_folder)
