"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) read into the dsh
event model (``FOREIGN_FORMATS.md`` §2, §4, §5).

Each line is ``{timestamp, type, payload}`` (legacy files: a bare ``{id, timestamp}`` first
line, then bare items and ``{"record_type": "state"}``; told apart line by line). Turns come
from ``task_started``/``task_complete``/``turn_aborted`` (and their ``turn_*`` aliases),
else from typed prompts (each ending the turn before it); a step is the model's output
items and the outputs of the calls they request; usage is each step's
``last_token_usage``. Echoes of prompts and replies in ``event_msg`` stay log-only, so
each is counted once. ``thread_rolled_back`` takes the last turns off the surface
(``surface/rewind``: an abandoned suffix), ``compacted`` replaces it. A fork's copy of its
parent is found against the parent's rollout (``codex_fork.py``). The events are not held:
once written they are tabled and re-derived on demand from the table and the rollout's
lines (``codex_events.py``). A plain file is read first by the typed route
(``codex_columns.py``), straight into the table's columns, and by this module's dict route
(``_Rollout``) from the first line the typed route does not take.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any, BinaryIO

import orjson

from ledgerviz.ledger.diagnostics import DiagnosticLog, LedgerError
from ledgerviz.ledger.formats import Chunk, Format, ReadOptions
from ledgerviz.ledger.formats.codex_columns import (
    ColumnRollout,
    ColumnRules,
    GiveUp,
    first_chunk_taken,
    typed_lines,
    unanswered_reason,
)
from ledgerviz.ledger.formats.codex_events import Derivation, DerivedStore, Rules
from ledgerviz.ledger.formats.codex_fork import copied_length, fingerprint, parent_file
from ledgerviz.ledger.formats.foreign import (
    BOM_WARNING,
    COMPLETED,
    FOREIGN_VERSION,
    INTERRUPTED,
    REJECTED,
    ROLLED_BACK,
    UNMARKED,
    EventWriter,
    LineStarts,
    Records,
    as_dict,
    as_list,
    as_text,
    bad_record,
    dsh_header,
    epoch_ms,
    no_name_problem,
    session_key,
    session_log,
    string_field,
    text_block,
    unknown_kind,
    unnamed_kind,
)
from ledgerviz.ledger.formats.sealed import DerivedEvents
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.reader import READ_BYTES, opened_chunks
from ledgerviz.ledger.reread import END_KEPT, LedgerChangedError, LineSource
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import (
    UTF8_BOM,
    UnreadableSourceError,
    open_identified,
    read_error_text,
)
from ledgerviz.ledger.table import USAGE_KEYS
from ledgerviz.ledger.tabled import TableRows
from ledgerviz.recovery.vocab import NOT_STARTED_CODE, SURFACE_OPS, UNKNOWN_CODE, StatusReason
from ledgerviz.wording import counted, one_or_many

FORMAT_NAME = "codex"
APPEND_OP = SURFACE_OPS.index("append")

RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output",
                          "local_shell_call_output"})
LOG_ONLY_ITEMS = frozenset({"ghost_snapshot", "compaction", "compaction_summary", "other"})
"""Response items that are neither a message, a call nor an output."""
SERVER_CALLS = frozenset({"web_search_call", "image_generation_call"})
"""Output items of tools the provider runs: no output ever follows them, so they are an
opaque block of the reply, not a call."""
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})

LOG_ONLY_EVENTS = frozenset({
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "agent_reasoning_section_break", "exec_command_begin", "exec_command_output_delta",
    "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin", "mcp_tool_call_end",
    "web_search_begin", "web_search_end", "context_compacted", "entered_review_mode",
    "exited_review_mode", "error", "warning", "stream_error", "turn_diff", "plan_update",
    "view_image_tool_call", "session_configured", "background_event", "item_started",
    "item_completed", "undo_started", "undo_completed", "shutdown_complete",
    "list_custom_prompts_response", "get_history_entry_response", "mcp_list_tools_response",
    "deprecation_notice", "raw_response_item",
})
"""``event_msg`` kinds kept as log-only events without a diagnostic."""

TURN_STARTS = frozenset({"task_started", "turn_started"})
TURN_ENDS = frozenset({"task_complete", "turn_complete"})

