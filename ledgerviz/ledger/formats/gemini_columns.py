"""The Gemini reader's typed route: a chat of the common shapes read straight into its
table's columns, with no dict per event and no record held.

Each line is decoded by msgspec into a ``_Record`` holding only the fields the reader reads
and mapped, as ``gemini._Chat`` maps it, onto rows of the session's ``EventTable``. The dict
route replays every record before it writes, since a message repeated by id is written
where it first came, as its last copy. The typed route writes a message once the next
message comes instead (or the file ends): until then it is *pending*, and the records after
it (its repeats, metadata) wait with it. Its events are then re-derived on demand from the
table and the chat's lines (``gemini_events``).

The route takes only what the dict route maps without a diagnostic, and gives up
(``GiveUp``) at the first line it does not take: a line ``codex_columns.typed_lines``
refuses (blank, torn, too long, invalid, big integers, what msgspec and orjson may read
apart), a ``$rewindTo``, a ``$set`` of messages, a legacy chat, a second header or a record
of no known kind, a repeat of a message other than the pending one, a message of an unknown
type, a model that is no string, a call of an unknown status, a shape a mapping trips on.
The dict route then reads the whole file again (``gemini.read``), so every event and
diagnostic is its own.
"""

from __future__ import annotations

from array import array
from typing import Any

import msgspec
import orjson

from ledgerviz.ledger.formats.codex_columns import GiveUp
from ledgerviz.ledger.formats.foreign import AT_END, as_dict, as_list, as_text, epoch_ms
from ledgerviz.ledger.formats.gemini_records import (
    LOG_ONLY_TYPES,
    content_blocks,
    outcome_of,
    ran,
    reply_blocks,
    requested_calls,
    usage_of,
)
from ledgerviz.ledger.formats.staged import SparseRows, StagedTurns, usage_count
from ledgerviz.ledger.table import USAGE_KEYS, EventTable
from ledgerviz.recovery.nesting import visible_text
from ledgerviz.recovery.vocab import MISSING, RECOVERY_CODES, SURFACE_OPS, StatusReason

_APPEND = SURFACE_OPS.index("append")
MAX_SKIPPED_BRACKETS = 128
"""The most brackets a message's ``thoughts`` may hold to be skipped unread: their text is
made by ``numbers.json_text``, which the standard library's recursion limit stops at about a
thousand levels (the dict route's ``bad_record``); fewer brackets cannot nest that deep."""
FLUSH_ROWS = 1 << 16
"""How many rows' facts are staged before they are scattered into the columns."""


class _Record(msgspec.Struct):
    """The fields of a chat's line the reader reads (UNSET: absent, where presence
    counts)."""

    id: Any = None
    type: Any = None
    timestamp: Any = None
    content: Any = None
    model: Any = None
    thoughts: msgspec.Raw = msgspec.Raw(b"null")
    """Not read (its reasoning blocks hold no visible text), only screened (``reply``)."""
    toolCalls: Any = None
    tokens: Any = None
    turn: Any = None
    step: Any = None
    """What a log-only event's ``data.turn`` and ``data.step`` are (its record's)."""
    sessionId: Any = msgspec.UNSET
    projectHash: Any = msgspec.UNSET
    messages: Any = msgspec.UNSET
    rewind_to: Any = msgspec.field(default=None, name="$rewindTo")
    set: Any = msgspec.field(default=None, name="$set")


DECODE = msgspec.json.Decoder(_Record).decode


