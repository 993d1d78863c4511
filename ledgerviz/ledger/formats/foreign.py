"""What the readers of other agents' transcripts share: JSONL records with their
diagnostics, and a writer of dsh events (``LEDGER_FORMAT.md``) that numbers them, keeps
the turn and step open, and follows the model-visible surface for rewinds."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import accumulate, repeat
from operator import add
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ledgerviz.ledger.decode import exact_value
from ledgerviz.ledger.diagnostics import (
    DiagnosticLog,
    DiagnosticSink,
    LedgerError,
    Severity,
    torn_tail_message,
)
from ledgerviz.ledger.formats.open_turns import OpenTurns
from ledgerviz.ledger.formats.sealed import EventStore
from ledgerviz.ledger.numbers import json_text, may_hold_big_integers
from ledgerviz.ledger.reader import (
    MAX_LINE_UNITS,
    LeadingBlanks,
    Piece,
    empty_file,
    line_blocks,
)
from ledgerviz.ledger.reread import LineSource, lines_again
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.shapes import json_type
from ledgerviz.ledger.sources import valid_unicode
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.vocab import MISSING, NOT_STARTED_CODE, UNKNOWN_CODE, StatusReason

Event = dict[str, Any]

FOREIGN_VERSION = 4
"""The dsh format version the events of a foreign transcript are written in."""

COMPLETED = {"kind": "completed"}
UNMARKED = {"kind": "unmarked"}
"""The end of a turn whose end the file does not show (a new turn began while it was
open): the timeline draws it as a turn that did not complete."""

REJECTED: StatusReason = "rejected by user"
"""Why a call has its status (``SessionLog.call_reasons``, the ``calls`` frame's
``status_reason``; see ``recovery.vocab``): the user refused it, so it never ran."""
INTERRUPTED: StatusReason = "interrupted mid-run"
"""Stopped (cancelled, or aborted by the user) when it may have been running."""
ABORTED: StatusReason = "aborted"
"""Left without a result by a turn the runtime recorded as aborted."""
AT_END: StatusReason = "no result at end of file"
IN_CLOSED_STEP: StatusReason = "no result in a closed step"
ROLLED_BACK: StatusReason = "rolled back"
DENIED_BY_POLICY: StatusReason = "denied by policy"

BOM_WARNING: tuple[str, Severity] = ("file starts with a UTF-8 byte order mark: ignored",
                                     "warning")
"""A byte order mark before a foreign transcript: read past (its writer's own loader reads
past it too; only the dsh runtime refuses one)."""

QUOTE_BYTES = 80
"""How much of a bad line a diagnostic quotes."""


class _Undecoded(NamedTuple):
    """A line that did not decode, and why."""

    line: bytes
    error: Exception


def _decoded_or_not(line: bytes) -> Any:
    """Return the value of a JSON line, or an ``_Undecoded`` for one that is no JSON."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as error:
        return _Undecoded(line, error)


def _keep_exact(lines: list[bytes], values: list[Any], first: int, log: DiagnosticLog) -> None:
    """Decode again, exactly, each of ``lines`` (the first numbered ``first``) that may hold
    an integer beyond 64 bits, which orjson reads as a float or refuses: a ``big_integer``
    warning for each that does (``decode.exact_value``)."""
    for index, line in enumerate(lines):
        if values[index].__class__ in (dict, _Undecoded) and may_hold_big_integers(line):
            try:
                values[index] = exact_value(line, first + index, log)
            except ValueError as error:  # no JSON after all, or digits beyond conversion
                values[index] = _Undecoded(line, error)