CONTEXT_PREFIXES = (
    ("<environment_context>", "runtime-context"),
    ("<user_instructions>", "agent-instructions"),
    ("# AGENTS.md instructions", "agent-instructions"),
    ("<INSTRUCTIONS>", "agent-instructions"),
    ("<turn_aborted>", "runtime-context"),
    ("<user_shell_command>", "runtime-context"),
)
"""User-role messages Codex writes itself, and the dsh source kind each is read as."""
_CONTEXT_STARTS = tuple(prefix for prefix, _ in CONTEXT_PREFIXES)

REFUSALS = ("exec command rejected by user", "patch rejected by user")
EXIT_CODE = re.compile(r"^(?:Exit code:|Process exited with code) (-?[0-9]+)", re.MULTILINE)
ENVELOPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                       "compacted"})
"""The ``type`` of a rollout line's ``{timestamp, type, payload}`` envelope."""
LEGACY_META = re.compile(rb'^\s*\{\s*"id"\s*:\s*"[^"]*"\s*,\s*"timestamp"\s*:')


def sniff(head: bytes) -> bool:
    """Return whether ``head`` starts a Codex rollout: a ``session_meta`` first line, any
    other ``{timestamp, type, payload}`` line of a rollout (one whose ``session_meta`` is
    lost), or a legacy ``{"id": …, "timestamp": …}`` one."""
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:  # cut by the sniff window: look at its start
        start = first[:2048]
        return (b'"type":"session_meta"' in start.replace(b" ", b"")
                or LEGACY_META.match(start) is not None)
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    if kind == "session_meta":
        return True
    if kind.__class__ is str and kind in ENVELOPES:
        return "timestamp" in record and record.get("payload").__class__ is dict
    return isinstance(record.get("id"), str) and "timestamp" in record and "type" not in record


def read(path: str, chunks: Iterable[Chunk], options: ReadOptions) -> SessionLog:
    """Return the session of one Codex rollout given as its chunks: a plain file the typed
    route (``codex_columns``) while its lines have the common shapes, the dict route
    (``_Rollout``) from the first line that has not (taking the typed route's state); any
    other input the dict route."""
    chunks = iter(chunks)
    if options.origin is not None:
        first = next(chunks, b"")
        chunks = chain([first], chunks)
        if first_chunk_taken(first):
            return _typed_session(path, _Taken(chunks), options)
    return _dict_session(path, chunks, options)


def _typed_session(path: str, taken: _Taken, options: ReadOptions) -> SessionLog:
    """Return the session of a rollout read the typed route, handed over to the dict route
    at the first line the typed route does not take."""
    log = DiagnosticLog(path, strict=options.strict)
    assert options.origin is not None
    rows = TableRows(path, options.origin)
    kept = rows.kept(taken)
    starts = LineStarts()
    typed = ColumnRollout(COLUMN_RULES)
    try:
        with paused_gc():  # the rows' many small objects would set the collector off
            typed.read(typed_lines(kept, starts, options.max_line))
            table = typed.table()
    except GiveUp as gave_up:
        return _handed_over(path, typed, gave_up.line, taken, kept, starts, rows, options)
    header = header_of(typed.meta, typed.meta_time, False)
    events = DerivedEvents(Derivation(table, rows.source(), starts, typed.parts, typed.held,
                                      typed.results, RULES), len(table))
    return SessionLog(path, session_key(path, header), header, FOREIGN_VERSION, events,
                      log.finish(), 0, table.line, format=FORMAT_NAME,
                      call_reasons=typed.call_reasons(), table=table)


class _Taken:
    """A file's chunks, counting the bytes taken and keeping the last ``END_KEPT`` (so that
    the lines read can be read again, checked to be the same)."""

    def __init__(self, chunks: Iterator[Chunk]) -> None:
        self.chunks = chunks
        self.size = 0
        self.end = b""

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            assert isinstance(chunk, bytes)  # only a first chunk may be a problem
            self.size += len(chunk)
            self.end = (chunk if len(chunk) >= END_KEPT else self.end + chunk)[-END_KEPT:]
            yield chunk


def _handed_over(path: str, typed: ColumnRollout, line: int, taken: _Taken,
                 kept: Iterator[bytes], starts: LineStarts, rows: TableRows,
                 options: ReadOptions) -> SessionLog:
    """Return the session of a rollout the typed route read up to line ``line``, read on
    from that line by the dict route with the typed route's state: the lines from it on
    are read again from the file opened anew (checked, once read to its end, to be the
    file whose first lines were read), then the chunks not taken yet."""
    origin = options.origin
    assert origin is not None
    try:
        raw, identity = open_identified(path)
    except OSError as error:
        raise UnreadableSourceError(f"{path}: {read_error_text(error)}") from error
    offset = starts.resume_at(line)
    reader = _Rollout(DiagnosticLog(path, strict=options.strict), starts, rows.source)
    reader.take_over(typed, LineSource(path, identity=identity, size=taken.size,
                                       end=taken.end))
    records = Records(reader.log, options.max_line, starts)
    with paused_gc():
        reader.read(records.read(chain(_read_again(path, raw, offset, taken.size), kept),
                                 line - 1))
        if origin.identity != identity:
            raise _changed(path)
        reader.find_copied_prefix(path)
        reader.finish()
    return session_log(path, FORMAT_NAME, reader.header(), reader.writer, records, reader.log)


