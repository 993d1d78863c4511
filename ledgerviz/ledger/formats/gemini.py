"""Gemini CLI chats (``~/.gemini/tmp/<project>/chats/session-*.jsonl``) read into the dsh
event model (``FOREIGN_FORMATS.md`` §3, §4, §5).

Records, tested in this order: ``{"$rewindTo": id}`` takes that message and every later
one back (an unknown id: all of them) as a ``surface/rewind``; a message (a string ``id``)
is upserted, a repeated id replacing the earlier copy in place, so each message is written
once, where it first came, as its last copy; ``{"$set": {...}}`` merges metadata, and a
non-empty ``$set.messages`` replaces the list replayed so far; the header is
``{sessionId, projectHash, startTime, lastUpdated, kind?}``. A ``user`` message starts a
turn, a ``gemini`` message is a step with its ``toolCalls`` (written once they are
complete, so a turn ends, completed, at the next prompt or the end of the file), and
``info``, ``warning`` and ``error`` messages are log-only. A legacy ``session-*.json`` (one object
holding ``messages``) is read the same way.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import orjson

from ledgerviz.ledger.diagnostics import DiagnosticLog
from ledgerviz.ledger.formats import Chunk, Format, ReadOptions
from ledgerviz.ledger.formats.codex_columns import GiveUp, first_chunk_taken, typed_lines
from ledgerviz.ledger.formats.foreign import (
    AT_END,
    BOM_WARNING,
    COMPLETED,
    FOREIGN_VERSION,
    ROLLED_BACK,
    EventWriter,
    LineStarts,
    Records,
    as_dict,
    as_list,
    as_text,
    dsh_header,
    epoch_ms,
    no_name_problem,
    quote,
    session_key,
    session_log,
    string_field,
    unknown_kind,
    unnamed_kind,
)
from ledgerviz.ledger.formats.gemini_columns import ColumnChat
from ledgerviz.ledger.formats.gemini_events import Derivation
from ledgerviz.ledger.formats.gemini_records import (
    LOG_ONLY_TYPES,
    content_blocks,
    outcome_of,
    ran,
    reply_blocks,
    requested_calls,
    usage_of,
)
from ledgerviz.ledger.formats.sealed import DerivedEvents
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.reader import READ_BYTES, opened_chunks
from ledgerviz.ledger.reread import LineSource
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.shapes import json_type
from ledgerviz.ledger.tabled import TableRows

FORMAT_NAME = "gemini"
MESSAGE_TYPES = LOG_ONLY_TYPES | {"user", "gemini"}
"""The ``type`` of a chat's messages gemini-cli writes."""
HEADER = re.compile(rb'"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"\s*:')


def sniff(head: bytes) -> bool:
    """Return whether ``head`` starts a Gemini CLI chat: its first line (or, in a legacy
    ``.json``, its object) opens with ``sessionId`` and ``projectHash``, or is a chat's
    record (a message, ``$rewindTo`` or ``$set``: a chat whose header line is lost)."""
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if _one_object(start[:4096]):
        return HEADER.search(start[:4096]) is not None
    first = start.split(b"\n", 1)[0]
    return first.startswith(b"{") and (HEADER.search(first[:4096]) is not None
                                       or _chat_record(first))