class Records:
    """The JSON objects of one JSONL file, each with its 1-based line, read from chunks.

    Lines that give no object are diagnosed and counted in ``skipped``: blank lines, lines
    that are no JSON (the last one a torn append, as in the dsh reader) and JSON that is
    not an object. A last line that no newline ends but that is a whole object is read, as
    the loaders of Claude Code, Codex and Gemini CLI read it (``no_final_newline``).
    """

    def __init__(self, log: DiagnosticLog, max_line: int = MAX_LINE_UNITS,
                 starts: LineStarts | None = None) -> None:
        self.log = log
        self.skipped = 0
        self.max_line = max_line
        """The longest line read, in UTF-16 code units (``ReadOptions.max_line``)."""
        self.starts = starts
        """Told where each line read starts in the file (None: not asked)."""

    def read(self, chunks: Iterable[bytes], number: int = 0
             ) -> Iterator[tuple[int, dict[str, Any]]]:
        """Yield ``(line, object)`` for every line of ``chunks`` that decodes to an object
        (``number``: how many lines of the file come before them).

        The lines of a block are decoded at once; a block with a line that does not decode
        is decoded again line by line. Whether a line that does not decode is the file's
        last (a torn tail) is known once the next block, or the end, comes."""
        loads, invalid = orjson.loads, orjson.JSONDecodeError
        held: tuple[int, bytes, Exception] | None = None  # the last line read, undecoded
        rest = b""  # what follows the last newline read: the next block's, or a last line
        rest_size = 0  # its size (more than ``rest`` holds when cut)
        leading = LeadingBlanks()
        for piece in line_blocks(chunks, self.max_line, leading):
            if self.starts is not None:
                self.starts.read(piece, leading)
            lines = piece.lines
            if piece.too_long:  # its start only is held: said, not decoded
                number += 1
                if held is not None:
                    self._undecoded(*held, last=False)
                    held = None
                self.skipped += 1
                line_too_long(self.log, number, piece.too_long, self.max_line)
                lines = lines[1:]
            try:
                values = list(map(loads, lines))
            except invalid:  # decode again line by line, to diagnose the bad ones
                values = [_decoded_or_not(line) for line in lines]
            if may_hold_big_integers(piece.block):
                _keep_exact(lines, values, number + 1, self.log)
            for value in values:
                number += 1
                if held is not None:  # a line follows it: not the file's last
                    self._undecoded(*held, last=False)
                    held = None
                if value.__class__ is dict:
                    yield number, value
                elif value.__class__ is _Undecoded:
                    held = number, value.line, value.error
                else:
                    self._not_an_object(number, value)
            rest, rest_size = piece.tail, piece.tail_size
        if not number and not rest:  # a file of no line but blank ones
            self.skipped += empty_file(self.log, leading)
        if held is not None:
            self._undecoded(*held, last=not rest)
        if rest:  # the file's last line, which no newline ends
            number += 1
            values = [_decoded_or_not(rest)]
            if may_hold_big_integers(rest):
                _keep_exact([rest], values, number, self.log)
            value = values[0]
            if value.__class__ is _Undecoded:
                self._undecoded(number, rest, value.error, last=True, size=rest_size)
            elif value.__class__ is not dict:
                self._not_an_object(number, value)
            else:  # a whole record: its writer's own loader reads it (docs/formats.md)
                no_final_newline(self.log, number)
                if self.starts is not None:
                    self.starts.last(rest)
                yield number, value

    def _not_an_object(self, number: int, value: Any) -> None:
        self.skipped += 1
        not_an_object(self.log, number, value)

    def _undecoded(self, number: int, line: bytes, error: Exception, *, last: bool,
                   size: int | None = None) -> None:
        """Diagnose a line that is no JSON: blank, torn (the file's last; ``size``: the
        bytes of one no newline ends, more than ``line`` when only its start is held) or
        invalid."""
        self.skipped += 1
        line = line[:-1] if line.endswith(b"\r") else line
        if not line.strip():
            self.log.add(number, "blank_line", "blank line: skipped", "info")
        elif last:
            message = torn_tail_message(max(len(line), size or 0), no_newline=size is not None,
                                        no_json=True)
            self.log.add(number, "torn_tail", message, "warning")
        else:
            self.log.add(number, "invalid_json", f"not JSON ({error}): {quote(line)}; skipped")