def _read_again(path: str, raw: BinaryIO, start: int, stop: int) -> Iterator[bytes]:
    """Yield bytes ``start`` to ``stop`` of the file opened as ``raw`` (then closed)."""
    with raw:
        raw.seek(start)
        left = stop - start
        while left:
            chunk = raw.read(min(left, READ_BYTES))
            if not chunk:
                raise _changed(path)
            left -= len(chunk)
            yield chunk


def _changed(path: str) -> LedgerChangedError:
    return LedgerChangedError(f"{path}: the file changed while it was read; load it again")


def _dict_session(path: str, chunks: Iterator[Chunk], options: ReadOptions) -> SessionLog:
    """Return the session of a rollout read the dict route (``_Rollout``)."""
    log = DiagnosticLog(path, strict=options.strict)
    if options.origin is not None:  # a file: its lines are read again (checked to be it)
        rows = TableRows(path, options.origin)
        chunks = rows.kept(chunks)
    first = next(chunks, b"")
    bom = isinstance(first, bytes) and first.startswith(UTF8_BOM)
    data = opened_chunks(chain([first], chunks), log, BOM_WARNING)
    reread = options.origin is not None and data is not None  # else: the lines are held
    starts = LineStarts(len(UTF8_BOM) if bom else 0, hold=not reread)
    reader = _Rollout(log, starts, rows.source if reread
                      else (lambda: LineSource(path, starts.held())))
    records = Records(log, options.max_line, starts)
    with paused_gc():  # millions of acyclic dicts: no collection pass may walk them
        if data is not None:
            reader.read(records.read(data))
        reader.find_copied_prefix(path)
        reader.finish()
    return session_log(path, FORMAT_NAME, reader.header(), reader.writer, records, log)


