"""The Claude Code reader's typed route: a session of the common shapes written straight into
its table's columns, with no event dict and no ``EventTable.of`` per window.

The route fills the rows of the session's ``EventTable`` record by record (its type, time,
turn, step, surface op and line, a message's role, source and visible text, a step's model
and usage, a call's id, name and arguments, a result's error flag), each record's values its
``Facts`` (``claude_code_fields``). The events are then derived on demand from those rows and
the records (``claude_code_typed_events``). It runs in one of two ways:

- during the first pass, in file order (``ColumnWriter.take``), each record's facts taken as
  the first pass reads them and let go at once, while ``FileOrder`` proves that the branch
  plan would write the records in that order and find no refusal; an assistant message's
  rows are written once its last part is read (its parts follow each other);
- after the first pass and the branch plan, in the plan's order (``written``), as
  ``claude_code_events.EventWriter`` does, each record's line read again for its facts:
  for a session the first way gave up on (a message's parts apart, say) that the route
  still takes.

It takes a session only when nothing in it is written any other way (``takes``): no rewind,
no replayed copy, no refused call, no inherited prefix, no call that started an inline
sidechain (``children``), no record holding an integer beyond 64 bits. While writing it
gives up (``GiveUp``) at the first record the writer would diagnose or write another shape
for: a compaction summary, a ``tool_result`` with no string ``tool_use_id``, answering no
call written before, or with an ``is_error`` that is no boolean. The writer then writes the
session from its start (the rows written so far are the price), so this route gives no
diagnostic of its own.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from ledgerviz.ledger.formats.claude_code_branches import Branches
from ledgerviz.ledger.formats.claude_code_entries import Entry, RecordSource
from ledgerviz.ledger.formats.claude_code_events import LOG_ONLY_PREFIX, message_records
from ledgerviz.ledger.formats.claude_code_fields import Facts, Result, visible_text
from ledgerviz.ledger.formats.claude_code_records import FOREIGN
from ledgerviz.ledger.formats.claude_code_typed_events import Derivation, Rows
from ledgerviz.ledger.formats.sealed import DerivedEvents, SealedEvents
from ledgerviz.ledger.formats.staged import StagedRows
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.vocab import MISSING, SYNTHETIC_ID_PREFIXES

_APPENDED = frozenset({"user/message", "assistant/message", "tool/result"})
"""The types of the rows written with surface op ``append`` (the others have none)."""


_FLAG_PAIRS = {(error, synthetic): (error, synthetic) for error in (False, True)
               for synthetic in (False, True)}
"""One tuple of each pair of a result's flags (``is_error``, synthetic), held by every
result row of that pair: not one tuple a row, ~56 bytes each until the table is made."""


class GiveUp(Exception):
    """A record the typed route does not write exactly as the writer does."""


def written(entries: Sequence[Entry], source: RecordSource, in_chain: Sequence[bool],
            order: Sequence[int]) -> ColumnWriter | None:
    """Return the rows of a session the route takes (see ``takes``) written in the plan's
    ``order``, each record's facts read again from ``source``, or None when it gives up."""
    writer = ColumnWriter(in_file_order=False)
    messages = message_records(entries, in_chain, order)
    try:
        for index in order:
            entry = entries[index]
            writer.at(entry)
            if not (in_chain[index] and entry.has_message and entry.kind == "assistant"):
                writer.record(entry, source.facts(entry), in_chain[index])
            elif entry.key in writer.messages_written:
                writer.merged += 1
            else:
                parts = [entry] if entry.key is None \
                    else [entries[i] for i in messages[entry.key]]
                writer.message(parts, list(map(source.facts, parts)))
    except GiveUp:
        return None
    writer.finish()
    return writer


def takes(branches: Branches, reasons: dict[str, Any], inherited: int,
          children: dict[str, str], source: RecordSource) -> bool:
    """Return whether the typed route may write a session of this plan (see the module
    docstring)."""
    return not (branches.rewinds or branches.copies or reasons or inherited or children
                or source.holds_exact())