def _chat_record(line: bytes) -> bool:
    """Whether ``line`` is a record only a Gemini CLI chat holds: a message (a string
    ``id``, a ``type`` of gemini-cli's, a ``timestamp``; no Claude Code ``uuid``), a
    ``$rewindTo`` or a ``$set``."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    if record.__class__ is not dict:
        return False
    if record.get("$rewindTo").__class__ is str or record.get("$set").__class__ is dict:
        return True
    kind = record.get("type")
    return (record.get("id").__class__ is str and "timestamp" in record and "uuid" not in record
            and kind.__class__ is str and kind in MESSAGE_TYPES)


def _one_object(head: bytes) -> bool:
    """Whether a file opens a legacy one-object chat (pretty-printed: ``{`` on a line)."""
    return head.lstrip().split(b"\n", 1)[0].strip() == b"{"


def read(path: str, chunks: Iterable[Chunk], options: ReadOptions) -> SessionLog:
    """Return the session of one Gemini CLI chat given as its chunks: a plain file the typed
    route (``gemini_columns``) when every line has the common shapes, else (and any other
    input) the dict route (``_Chat``)."""
    chunks = iter(chunks)
    if options.origin is not None:
        first = next(chunks, b"")
        chunks = chain([first], chunks)
        if first_chunk_taken(first):
            return _typed_session(path, chunks, options)
    return _dict_session(path, chunks, options)


def _typed_session(path: str, chunks: Iterator[Chunk], options: ReadOptions) -> SessionLog:
    """Return the session of a chat read the typed route; when it gives up, the dict route
    reads the file again from its start (checked to be the file read)."""
    assert options.origin is not None
    rows = TableRows(path, options.origin)
    sized = _Sized(chunks)
    kept = rows.kept(sized)
    starts = LineStarts()
    chat = ColumnChat()
    try:
        with paused_gc():  # the rows' many small objects would set the collector off
            chat.read(typed_lines(kept, starts, options.max_line))
            table = chat.finish()
    except GiveUp:
        deque(kept, 0)  # read to its end: the file it was is known
        return _dict_session(path, _bytes_again(rows.source(), sized.size), options)
    header = _header(chat.metadata, path)
    events = DerivedEvents(Derivation(table, rows.source(), starts, chat.copies, chat.results),
                           len(table))
    return SessionLog(path, session_key(path, header), header, FOREIGN_VERSION, events,
                      DiagnosticLog(path, strict=options.strict).finish(), 0, table.line,
                      format=FORMAT_NAME, call_reasons=chat.call_reasons(), table=table)


class _Sized:
    """A file's chunks, counting the bytes taken."""

    def __init__(self, chunks: Iterator[Chunk]) -> None:
        self.chunks = chunks
        self.size = 0

    def __iter__(self) -> Iterator[Chunk]:
        for chunk in self.chunks:
            self.size += len(chunk)  # type: ignore[arg-type]  # a plain file's: bytes
            yield chunk


def _bytes_again(source: LineSource, size: int) -> Iterator[bytes]:
    """Yield the first ``size`` bytes of the file ``source`` reads again (each block checked
    to come from the file read), a block at a time."""
    for start in range(0, size, READ_BYTES):
        yield from source.read([(start, min(start + READ_BYTES, size))])


def _dict_session(path: str, chunks: Iterator[Chunk], options: ReadOptions) -> SessionLog:
    """Return the session of a chat read the dict route (``_Chat``)."""
    log = DiagnosticLog(path, strict=options.strict)
    records = Records(log, options.max_line)
    chat = _Chat(log, path)
    data = opened_chunks(chunks, log, BOM_WARNING)
    with paused_gc():  # millions of acyclic dicts: no collection pass may walk them
        _replay(chat, data, log, records)
    return session_log(path, FORMAT_NAME, chat.header(), chat.writer, records, log)


def _replay(chat: _Chat, data: Iterator[bytes] | None, log: DiagnosticLog,
            records: Records) -> None:
    """Replay a chat's records, a legacy single-object chat as its one record."""
    if data is not None:
        first = _first_line(data)
        if _one_object(first):
            chat.replay(_legacy_records(chain([first], data), log, records))
        else:
            chat.replay(records.read(chain([first], data)))


def _first_line(data: Iterator[bytes]) -> bytes:
    """Return the chunks of ``data`` up to the one that ends the first line that is not
    blank (all of them if none does), joined: enough to tell a legacy chat from JSONL
    however the file was cut into chunks."""
    held: list[bytes] = []
    for chunk in data:
        held.append(chunk)
        if b"\n" in chunk and b"\n" in b"".join(held).lstrip():
            break
    return b"".join(held)


def _legacy_records(data: Iterator[bytes], log: DiagnosticLog,
                    records: Records) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield a legacy single-object chat (``session-*.json``) as its one record."""
    text = b"".join(data)
    try:
        whole = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        records.skipped = text.count(b"\n") + 1
        log.add(1, "invalid_json", f"a legacy chat (.json) that is no JSON ({error}): "
                f"{quote(text)}")
        return
    if isinstance(whole, dict):
        yield 1, whole


def _unpacked(records: Iterable[tuple[int, dict[str, Any]]]
              ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield the records, a header that holds ``messages`` (a legacy chat) as the header
    without them and then each message, on the header's line."""
    for line, record in records:
        messages = record.get("messages") if "sessionId" in record else None
        if not isinstance(messages, list):
            yield line, record
            continue
        yield line, {key: value for key, value in record.items() if key != "messages"}
        for message in messages:
            if isinstance(message, dict):
                yield line, message


class _Instance:
    """One message while it is in the replayed list: its last copy, that copy's line, and
    the seq of its first event on the surface (None until written, or when it has none)."""

    __slots__ = ("line", "record", "surface_seq")

    def __init__(self, record: dict[str, Any], line: int) -> None:
        self.record = record
        self.line = line
        self.surface_seq: int | None = None


class _Chat:
    """The state of reading one chat: its records replayed, then written as events."""

    def __init__(self, log: DiagnosticLog, path: str) -> None:
        self.log = log
        self.path = path
        self.writer = EventWriter(FORMAT_NAME)
        self.metadata: dict[str, Any] = {}
        self.started = False

    def replay(self, records: Iterable[tuple[int, dict[str, Any]]]) -> None:
        """Read every record, then write the events (a message as its last copy, where it
        first came)."""
        steps: list[tuple[int, str, Any]] = []
        live: dict[str, _Instance] = {}
        replaced_at: int | None = None
        for line, record in _unpacked(records):
            if isinstance(record.get("$rewindTo"), str):
                target = record["$rewindTo"]
                ids = list(live)
                cut = ids.index(target) if target in live else 0
                steps.append((line, "rewind", [live.pop(i) for i in ids[cut:]]))
            elif isinstance(record.get("id"), str):
                if replaced_at is not None:
                    self.log.add(line, "ignored_by_gemini", f"message after the $set.messages "
                                 f"of line {replaced_at}: gemini-cli would not load it",
                                 "warning")
                held = live.get(record["id"])
                if held is None:
                    live[record["id"]] = held = _Instance(record, line)
                    steps.append((line, "message", held))
                else:
                    held.record, held.line = record, line
                    steps.append((line, "update", record))
            elif isinstance(record.get("$set"), dict):
                update = record["$set"]
                messages = [m for m in as_list(update.get("messages")) if isinstance(m, dict)]
                self.metadata.update({k: v for k, v in update.items() if k != "messages"})
                if messages:
                    replaced_at = line
                    gone = list(live.values())
                    live = {as_text(m.get("id")): _Instance(m, line) for m in messages}
                    steps.append((line, "set", (gone, list(live.values()))))
                else:
                    steps.append((line, "metadata", update))
            elif "sessionId" in record and "projectHash" in record and not self.started:
                self.metadata.update(record)
                self.started = True
                steps.append((line, "session", record))
            else:
                steps.append((line, "unknown", record))
        del live  # every record is in ``steps`` now: each goes once written
        store, events = self.writer.store, self.writer.events
        for index, (line, kind, value) in enumerate(steps):
            steps[index] = None  # type: ignore[call-overload]
            self._write(line, kind, value)
            store.seal_before(len(events))  # an event is not changed once its step is written
        self._finish()

    def _write(self, line: int, kind: str, value: Any) -> None:
        """Write the events of one replayed step (every line leaves at least one)."""
        if not self.writer.wrote(self.log, line, kind, self._apply, line, kind, value):
            self.writer.log_only(kind, _kept(kind, value), line)

    def _apply(self, line: int, kind: str, value: Any) -> None:
        """Map one replayed step (see ``replay``) to events."""
        if kind == "message":
            self._message(value, line)
        elif kind == "rewind":
            self._rewind(value, line, ROLLED_BACK)
        elif kind == "set":
            gone, instances = value
            self._rewind(gone, line, ROLLED_BACK)
            for instance in instances:
                self._message(instance, line)
        elif kind == "unknown":
            unnamed_kind(self.log, line, self._kindless(value))

    @staticmethod
    def _kindless(record: dict[str, Any]) -> str:
        """Say what ``record``, of no kind the reader knows, is and why: a field that tells a
        kind is of a wrong type, a message has no id, a header comes again, or no field tells
        its kind (its ``type`` missing or no name)."""
        for key, shape in (("id", "a string"), ("$rewindTo", "a string"), ("$set", "an object")):
            if key in record:
                found = json_type(record[key])
                return f"{FORMAT_NAME} record whose {key!r} is {found}, not {shape}"
        problem = no_name_problem(record, "type")
        if problem is None:
            return f"{FORMAT_NAME} {record['type'][:40]!r} message whose 'id' is missing"
        if "sessionId" in record and "projectHash" in record:
            return f"{FORMAT_NAME} session header after the first"
        return f"{FORMAT_NAME} record whose {problem}"

    def _rewind(self, instances: list[_Instance], line: int, reason: str) -> None:
        first = next((i.surface_seq for i in instances if i.surface_seq is not None), None)
        if first is not None:
            self.writer.rewind(first, line, reason)

    def _message(self, instance: _Instance, line: int) -> None:
        writer = self.writer
        record = instance.record
        time = epoch_ms(record.get("timestamp"))
        if time is not None:
            writer.time = time
        kind = record.get("type")
        message_id = as_text(record.get("id"))
        if kind == "user":
            writer.open_turn(line, COMPLETED)
            event = writer.user_message(message_id, content_blocks(record.get("content")), "user",
                                        line)
            instance.surface_seq = event["seq"]
        elif kind == "gemini":
            self._reply(instance, message_id, line)
        elif kind in LOG_ONLY_TYPES:
            writer.log_only(kind, record, line)
        else:
            unknown_kind(self.log, line, FORMAT_NAME, f"message type {as_text(kind)}")

    def _reply(self, instance: _Instance, message_id: str, line: int) -> None:
        """Write a ``gemini`` message as one step: the reply, then each call's outcome."""
        writer = self.writer
        record = instance.record
        source = {"kind": "model", "provider": "google",
                  "model": string_field(record, "model", instance.line, self.log)}
        event = writer.assistant(message_id, source, line)
        instance.surface_seq = event["seq"]
        data = event["data"]
        data["message"]["content"].extend(reply_blocks(record.get("thoughts"),
                                                        record.get("content")))
        usage = usage_of(as_dict(record.get("tokens")))
        if usage:
            data["usage"] = usage
        calls = requested_calls(record.get("toolCalls"), message_id)
        for call, call_id in calls:
            writer.tool_call(event, call_id, as_text(call.get("name")),
                             as_text(call.get("args")), line, dispatched=ran(call))
        for call, call_id in calls:
            self._outcome(call, call_id, line)
        writer.close_step(line)

    def _outcome(self, call: dict[str, Any], call_id: str, line: int) -> None:
        """Write what a call's status proves (FOREIGN_FORMATS §4)."""
        text, result, unknown = outcome_of(call)
        if result is not None:
            is_error, code, reason = result
            self.writer.tool_result(call_id, text, line, is_error=is_error, code=code,
                                    reason=reason)
        elif unknown:
            self.log.add(line, "unknown_status", f"call {call_id[:80]!r} has status "
                         f"{as_text(call.get('status'))[:40]!r}: its outcome is unknown",
                         "warning")

    def _finish(self) -> None:
        """End the last turn: calls are written once complete, so a chat shows no crash."""
        writer = self.writer
        writer.close_turn(COMPLETED, writer.lines[-1] if writer.lines else 1)
        writer.explain_unanswered(lambda call_id, turn: AT_END)

    def header(self) -> dict[str, Any]:
        """Return the dsh header (``_header``)."""
        return _header(self.metadata, self.path)


def _header(meta: dict[str, Any], path: str) -> dict[str, Any]:
    """Return the dsh header of a chat's merged metadata (a subagent's parent is the folder
    its file lies in, as gemini-cli lays them out: ``chats/<parent session id>/<session
    id>.jsonl``)."""
    subagent = meta.get("kind") == "subagent"
    folder = Path(path).parent
    parent = folder.name if subagent and folder.parent.name == "chats" else None
    return dsh_header(meta.get("sessionId"), epoch_ms(meta.get("startTime")),
                      parentSession=parent or None, origin="subagent" if subagent else None)


def _kept(kind: str, value: Any) -> dict[str, Any]:
    """Return what a log-only event keeps of a replayed step that wrote no other event."""
    if kind == "message":
        return value.record
    if kind == "rewind":
        return {"$rewindTo": [instance.record.get("id") for instance in value]}
    if kind == "set":
        return {"$set": "messages"}
    return value


FORMAT = Format(FORMAT_NAME, sniff, read, "Gemini CLI chat (~/.gemini/tmp/*/chats, JSONL)")