class _Rollout:
    """The state of reading one rollout, line by line."""

    def __init__(self, log: DiagnosticLog, starts: LineStarts,
                 source: Callable[[], LineSource]) -> None:
        self.log = log
        self.writer = EventWriter(FORMAT_NAME)
        self.store = self.writer.store = DerivedStore(
            self.writer.events, self.writer.lines, starts, source, RULES)
        self.meta: dict[str, Any] | None = None
        self.meta_time: int | None = None
        self.copied_from: int | None = None
        """The line of the second ``session_meta``: a copied prefix opens there."""
        self.copied: list[tuple[int, int]] = []
        """The line and fingerprint of each record from ``copied_from`` on."""
        self.marked = False
        """Whether the file marks turns (``task_started``)."""
        self.model: Any = None
        self.message: dict[str, Any] | None = None
        """The assistant/message of the open step."""
        self.message_line = 0
        """The line that opened it."""
        self.answered = False
        """Whether a call output came since the open step's last output item (the next
        output item is then a new model call)."""
        self.last_message: dict[str, Any] | None = None
        self.last_message_line = 0
        self.results: dict[str, int] = {}
        """The seq of each call's output (an exit code may come after it)."""
        self.exit_codes: dict[str, int] = {}
        self.aborted: set[int] = set()
        """The turns ended by ``turn_aborted``."""

    def read(self, records: Iterable[tuple[int, dict[str, Any]]]) -> None:
        """Read the decoded lines (every line leaves at least one event)."""
        writer, log = self.writer, self.log
        events, add, prefix = writer.events, writer.add, writer.log_prefix
        seal_at = step = self.store.window
        for line, record in records:
            if len(events) >= seal_at:  # the events before the open step's no longer change
                self.store.seal_before(min(
                    (m["seq"] for m in (self.message, self.last_message) if m is not None),
                    default=len(events)))
                seal_at += step
            kind, payload = record.get("type"), record.get("payload")
            if kind.__class__ is not str or payload.__class__ is not dict:
                kind, payload = self._kind(record)
            if self.copied_from is not None or kind == "session_meta":
                self._note_copy(kind, line, record)
            time = epoch_ms(record.get("timestamp"))
            if time is not None:
                writer.time = time
            named = payload.get("type")  # what a wrapped line is: its payload's type
            inner = named if named.__class__ is str else as_text(named)
            if kind == "event_msg" and inner in LOG_ONLY_EVENTS:  # an echo, a note: log-only
                add(prefix + inner, payload, line)
                continue
            before = len(events)
            try:
                if kind == "response_item" or kind.startswith("item:"):
                    self._item(inner, payload, line)
                elif kind == "event_msg":
                    self._event(inner, payload, line)
                else:
                    self._dispatch(kind, payload, line)
            except LedgerError:
                raise
            except Exception as error:
                bad_record(log, line, kind, error)
            if len(events) == before:
                wrapped = kind in ("response_item", "event_msg") and named.__class__ is str
                writer.log_only(named if wrapped else kind.removeprefix("item:"), payload, line)

    def take_over(self, typed: ColumnRollout, source: LineSource) -> None:
        """Take the state of the typed route, which read the lines before the one read next
        (its rows as sealed ones, but for the windows from the open step's message on:
        those are re-derived as dicts, ``source`` the lines read so far)."""
        message, last = typed.message, typed.last_message
        table = typed.table()
        writer, count = self.writer, len(table)
        self.store.adopt(table, count if last is None else last, typed.parts, typed.held,
                         typed.results, source)
        writer.time = typed.time
        writer.turn, writer.turn_open = typed.turn, typed.turn_open
        writer.step, writer.step_open = typed.step, typed.step_open
        writer.surface, writer.prompts = list(typed.surface()), list(typed.prompts)
        writer.rewound, writer.call_reasons = dict(typed.rewound), dict(typed.reasons)
        writer.calls, writer.dispatched = typed.requested_calls(), dict(typed.dispatched)
        writer.answered = typed.answered_calls()
        self.aborted = set(typed.aborted)
        self.meta, self.meta_time = typed.meta, typed.meta_time
        self.marked, self.model, self.answered = typed.marked, typed.model, typed.answered
        self.message = None if message is None else writer.events[message]
        self.last_message = None if last is None else writer.events[last]
        self.message_line, self.last_message_line = typed.message_line, typed.last_message_line
        self.results, self.exit_codes = dict(typed.result_rows), dict(typed.exit_codes)

    def _note_copy(self, kind: str, line: int, record: dict[str, Any]) -> None:
        """Keep the fingerprint of each line from a second ``session_meta`` on (a fork's
        copy of its parent's lines, found in ``find_copied_prefix``)."""
        if kind == "session_meta" and self.meta is not None:
            self.copied_from = self.copied_from or line
        if self.copied_from is not None:
            self.copied.append((line, fingerprint(record)))

    def _kind(self, record: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Return a line's kind and payload, whichever generation wrote it."""
        kind = record.get("type")
        if "payload" in record and isinstance(kind, str):
            return kind, as_dict(record["payload"])
        if "record_type" in record:
            return "state", record
        if isinstance(kind, str):
            return f"item:{kind}", record  # a legacy bare response item
        if self.meta is None and isinstance(record.get("id"), str):
            return "session_meta", record
        return "unknown", record

    def _dispatch(self, kind: str, payload: dict[str, Any], line: int) -> None:
        """Read a line that is neither a response item nor an event message."""
        if kind == "session_meta":
            self._session_meta(payload)
        elif kind == "turn_context":
            if "model" in payload:
                self.model = string_field(payload, "model", line, self.log)
        elif kind == "compacted":
            self._compacted(payload, line)
        elif kind != "state":  # "unknown": a line whose type is no string (see ``_kind``)
            typed = payload if kind == "unknown" else {"type": kind}
            problem = no_name_problem(typed, "type")
            if problem is None:
                unknown_kind(self.log, line, FORMAT_NAME, kind)
            else:
                unnamed_kind(self.log, line, f"{FORMAT_NAME} record whose {problem}")

    def _session_meta(self, payload: dict[str, Any]) -> None:
        """Take the first ``session_meta`` as the file's identity (a later one opens a copy
        of the parent's lines: see ``find_copied_prefix``)."""
        if self.meta is None:
            self.meta = payload
            self.meta_time = self.writer.time
            self.writer.time = self.writer.time or epoch_ms(payload.get("timestamp"))

    def find_copied_prefix(self, path: str) -> None:
        """Mark the lines a fork copied from its parent as inherited (``session/end-seed``),
        found against the parent's rollout; without it, say the copy is read as own."""
        if self.copied_from is None:
            return
        parent = self.header().get("parentSession")
        found = parent_file(path, parent) if isinstance(parent, str) else None
        length = copied_length(found, [f for _, f in self.copied]) if found else 0
        end = self.copied[length - 1][0] if length else 0  # the last copied line
        self.copied = []
        if not length:
            why = "the parent's rollout is not beside it" if found is None else \
                "its lines do not repeat the parent's rollout"
            self.log.add(self.copied_from, "copied_prefix", "a second session_meta opens the "
                         f"parent's items copied by a fork, but {why}: they are read as this "
                         "session's own", "info")
            return
        writer = self.writer
        self.store.unsealed()  # every event a dict again, with its line
        inherited = next((i for i, line in enumerate(writer.lines) if line > end),
                         len(writer.lines))
        writer.seed_end(inherited, end)
        self._close_cut_turn(inherited)

    def _close_cut_turn(self, inherited: int) -> None:
        """A turn the copy leaves open ends ``forked`` (ledger §11), not unmarked: the fork
        cut it, and the child's first turn ends it."""
        events = self.writer.events  # all unsealed by ``seed_end``
        opened = None
        for event in events[:inherited]:
            if event["type"] == "turn/start":
                opened = event["data"]["turn"]
            elif event["type"] == "turn/end":
                opened = None
        ending = next((e for e in events[inherited:] if e["type"] == "turn/end"
                       and e["data"]["turn"] == opened), None)
        if ending is not None and ending["data"]["reason"] == UNMARKED:
            ending["data"]["reason"] = {"kind": "forked"}

    def _compacted(self, payload: dict[str, Any], line: int) -> None:
        self.writer.replace_surface(compaction_message(payload, line), line)

    def _event(self, kind: str, payload: dict[str, Any], line: int) -> None:
        """Read an ``event_msg`` that is not in ``LOG_ONLY_EVENTS``."""
        writer = self.writer
        if kind in TURN_STARTS:
            self.marked = True
            self.message = None
            writer.open_turn(line)
        elif kind in TURN_ENDS:
            writer.close_turn(COMPLETED, line)
            self.message = None
        elif kind == "turn_aborted":
            reason = aborted_reason(payload)
            if writer.turn_open:
                self.aborted.add(writer.turn)
            writer.close_turn(reason, line)
            self.message = None
        elif kind == "token_count":
            self._usage(payload, line)
        elif kind == "exec_command_end":
            self._exit_code(payload.get("call_id"), payload.get("exit_code"))
        elif kind == "thread_rolled_back":
            self._rollback(payload.get("num_turns"), line)
        else:
            self._unknown_wrapped("event_msg", payload, line)

    def _item(self, kind: str, item: dict[str, Any], line: int) -> None:
        if kind == "message":
            role = item.get("role")
            if role == "assistant":
                self._output(line, output_blocks(item))
            elif role == "user":
                self._user(item, line)
            elif role in ("developer", "system"):
                self._instructions(role, item, line)
            elif (problem := no_name_problem(item, "role")) is not None:
                unnamed_kind(self.log, line, f"{FORMAT_NAME} message whose {problem}")
            else:
                unknown_kind(self.log, line, FORMAT_NAME, f"message role {role}")
        elif kind == "reasoning" or kind in SERVER_CALLS:
            self._output(line, output_blocks(item))
        elif kind in CALL_ITEMS:
            self._call(kind, item, line)
        elif kind in RESULT_ITEMS:
            self._result(item, line)
        elif kind not in LOG_ONLY_ITEMS:
            self._unknown_wrapped("response_item", item, line)

    def _unknown_wrapped(self, wrapper: str, payload: dict[str, Any], line: int) -> None:
        """Diagnose a wrapped line whose payload type the reader does not know, naming what
        that type is when it is no name (missing, null, empty, a list...)."""
        problem = no_name_problem(payload, "type")
        if problem is None:
            unknown_kind(self.log, line, FORMAT_NAME, f"{wrapper} {payload['type']}")
        else:
            unnamed_kind(self.log, line, f"{FORMAT_NAME} {wrapper} record whose payload {problem}")

    def _output(self, line: int, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        """Add ``blocks``, the output item of ``line``'s, to the open step's assistant
        message (a new step's, when a call output came since the last output item, or no
        step is open); return that message."""
        writer = self.writer
        if self.message is None or self.answered or not writer.step_open:
            source = {"kind": "model", "provider": "openai", "model": self.model}
            self.message = writer.assistant(f"codex-message-{line}", source, line)
            self.last_message, self.message_line = self.message, line
            self.last_message_line = line
            self.answered = False
        self.message["data"]["message"]["content"].extend(blocks)
        self.store.part(self.message_line, line)
        return self.message

    def _call(self, kind: str, item: dict[str, Any], line: int) -> None:
        call = _call_fields(kind, item)
        if call is None:
            self.log.add(line, "bad_record", f"{kind} without a call_id: kept as a log-only "
                         "event", "warning")
            return
        self.writer.tool_call(self._output(line, []), *call, line)

    def _result(self, item: dict[str, Any], line: int) -> None:
        writer = self.writer
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            self.log.add(line, "bad_record", "call output without a call_id: kept as a "
                         "log-only event", "warning")
            return
        if call_id not in writer.calls:
            self.log.add(line, "orphan_result", f"output for call {call_id[:80]!r}, which no "
                         "earlier item requested", "warning")
        text, failed = _output_text(item.get("output"))
        code, reason = coded_result(text) or (None, None)
        if code is None and call_id in self.exit_codes:
            failed = self.exit_codes[call_id] != 0
        self.results[call_id] = writer.tool_result(call_id, text, line, is_error=failed,
                                                   code=code, reason=reason)["seq"]
        self.answered = True

    def _exit_code(self, call_id: Any, exit_code: Any) -> None:
        """Take an ``exec_command_end``'s exit code (it settles ok/error of its output)."""
        if not isinstance(call_id, str) or type(exit_code) is not int:
            return
        self.exit_codes[call_id] = exit_code
        seq = self.results.get(call_id)
        if seq is not None:
            self.store.result_error(seq, exit_code != 0)

    def _user(self, item: dict[str, Any], line: int) -> None:
        writer = self.writer
        content = _input_blocks(item.get("content"))
        source = source_of(content)
        if source == "user":
            if not self.marked:  # the next prompt ends the turn before it
                writer.open_turn(line, COMPLETED)
            elif not writer.turn_open:
                writer.open_turn(line)
            writer.close_step(line)
            self.message = None
        writer.user_message(f"codex-user-{line}", content, source, line)

    def _instructions(self, role: str, item: dict[str, Any], line: int) -> None:
        writer = self.writer
        message = {"id": f"codex-{role}-{line}", "role": role,
                   "content": _input_blocks(item.get("content")),
                   "source": {"kind": "runtime-context"}}
        data = {"turn": writer.turn or None, "step": writer.step or None, "message": message}
        writer.add(f"{role}/message", data, line, op="append")

    def _usage(self, payload: dict[str, Any], line: int) -> None:
        """Give the latest step without usage the counts of its model call (a
        ``token_count`` payload's ``last_token_usage``)."""
        message = self.last_message
        if message is None or "usage" in message["data"]:
            return
        converted = usage_of(payload)
        if converted:
            message["data"]["usage"] = converted
            self.store.usage(self.last_message_line, line)

    def _rollback(self, turns: Any, line: int) -> None:
        writer = self.writer
        prompts = writer.prompts
        on_surface = counted(len(prompts), "prompt")
        if type(turns) is not int or turns < 1 or not prompts:
            asked = counted(turns, "turn") if type(turns) is int else f"{turns!r} turns"
            self.log.add(line, "bad_rollback", f"thread_rolled_back of {asked} with "
                         f"{on_surface} on the surface: nothing taken back", "warning")
            return
        if turns > len(prompts):
            self.log.add(line, "bad_rollback", f"thread_rolled_back of {counted(turns, 'turn')}"
                         f", but only {on_surface} {one_or_many(len(prompts), 'is', 'are')} on "
                         "the surface: all taken back", "warning")
        writer.rewind(prompts[-min(turns, len(prompts))], line, ROLLED_BACK)

    def finish(self) -> None:
        """Give the calls left without an output the reason the file shows, and take back
        the dispatch of the calls the user rejected (known only from their output)."""
        writer = self.writer
        open_turn = writer.turn if writer.turn_open else None
        writer.explain_unanswered(
            lambda _, turn: unanswered_reason(turn, self.aborted, open_turn))
        writer.undispatch(call for call, why in writer.call_reasons.items() if why == REJECTED)

    def header(self) -> dict[str, Any]:
        """Return the dsh header of the session (see ``header_of``)."""
        return header_of(self.meta, self.meta_time, self.copied_from is not None)


def header_of(meta: dict[str, Any] | None, meta_time: int | None, copied: bool
              ) -> dict[str, Any]:
    """Return the dsh header of a session (identity and lineage of its first
    ``session_meta``, ``meta``, read at time ``meta_time``; ``copied``: a second one opens
    a fork's copy of its parent's lines)."""
    meta = meta or {}
    source = as_dict(meta.get("source"))
    spawn = as_dict(as_dict(source.get("subagent")).get("thread_spawn"))
    parent = meta.get("forked_from_id") or spawn.get("parent_thread_id")
    depth = spawn.get("depth")
    return dsh_header(
        meta.get("id"), epoch_ms(meta.get("timestamp")) or meta_time,
        cwd=meta.get("cwd") if isinstance(meta.get("cwd"), str) else None,
        parentSession=parent if isinstance(parent, str) else None,
        isSeeded=bool(meta.get("forked_from_id")) or copied,
        origin="subagent" if "subagent" in source else None,
        delegationDepth=depth if type(depth) is int else None,
    )


def usage_of(payload: dict[str, Any]) -> dict[str, Any]:
    """Return the usage a ``token_count`` payload gives its step (its
    ``last_token_usage``; empty when it has none)."""
    usage = as_dict(as_dict(payload.get("info")).get("last_token_usage"))
    if not usage:
        return {}
    converted = dict(zip(USAGE_KEYS, _counts(usage), strict=True))
    if type(usage.get("total_tokens")) is int:
        converted["totalTokens"] = usage["total_tokens"]
    return converted


def usage_counts(info: Any) -> tuple[int, ...] | None:
    """Return the counts (``table.USAGE_KEYS``) a ``token_count``'s ``info`` gives its
    step (``usage_of``'s but for the total), or None when it gives none."""
    usage = info.get("last_token_usage") if info.__class__ is dict else None
    return _counts(usage) if usage.__class__ is dict and usage else None


def _counts(usage: dict[str, Any]) -> tuple[int, ...]:
    """Return the input (less the cached), output, cache read and reasoning token counts
    of a ``last_token_usage`` (0 where one is not an integer; read without a loop, as the
    typed route reads one a turn)."""
    get = usage.get
    fresh, output = get("input_tokens", 0), get("output_tokens", 0)
    cached, reasoning = get("cached_input_tokens", 0), get("reasoning_output_tokens", 0)
    if fresh.__class__ is not int:
        fresh = 0
    if output.__class__ is not int:
        output = 0
    if cached.__class__ is not int:
        cached = 0
    if reasoning.__class__ is not int:
        reasoning = 0
    return fresh - cached, output, cached, reasoning


def output_blocks(item: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the content blocks an output item (an assistant message, a reasoning, a call
    or a provider's own call) adds to its step's assistant message."""
    kind = item.get("type")
    if kind == "message":
        return _blocks(item.get("content"), "output_text")
    if kind == "reasoning":
        summary = [as_dict(part).get("text") for part in as_list(item.get("summary"))]
        return [{"type": "reasoning", "text": "\n".join(t for t in summary if isinstance(t, str))}]
    if kind in CALL_ITEMS:
        call = _call_fields(kind, item)
        if call is not None:
            call_id, name, arguments = call
            return [{"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}]
        return []
    return [{**item, "type": f"plugin:codex-{kind}"}]


def coded_result(text: str) -> tuple[str, StatusReason] | None:
    """Return the error code and reason a call output of ``text`` proves (a refusal: the
    call never started; an abort: its outcome is unknown), or None."""
    if "rejected by user" not in text and "aborted by user" not in text:
        return None  # the common case, told without copying a long output stripped
    said = text.strip()
    if said.startswith(REFUSALS):
        return NOT_STARTED_CODE, REJECTED
    if "\n" not in said and (said.startswith("aborted by user after")
                             or said.endswith("aborted by user")):
        return UNKNOWN_CODE, INTERRUPTED
    return None


def aborted_reason(payload: dict[str, Any]) -> dict[str, Any]:
    """Return the reason a ``turn_aborted`` payload ends its turn with."""
    return {"kind": "aborted", "reason": {"kind": as_text(payload.get("reason")) or "unknown"}}


def compaction_message(payload: dict[str, Any], line: int) -> dict[str, Any]:
    """Return the user message a ``compacted`` payload of ``line`` replaces the surface
    with: its summary, else the text of the history it keeps."""
    summary = as_text(payload.get("message"))
    texts = [summary] if summary else [
        text for item in as_list(payload.get("replacement_history"))
        if (text := _content_text(as_dict(item).get("content")))]
    return {"id": f"codex-compacted-{line}", "role": "user",
            "content": [text_block(t) for t in texts], "source": {"kind": "compact-checkpoint"}}


def _call_fields(kind: str, item: dict[str, Any]) -> tuple[str, str, str] | None:
    """Return the call id, tool name and arguments of a call item (None: it has no id)."""
    call_id = item.get("call_id") or item.get("id")
    if not isinstance(call_id, str):
        return None
    if kind == "function_call":
        name, arguments = item.get("name"), item.get("arguments")
    elif kind == "custom_tool_call":
        name, arguments = item.get("name"), item.get("input")
    else:
        name, arguments = "local_shell", item.get("action")
    return call_id, as_text(name), as_text(arguments)


def source_of(content: list[dict[str, Any]]) -> str:
    """Return the source kind of a user message of ``content`` (blocks): ``user`` for a
    typed prompt, else the kind of the context Codex wrote itself (``CONTEXT_PREFIXES``)."""
    return text_source("".join([b.get("text", "") for b in content]))


def text_source(text: str) -> str:
    """Return the source kind of a user message of text ``text`` (see ``source_of``)."""
    text = text.lstrip()
    if not text.startswith(_CONTEXT_STARTS):
        return "user"
    return next(kind for prefix, kind in CONTEXT_PREFIXES if text.startswith(prefix))


def _input_blocks(content: Any) -> list[dict[str, Any]]:
    """Return the content blocks of a user, system or developer message."""
    return _blocks(content, "input_text")


def _blocks(content: Any, text_type: str) -> list[dict[str, Any]]:
    """Return dsh content blocks of a Codex message's content (text parts as text, other
    parts as their type, e.g. ``input_image``)."""
    if isinstance(content, str):
        return [text_block(content)]
    blocks = []
    for part in as_list(content):
        part = as_dict(part)
        kind = part.get("type")
        if kind in (text_type, "input_text", "output_text") and isinstance(part.get("text"), str):
            blocks.append(text_block(part["text"]))
        elif kind is not None:
            blocks.append({"type": f"plugin:codex-{as_text(kind)}"})
    return blocks


def lone_text(content: Any, text_type: str) -> str | None:
    """Return the text of a message content of one text part (the common shape, which
    ``_blocks`` makes one text block), else None."""
    if content.__class__ is list and len(content) == 1:
        part = content[0]
        if part.__class__ is dict:
            kind, text = part.get("type"), part.get("text")
            if text.__class__ is str and (kind == text_type or kind == "input_text"
                                          or kind == "output_text"):
                return text
    return None


def _content_text(content: Any) -> str:
    """Return the text of a Codex message's content."""
    return "".join(b["text"] for b in _blocks(content, "input_text") if b["type"] == "text")


def _output_text(output: Any) -> tuple[str, bool]:
    """Return the text of a call output and whether it shows a failure (a non-zero exit
    code, or ``success: false`` where a writer kept it)."""
    if isinstance(output, dict):
        text, _ = _output_text(output.get("content"))
        return text, output.get("success") is False
    if isinstance(output, list):
        return _content_text(output), False
    text = as_text(output)
    if text.startswith("{"):  # older exec outputs: {"output": …, "metadata": {"exit_code": …}}
        try:
            wrapped = orjson.loads(text)
        except orjson.JSONDecodeError:
            wrapped = None
        if isinstance(wrapped, dict) and "metadata" in wrapped:
            code = as_dict(wrapped.get("metadata")).get("exit_code")
            return as_text(wrapped.get("output")), type(code) is int and code != 0
    found = EXIT_CODE.search(text, 0, 200)
    return text, found is not None and int(found.group(1)) != 0


RULES = Rules(output_blocks, _input_blocks, usage_of)
"""What ``codex_events`` re-derives an event with: the reader's own mappings."""
COLUMN_RULES = ColumnRules(LOG_ONLY_EVENTS, TURN_STARTS, TURN_ENDS, CALL_ITEMS, RESULT_ITEMS,
                           LOG_ONLY_ITEMS, coded_result, aborted_reason, compaction_message,
                           output_blocks, _call_fields, _output_text, _input_blocks, usage_counts,
                           source_of, lone_text, text_source)
"""What the typed route (``codex_columns``) maps a line with: the reader's own rules."""

FORMAT = Format(FORMAT_NAME, sniff, read, "Codex CLI rollout (~/.codex/sessions, JSONL)")