class FileOrder:
    """The typed route run during the first pass: each record written as it is read, while
    it proves that ``plan_branches`` writes the records in file order (no ``uuid`` met
    twice, no ``parentUuid`` naming the record itself or a later one, no two typed prompts
    below one parent: no copy, no cycle, no rewind), that ``refusals`` finds none (no
    refused call in the chain) and that no prefix is inherited (one ``sessionId``). At a
    record it cannot write or prove so, it gives up (the plan then decides).

    It holds each ``uuid`` and parent it checks as its string's ``hash`` (less 4 bits: an
    int of 32 bytes where the string takes ~85). Equal strings hash equal, so a ``uuid``
    met twice, a parent named ahead of its record and two prompts below one parent are all
    still found; two strings hashing equal may only make it give up more (for a parent
    hashing like an earlier ``uuid`` taken as that record's: if it named a later record,
    that record's ``uuid`` would hash like the earlier one, and the route give up there)."""

    def __init__(self) -> None:
        self._writer: ColumnWriter | None = ColumnWriter(in_file_order=True)
        self._nodes: dict[int, None] = {}
        """The ``uuid`` of each record of the graph so far (hashed, as the two below; the
        keys of a dict, ~30 bytes each where a set's table takes ~48)."""
        self._ahead: set[int] = set()
        """The parents named before a record of that ``uuid`` was met."""
        self._prompted: dict[int, None] = {}
        """The parent (or None) of each typed prompt so far."""
        self._session: str | None = None
        """The ``sessionId`` the records name (a second one leaves the file to the plan: the
        records before the session's own may be a resume's inherited prefix)."""
        self._last: str | None = None
        """The ``uuid`` of the last record of the graph (the parent of most records)."""

    def taking(self) -> bool:
        """Return whether the route has not given up."""
        return self._writer is not None

    def take(self, entries: Sequence[Entry], facts: Sequence[Facts | None]) -> None:
        """Write ``entries``, the file's next records, with their ``facts`` (None: none to
        be had, as of a record holding an integer beyond 64 bits), while the proof holds
        with each added (the proof's sets and last ``uuid`` in locals: it runs for every
        record)."""
        writer = self._writer
        if writer is None:
            return
        take, nodes, prompted = writer.take, self._nodes, self._prompted
        last, own = self._last, self._session
        try:
            for entry, kept in zip(entries, facts, strict=True):
                session = entry.session
                if kept is None or (session is not own and session is not None
                                    and own is not None and session != own):
                    raise GiveUp  # (a second sessionId: a resume's inherited prefix, perhaps)
                if own is None:
                    own = session
                uuid = entry.uuid
                if uuid is not None and entry.kind != FOREIGN:  # of the graph
                    parent, node = entry.parent, hash(uuid) >> 4
                    if node in nodes:
                        raise GiveUp
                    if parent != last and parent is not None \
                            and hash(parent) >> 4 not in nodes:
                        self._ahead.add(hash(parent) >> 4)
                    nodes[node] = None
                    last = uuid
                    if entry.prompt:
                        if hash(parent) >> 4 in prompted:
                            raise GiveUp
                        prompted[hash(parent) >> 4] = None
                    marks = entry.marks
                    if marks is not None and marks.rejected and entry.kind == "user":
                        raise GiveUp
                take(entry, kept)
        except GiveUp:
            self._writer = None
        self._last, self._session = last, own

    def written(self) -> ColumnWriter | None:
        """Return the rows written, every record taken and the proof whole (no parent named
        ahead of its record), else None."""
        writer, self._writer = self._writer, None
        if writer is None or not self._nodes.keys().isdisjoint(self._ahead):
            return None
        writer.finish()
        return writer


