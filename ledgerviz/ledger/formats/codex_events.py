"""A Codex rollout's events, re-derived on demand from the session's table and the
rollout's lines instead of held as dicts or as an encoded copy.

The reader (``codex.py``) writes its events as dicts; a ``DerivedStore`` tables each window
of ``sealed.WINDOW`` of them once the reader can no longer change them, and lets the dicts
go. What an event holds is then the table's columns (``ledger.table``) and, for those that
carry a record of the rollout, the record itself, read again from the file (the bytes held
only when the input cannot be read again, as for a dsh ledger, ``reread.LineSource``):

- a turn or step boundary, a tool/call and a tool/result are their columns (a result's
  dispatch, ``sourceEventSeqs``, is kept beside the table);
- a log-only ``codex/<kind>`` event is its line's record (its payload), a user, system or
  developer message its line's content;
- an assistant/message is the blocks of the output items of its step (the lines the reader
  named with ``part``) and the usage of the ``token_count`` line it named with ``usage``.

The few events of any other shape (a rewind, a fork's seed marker, a compaction, an aborted
turn's end, a result with an error code) are held as the reader wrote them.
A ``sealed.DerivedEvents`` derives a window of rows when one of them is first asked for,
and keeps the dicts (the same index gives the same dict, as a list did).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any, NamedTuple

from ledgerviz.ledger.formats import sealed
from ledgerviz.ledger.formats.foreign import LineStarts, RowDerivation
from ledgerviz.ledger.formats.sealed import DerivedEvents
from ledgerviz.ledger.reread import LineSource
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.vocab import MISSING

Event = dict[str, Any]


class Rules(NamedTuple):
    """The reader's mappings of one record that an event is re-derived with."""

    output: Callable[[dict[str, Any]], list[dict[str, Any]]]
    """The content blocks an output item (a payload) adds to its step's assistant message."""
    content: Callable[[Any], list[dict[str, Any]]]
    """The content blocks of a user, system or developer message's ``content``."""
    usage: Callable[[dict[str, Any]], dict[str, Any]]
    """The usage a ``token_count`` payload gives an assistant message."""


HELD_TYPES = frozenset({"surface/rewind", "session/end-seed"})
CHECKED = frozenset({*HELD_TYPES, "tool/result", "turn/end", "user/message"})
"""The types held always, or when of a shape not re-derived (``_held``)."""
APPENDED = frozenset({"user/message", "system/message", "developer/message",
                      "assistant/message", "tool/result"})
"""The types the reader writes with ``surfaceOp: append`` (when not held)."""


def payload_of(record: dict[str, Any]) -> dict[str, Any]:
    """Return what a rollout line's events read of it: the payload of a wrapped line
    (``{}`` for a payload that is no object), the record itself for a bare (legacy) one."""
    kind, payload = record.get("type"), record.get("payload")
    if kind.__class__ is str and payload.__class__ is dict:
        return payload
    return {} if "payload" in record and isinstance(kind, str) else record


class Parts:
    """The lines each assistant message was made from, by the line of its first: its
    output items in order, and the ``token_count`` of its usage."""

    def __init__(self) -> None:
        self.message = array("q")
        """The message of each part (ascending: a message takes parts until the next)."""
        self.line = array("q")
        self.usage_message = array("q")
        self.usage_line = array("q")

    def lines(self, message: int) -> tuple[list[int], int | None]:
        """Return the output item lines and the usage line of the message of ``message``."""
        first = bisect_left(self.message, message)
        parts = self.line[first:bisect_right(self.message, message, first)].tolist()
        found = bisect_left(self.usage_message, message)
        usage = (self.usage_line[found] if found < len(self.usage_message)
                 and self.usage_message[found] == message else None)
        return parts, usage


