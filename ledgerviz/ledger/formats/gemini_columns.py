"""The Gemini reader's typed route: a chat of the common shapes read straight into its
table's columns, with no dict per event and no record held.

Each line is decoded by msgspec into a ``_Record`` holding only the fields the reader reads
(a message's calls as ``_Call``s) and mapped at once, as ``gemini._Chat`` maps it, onto rows
of the session's ``EventTable``. The dict route replays every record before it writes, since
a message repeated by id is written where it first came, as its last copy. The typed route
writes a message once the next message comes instead (or the file ends): until then it is
*pending*, and the records after it (its repeats, metadata) wait with it. Its events are then
re-derived on demand from the table and the chat's lines (``gemini_events``).

The route takes only what the dict route maps without a diagnostic, and gives up
(``GiveUp``) at the first line it does not take: a line ``codex_columns.typed_lines``
refuses (blank, torn, too long, invalid, big integers, what msgspec and orjson may read
apart), one msgspec does not decode into a ``_Record``, a ``$rewindTo``, a ``$set`` of
messages, a legacy chat, a second header or a record of no known kind, a repeat of a message
other than the pending one, a message of an unknown type, a model that is no string, a call
of an unknown status, a shape a mapping trips on.
The dict route then reads the whole file again (``gemini.read``), so every event and
diagnostic is its own.
"""

from __future__ import annotations

from array import array
from itertools import count
from typing import Any

import msgspec
import orjson

from ledgerviz.ledger.formats.codex_columns import GiveUp
from ledgerviz.ledger.formats.foreign import AT_END, as_dict, as_list, as_text, epoch_ms
from ledgerviz.ledger.formats.gemini_records import (
    LOG_ONLY_TYPES,
    WITHOUT_RESULT,
    Result,
    content_text,
    may_have_run,
    parts_text,
    reply_blocks,
    result_of,
    token_counts,
)
from ledgerviz.ledger.formats.staged import StagedTurns, usage_count
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.vocab import MISSING, RECOVERY_CODES, SURFACE_OPS, StatusReason

_APPEND = SURFACE_OPS.index("append")
MAX_SKIPPED_BRACKETS = 128
"""The most brackets a message's ``thoughts`` may hold to be skipped unread: their text is
made by ``numbers.json_text``, which the standard library's recursion limit stops at about a
thousand levels (the dict route's ``bad_record``); fewer brackets cannot nest that deep."""
FLUSH_ROWS = 1 << 16
"""How many rows' facts are staged before they are scattered into the columns."""


_Other = str | int | float | bool | None
"""A JSON value that is no object nor array."""


class _Call(msgspec.Struct):
    """The fields of a message's call the reader reads (``toolCalls[]``)."""

    id: Any = None
    name: Any = None
    args: Any = None
    result: Any = None
    status: Any = None
    resultDisplay: Any = None