class LineStarts:
    """Where each line a ``Records`` reads starts (for a reader that reads a line again,
    ``codex_events``): line ``n`` is the bytes from ``start(n)`` to ``stop(n)``, the offset
    of the newline that ends it. The offsets are the file's, or, for an input that cannot
    be read again (``hold``), those in the held lines (``held``): the complete lines read,
    one after another (neither a line past the cap nor leading blank lines held whole)."""

    def __init__(self, offset: int = 0, *, hold: bool = False) -> None:
        """``offset``: the first line's in the file (the size of a leading byte order
        mark; not counted when holding)."""
        self.starts = array("q")
        """The offset of each line's first byte, line 1 first."""
        self._offset = 0 if hold else offset
        """The offset of the line after the last one read."""
        self._held: list[bytes] | None = [] if hold else None

    def read(self, piece: Piece, leading: LeadingBlanks) -> None:
        """Take the offsets of a piece's complete lines (in the file: the bytes of its first
        line cut short, and of leading blank lines given back shortened, counted)."""
        starts = list(accumulate(map(add, map(len, piece.lines), repeat(1)),
                                 initial=self._offset))
        cut = piece.cut + leading.lost
        leading.lost = 0  # counted once
        if self._held is not None:
            if piece.lines:
                self._held.extend((b"\n".join(piece.lines), b"\n"))
        elif cut:
            starts[1:] = [start + cut for start in starts[1:]]
        self._offset = starts.pop()
        self.starts.extend(starts)

    def last(self, line: bytes) -> None:
        """Take the offset of the file's last line, ``line``, which no newline ends (its
        stop is the file's end)."""
        self.starts.append(self._offset)
        if self._held is not None:
            self._held.extend((line, b"\n"))
        self._offset += len(line) + 1

    def resume_at(self, line: int) -> int:
        """Forget the lines from ``line`` on (they are to be read again); return the offset
        of its first byte (not when holding)."""
        assert self._held is None
        if line <= len(self.starts):
            self._offset = self.starts[line - 1]
            del self.starts[line - 1:]
        return self._offset

    def held(self) -> bytes:
        """Return the lines held (``hold``)."""
        assert self._held is not None
        return b"".join(self._held)

    def records(self, source: LineSource, lines: list[int]) -> dict[int, dict[str, Any]]:
        """Return the record of each of ``lines`` (ascending), read again from ``source``
        (``reread.lines_again``: a line no longer where it was read is a
        ``LedgerChangedError``)."""
        records = lines_again(source, [self.start(line) for line in lines],
                              [self.stop(line) for line in lines], lambda at: f"line {lines[at]}")
        return dict(zip(lines, records, strict=True))

    def start(self, line: int) -> int:
        """Return the offset of line ``line``'s first byte."""
        return self.starts[line - 1]

    def stop(self, line: int) -> int:
        """Return the offset of the newline ending line ``line`` (the file's end for a
        last line without one)."""
        starts = self.starts
        return (starts[line] if line < len(starts) else self._offset) - 1


class RowDerivation:
    """What every typed route's events are re-derived from besides its records: the
    session's table, its file's lines (``source``, read again at ``starts``) and the
    tool/results that name their dispatch (``results``: their rows, ascending, and the
    dispatch's seq). A format's subclass maps the events its records carry."""

    def __init__(self, table: EventTable, source: LineSource, starts: LineStarts,
                 results: tuple[array, array]) -> None:
        self.table = table
        self.source = source
        self.starts = starts
        self.results = results

    def started(self, row: int) -> tuple[str, Event]:
        """Return row ``row``'s type and its event (``data`` still None)."""
        table = self.table
        kind = table.type_names[table.type_code[row]]
        time = table.time[row]
        return kind, {"type": kind, "seq": row, "time": None if time == MISSING else time,
                      "data": None}

    def row_data(self, kind: str, row: int) -> dict[str, Any] | None:
        """Return the data of a turn's or step's boundary or of a tool/call, made of the
        row's columns alone; None for an event of any other type."""
        table = self.table
        turn = table.turn[row]
        if kind == "turn/start":
            return {"turn": turn}
        if kind in ("step/start", "step/end"):
            return {"turn": turn, "step": table.step[row]}
        if kind == "turn/end":
            return {"turn": turn, "reason": {"kind": table.end_reason[row]}}
        if kind == "tool/call":
            call_id, name, arguments = table.calls.values_at(row)
            return {"turn": turn, "step": table.step[row], "callId": call_id, "name": name,
                    "arguments": arguments}
        return None

    def completed(self, kind: str, row: int, event: Event, *, appended: bool) -> Event:
        """Return ``event`` with its surface op (``appended``) and, for a tool/result that
        names its dispatch, that dispatch's seq."""
        if appended:
            event["surfaceOp"] = "append"
        if kind == "tool/result":
            rows, seqs = self.results
            found = bisect_left(rows, row)
            if found < len(rows) and rows[found] == row:
                event["sourceEventSeqs"] = [seqs[found]]
        return event


