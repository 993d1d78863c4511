"""The events of a Claude Code session written by the typed route (``claude_code_typed``),
derived on demand from its table and its records instead of held.

An event is its row's columns (type, seq, time, turn, step; a turn's end reason, a call's
id, name and arguments) and, for those that carry a record's content, the record read
again (``RecordSource``) and mapped by the writer's own builders (``claude_code_events``):
a user message, a tool result (its block's place in the record noted per row, its dispatch
per result), an assistant message (the records of its step), a subagent's catalog entry,
a log-only ``claude-code/<kind>`` record. A window of ``sealed.WINDOW`` rows is derived when
one of its events is first asked for, and its dicts kept (the same index gives the same
dict, as a list did: ``sealed.DerivedEvents``).
"""

from __future__ import annotations

from array import array
from typing import Any

from ledgerviz.ledger.formats.claude_code_entries import RecordSource
from ledgerviz.ledger.formats.claude_code_events import (
    LOG_ONLY_PREFIX,
    assistant_data,
    catalog_data,
    result_data,
    spawned_child,
    turn_end,
    user_message,
)
from ledgerviz.ledger.formats.claude_code_records import Record
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.vocab import MISSING

Event = dict[str, Any]


class Rows:
    """What the events of a typed session are derived from besides the table: the record
    of each row and, for a tool/result or its subagent's catalog entry, its block's place in
    the record's content; the message id and records of each step; each result's
    dispatch."""

    def __init__(self) -> None:
        self.record = array("q")
        self.block: dict[int, int] = {}
        """The place among its record's content blocks of each tool/result row's block, and
        of each subagent/catalog row's result."""
        self.keys: dict[int, str | None] = {}
        """The message id of each assistant/message row."""
        self.parts: dict[int, list[int]] = {}
        """The records of each assistant/message row written from more than one."""
        self.dispatch: dict[int, int] = {}
        """The tool/call row of each tool/result row."""


class Derivation:
    """What a typed session's events are derived from."""

    def __init__(self, table: EventTable, rows: Rows, source: RecordSource) -> None:
        self.table = table
        self.rows = rows
        self.source = source

    def window(self, first: int, stop: int) -> list[Event]:
        """Return the events of rows ``first`` to ``stop``."""
        return [self._event(row) for row in range(first, stop)]

    def _record(self, index: int) -> Record:
        """Return record ``index`` read again, as the builders read it (its raw fields, its
        ``uuid`` and ``message``)."""
        raw = self.source.raw(index)
        message, uuid = raw.get("message"), raw.get("uuid")
        return Record(0, raw.get("type"), raw, uuid if uuid.__class__ is str else None, None,
                      None, None, False, message if message.__class__ is dict else None, False)

    def _event(self, row: int) -> Event:
        table, rows = self.table, self.rows
        kind = table.type_names[table.type_code[row]]
        turn, step = table.turn[row], table.step[row]
        op = "append"
        sources = None
        if kind in ("step/start", "step/end"):
            data: dict[str, Any] = {"turn": turn, "step": step}
            op = None
        elif kind == "turn/start":
            data, op = {"turn": turn}, None
        elif kind == "turn/end":
            data, op = turn_end(turn, table.end_reason[row] == "completed"), None
        elif kind == "tool/call":
            call_id, name, arguments = table.calls.values_at(row)
            data = {"turn": turn, "step": step, "callId": call_id, "name": name,
                    "arguments": arguments}
            op = None
        elif kind == "assistant/message":
            indexes = rows.parts.get(row) or [rows.record[row]]
            data = assistant_data(turn, step, rows.keys[row], list(map(self._record, indexes)))
        elif kind == "user/message":
            data = user_message(self._record(rows.record[row]), table.source_kind[row])
        elif kind == "tool/result":
            record = self._record(rows.record[row])
            block = record.message["content"][rows.block[row]]  # type: ignore[index]
            data = result_data(turn, step, record, block, table.call_id[row], None)
            sources = [rows.dispatch[row]]
        elif kind == "subagent/catalog":
            record = self._record(rows.record[row])
            call_id = record.message["content"][rows.block[row]]["tool_use_id"]  # type: ignore[index]
            data, op = catalog_data(spawned_child(record, call_id, {}), call_id), None  # type: ignore[arg-type]
        else:  # a log-only record
            assert kind.startswith(LOG_ONLY_PREFIX)
            data, op = self.source.raw(rows.record[row]), None
        time = table.time[row]
        event = {"type": kind, "seq": row, "time": None if time == MISSING else time,
                 "data": data}
        if op is not None:
            event["surfaceOp"] = op
        if sources is not None:
            event["sourceEventSeqs"] = sources
        return event