class ColumnWriter(StagedRows):
    """Writes one session's rows, a record at a time (the state and rules of ``EventWriter``
    for the shapes the route takes)."""

    def __init__(self, *, in_file_order: bool) -> None:
        """``in_file_order``: whether the records are written in file order, every one
        from the first (a record's place in writing order is then its index among the
        file's records, not noted again)."""
        super().__init__()
        self.rows = Rows()
        self._slots = array("q")
        """Each row's record, as its place in writing order (``at``)."""
        self._appends = tuple(column.append for column in (
            self.codes, self.turns, self.steps, self._slots))
        """The ``append`` of the columns ``add`` fills, in its order (a row's time, line and
        record are its record's, its surface op its type's: set by ``finished``)."""
        self._record_times = array("q")
        """Of each record written, in writing order: the time of its rows (its own, else the
        last one before it), its line and (unless in file order) its index among the file's
        records."""
        self._record_lines = array("q")
        self._record_indexes: array | None = None if in_file_order else array("q")
        self.merged = 0
        """Assistant records written into the step of an earlier record."""
        self.messages_written: dict[str, None] = {}
        """The key of each assistant message written (the keys of a dict, as
        ``FileOrder._nodes``)."""
        self._time = MISSING
        self._slot = -1
        """The place in writing order of the record being written."""
        self._first_slot = 0
        """``take``: that of the first part of the message being read."""
        self._turn = 0
        self._turn_open = False
        self._step = 0
        self._step_open = False
        self._step_calls: list[str] = []
        self._interrupted = False
        self._calls: dict[str, int] = {}
        """The tool/call row of each call id."""
        self._unanswered: set[str] = set()
        """The call ids dispatched that no result has answered yet (few at a time, where a
        set of those answered would hold every call's)."""
        self._parts: list[Entry] = []
        """``take``: the parts read so far of the assistant message being read."""
        self._part_facts: list[Facts] = []
        self._bare: set[str | None] = set()
        """``take``: the keys of the chain's assistant records without a message."""

    def add(self, kind: str, turn: int = MISSING, step: int = MISSING) -> int:
        """Append one row of the record being written; return it."""
        row = len(self.codes)
        codes, turns, steps, slots = self._appends
        codes(self.code_of[kind])
        turns(turn)
        steps(step)
        slots(self._slot)
        return row

    def at(self, entry: Entry) -> None:
        """Note that record ``entry`` is the one being written, the next in writing order
        (its time, when it has one, that of the rows written from here on)."""
        self._slot = len(self._record_lines)
        if entry.time is not None:
            self._time = entry.time
        self._record_times.append(self._time)
        self._record_lines.append(entry.line)
        if self._record_indexes is not None:
            self._record_indexes.append(entry.index)

    def take(self, entry: Entry, facts: Facts) -> None:
        """Write the record after the last one taken, in file order (``facts``: its
        ``Facts``); raise ``GiveUp`` at one the route does not take, or at a part of an
        assistant message that does not follow the message's other parts (the plan's
        order writes it with them). ``finish`` writes the last message read."""
        kind, parts = entry.kind, self._parts
        self.at(entry)  # (a message read before is written as of its first part's record)
        if kind != "assistant" or entry.uuid is None:  # no message of the chain
            if parts:
                self._flush()
            self.record(entry, facts, kind == "user" and entry.uuid is not None)
            return
        key = entry.key
        if not entry.has_message:  # a log-only row, unless its key is a message's too
            if key in self.messages_written or (parts and key == parts[0].key):
                raise GiveUp
            self._bare.add(key)
            self._flush()
            self.record(entry, facts, True)
        elif parts and key == parts[0].key:
            parts.append(entry)
            self._part_facts.append(facts)
            self.merged += 1
        elif key in self.messages_written or key in self._bare:
            raise GiveUp
        else:
            self._flush()
            self._first_slot = self._slot
            self._parts, self._part_facts = [entry], [facts]

    def _flush(self) -> None:
        """Write the assistant message read (as of its first part's record)."""
        if self._parts:
            latest, self._slot = self._slot, self._first_slot
            self.message(self._parts, self._part_facts)
            self._slot = latest
            self._parts, self._part_facts = [], []

    def record(self, entry: Entry, facts: Facts, in_chain: bool) -> None:
        """Write the rows of record ``entry`` (with its ``facts``; ``in_chain``: whether it
        is of the session's conversation) but an assistant message of the chain."""
        if not in_chain or not entry.has_message:
            self.add(LOG_ONLY_PREFIX + entry.kind, facts.turn, facts.step)
        elif facts.compact:
            raise GiveUp
        elif entry.prompt:
            if self._turn_open:
                self._close_turn()
            self._open_turn()
            self._user_message(facts.texts, "user")
        else:
            self._user(facts, entry.uuid)

    def finish(self) -> None:
        """Close what the file proves finished (``EventWriter.finish``)."""
        self._flush()
        if not self._turn_open:
            return
        if self._interrupted or (self._step_open and not self._step_calls):
            self._close_turn()
        elif self._step_open and self._unanswered.isdisjoint(self._step_calls):
            self.add("step/end", self._turn, self._step)
            self._step_open = False

    def _open_turn(self) -> None:
        self._turn += 1
        self._turn_open, self._interrupted = True, False
        self._step, self._step_open, self._step_calls = 0, False, []
        self.add("turn/start", self._turn)

    def _close_turn(self) -> None:
        if self._step_open:
            self.add("step/end", self._turn, self._step)
            self._step_open = False
        finished = not self._interrupted and not self._step_calls and self._step > 0
        row = self.add("turn/end", self._turn)
        self.ends.add(row, "completed" if finished else "aborted")
        self._turn_open = False

    def _user_message(self, texts: tuple[str, ...], source: str) -> None:
        row = self.add("user/message")
        self.messages.add(row, "user", source, visible_text(texts))

    def _user(self, facts: Facts, uuid: str | None) -> None:
        """A user record (of ``uuid``) that is no prompt: tool results, then any other
        text."""
        for result in facts.results:
            self._result(result, uuid, facts.spawned)
        if facts.note:
            if facts.interrupted:
                self._interrupted = True
                self._user_message(facts.texts, "interrupt")
            else:
                self._user_message(facts.texts, "runtime-context")

    def _result(self, result: Result, uuid: str | None, spawned: bool) -> None:
        call_id, flag = result.call_id, result.is_error
        if call_id.__class__ is not str or call_id not in self._calls \
                or not (flag is None or flag.__class__ is bool):
            raise GiveUp  # diagnosed by the writer
        row = self.add("tool/result", self._turn, self._step)
        self.rows.block[row] = result.place
        self.messages.add(row, "tool", "tool", result.text)
        self.answers.add(row, call_id)
        self.errors[row] = _FLAG_PAIRS[flag is True, uuid is not None
                                       and uuid.startswith(SYNTHETIC_ID_PREFIXES)]
        self.rows.dispatch[row] = self._calls[call_id]
        self._unanswered.discard(call_id)
        if spawned:
            self.rows.block[self.add("subagent/catalog")] = result.place

    def message(self, parts: list[Entry], facts: list[Facts]) -> None:
        """Write the step of the assistant message of records ``parts`` (with their
        ``facts``), the first being written."""
        key = parts[0].key
        if key is not None:  # (a record without a key is a message of its own)
            self.messages_written[key] = None
        if not self._turn_open:
            self._open_turn()
        turn = self._turn
        if self._step_open:
            self.add("step/end", turn, self._step)
        step = self._step = self._step + 1
        self._step_open = True
        self.add("step/start", turn, step)
        row = self.add("assistant/message", turn, step)
        self.rows.keys[row] = key
        first = facts[0]
        texts, usage = first.texts, first.usage
        if len(parts) > 1:
            self.rows.parts[row] = [part.index for part in parts]
            texts = sum((part.texts for part in facts), ())
            for part in facts:  # the last part's usage that has one
                usage = usage if part.usage is None else part.usage
        self.messages.add(row, "assistant", "model", visible_text(texts))
        if first.model is not None:
            self.models.add(row, "anthropic", self.share(first.model))
        if usage is not None:
            self.usage.add(row, *usage, MISSING)
        self._step_calls = []
        for part in facts:
            for call in part.calls:
                self._call(row, *call)

    def _call(self, message: int, call_id: str, name: str | None, arguments: str) -> None:
        """Request (and, once per id, dispatch) the call ``call_id`` of the
        assistant/message row ``message``."""
        name = None if name is None else self.share(name)
        self.request(message, call_id, name, arguments)
        self._step_calls.append(call_id)
        if call_id not in self._calls:
            row = self._calls[call_id] = self.add("tool/call", self._turn, self._step)
            self._unanswered.add(call_id)
            self.dispatches.add(row, call_id, name, arguments)

    def finished(self, source: RecordSource) -> tuple[SealedEvents, Sequence[int], EventTable]:
        """Return the events (derived on demand from the rows and the records of
        ``source``), their lines (the table's own column: a list of them would hold an int
        object a row) and their table."""
        slots, indexes = self._slots, self._record_indexes
        self.times = array("q", map(self._record_times.__getitem__, slots))
        self.lines = array("q", map(self._record_lines.__getitem__, slots))
        appended = [int(kind in _APPENDED) for kind in self.code_of]
        self.ops = array("b", map(appended.__getitem__, self.codes))
        if indexes is None:  # in file order: a row's record is its place in writing order
            self.rows.record = slots
        else:
            self.rows.record = array("q", map(indexes.__getitem__, slots))
            del slots[:], indexes[:]
        del self._record_times[:], self._record_lines[:]
        self._calls, self._unanswered, self.messages_written = {}, set(), {}
        self.scatter()  # (what only the writing needed let go first)
        table = self.staged_table()  # ``EventTable.of`` of the writer's events
        source.forget()  # not held beside the table: read again when asked for
        events = DerivedEvents(Derivation(table, self.rows, source), len(table))
        return events, table.line, table