class ColumnChat(StagedTurns):
    """The state of reading one chat into columns (``gemini._Chat``'s, for the shapes the
    typed route takes)."""

    def __init__(self) -> None:
        super().__init__()
        self.metadata: dict[str, Any] = {}
        self.started = False
        self.seen: set[str] = set()
        """The id of every message read."""
        self.pending: _Record | None = None
        self.pending_line = 0
        """The line of the pending message's first copy (its events are on it)."""
        self.waiting: list[tuple[str, int, Any, Any]] = []
        """The log-only records after the pending message: kind, line, turn and step."""
        self.copies = (array("q"), array("q"))
        """The first and the last line of each message repeated, ascending."""
        self.results = (array("q"), array("q"))
        """The row of each tool/result that names its dispatch, and its dispatch's."""
        self.error_codes = SparseRows("error_code")
        self.calls: dict[str, tuple[int, int, int]] = {}
        """Each requested call's turn, step and the row of the message that requested it."""
        self.dispatched: dict[str, int] = {}
        self.answered: set[str] = set()
        self.reasons: dict[str, StatusReason] = {}

    def read(self, pieces: Any) -> None:
        """Map every line of ``pieces`` (``codex_columns.typed_lines``'); raise ``GiveUp``
        at the first one the route does not take."""
        try:
            for first, raws, records in pieces:
                for line, record in enumerate(records, first):
                    self.record(record, line, raws[line - first])
                if len(self.codes) - self.filled >= FLUSH_ROWS:
                    self.scatter()
            self.write_pending()
        except GiveUp:
            raise
        except Exception as error:  # a shape the dict route says is bad (``bad_record``)
            raise GiveUp from error

    def record(self, record: _Record, line: int, raw: bytes) -> None:
        """Take one record, in the dict route's order of tests (``gemini._Chat.replay``)."""
        if record.sessionId is not msgspec.UNSET and record.messages.__class__ is list:
            raise GiveUp  # a legacy chat's messages in a header
        if record.rewind_to.__class__ is str:
            raise GiveUp
        message_id = record.id
        if message_id.__class__ is str:
            if message_id == (None if self.pending is None else self.pending.id):
                self.copies[0].append(self.pending_line)
                self.copies[1].append(line)
                self.pending = record
                self.waiting.append(("update", line, record.turn, record.step))
                return
            if message_id in self.seen:
                raise GiveUp  # an earlier message replaced in place
            self.write_pending()
            self.seen.add(message_id)
            self.pending, self.pending_line = record, line
        elif record.set.__class__ is dict:
            update = record.set
            if any(m.__class__ is dict for m in as_list(update.get("messages"))):
                raise GiveUp
            self.metadata.update({k: v for k, v in update.items() if k != "messages"})
            self.wait("metadata", line, update.get("turn"), update.get("step"))
        elif (record.sessionId is not msgspec.UNSET and record.projectHash is not msgspec.UNSET
              and not self.started):
            self.metadata.update(orjson.loads(raw))
            self.started = True
            self.wait("session", line, record.turn, record.step)
        else:
            raise GiveUp

    def wait(self, kind: str, line: int, turn: Any, step: Any) -> None:
        """Add a log-only row now, or after the pending message when there is one."""
        if self.pending is None:
            self.log_only(kind, line, turn, step)
        else:
            self.waiting.append((kind, line, turn, step))

    def log_only(self, kind: str, line: int, turn: Any, step: Any) -> None:
        """Add a log-only row (its record is its data: its turn and step are the record's)."""
        self.add(f"gemini/{kind}", line, _int64(turn), _int64(step))

    def write_pending(self) -> None:
        """Write the pending message as its last copy, then the records that waited."""
        record = self.pending
        if record is None:
            return
        line = self.pending_line
        time = epoch_ms(record.timestamp)
        if time is not None:
            self.time_cell = time
        kind = record.type
        if kind == "user":
            self.open_turn(line, "completed")
            text = visible_text(content_blocks(record.content))
            self.messages.add(self.add("user/message", line, op=_APPEND), "user", "user", text)
        elif kind == "gemini":
            self.reply(record, line)
        elif kind in LOG_ONLY_TYPES:
            self.log_only(kind, line, record.turn, record.step)
        else:
            raise GiveUp
        self.pending = None
        for waited in self.waiting:
            self.log_only(*waited)
        self.waiting = []

    def reply(self, record: _Record, line: int) -> None:
        """Write a ``gemini`` message as one step (``gemini._Chat._reply``): the reply and each
        call started, then each call's result."""
        model = record.model
        if model is not None and model.__class__ is not str:
            raise GiveUp  # a ``wrong_shape`` warning
        self.open_step(line)
        turn, step = self.turn, self.step
        row = self.add("assistant/message", line, turn, step, _APPEND)
        if len(record.thoughts) > MAX_SKIPPED_BRACKETS:
            thoughts = bytes(record.thoughts)
            if thoughts.count(b"[") + thoughts.count(b"{") > MAX_SKIPPED_BRACKETS:
                reply_blocks(orjson.loads(thoughts), None)  # to trip where the dict route does
        text = visible_text(content_blocks(record.content))
        usage = usage_of(as_dict(record.tokens))
        calls = requested_calls(record.toolCalls, record.id)
        for call, call_id in calls:
            name = self.share(as_text(call.get("name")))
            arguments = as_text(call.get("args"))
            self.request(row, call_id, name, arguments)
            self.calls[call_id] = (turn, step, row)
            if ran(call):
                self.dispatched[call_id] = dispatch = self.add("tool/call", line, turn, step)
                self.dispatches.add(dispatch, call_id, name, arguments)
        self.messages.add(row, "assistant", "model", text)
        if model is not None:
            self.models.add(row, "google", self.share(model))
        if usage:
            self.usage.add(row, *map(usage_count, map(usage.get, USAGE_KEYS)))
        for call, call_id in calls:
            self.outcome(call, call_id, line)
        self.close_step(line)

    def outcome(self, call: dict[str, Any], call_id: str, line: int) -> None:
        """Write what a call's status proves (``gemini._Chat._outcome``)."""
        text, result, unknown = outcome_of(call)
        if unknown:
            raise GiveUp  # an ``unknown_status`` warning
        if result is None:
            return
        is_error, code, reason = result
        row = self.add("tool/result", line, *self.calls[call_id][:2], _APPEND)
        self.errors[row] = (is_error or code is not None, code in RECOVERY_CODES)
        if code is not None:
            self.error_codes.add(row, code)
        self.answers.add(row, call_id)
        self.messages.add(row, "tool", "tool", text)
        if reason is not None:
            self.reasons[call_id] = reason
        self.answered.add(call_id)
        dispatch = self.dispatched.get(call_id)
        if dispatch is not None:
            self.results[0].append(row)
            self.results[1].append(dispatch)

    def scatter(self) -> None:
        """Scatter the values staged so far into the columns, error codes too."""
        super().scatter()
        self.error_codes.scatter(self.columns)

    def finish(self) -> EventTable:
        """End the last turn (a chat shows no crash: ``gemini._Chat._finish``); return the
        rows as the session's table."""
        self.close_turn("completed", self.lines[-1] if self.lines else 1)
        self.scatter()
        return self.staged_table()

    def call_reasons(self) -> dict[str, StatusReason]:
        """Return the reason of each call's status (``EventWriter.explain_unanswered``)."""
        reasons = dict(self.reasons)
        for call_id in self.calls:
            if call_id not in self.answered and call_id not in reasons:
                reasons[call_id] = AT_END
        return reasons


def _int64(value: Any) -> int:
    """Return an int64 column's value (``table.int_array``'s)."""
    return value if value.__class__ is int and MISSING < value < 1 << 63 else MISSING
