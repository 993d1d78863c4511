"""The Claude Code reader's typed route: a session of the common shapes written straight into
its table's columns, with no event dict and no ``EventTable.of`` per window.

The route runs after the first pass and the branch plan, in the plan's order, as
``claude_code_events.EventWriter`` does, and fills the rows of the session's ``EventTable``
from each record read again (its type, time, turn, step, surface op and line, a message's
role, source and visible text, a step's model and usage, a call's id, name and arguments, a
result's error flag). A record is read again as the ``msgspec`` struct of only the fields
the route reads (``_Record``; the rest of its line skipped in C), not as a dict. The events
are then derived on demand from those rows and the records (``claude_code_typed_events``).

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

from msgspec import UNSET, Struct

from ledgerviz.ledger.formats.claude_code_branches import Branches
from ledgerviz.ledger.formats.claude_code_entries import Entry, RecordSource
from ledgerviz.ledger.formats.claude_code_events import LOG_ONLY_PREFIX, message_records
from ledgerviz.ledger.formats.claude_code_records import INTERRUPT_PREFIX
from ledgerviz.ledger.formats.claude_code_typed_events import Derivation, Rows
from ledgerviz.ledger.formats.sealed import DerivedEvents, SealedEvents
from ledgerviz.ledger.formats.staged import StagedRows, usage_count
from ledgerviz.ledger.numbers import json_text
from ledgerviz.ledger.reread import Typed
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.vocab import MISSING, SURFACE_OPS, SYNTHETIC_ID_PREFIXES

_APPEND = SURFACE_OPS.index("append")
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens")
"""The ``message.usage`` count of each usage column but the last (Claude Code has no
reasoning count)."""
_INT64 = range(MISSING + 1, 1 << 63)
_NOT_OBJECT = list | str | int | float | bool | None
"""Any JSON value but an object: beside a struct, a field's type that takes any value."""


class _Block(Struct, gc=False):
    """A content block: the fields of a text, a ``tool_use`` or a ``tool_result``."""

    type: Any = None
    text: Any = None
    id: Any = None
    name: Any = None
    input: Any = UNSET
    tool_use_id: Any = None
    is_error: Any = None
    content: _Content = None


_Content = list[_Block | _NOT_OBJECT] | str | int | float | bool | dict | None
"""A message's (or a ``tool_result``'s) content: blocks, a string, or any other value."""


class _Usage(Struct, gc=False):
    input_tokens: Any = None
    output_tokens: Any = None
    cache_read_input_tokens: Any = None


class _Message(Struct, gc=False):
    model: Any = None
    usage: _Usage | _NOT_OBJECT = None
    content: _Content = None


class _Spawned(Struct, gc=False):
    """A ``toolUseResult`` object: the subagent a ``Task``/``Agent`` call started."""

    agentId: Any = None


class _Record(Struct, gc=False):
    """The fields of a record line the route reads (each takes any JSON value)."""

    turn: Any = None
    step: Any = None
    isCompactSummary: Any = None
    message: _Message | _NOT_OBJECT = None
    toolUseResult: _Spawned | _NOT_OBJECT = None


