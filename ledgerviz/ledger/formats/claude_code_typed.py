"""The Claude Code reader's typed route: a session of the common shapes written straight into
its table's columns, with no event dict and no ``EventTable.of`` per window.

The route runs after the first pass and the branch plan, in the plan's order, as
``claude_code_events.EventWriter`` does, and fills the rows of the session's ``EventTable``
from each record read again (its type, time, turn, step, surface op and line, a message's
role, source and visible text, a step's model and usage, a call's id, name and arguments, a
result's error flag), each record's values the ``Facts`` the first pass kept of it
(``claude_code_fields``; of a record it read with ``orjson``, its line read again into the
fields read, not into a dict). The events are then derived on demand from those rows and the
records (``claude_code_typed_events``).

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

from collections.abc import Sequence
from typing import Any

from ledgerviz.ledger.formats.claude_code_branches import Branches
from ledgerviz.ledger.formats.claude_code_entries import Entry, RecordSource
from ledgerviz.ledger.formats.claude_code_events import LOG_ONLY_PREFIX, message_records
from ledgerviz.ledger.formats.claude_code_fields import Facts, Result, visible_text
from ledgerviz.ledger.formats.claude_code_typed_events import Derivation, Rows
from ledgerviz.ledger.formats.sealed import DerivedEvents, SealedEvents
from ledgerviz.ledger.formats.staged import StagedRows
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.vocab import MISSING, SURFACE_OPS, SYNTHETIC_ID_PREFIXES

_APPEND = SURFACE_OPS.index("append")
class GiveUp(Exception):
    """A record the typed route does not write exactly as the writer does."""


def written(entries: Sequence[Entry], source: RecordSource, in_chain: Sequence[bool],
            order: Sequence[int]) -> ColumnWriter | None:
    """Return the rows of a session the route takes (see ``takes``) written in the plan's
    ``order``, or None when it gives up."""
    writer = ColumnWriter(entries, source, in_chain, order)
    try:
        for index in order:
            writer.write(index)
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


class ColumnWriter(StagedRows):
    """Writes one session's rows, record by record in the branch plan's order (the state
    and rules of ``EventWriter`` for the shapes the route takes)."""

    def __init__(self, entries: Sequence[Entry], source: RecordSource,
                 in_chain: Sequence[bool], order: Sequence[int]) -> None:
        super().__init__()
        self.entries = entries
        self.source = source
        self.in_chain = in_chain
        self.rows = Rows()
        self._appends = tuple(column.append for column in (
            self.codes, self.times, self.turns, self.steps, self.ops, self.lines,
            self.rows.record, self.rows.block))
        """Each row's columns' ``append``, in ``add``'s order."""
        self.merged = 0
        """Assistant records written into the step of an earlier record."""
        self._time = MISSING
        self._line = 0
        self._index = 0
        self._turn = 0
        self._turn_open = False
        self._step = 0
        self._step_open = False
        self._step_calls: list[str] = []
        self._interrupted = False
        self._calls: dict[str, int] = {}
        """The tool/call row of each call id."""
        self._answered: set[str] = set()
        self._messages = message_records(entries, in_chain, order)
        self._written: set[str] = set()

    def add(self, kind: str, turn: int = MISSING, step: int = MISSING, op: int = 0,
            block: int = 0) -> int:
        """Append one row of the record being written; return it."""
        row = len(self.codes)
        codes, times, turns, steps, ops, lines, records, blocks = self._appends
        codes(self.code_of[kind])
        times(self._time)
        turns(turn)
        steps(step)
        ops(op)
        lines(self._line)
        records(self._index)
        blocks(block)
        return row

    def write(self, index: int) -> None:
        """Write the rows of record ``index``; raise ``GiveUp`` at one the route does not
        take."""
        entry = self.entries[index]
        self._line, self._index = entry.line, entry.index
        if entry.time is not None:
            self._time = entry.time
        if not self.in_chain[index] or not entry.has_message:
            facts = self.source.facts(entry)
            self.add(LOG_ONLY_PREFIX + entry.kind, facts.turn, facts.step)
        elif entry.kind == "assistant":
            self._assistant(entry)
        else:
            facts = self.source.facts(entry)
            if facts.compact:
                raise GiveUp
            if entry.prompt:
                if self._turn_open:
                    self._close_turn()
                self._open_turn()
                self._user_message(facts.texts, "user")
            else:
                self._user(facts, entry.uuid)

    def finish(self) -> None:
        """Close what the file proves finished (``EventWriter.finish``)."""
        if not self._turn_open:
            return
        if self._interrupted or (self._step_open and not self._step_calls):
            self._close_turn()
        elif self._step_open and set(self._step_calls) <= self._answered:
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
        self.ends.add(row, self.share("completed" if finished else "aborted"))
        self._turn_open = False

    def _message(self, row: int, role: str, source: str, text: str) -> None:
        self.messages.add(row, self.share(role), self.share(source), text)

    def _user_message(self, texts: tuple[str, ...], source: str) -> None:
        row = self.add("user/message", op=_APPEND)
        self._message(row, "user", source, visible_text(texts))

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
        row = self.add("tool/result", self._turn, self._step, _APPEND, result.place)
        self._message(row, "tool", "tool", result.text)
        self.answers.add(row, call_id)
        self.errors[row] = (flag is True, uuid is not None
                            and uuid.startswith(SYNTHETIC_ID_PREFIXES))
        self.rows.dispatch[row] = self._calls[call_id]
        self._answered.add(call_id)
        if spawned:
            self.add("subagent/catalog", block=result.place)

    def _assistant(self, entry: Entry) -> None:
        key = entry.key
        if key is None:
            parts = [entry]
        elif key in self._written:
            self.merged += 1
            return
        else:
            self._written.add(key)
            parts = [self.entries[i] for i in self._messages[key]]
        facts = list(map(self.source.facts, parts))
        if not self._turn_open:
            self._open_turn()
        if self._step_open:
            self.add("step/end", self._turn, self._step)
        self._step += 1
        self._step_open = True
        self.add("step/start", self._turn, self._step)
        row = self.add("assistant/message", self._turn, self._step, _APPEND)
        self.rows.keys[row] = key
        if len(parts) > 1:
            self.rows.parts[row] = [part.index for part in parts]
        self._message(row, "assistant", "model", visible_text(
            facts[0].texts if len(facts) == 1 else sum((f.texts for f in facts), ())))
        model = facts[0].model
        if model is not None:
            self.models.add(row, self.share("anthropic"), self.share(model))
        usage = next((f.usage for f in reversed(facts) if f.usage is not None), None)
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
            self.dispatches.add(row, call_id, name, arguments)

    def finished(self) -> tuple[SealedEvents, list[int], EventTable]:
        """Return the events (derived on demand), their lines and their table."""
        self.scatter()
        table = self.staged_table()  # ``EventTable.of`` of the writer's events
        self.source.forget()  # not held beside the table: read again when asked for
        events = DerivedEvents(Derivation(table, self.rows, self.source), len(table))
        return events, table.line.tolist(), table