def no_final_newline(log: DiagnosticSink, line: int) -> None:
    """Record that the file's last line, ``line``, is a whole record no newline ends: read
    (an info), as the tool that wrote it reads it; only a last line that is no JSON is a
    torn append. (The dsh runtime drops such a line: its reader says ``torn_tail``.)"""
    log.add(line, "no_final_newline", "last line has no newline but is a whole record: read, "
            "as the tool that wrote it reads it", "info")


def line_too_long(log: DiagnosticLog, line: int, size: int, max_line: int) -> None:
    """Record line ``line`` as longer than ``max_line`` code units (``reader.Piece.too_long``,
    its start only held): an error, the line skipped."""
    log.add(line, "line_too_long", f"line is {size:,} bytes, longer than the "
            f"{max_line:,} UTF-16 code units read as one line: skipped, not read")


def quote(line: bytes) -> str:
    """Return the start of a line for a diagnostic."""
    text = line[:QUOTE_BYTES].decode("utf-8", "replace")
    return repr(text + ("…" if len(line) > QUOTE_BYTES else ""))


def epoch_ms(value: Any) -> int | None:
    """Return an ISO 8601 timestamp (``Z`` or an offset; naive is UTC) as epoch ms, or None
    (whole milliseconds, rounded down, in integer arithmetic)."""
    if value.__class__ is not str:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (moment - (_NAIVE_EPOCH if moment.tzinfo is None else _EPOCH)) // _MILLISECOND


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAIVE_EPOCH = datetime(1970, 1, 1)
_MILLISECOND = timedelta(milliseconds=1)


def as_dict(value: Any) -> dict[str, Any]:
    """Return ``value`` if it is a dict, else an empty one (a wrong-shaped field)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """Return ``value`` if it is a list, else an empty one (a wrong-shaped field)."""
    return value if isinstance(value, list) else []


def as_text(value: Any) -> str:
    """Return ``value`` as text: a string as is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json_text(value)


def string_field(value: dict[str, Any], key: str, line: int, log: DiagnosticSink) -> str | None:
    """Return ``value[key]`` when it is a string; a present non-string, non-null value is
    a ``wrong_shape`` warning and reads as absent (a model name of another type would
    otherwise reach the frames' categories)."""
    found = value.get(key)
    if found is None or isinstance(found, str):
        return found
    log.add(line, "wrong_shape", f"'{key}' is {json_type(found)}, not a string: ignored",
            "warning")
    return None


def not_an_object(log: DiagnosticSink, line: int, value: Any) -> None:
    """Diagnose a line whose JSON ``value`` is no object (no record: it is skipped)."""
    log.add(line, "not_an_object", f"line is a JSON {json_type(value)}, not an object: skipped")


def text_block(text: str) -> dict[str, Any]:
    """Return a dsh text content block."""
    return {"type": "text", "text": text}


def unknown_kind(log: DiagnosticLog, line: int, format: str, kind: str) -> None:
    """Diagnose a record of a kind the reader does not know (kept as a log-only event)."""
    log.add(line, "unknown_record",
            f"unknown {format} record {kind[:80]!r}: kept as a log-only event", "warning")


def unnamed_kind(log: DiagnosticLog, line: int, record: str) -> None:
    """Diagnose a record that no usable name tells the kind of (``record`` says what it is
    and why, as in "codex message whose 'role' is missing"): kept as a log-only event, like
    a record of an unknown kind."""
    log.add(line, "unknown_record", f"{record}: kept as a log-only event", "warning")


def no_name_problem(value: dict[str, Any], key: str) -> str | None:
    """Return why ``value[key]``, a field that names a kind, names none (it is missing, an
    empty string or no string), or None when it is a name."""
    if key not in value:
        return f"{key!r} is missing"
    named = value[key]
    if named.__class__ is str:
        return f"{key!r} is an empty string" if named == "" else None
    return f"{key!r} is {json_type(named)}, not a string"