_RECORD = Typed(_Record)


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
            record = self._record(entry)
            self.add(LOG_ONLY_PREFIX + entry.kind, _int64(record.turn), _int64(record.step))
        elif entry.kind == "assistant":
            self._assistant(entry)
        else:
            record = self._record(entry)
            if record.isCompactSummary is True:
                raise GiveUp
            if entry.prompt:
                if self._turn_open:
                    self._close_turn()
                self._open_turn()
                self._user_message(_blocks(record), "user")
            else:
                self._user(record, entry.uuid)

    def _record(self, entry: Entry) -> _Record:
        """Return the fields of ``entry``'s record the route reads."""
        return self.source.typed(entry.index, _RECORD)

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

    def _user_message(self, blocks: list[Any], source: str) -> None:
        row = self.add("user/message", op=_APPEND)
        self._message(row, "user", source, _text(blocks))

    def _user(self, record: _Record, uuid: str | None) -> None:
        """A user record (of ``uuid``) that is no prompt: tool results, then any other
        text."""
        blocks = _blocks(record)
        results = 0
        for place, block in enumerate(blocks):
            if block.__class__ is _Block and block.type == "tool_result":
                self._result(record, uuid, block, place)
                results += 1
        if results < len(blocks) or not results:
            first = next((b for b in blocks if not (b.__class__ is _Block
                                                    and b.type == "tool_result")), None)
            if _block_text(first).startswith(INTERRUPT_PREFIX):
                self._interrupted = True
                self._user_message(blocks, "interrupt")
            else:
                self._user_message(blocks, "runtime-context")

    def _result(self, record: _Record, uuid: str | None, block: _Block, place: int) -> None:
        call_id, flag = block.tool_use_id, block.is_error
        if call_id.__class__ is not str or call_id not in self._calls \
                or not (flag is None or flag.__class__ is bool):
            raise GiveUp  # diagnosed by the writer
        row = self.add("tool/result", self._turn, self._step, _APPEND, place)
        content = block.content
        self._message(row, "tool", "tool", content if content.__class__ is str
                      else _text(content if content.__class__ is list else []))
        self.answers.add(row, call_id)
        self.errors[row] = (flag is True, uuid is not None
                            and uuid.startswith(SYNTHETIC_ID_PREFIXES))
        self.rows.dispatch[row] = self._calls[call_id]
        self._answered.add(call_id)
        spawned = record.toolUseResult
        agent = spawned.agentId if spawned.__class__ is _Spawned else None
        if agent.__class__ is str and agent:
            self.add("subagent/catalog", block=place)

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
        records = list(map(self._record, parts))
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
        blocks = [b for record in records for b in _blocks(record)]
        self._message(row, "assistant", "model", _text(blocks))
        first = records[0].message
        model = first.model if first.__class__ is _Message else None
        if model.__class__ is str:
            self.models.add(row, self.share("anthropic"), self.share(model))
        usage = next((u for u in (r.message.usage if r.message.__class__ is _Message else None
                                  for r in reversed(records)) if u.__class__ is _Usage), None)
        if usage is not None:
            self.usage.add(row, usage_count(usage.input_tokens),
                           usage_count(usage.output_tokens),
                           usage_count(usage.cache_read_input_tokens), MISSING)
        self._step_calls = []
        for block in blocks:
            if block.__class__ is _Block and block.type == "tool_use" \
                    and block.id.__class__ is str:
                self._call(row, block)

    def _call(self, message: int, block: _Block) -> None:
        """Request (and, once per id, dispatch) the call of a ``tool_use`` ``block`` of the
        assistant/message row ``message``."""
        call_id, name = block.id, block.name
        name = self.share(name) if name.__class__ is str else None
        arguments = json_text({} if block.input is UNSET else block.input)
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


def _blocks(record: _Record) -> list[Any]:
    """Return the content blocks of a record's message (``records.content_blocks``)."""
    message = record.message
    content = message.content if message.__class__ is _Message else None
    if content.__class__ is str:
        return [_Block("text", content)]
    return content if content.__class__ is list else []


def _text(blocks: list[Any]) -> str:
    """Return the visible text of ``blocks`` as the table reads it of the dsh blocks they
    are written as (``nesting.visible_text``): the non-empty texts of the text blocks,
    joined (a Claude Code block of any other type is written as no text block)."""
    texts = [text for block in blocks if block.__class__ is _Block
             and block.type == "text" and (text := block.text).__class__ is str and text]
    return texts[0] if len(texts) == 1 else "\n".join(texts)


def _block_text(block: Any) -> str:
    """Return the text of a text block, or of a tool_result's content, else ""
    (``records.block_text``)."""
    if block.__class__ is not _Block:
        return ""
    if block.type == "text":
        return block.text if block.text.__class__ is str else ""
    content = block.content
    if content.__class__ is str:
        return content
    return "".join(map(_block_text, content)) if content.__class__ is list else ""


def _int64(value: Any) -> int:
    """Return a log-only row's turn or step: its record's when an int64, else ``MISSING``
    (as the table reads an event's)."""
    return value if value.__class__ is int and value in _INT64 else MISSING