class Derivation(RowDerivation):
    """What a Codex session's events are re-derived from besides its records."""

    def __init__(self, table: EventTable, source: LineSource, starts: LineStarts,
                 parts: Parts, held: dict[int, Event], results: tuple[array, array],
                 rules: Rules) -> None:
        super().__init__(table, source, starts, results)
        self.parts = parts
        self.held = held
        self.rules = rules

    def window(self, first: int, stop: int) -> list[Event]:
        """Return the events of rows ``first`` to ``stop``."""
        table, held = self.table, self.held
        names, codes, lines = table.type_names, table.type_code, table.line
        wanted: set[int] = set()
        assistants: dict[int, tuple[list[int], int | None]] = {}
        for row in range(first, stop):
            if row in held:
                continue
            kind = names[codes[row]]
            if kind == "assistant/message":
                parts, usage = assistants[row] = self.parts.lines(lines[row])
                wanted.update(parts)
                if usage is not None:
                    wanted.add(usage)
            elif kind.startswith("codex/") or (kind in APPENDED and kind != "tool/result"):
                wanted.add(lines[row])
        records = self.starts.records(self.source, sorted(wanted))
        return [held[row] if row in held else self._event(row, records, assistants)
                for row in range(first, stop)]

    def _event(self, row: int, records: dict[int, dict[str, Any]],
               assistants: dict[int, tuple[list[int], int | None]]) -> Event:
        """Return the event of row ``row`` (not held)."""
        kind, event = self.started(row)
        line = self.table.line[row]
        if kind.startswith("codex/"):
            event["data"] = payload_of(records[line])
            return event
        data = self.row_data(kind, row)
        if data is not None:
            event["data"] = data
        elif kind == "tool/result":
            event["data"] = self._result(row)
        elif kind == "assistant/message":
            event["data"] = self._assistant(row, line, records, *assistants[row])
        else:  # a user, system or developer message
            event["data"] = self._message(kind, row, records[line])
        return self.completed(kind, row, event, appended=kind in APPENDED)

    def _result(self, row: int) -> dict[str, Any]:
        table = self.table
        turn, step = table.turn[row], table.step[row]
        call_id = table.call_id[row]
        message: dict[str, Any] = {
            "id": f"codex-result-{call_id}", "role": "tool",
            "source": {"kind": "tool", "callId": call_id}, "toolCallId": call_id,
            "content": [{"type": "text", "text": table.by_row("text")[row]}]}
        if table.is_error[row] == 1:
            message["isError"] = True
        return {"turn": turn, "step": step, "message": message}

    def _assistant(self, row: int, line: int, records: dict[int, dict[str, Any]],
                   parts: list[int], usage: int | None) -> dict[str, Any]:
        table = self.table
        output = self.rules.output
        content = [block for part in parts for block in output(payload_of(records[part]))]
        message = {"id": f"codex-message-{line}", "role": "assistant", "content": content,
                   "source": {"kind": "model", "provider": "openai",
                              "model": table.by_row("model")[row]}}
        data: dict[str, Any] = {"turn": table.turn[row], "step": table.step[row],
                                "message": message}
        if usage is not None:
            data["usage"] = self.rules.usage(payload_of(records[usage]))
        return data

    def _message(self, kind: str, row: int, record: dict[str, Any]) -> dict[str, Any]:
        table, line = self.table, self.table.line[row]
        role = table.by_row("role")[row]
        content = self.rules.content(payload_of(record).get("content"))
        if kind == "user/message":
            return {"id": f"codex-user-{line}", "role": role, "content": content,
                    "source": {"kind": table.source_kind[row]}}
        turn, step = table.turn[row], table.step[row]
        return {"turn": None if turn == MISSING else turn, "step": None if step == MISSING
                else step, "message": {"id": f"codex-{role}-{line}", "role": role,
                                       "content": content,
                                       "source": {"kind": "runtime-context"}}}