def bad_record(log: DiagnosticLog, line: int, kind: str, error: Exception) -> None:
    """Diagnose a record of ``kind`` whose mapping failed on a shape no rule foresaw (it is
    kept as a log-only event)."""
    log.add(line, "bad_record", f"{kind[:80]} record of an unexpected shape "
            f"({type(error).__name__}): kept as a log-only event")


def new_event(kind: str, seq: int, time: int | None, data: Any, op: Any = None,
              sources: list[int] | None = None) -> Event:
    """Return a dsh event (``surfaceOp`` ``op`` and ``sourceEventSeqs`` ``sources`` where
    given)."""
    event: Event = {"type": kind, "seq": seq, "time": time, "data": data}
    if op is not None:
        event["surfaceOp"] = op
    if sources:
        event["sourceEventSeqs"] = sources
    return event


def result_data(format: str, call_id: str, text: str, turn: int, step: int, *,
                is_error: bool = False, code: str | None = None) -> dict[str, Any]:
    """Return the data of a tool/result of ``format`` for ``call_id`` (see
    ``EventWriter.tool_result``)."""
    message: dict[str, Any] = {
        "id": f"{format}-result-{call_id}", "role": "tool",
        "source": {"kind": "tool", "callId": call_id}, "toolCallId": call_id,
        "content": [text_block(text)],
    }
    if is_error or code is not None:
        message["isError"] = True
    data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
    if code is not None:
        name = {NOT_STARTED_CODE: "ToolNotStartedError",
                UNKNOWN_CODE: "ToolOutcomeUnknownError"}.get(code, "ToolError")
        data["error"] = {"name": name, "code": code}
    return data


