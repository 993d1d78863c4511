"""A Gemini chat's events, re-derived on demand from the session's table and the chat's
lines, for a chat the typed route (``gemini_columns``) read.

A turn or step boundary, a tool/call and a tool/result are their columns (a result's
dispatch, ``sourceEventSeqs``, is kept beside the table); a user or assistant message and a
log-only ``gemini/<kind>`` event are their record's, read again from the file
(``reread.lines_again``): a message's last copy, mapped as the dict route maps it
(``gemini_records``; an assistant message's calls are the table's requests); a log-only
event holds its record as decoded (a ``$set``'s update for ``gemini/metadata``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from typing import Any

from ledgerviz.ledger.formats.foreign import (
    LineStarts,
    RowDerivation,
    as_dict,
    as_text,
    result_data,
)
from ledgerviz.ledger.formats.gemini_records import content_blocks, reply_blocks, usage_of
from ledgerviz.ledger.reread import LineSource
from ledgerviz.ledger.table import EventTable

Event = dict[str, Any]

FORMAT_NAME = "gemini"
RECORD_TYPES = frozenset({"user/message", "assistant/message"})
"""The types, besides the log-only ``gemini/<kind>``, derived from their record."""


class Derivation(RowDerivation):
    """What a Gemini session's events are re-derived from besides its records."""

    def __init__(self, table: EventTable, source: LineSource, starts: LineStarts,
                 copies: tuple[array, array], results: tuple[array, array]) -> None:
        super().__init__(table, source, starts, results)
        self.copies = copies
        """The first and the last line of each message repeated (ascending first lines)."""

    def window(self, first: int, stop: int) -> list[Event]:
        """Return the events of rows ``first`` to ``stop``."""
        table = self.table
        names, codes, lines = table.type_names, table.type_code, table.line
        wanted = {self._record_line(lines[row]) for row in range(first, stop)
                  if _from_record(names[codes[row]])}
        records = self.starts.records(self.source, sorted(wanted))
        return [self._event(row, records) for row in range(first, stop)]

    def _record_line(self, line: int) -> int:
        """Return the line of the last copy of the record first read on ``line``."""
        firsts, lasts = self.copies
        found = bisect_right(firsts, line)
        return lasts[found - 1] if found and firsts[found - 1] == line else line

    def _event(self, row: int, records: dict[int, dict[str, Any]]) -> Event:
        kind, event = self.started(row)
        table = self.table
        if _from_record(kind):
            record = records[self._record_line(table.line[row])]
            if kind == "user/message":
                event["data"] = {"id": as_text(record.get("id")), "role": "user",
                                 "content": content_blocks(record.get("content")),
                                 "source": {"kind": "user"}}
            elif kind == "assistant/message":
                event["data"] = self._assistant(row, record)
            elif kind == "gemini/metadata":
                event["data"] = record["$set"]
            else:
                event["data"] = record
        elif kind == "tool/result":
            call_id, code, is_error, _ = table.results.values_at(row)
            event["data"] = result_data(FORMAT_NAME, call_id, table.by_row("text")[row],
                                        table.turn[row], table.step[row],
                                        is_error=is_error == 1, code=code)
        else:  # a turn's or step's boundary, or a tool/call
            event["data"] = self.row_data(kind, row)
        return self.completed(kind, row, event,
                              appended=kind in RECORD_TYPES or kind == "tool/result")

    def _assistant(self, row: int, record: dict[str, Any]) -> dict[str, Any]:
        """Return an assistant/message's data: its record's blocks, then its calls'."""
        table = self.table
        requests = table.requests
        content = reply_blocks(record.get("thoughts"), record.get("content"))
        for at in range(bisect_left(requests.row, row), bisect_right(requests.row, row)):
            content.append({"type": "tool-call", "id": requests.call_id[at],
                            "name": requests.name[at], "arguments": requests.arguments[at]})
        message = {"id": as_text(record.get("id")), "role": "assistant", "content": content,
                   "source": {"kind": "model", "provider": "google",
                              "model": table.by_row("model")[row]}}
        data: dict[str, Any] = {"turn": table.turn[row], "step": table.step[row],
                                "message": message}
        usage = usage_of(as_dict(record.get("tokens")))
        if usage:
            data["usage"] = usage
        return data


def _from_record(kind: str) -> bool:
    """Whether an event of type ``kind`` is derived from its record."""
    return kind in RECORD_TYPES or kind.startswith("gemini/")