class DerivedStore:
    """Seals a Codex reader's events (what ``foreign.EventWriter`` asks of its store, as a
    ``sealed.EventStore``): each window of them, once the reader says it no longer changes,
    is added to the session's table and its dicts let go (see the module docstring)."""

    def __init__(self, events: list[Any], lines: list[int], starts: LineStarts,
                 source: Callable[[], LineSource], rules: Rules) -> None:
        """``starts``: where each line of the rollout starts; ``source``: where its lines
        are read again (asked once it was read to its end)."""
        self.events = events
        self.lines = lines
        self.window = sealed.WINDOW
        self.parts = Parts()
        """The lines each assistant message is made from (see ``part`` and ``usage``)."""
        self._starts = starts
        self._source = source
        self._rules = rules
        self._table: EventTable | None = None
        """The table of the rows sealed so far."""
        self._sealed = 0
        """How many rows are sealed (always the first)."""
        self._held: dict[int, Event] = {}
        self._results = (array("q"), array("q"))

    def part(self, message: int, line: int) -> None:
        """Note that the output item of ``line`` adds to the assistant message of line
        ``message``."""
        self.parts.message.append(message)
        self.parts.line.append(line)

    def usage(self, message: int, line: int) -> None:
        """Note that the ``token_count`` of ``line`` gives the usage of the assistant
        message of line ``message``."""
        self.parts.usage_message.append(message)
        self.parts.usage_line.append(line)

    def seal_before(self, seq: int) -> None:
        """Seal every full window whose events all come before ``seq``."""
        last = min(seq, len(self.events)) // self.window * self.window
        while self._sealed < last:
            self._seal(self._sealed + self.window)

    def result_error(self, seq: int, failed: bool) -> None:
        """Make the tool/result of ``seq`` an error or not (an exit code that came after
        it), unless its error code says what it is."""
        result = self._held.get(seq) if seq < self._sealed else self.events[seq]
        if result is None:  # sealed, re-derived from its columns
            table = self._table
            assert table is not None
            if table.error_code[seq] is None:
                table.is_error[seq] = int(failed)
        elif "error" not in result["data"]:
            message = result["data"]["message"]
            if failed:
                message["isError"] = True
            else:
                message.pop("isError", None)

    def unsealed(self) -> None:
        """Put every sealed event back into ``events`` as a dict, and its line into
        ``lines`` (to be sealed anew)."""
        if self._sealed:
            derivation = self._derivation(self._source())
            self.events[:self._sealed] = derivation.window(0, self._sealed)
            self.lines[:self._sealed] = derivation.table.line[:self._sealed].tolist()
            self._table, self._sealed, self._held = None, 0, {}
            self._results = (array("q"), array("q"))

    def adopt(self, table: EventTable, first_open: int, parts: Parts, held: dict[int, Event],
              results: tuple[array, array], source: LineSource) -> None:
        """Take the rows another reader tabled (with the lines of each assistant message,
        ``parts``, the events of the rows held as written, ``held``, and the dispatch of each
        result, ``results``) as this store's: those before the window of row ``first_open``
        (the first that may still change) sealed, the others put back into ``events`` as
        dicts (their lines read from ``source``)."""
        keep = first_open // self.window * self.window
        derived = Derivation(table, source, self._starts, parts, held, results, self._rules)
        self.events[:] = [None] * keep + derived.window(keep, len(table))
        self.lines[:] = [None] * keep + table.line[keep:].tolist()
        self.parts = parts
        self._table = table.rows(0, keep) if keep else None
        self._sealed = keep
        self._held = {row: event for row, event in held.items() if row < keep}
        found = bisect_left(results[0], keep)
        self._results = (results[0][:found], results[1][:found])

    def finished(self) -> tuple[DerivedEvents, array, EventTable]:
        """Seal every event; return the events, their lines (the table's) and their
        table."""
        if self._sealed < len(self.events) or self._table is None:
            self._seal(len(self.events))
        derivation = self._derivation(self._source())
        return (DerivedEvents(derivation, len(derivation.table)), derivation.table.line,
                derivation.table)

    def _derivation(self, source: LineSource) -> Derivation:
        assert self._table is not None
        return Derivation(self._table, source, self._starts, self.parts, self._held,
                          self._results, self._rules)

    def _seal(self, stop: int) -> None:
        """Table the rows from the first not sealed to ``stop``, and let their dicts go."""
        start = self._sealed
        window = self.events[start:stop]
        part = EventTable.of(window, self.lines[start:stop], start)
        if self._table is None:
            self._table = part
        else:
            self._table.extend(part)
        held, (rows, seqs) = self._held, self._results
        for row, event in enumerate(window, start):
            if event["type"] not in CHECKED:
                continue
            if _held(event):
                held[row] = event
            elif "sourceEventSeqs" in event:
                rows.append(row)
                seqs.append(event["sourceEventSeqs"][0])
        self.events[start:stop] = self.lines[start:stop] = [None] * (stop - start)
        self._sealed = stop


def _held(event: Event) -> bool:
    """Return whether an event is held as written: a type, or a shape of its type, that is
    not re-derived (see the module docstring)."""
    kind, data = event["type"], event["data"]
    if kind == "tool/result":
        return "error" in data or len(event.get("sourceEventSeqs", ((),))) != 1
    if kind == "turn/end":
        return len(data["reason"]) != 1
    if kind == "user/message":
        return event.get("surfaceOp") != "append" or not data["id"].startswith("codex-user-")
    return kind in HELD_TYPES