class EventWriter(OpenTurns):
    """Writes one session's dsh events: seqs dense from 0, each event's source line, the
    open turn and step, and the model-visible surface (for rewinds and replacements).

    Log-only events of the foreign format are named ``<format>/<kind>`` and carry the
    record as it was decoded.
    """

    unmarked = UNMARKED

    def __init__(self, format: str) -> None:
        super().__init__()
        self.format = format
        self.log_prefix = f"{format}/"
        """How the name of a log-only event begins."""
        self.events: list[Event] = []
        """The events written: None where ``store`` sealed them."""
        self.lines: list[int] = []
        self.store = EventStore(self.events, self.lines)
        self.time: int | None = None
        """The time of the line being read (the last one that had a time)."""
        self.surface: list[int] = []
        """Seqs on the model-visible surface, in order (rewound ones removed)."""
        self.prompts: list[int] = []
        """Seqs of the typed prompts still on the surface, in order."""
        self.calls: dict[str, tuple[int, int, int]] = {}
        """Each requested call's turn, step and the seq of the message that requested it."""
        self.dispatched: dict[str, int] = {}
        """The seq of each call's tool/call."""
        self.call_reasons: dict[str, StatusReason] = {}
        self.answered: set[str] = set()
        """The calls a tool/result answers."""
        self.rewound: dict[int, StatusReason] = {}
        """Why each seq a rewind took off the surface went."""

    def add(self, kind: str, data: Any, line: int, *, op: Any = None,
            sources: list[int] | None = None) -> Event:
        """Append one event and return it."""
        seq = len(self.events)
        event = new_event(kind, seq, self.time, data, op, sources)
        if op == "append":
            self.surface.append(seq)
        self.events.append(event)
        self.lines.append(line)
        return event

    def wrote(self, log: DiagnosticLog, line: int, kind: str, write: Callable[..., Any],
              *arguments: Any) -> bool:
        """Run ``write(*arguments)``, the mapping of one record of ``kind`` on ``line``, and
        return whether it wrote an event (if not, the caller keeps the record as a log-only
        event). A record of a shape no rule foresaw is diagnosed (``bad_record``), never a
        traceback."""
        before = len(self.events)
        try:
            write(*arguments)
        except LedgerError:
            raise
        except Exception as error:
            bad_record(log, line, kind, error)
        return len(self.events) > before

    def log_only(self, kind: str, record: Any, line: int) -> Event:
        """Append a log-only event holding a record of the foreign format."""
        return self.add(self.log_prefix + kind, record, line)

    def boundary(self, kind: str, line: int, reason: Any = None) -> None:
        """Append a turn's or step's boundary event (a turn's end with a copy of its
        ``reason``)."""
        if kind == "turn/start":
            self.add(kind, {"turn": self.turn}, line)
        elif kind == "turn/end":
            self.add(kind, {"turn": self.turn, "reason": dict(reason)}, line)
        else:
            self.add(kind, {"turn": self.turn, "step": self.step}, line)

    def user_message(self, message_id: str, content: list[dict[str, Any]], source_kind: str,
                     line: int) -> Event:
        """Append a user/message on the surface; a typed one (``source_kind`` ``user``) is a
        prompt a rollback or rewind can take back."""
        message = {"id": message_id, "role": "user", "content": content,
                   "source": {"kind": source_kind}}
        event = self.add("user/message", message, line, op="append")
        if source_kind == "user":
            self.prompts.append(event["seq"])
        return event

    def assistant(self, message_id: str, source: dict[str, Any], line: int) -> Event:
        """Append an assistant/message with no content yet, opening a step for it."""
        self.open_step(line)
        message = {"id": message_id, "role": "assistant", "content": [], "source": source}
        data = {"turn": self.turn, "step": self.step, "message": message}
        return self.add("assistant/message", data, line, op="append")

    def tool_call(self, message: Event, call_id: str, name: str, arguments: str, line: int,
                  *, dispatched: bool = True) -> None:
        """Add a tool-call block to an assistant/message and, when ``dispatched``, the
        tool/call that says it was started."""
        data = message["data"]
        data["message"]["content"].append(
            {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments})
        self.calls[call_id] = (data["turn"], data["step"], message["seq"])
        if dispatched:
            self.dispatched[call_id] = len(self.events)
            self.add("tool/call", {"turn": data["turn"], "step": data["step"], "callId": call_id,
                                   "name": name, "arguments": arguments}, line)

    def tool_result(self, call_id: str, text: str, line: int, *, is_error: bool = False,
                    code: str | None = None, reason: StatusReason | None = None) -> Event:
        """Append a tool/result (v4 tool-role message) for ``call_id``.

        ``code`` ``TOOL_NOT_STARTED`` or ``TOOL_OUTCOME_UNKNOWN`` says what the record
        proves about a call that did not finish; ``reason`` is why, for ``call_reasons``.
        """
        requested = self.calls.get(call_id)
        turn, step = (self.turn, self.step) if requested is None else requested[:2]
        data = result_data(self.format, call_id, text, turn, step, is_error=is_error, code=code)
        if reason is not None:
            self.call_reasons[call_id] = reason
        self.answered.add(call_id)
        dispatch = self.dispatched.get(call_id)
        return self.add("tool/result", data, line, op="append",
                        sources=None if dispatch is None else [dispatch])

    def rewind(self, first: int, line: int, reason: StatusReason) -> None:
        """Take the surface back from seq ``first`` on (a rollback or a rewind) with a
        ``surface/rewind`` event (none when ``first`` is not on it). Calls requested by the
        hidden messages get ``reason`` unless they are answered by the end."""
        if first not in self.surface:
            return
        hidden = self.surface[self.surface.index(first):]
        self.rewound.update((seq, reason) for seq in hidden)
        del self.surface[len(self.surface) - len(hidden):]
        gone = set(hidden)
        self.prompts = [seq for seq in self.prompts if seq not in gone]
        self.add("surface/rewind", {"start": hidden[0], "end": hidden[-1],
                                    "shadowedSeqs": hidden}, line)

    def replace_surface(self, message: dict[str, Any], line: int) -> Event:
        """Append a user/message that replaces the whole surface (a compaction)."""
        if not self.surface:
            event = self.add("user/message", message, line, op="append")
        else:
            shadowed = list(self.surface)
            op = {"op": "replace", "startSeq": shadowed[0], "endSeq": shadowed[-1]}
            event = self.add("user/message", message, line, op=op, sources=shadowed)
            self.surface = [event["seq"]]
        self.prompts = []
        return event

    def seed_end(self, inherited: int, line: int) -> None:
        """Mark the first ``inherited`` events as copied from the parent: insert the dsh
        ``session/end-seed {inherited: true}`` at seq ``inherited`` (its line: ``line``) and
        move every later seq, and every seq an event names, one on."""
        self.store.unsealed()
        for event in self.events[inherited:]:
            event["seq"] += 1
        self._renumber(lambda seq: seq + 1 if seq >= inherited else seq)
        time = self.events[inherited - 1]["time"] if inherited else self.time
        marker = {"type": "session/end-seed", "seq": inherited, "time": time,
                  "data": {"inherited": True}}
        self.events.insert(inherited, marker)
        self.lines.insert(inherited, line)

    def undispatch(self, call_ids: Iterable[str]) -> None:
        """Remove the tool/call of each of ``call_ids`` (calls a later record proves never
        ran, such as a rejection), moving every later seq, and every seq an event names,
        back; the results of those calls no longer name a dispatch."""
        gone = sorted(self.dispatched.pop(call) for call in set(call_ids)
                      if call in self.dispatched)
        if not gone:
            return
        dropped = set(gone)
        kept = [i for i in range(len(self.events)) if i not in dropped]
        self.store.unsealed()
        self.events[:] = [self.events[i] for i in kept]
        self.lines[:] = [self.lines[i] for i in kept]
        for seq, event in enumerate(self.events):
            event["seq"] = seq
        self._renumber(lambda seq: None if seq in dropped else seq - bisect_left(gone, seq))

    def _renumber(self, moved: Callable[[int], int | None]) -> None:
        """Apply ``moved`` (None: the event is gone) to every seq the events and the
        writer's state name (the events' own seqs are the caller's)."""

        def new(seq: Any) -> Any:
            return moved(seq) if type(seq) is int else seq

        for event in self.events:
            if "sourceEventSeqs" in event:
                sources = [s for s in map(new, event["sourceEventSeqs"]) if s is not None]
                if sources:
                    event["sourceEventSeqs"] = sources
                else:
                    del event["sourceEventSeqs"]
            op = event.get("surfaceOp")
            if isinstance(op, dict):
                op["startSeq"], op["endSeq"] = new(op["startSeq"]), new(op["endSeq"])
            if event["type"] == "surface/rewind":
                data = event["data"]
                data["start"], data["end"] = new(data["start"]), new(data["end"])
                data["shadowedSeqs"] = [new(seq) for seq in data["shadowedSeqs"]]
        self.surface = [new(seq) for seq in self.surface]
        self.prompts = [new(seq) for seq in self.prompts]
        self.rewound = {new(seq): why for seq, why in self.rewound.items()}
        self.calls = {call: (turn, step, new(seq)) for call, (turn, step, seq)
                      in self.calls.items()}
        self.dispatched = {call: new(seq) for call, seq in self.dispatched.items()}

    def explain_unanswered(self, reason_of: Callable[[str, int], StatusReason]) -> None:
        """Give every requested call without a tool/result a reason: the rewind's that took
        its message back, else ``reason_of(call id, turn)``."""
        for call_id, (turn, _, message) in self.calls.items():
            if call_id not in self.answered and call_id not in self.call_reasons:
                self.call_reasons[call_id] = self.rewound.get(message) or reason_of(call_id, turn)


def session_log(path: str, format: str, header: dict[str, Any], writer: EventWriter,
                records: Records, log: DiagnosticLog) -> SessionLog:
    """Return the ``SessionLog`` of a foreign transcript (key: the header id, else the stem)."""
    key = session_key(path, header)
    events, lines, table = writer.store.finished()
    return SessionLog(path, key, header, FOREIGN_VERSION, events, log.finish(),
                      records.skipped, lines, format=format, call_reasons=writer.call_reasons,
                      table=table)


def session_key(path: str, header: dict[str, Any]) -> str:
    """Return the key of a foreign session: its header's id, else the file's stem (then
    written into the header as its id)."""
    key = header.get("id")
    if not isinstance(key, str) or not key:
        key = valid_unicode(Path(path).stem)
        header["id"] = key
    return key


def dsh_header(session_id: Any, created_at: int | None, **lineage: Any) -> dict[str, Any]:
    """Return a dsh v4 header for a foreign session (lineage keys given only when set)."""
    header: dict[str, Any] = {"type": "session", "version": FOREIGN_VERSION,
                              "id": session_id if isinstance(session_id, str) else None,
                              "createdAt": created_at, "isSeeded": False}
    header.update({key: value for key, value in lineage.items() if value not in (None, False)})
    return header