NO_CALL = _Call()
"""A call of another shape than an object: none of its fields (``as_dict``'s ``{}``)."""


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
    toolCalls: list[_Call | list | _Other] | dict | _Other = None
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
    typed route takes).

    A message's rows are appended as one run: their type codes and surface ops as the
    pattern of the message's shape (made once per shape), their time, turn, step and line
    staged in lists until ``scatter`` moves them into the columns."""

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
        self.error_codes = self.staging("results", "error_code")
        self.unanswered: dict[str, None] = {}
        """Each call requested without a result, in order of its first such request."""
        self.dispatched: dict[str, int] = {}
        self.reasons: dict[str, StatusReason] = {}
        self.staged: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
        """The time, turn, step and line of each row added since the last ``scatter``."""
        self.patterns: dict[tuple[Any, ...], tuple[array, array]] = {}
        """The type codes and surface ops of the rows of each message shape met."""

    def read(self, pieces: Any) -> None:
        """Decode and map every line of ``pieces`` (``codex_columns.typed_lines``' blocks,
        their lines as they are) one at a time, a record mapped while it is still in the
        processor's cache (a block decoded first costs 10-15% more CPU); raise ``GiveUp`` at
        the first line the route does not take."""
        try:
            for first, raws in pieces:
                for line, raw in zip(count(first), raws):
                    self.record(DECODE(raw), line, raw)
                if len(self.codes) - self.filled >= FLUSH_ROWS:
                    self.scatter()
            self.write_pending()
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as error:
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
        self.add(_LOG_ONLY_NAMES[kind], line, _int64(turn), _int64(step))

    def add(self, kind: str, line: int, turn: int = MISSING, step: int = MISSING,
            op: int = 0) -> int:
        """Append one row (its time the one being read); return it."""
        row = len(self.codes)
        self.codes.append(self.code_of[kind])
        self.ops.append(op)
        times, turns, steps, lines = self.staged
        times.append(self.time_cell)
        turns.append(turn)
        steps.append(step)
        lines.append(line)
        return row

    def rows(self, shape: tuple[Any, ...], line: int, turns: tuple[int, ...],
             steps: tuple[int, ...]) -> None:
        """Append the rows of a message of ``shape`` (``_kinds``) read on ``line``, with the
        time being read and these turns and steps."""
        codes, ops = self.patterns.get(shape) or self.pattern(shape)
        self.codes.extend(codes)
        self.ops.extend(ops)
        times, turn_cells, step_cells, lines = self.staged
        size = len(codes)
        times.extend((self.time_cell,) * size)
        turn_cells.extend(turns)
        step_cells.extend(steps)
        lines.extend((line,) * size)

    def pattern(self, shape: tuple[Any, ...]) -> tuple[array, array]:
        """Return (and keep) the type codes and surface ops of the rows of ``shape``: type
        codes numbered in the order the rows come, as ``add`` numbers them."""
        kinds = _kinds(*shape)
        found = self.patterns[shape] = (
            array("H", [self.code_of[kind] for kind in kinds]),
            array("b", [_APPEND if kind in _APPENDED else 0 for kind in kinds]))
        return found

    def next_turn(self) -> bool:
        """Open the next turn without writing its boundaries (``rows`` writes them); return
        whether one was open (it ends, ``completed``, as ``OpenTurns.open_turn`` ends it)."""
        was_open = self.turn_open
        self.turn += 1
        self.step = 0
        self.turn_open = True
        return was_open

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
            self.prompt(record, line)
        elif kind == "gemini":
            self.reply(record, line)
        elif kind.__class__ is str and kind in LOG_ONLY_TYPES:
            self.log_only(kind, line, record.turn, record.step)
        else:
            raise GiveUp
        self.pending = None
        if self.waiting:
            for waited in self.waiting:
                self.log_only(*waited)
            self.waiting = []

    def prompt(self, record: _Record, line: int) -> None:
        """Write a ``user`` message: the open turn's end, the next turn's start, the prompt."""
        row = len(self.codes)
        ended = self.next_turn()
        turn = self.turn
        if ended:
            self.ends.add(row, "completed")
            self.rows((True, True, 0, 0), line, (turn - 1, turn, MISSING), _MISSING_3)
        else:
            self.rows((True, False, 0, 0), line, (turn, MISSING), _MISSING_3[:2])
        self.messages.add(row + ended + 1, "user", "user", content_text(record.content))

    def reply(self, record: _Record, line: int) -> None:
        """Write a ``gemini`` message as one step (``gemini._Chat._reply``): the reply and each
        call started, then each call's result."""
        model = record.model
        if model is not None and model.__class__ is not str:
            raise GiveUp  # a ``wrong_shape`` warning
        opens = not self.turn_open
        if opens:
            self.next_turn()
        self.step += 1
        turn, step = self.turn, self.step
        row = len(self.codes) + opens + 1
        if len(record.thoughts) > MAX_SKIPPED_BRACKETS:
            thoughts = bytes(record.thoughts)
            if thoughts.count(b"[") + thoughts.count(b"{") > MAX_SKIPPED_BRACKETS:
                reply_blocks(orjson.loads(thoughts), None)  # to trip where the dict route does
        calls = record.toolCalls
        dispatched, settled = (self.calls(calls, record.id, row) if calls.__class__ is list
                               else (0, ()))
        result = row + dispatched
        for call_id, text, (is_error, code, reason) in settled:
            result += 1
            self.answer(result, call_id, text, is_error, code, reason)
        size = opens + 3 + dispatched + len(settled)
        self.rows((False, opens, dispatched, len(settled)), line, (turn,) * size,
                  _MISSING_3[:opens] + (step,) * (size - opens))
        self.messages.add(row, "assistant", "model", content_text(record.content))
        if model is not None:
            self.models.add(row, "google", self.share(model))
        counts = token_counts(as_dict(record.tokens))
        if counts is not None:
            self.usage.add(row, usage_count(counts[0]), usage_count(counts[1]),
                           usage_count(counts[2]), usage_count(counts[3]))

    def calls(self, calls: list[Any], message_id: str, row: int
              ) -> tuple[int, list[tuple[str, str, Result]]]:
        """Stage the requests of the calls a reply (its message on ``row``) makes and the
        dispatches of those that may have run, on the rows after it; return how many ran
        and each call's id, result text and result, for those that have one."""
        share, request, dispatches = self.share, self.request, self.dispatches.add
        settled = []
        dispatch = row
        for number, call in enumerate(calls):
            if call.__class__ is not _Call:
                call = NO_CALL
            call_id = call.id
            if call_id.__class__ is not str:
                call_id = f"{message_id}-call-{number}"
            name = share(as_text(call.name))
            arguments = as_text(call.args)
            request(row, call_id, name, arguments)
            status = call.status
            text = parts_text(call.result, call.resultDisplay)
            result = result_of(status, text)
            if result is not None:
                settled.append((call_id, text, result))
            elif status.__class__ is str and status in WITHOUT_RESULT:
                self.unanswered.setdefault(call_id)
            else:
                raise GiveUp  # an ``unknown_status`` warning
            if may_have_run(status, result):
                dispatch += 1
                self.dispatched[call_id] = dispatch
                dispatches(dispatch, call_id, name, arguments)
        return dispatch - row, settled

    def answer(self, row: int, call_id: str, text: str, is_error: bool, code: str | None,
               reason: StatusReason | None) -> None:
        """Stage a tool/result's values (``gemini._Chat._outcome``)."""
        self.errors[row] = (is_error or code is not None, code in RECOVERY_CODES)
        if code is not None:
            self.error_codes.add(row, code)
        self.answers.add(row, call_id)
        self.messages.add(row, "tool", "tool", text)
        if reason is not None:
            self.reasons[call_id] = reason
        dispatch = self.dispatched.get(call_id)
        if dispatch is not None:
            self.results[0].append(row)
            self.results[1].append(dispatch)

    def scatter(self) -> None:
        """Move the staged times, turns, steps and lines into their columns, then scatter the
        values staged so far into their groups (error codes too)."""
        for column, staged in zip((self.times, self.turns, self.steps, self.lines),
                                  self.staged, strict=True):
            column.fromlist(staged)
            del staged[:]
        super().scatter()

    def finish(self) -> EventTable:
        """End the last turn (a chat shows no crash: ``gemini._Chat._finish``); return the
        rows as the session's table."""
        self.scatter()
        self.close_turn("completed", self.lines[-1] if self.lines else 1)
        self.scatter()
        return self.staged_table()

    def call_reasons(self) -> dict[str, StatusReason]:
        """Return the reason of each call's status (``EventWriter.explain_unanswered``), once
        the table is ``finish``ed."""
        reasons = dict(self.reasons)
        if self.unanswered:
            answered = set(self.groups["results"].call_id)
            reasons.update((call_id, AT_END) for call_id in self.unanswered
                           if call_id not in answered)
        return reasons


_LOG_ONLY_NAMES = {kind: f"gemini/{kind}"
                   for kind in ("update", "metadata", "session", *LOG_ONLY_TYPES)}
"""The event type of each kind of log-only row."""
_APPENDED = frozenset({"user/message", "assistant/message", "tool/result"})
"""The rows of a message that append to the surface."""
_MISSING_3 = (MISSING, MISSING, MISSING)


def _kinds(prompt: bool, boundary: bool, dispatched: int, answered: int) -> list[str]:
    """Return the event types of a message's rows: a prompt's (after the open turn's end,
    when ``boundary``), or a reply's (after a turn's start, when ``boundary``) with the
    calls ``dispatched`` and the results of those ``answered``."""
    if prompt:
        return ["turn/end"] * boundary + ["turn/start", "user/message"]
    return (["turn/start"] * boundary + ["step/start", "assistant/message"]
            + ["tool/call"] * dispatched + ["tool/result"] * answered + ["step/end"])


def _int64(value: Any) -> int:
    """Return an int64 column's value (``table.int_array``'s)."""
    return value if value.__class__ is int and MISSING < value < 1 << 63 else MISSING
