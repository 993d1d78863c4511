"""The Codex reader's typed route: a rollout of the common shapes read straight into its
table's columns, with no dict per record and none per event.

Each line is decoded by msgspec into a ``_Line`` holding only the fields the reader reads
(the payload's other fields, such as encrypted reasoning or a session's instructions, are
skipped unread) and mapped, as ``codex._Rollout`` maps it, onto rows of the session's
``EventTable``: the type, time, turn, step and surface op of each event, and the facts of
its type (a call's id, name and arguments, a message's role, source and visible text, a
step's model and usage, a result's error flag). The events are then re-derived on demand
from the table and the rollout's lines, as the dict route's are (``codex_events``).

The route takes only what it maps exactly as the dict route does, and gives up (``GiveUp``,
naming the line) at the first line that route would diagnose or write an event of another
shape for: a blank, torn, too long or invalid line, a line msgspec and orjson may judge
differently (``typed_schema.may_differ``) or holding an integer beyond 64 bits (then, as for
a block that ends in a blank line, from the first line of its block), a legacy or unknown
record, a second ``session_meta`` (a fork's copy), a rollback of more turns than there are
prompts (or of none), a refused call (its dispatch is taken back at the end), an output for
no call, a provider-run call, a field of a shape no rule foresaw. Rollbacks, compactions,
aborted turns and aborted calls it takes: their events, of shapes ``codex_events`` does not
re-derive, are held as the dict route writes them (``hold``), with the surface and the
reasons they change. The dict route then reads on from that line with this route's state
(``codex._Rollout.take_over``), so no line is mapped twice and every table and diagnostic is
the dict route's (the comparison is in ``tests/ledger/test_codex_columns.py``). A file that
starts with a byte order mark or compression magic goes the dict route from its start
(``first_chunk_taken``).
"""

from __future__ import annotations

import re
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import msgspec
import orjson

from ledgerviz.ledger.formats.codex_events import Parts
from ledgerviz.ledger.formats.foreign import (
    ABORTED,
    AT_END,
    IN_CLOSED_STEP,
    REJECTED,
    ROLLED_BACK,
    Event,
    LineStarts,
    epoch_ms,
    new_event,
    result_data,
)
from ledgerviz.ledger.formats.staged import StagedTurns, usage_count
from ledgerviz.ledger.numbers import (
    exact_loads,
    holds_big_integer,
    may_hold_big_integers,
    number_marks,
)
from ledgerviz.ledger.reader import COMPRESSION_MAGIC, UTF16_BOMS, LeadingBlanks, line_blocks
from ledgerviz.ledger.shapes import MAX_INTEGER
from ledgerviz.ledger.sources import UTF8_BOM
from ledgerviz.ledger.table import EventTable
from ledgerviz.ledger.typed_schema import ORJSON_DEPTH, may_differ
from ledgerviz.recovery.nesting import visible_text
from ledgerviz.recovery.vocab import MISSING, SURFACE_OPS, StatusReason

_APPEND = SURFACE_OPS.index("append")
FLUSH_ROWS = 1 << 16
"""How many rows' facts are staged before they are scattered into the columns."""


class GiveUp(Exception):
    """A line the typed route does not map exactly as the dict route does: the dict route
    takes over from its ``line`` (the typed route's state is that of the lines before it)."""

    def __init__(self, line: int = 0) -> None:
        super().__init__(line)
        self.line = line


class Payload(msgspec.Struct, gc=False):
    """The fields of a line's payload the reader reads (``get`` reads one as a dict's
    ``get`` does, so the reader's mappings take either). Not tracked by the garbage
    collector (``gc=False``: 10% less decoding): what it holds is decoded JSON, which never
    refers back to it."""

    type: Any = None
    role: Any = None
    content: Any = None
    call_id: Any = None
    id: Any = None
    name: Any = None
    arguments: Any = None
    input: Any = None
    action: Any = None
    output: Any = None
    info: Any = None
    exit_code: Any = None
    model: Any = msgspec.UNSET
    """UNSET where the payload has no ``model`` (a ``turn_context`` that names none)."""
    turn: Any = None
    step: Any = None
    """What a log-only event's ``data.turn`` and ``data.step`` are (its payload's)."""
    reason: Any = None
    """Why a ``turn_aborted`` ends its turn."""
    num_turns: Any = None
    """How many turns a ``thread_rolled_back`` takes back."""

    def get(self, key: str) -> Any:
        """Return field ``key`` (a name the struct does not hold: ``AttributeError``)."""
        return getattr(self, key)


class _Line(msgspec.Struct, gc=False):
    timestamp: Any = None
    type: Any = None
    payload: Payload | msgspec.UnsetType | None = msgspec.UNSET


_DECODE = msgspec.json.Decoder(_Line).decode


class ColumnRules(NamedTuple):
    """What the typed route maps with: ``codex.py``'s own vocabulary and mappings."""

    log_only_events: frozenset[str]
    turn_starts: frozenset[str]
    turn_ends: frozenset[str]
    call_items: frozenset[str]
    result_items: frozenset[str]
    log_only_items: frozenset[str]
    coded_result: Callable[[str], tuple[str, StatusReason] | None]
    """The error code and reason a call output's text proves, if any."""
    aborted_reason: Callable[[Any], dict[str, Any]]
    """The reason a ``turn_aborted`` payload ends its turn with."""
    compaction_message: Callable[[dict[str, Any], int], dict[str, Any]]
    """The user message a ``compacted`` payload of a line replaces the surface with."""
    output_blocks: Callable[[Any], list[dict[str, Any]]]
    """The content blocks an output item adds to its step's assistant message."""
    call_fields: Callable[[str, Any], tuple[str, str, str] | None]
    output_text: Callable[[Any], tuple[str, bool]]
    """A call output's text and whether it shows a failure."""
    input_blocks: Callable[[Any], list[dict[str, Any]]]
    usage_counts: Callable[[Any], tuple[int, ...] | None]
    """The usage counts (``USAGE_KEYS``) a ``token_count``'s ``info`` gives, if any."""
    source_of: Callable[[list[dict[str, Any]]], str]
    """The source kind of a user message of these content blocks."""
    lone_text: Callable[[Any, str], str | None]
    """The text of a message content of one text part (of this type), else None."""
    text_source: Callable[[str], str]
    """The source kind of a user message of this text."""


def typed_lines(chunks: Iterable[bytes], starts: LineStarts, max_line: int
                ) -> Iterator[tuple[int, list[bytes]]]:
    """Yield the lines of each block and the number of its first, screened but not decoded
    (a route decodes each line as it maps it, while the line is still in the processor's
    cache); raise ``GiveUp`` at the first block with a line the dict route would diagnose or
    may read differently (see the module docstring)."""
    if sys.getrecursionlimit() > ORJSON_DEPTH:
        raise GiveUp(1)
    leading = LeadingBlanks()
    number = 1
    rest = b""  # what follows the last newline: the next piece's, or a torn last line
    for piece in line_blocks(chunks, max_line, leading):
        if piece.too_long or piece.cut or leading.lost:
            raise GiveUp(number)
        rest = piece.tail
        starts.read(piece, leading)
        block, lines = piece.block, piece.lines
        marks = number_marks(block)
        if may_differ(block, marks) or (may_hold_big_integers(block, marks)
                                        and any(map(_holds_big_integer, lines))) \
                or (lines and not lines[-1].strip()):
            # (a block that ends in a blank line: read on from that line, the dict route
            # would take the blank lines up to the file's end for leading whitespace, and
            # not say them)
            raise GiveUp(number)
        yield number, lines
        number += len(lines)
    if rest or number == 1:  # a last line without a newline, or no line but blank ones
        raise GiveUp(number)


def _holds_big_integer(line: bytes) -> bool:
    """Return whether ``line`` may hold an integer beyond 64 bits (read by the dict route
    as exactly, with a warning); a line with none decodes alike both ways."""
    if not may_hold_big_integers(line):
        return False
    try:
        return holds_big_integer(exact_loads(line))
    except ValueError:
        return True


class _LogNames(dict[str, str]):
    """The event type of a log-only record of each kind (``codex/<kind>``), made once."""

    def __missing__(self, kind: str) -> str:
        name = self[kind] = f"codex/{kind}"
        return name


Handler = Callable[[Payload, int], None]
"""How a line of a kind is mapped: given its payload and number."""
Dispatched = tuple[Handler | None, str]
"""A line kind's handler (None: it has no event but its log-only one) and the type of the
log-only event of a line of the kind that adds no row of its own."""


class ColumnRollout(StagedTurns):
    """The state of reading one rollout into columns (``codex._Rollout``'s, for the shapes
    the typed route takes)."""

    def __init__(self, rules: ColumnRules) -> None:
        super().__init__()
        self.rules = rules
        self.results = (array("q"), array("q"))
        """The row of each tool/result and its dispatch's."""
        self.parts = Parts()
        self.time: int | None = None
        self.meta: dict[str, Any] | None = None
        self.meta_time: int | None = None
        self.marked = False
        self.model: Any = None
        self.message: int | None = None
        """The row of the open step's assistant/message."""
        self.message_text: int | None = 0
        """Its place in ``messages`` (None: flushed into the columns)."""
        self.message_line = 0
        self.texts: list[str] = []
        """The texts of the open step's message so far: those of its text blocks, but for
        empty ones (its reasoning and calls show none, ``visible_text``)."""
        self.answered = False
        self.last_message: int | None = None
        self.last_message_line = 0
        self.last_has_usage = False
        self.dispatched: dict[str, int] = {}
        """The tool/call row of each requested call (its last request's, in order of the
        first; the call's turn and step are its row's)."""
        self.unanswered: dict[str, tuple[int, str]] = {}
        """The row of the message that requested each call without an output yet, and the
        call id as requested (its output's column holds that one: one string, not two); an
        answered call keeps nothing but its rows (see ``requested_calls``)."""
        self.result_rows: dict[str, int] = {}
        self.exit_codes: dict[str, int] = {}
        self.log_names = _LogNames()
        """The event type of a log-only record of each kind."""
        self.handlers = self.dispatch()
        self.held: dict[int, Event] = {}
        """The events of the rows of a shape ``codex_events`` does not re-derive (a rewind, a
        compaction, an aborted turn's end or call's result), as the dict route writes them."""
        self.held_rows: list[EventTable] = []
        """Their rows' facts, to be scattered into the columns."""
        self.surface_kept: list[int] = []
        self.surface_from = 0
        """The model-visible surface: ``surface_kept`` and the appended rows from row
        ``surface_from`` on (see ``surface``)."""
        self.prompts: list[int] = []
        """The rows of the typed prompts still on the surface."""
        self.rewound: dict[int, StatusReason] = {}
        """Why each row a rollback took off the surface went."""
        self.reasons: dict[str, StatusReason] = {}
        """The reason of each call an aborted result answers."""
        self.aborted: set[int] = set()
        """The turns a ``turn_aborted`` ended."""

    # rows

    def hold(self, kind: str, data: Any, line: int, op: Any = None,
             sources: list[int] | None = None) -> int:
        """Append the row of an event held as written (``held``); return it."""
        row = len(self.codes)
        event = self.held[row] = new_event(kind, row, self.time, data, op, sources)
        facts = EventTable.of([event], [line], row)
        self.held_rows.append(facts)
        self.add(kind, line, facts.turn[0], facts.step[0], facts.surface_op[0])
        return row

    def surface(self) -> list[int]:
        """Return the rows on the model-visible surface, in order (``surface_kept``, brought
        up to date)."""
        ops, kept = self.ops, self.surface_kept
        kept += [row for row in range(self.surface_from, len(ops)) if ops[row] == _APPEND]
        self.surface_from = len(ops)
        return kept

    # the reader's steps (``codex._Rollout`` and ``foreign.EventWriter``)

    def read(self, pieces: Iterable[tuple[int, list[bytes]]]) -> None:
        """Map every line; raise ``GiveUp`` at one the route does not take (its mapping
        raises before it changes anything but the time, which is put back)."""
        for first, raws in pieces:
            self.read_piece(first, raws)
            if len(self.codes) - self.filled >= FLUSH_ROWS:
                self.flush()

    def read_piece(self, first: int, raws: list[bytes]) -> None:
        """Decode and map the lines ``raws``, the first numbered ``first``: each by the
        handler of its kind and payload type (``handlers``), a line no handler adds a row for
        as a log-only event; a kind no handler takes by ``unusual``; a line that does not
        decode as a ``_Line`` is given up."""
        handlers, codes, code_of = self.handlers, self.codes, self.code_of
        code_row, time_row, turn_row, step_row, op_row, line_row = self.appends
        minutes, seconds, millis = _MINUTES.get, _SECONDS.get, _MILLIS.get
        line, changed, before = first, 0, self.time
        try:
            for line, raw in enumerate(raws, first):
                try:
                    record = _DECODE(raw)
                except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                    raise GiveUp from None
                stamp = record.timestamp
                if stamp is not None:  # ``_epoch_ms``, its minute's known stamps inline
                    if stamp.__class__ is str and (minute := minutes(stamp[:16])) is not None \
                            and (second := seconds(stamp[16:19])) is not None \
                            and (milli := millis(stamp[19:])) is not None:
                        time = minute + second + milli
                    else:
                        time = _epoch_ms(stamp)
                    if time is not None:
                        changed, before = line, self.time
                        self.time = self.time_cell = time
                payload = record.payload
                try:  # no payload object (none, or null): ``unusual`` gives up
                    found = handlers.get((record.type, payload.type)) \
                        if payload.__class__ is Payload else None
                except TypeError:  # an unhashable payload type: only an unwrapped kind may have it
                    found = None
                if found is None:
                    found = self.unusual(record.type, payload, raw)
                handler, log_name = found
                if handler is not None:
                    rows = len(codes)
                    handler(payload, line)
                    if len(codes) != rows:
                        continue
                # a line of no event of its own: a log-only one (``add``'s appends inline)
                turn, step = payload.turn, payload.step
                code_row(code_of[log_name])
                time_row(self.time_cell)
                turn_row(MISSING if turn is None else _int(turn))
                step_row(MISSING if step is None else _int(step))
                op_row(0)
                line_row(line)
        except GiveUp as error:  # at this line: the dict route reads it, and on from it
            if changed == line:  # (the time column's value follows from the time)
                self.time, self.time_cell = before, MISSING if before is None else before
            raise GiveUp(line) from error

    def dispatch(self) -> dict[tuple[str, Any], Dispatched]:
        """Return the handler of each line kind and payload type the typed route takes as
        it comes (None: nothing but its log-only event), with that event's type."""
        rules = self.rules
        handled: dict[str, Handler | None] = {
            **dict.fromkeys(rules.log_only_events), **dict.fromkeys(rules.turn_starts,
                                                                      self.turn_start),
            **dict.fromkeys(rules.turn_ends, self.turn_end), "turn_aborted": self.turn_aborted,
            "thread_rolled_back": self.rolled_back, "token_count": self.token_count,
            "exec_command_end": self.exec_command_end}
        items: dict[str, Handler | None] = {
            **dict.fromkeys(rules.log_only_items), **dict.fromkeys(rules.call_items, self.call),
            **dict.fromkeys(rules.result_items, self.result), "message": self.message_item,
            "reasoning": self.reasoning}
        table: dict[tuple[str, Any], Dispatched] = {
            ("turn_context", None): (self.turn_context, self.log_names["turn_context"]),
            ("state", None): (None, self.log_names["state"])}
        for kind, handlers in (("event_msg", handled), ("response_item", items)):
            table.update(((kind, named), (handler, self.log_names[named]))
                         for named, handler in handlers.items())
        return table

    def unusual(self, kind: Any, payload: Any, raw: bytes) -> Dispatched:
        """Return how to map a line ``handlers`` does not take: a ``session_meta`` or
        ``compacted`` record (read from ``raw``), or one whose payload has a type its kind
        does not use; any other line is given up."""
        if kind.__class__ is not str or payload.__class__ is not Payload \
                or kind == "response_item" or kind == "event_msg":
            raise GiveUp
        handler: Handler | None
        if kind == "session_meta":
            handler = lambda _, line: self.session_meta(raw)  # noqa: E731
        elif kind == "compacted":
            handler = lambda _, line: self.compaction(  # noqa: E731
                orjson.loads(raw)["payload"], line)
        elif kind == "turn_context":
            handler = self.turn_context
        elif kind == "state":
            handler = None
        else:  # an unknown or legacy (``item:``) record
            raise GiveUp
        return handler, self.log_names[kind]

    def session_meta(self, raw: bytes) -> None:
        if self.meta is not None:  # a fork's copy of its parent's lines
            raise GiveUp
        payload = orjson.loads(raw)["payload"]
        self.meta, self.meta_time = payload, self.time
        self.time = self.time or epoch_ms(payload.get("timestamp"))
        self.time_cell = MISSING if self.time is None else self.time

    def compaction(self, payload: dict[str, Any], line: int) -> None:
        """Replace the surface with a compaction's message (``EventWriter.replace_surface``)."""
        message = self.rules.compaction_message(payload, line)
        surface = self.surface()
        if surface:
            op = {"op": "replace", "startSeq": surface[0], "endSeq": surface[-1]}
            self.surface_kept = [self.hold("user/message", message, line, op, list(surface))]
            self.surface_from = len(self.codes)
        else:
            self.hold("user/message", message, line, "append")
        self.prompts = []

    def rollback(self, turns: Any, line: int) -> None:
        """Take the last ``turns`` prompts and all after them off the surface
        (``EventWriter.rewind``); a count the dict route diagnoses: ``GiveUp``."""
        prompts = self.prompts
        if turns.__class__ is not int or not 1 <= turns <= len(prompts):
            raise GiveUp
        surface = self.surface()
        first = bisect_left(surface, prompts[-turns])
        hidden = surface[first:]
        del surface[first:], prompts[-turns:]
        self.rewound.update(dict.fromkeys(hidden, ROLLED_BACK))
        self.hold("surface/rewind", {"start": hidden[0], "end": hidden[-1],
                                     "shadowedSeqs": hidden}, line)

    # the handlers of the lines (``dispatch``)

    def turn_start(self, _: Payload, line: int) -> None:
        self.marked = True
        self.close_message()
        self.open_turn(line)

    def turn_end(self, _: Payload, line: int) -> None:
        self.close_turn("completed", line)
        self.close_message()

    def turn_aborted(self, payload: Payload, line: int) -> None:
        reason = self.rules.aborted_reason(payload)
        if self.turn_open:
            self.aborted.add(self.turn)
        self.close_turn(reason, line)
        self.close_message()

    def rolled_back(self, payload: Payload, line: int) -> None:
        self.rollback(payload.num_turns, line)

    def token_count(self, payload: Payload, line: int) -> None:
        """Give the last assistant message the usage of ``payload``, if it has none yet."""
        if self.last_message is None or self.last_has_usage:
            return
        counts = self.rules.usage_counts(payload.info)
        if counts is not None:  # integers: each a column's value when in range
            if not (min(counts) >= 0 and max(counts) <= MAX_INTEGER):
                counts = tuple(map(usage_count, counts))
            self.usage.add(self.last_message, *counts)
            self.last_has_usage = True
            self.parts.usage_message.append(self.last_message_line)
            self.parts.usage_line.append(line)

    def exec_command_end(self, payload: Payload, _: int) -> None:
        call_id, code = payload.call_id, payload.exit_code
        if call_id.__class__ is str and code.__class__ is int:
            self.exit_codes[call_id] = code
            row = self.result_rows.get(call_id)
            if row is not None and row not in self.held:  # held: its error code says
                self.errors[row] = (code != 0, False)

    def turn_context(self, payload: Payload, _: int) -> None:
        model = payload.model
        if model is not msgspec.UNSET:
            if model is not None and model.__class__ is not str:
                raise GiveUp
            self.model = self.share(model)

    def message_item(self, item: Payload, line: int) -> None:
        role = item.role
        if role == "assistant":
            text = self.rules.lone_text(item.content, "output_text")
            if text is None:
                self.output(line).extend(block["text"] for block in self.rules.output_blocks(
                    item) if block["type"] == "text" and block["text"])
            elif text:
                self.output(line).append(text)
            else:
                self.output(line)
        elif role == "user":
            self.user(item, line)
        elif role in ("developer", "system"):
            self.instructions(role, item, line)
        else:
            raise GiveUp

    def reasoning(self, _: Payload, line: int) -> None:
        self.output(line)  # its block has no text to show

    def output(self, line: int) -> list[str]:
        """Add the output item of ``line`` to the open step's assistant message (see
        ``_Rollout._output``); return the texts of that message, to add the item's to."""
        if self.message is None or self.answered or not self.step_open:
            self.close_message()
            self.open_step(line)
            row = self.add("assistant/message", line, self.turn, self.step, _APPEND)
            self.message_text = len(self.messages.rows)
            self.messages.add(row, "assistant", "model", None)
            if self.model is not None:
                self.models.add(row, "openai", self.model)
            self.message = self.last_message = row
            self.message_line = self.last_message_line = line
            self.last_has_usage = False
            self.answered = False
        self.parts.message.append(self.message_line)
        self.parts.line.append(line)
        return self.texts

    def close_message(self) -> None:
        """Give the open step's message its text (its blocks no longer change)."""
        if self.message is not None:
            text = "\n".join(self.texts)
            if self.message_text is None:
                self.put("messages", self.message, text=text)
            else:
                self.messages.put(self.message_text, 2, text)
            self.texts = []
            self.message = None

    def call(self, item: Payload, line: int) -> None:
        call_id, name, arguments = item.call_id, item.name, item.arguments
        if not (item.type == "function_call" and call_id and call_id.__class__ is str
                and name.__class__ is str and arguments.__class__ is str):
            fields = self.rules.call_fields(item.type, item)  # the common shape: these
            if fields is None:
                raise GiveUp
            call_id, name, arguments = fields
        name = self.share(name)
        self.output(line)  # its tool-call block has no text to show
        message: int = self.message  # type: ignore[assignment]
        self.request(message, call_id, name, arguments)
        if call_id in self.unanswered or call_id not in self.dispatched:  # else: answered
            self.unanswered[call_id] = (message, call_id)
        row = self.dispatched[call_id] = self.add("tool/call", line, self.turn, self.step)
        self.dispatches.add(row, call_id, name, arguments)

    def result(self, item: Payload, line: int) -> None:
        rules = self.rules
        call_id = item.call_id
        dispatch = self.dispatched.get(call_id) if call_id.__class__ is str else None
        if dispatch is None:
            raise GiveUp  # an output for no call
        text, failed = rules.output_text(item.output)
        coded = rules.coded_result(text)
        turn, step = self.turns[dispatch], self.steps[dispatch]
        _, call_id = self.unanswered.get(call_id, (None, call_id))  # as requested
        if coded is not None:  # held as written, with its error code
            code, reason = coded
            if reason == REJECTED:
                raise GiveUp  # a call that never ran: its dispatch is taken back at the end
            data = result_data("codex", call_id, text, turn, step, is_error=failed, code=code)
            self.result_rows[call_id] = self.hold("tool/result", data, line, "append",
                                                  [dispatch])
            self.reasons[call_id] = reason
        else:
            if call_id in self.exit_codes:
                failed = self.exit_codes[call_id] != 0
            row = self.result_rows[call_id] = self.add("tool/result", line, turn, step, _APPEND)
            self.errors[row] = (failed, False)
            self.answers.add(row, call_id)
            self.messages.add(row, "tool", "tool", text)
            self.results[0].append(row)
            self.results[1].append(dispatch)
        self.unanswered.pop(call_id, None)
        self.answered = True

    def user(self, item: Payload, line: int) -> None:
        rules = self.rules
        text = rules.lone_text(item.content, "input_text")
        if text is None:
            content = rules.input_blocks(item.content)
            source, text = rules.source_of(content), visible_text(content)
        else:
            source = rules.text_source(text)
        if source == "user":
            if not self.marked:
                self.open_turn(line, "completed")
            elif not self.turn_open:
                self.open_turn(line)
            self.close_step(line)
            self.close_message()
        row = self.add("user/message", line, op=_APPEND)
        self.messages.add(row, "user", source, text)
        if source == "user":
            self.prompts.append(row)

    def instructions(self, role: str, item: Payload, line: int) -> None:
        text = self.rules.lone_text(item.content, "input_text")
        if text is None:
            text = visible_text(self.rules.input_blocks(item.content))
        row = self.add(f"{role}/message", line, self.turn or MISSING, self.step or MISSING,
                       _APPEND)
        self.messages.add(row, role, "runtime-context", text)

    def end_turn(self, line: int, reason: Any) -> None:
        """Append the open turn's end row; one whose reason is more than a kind is held as
        written."""
        if reason.__class__ is str:
            super().end_turn(line, reason)
        else:
            self.hold("turn/end", {"turn": self.turn, "reason": reason}, line)

    # the end

    def call_reasons(self) -> dict[str, StatusReason]:
        """Return the reason of each call an aborted result answers, then of each requested
        call left without an output (``EventWriter.explain_unanswered``)."""
        reasons = dict(self.reasons)
        open_turn = self.turn if self.turn_open else None
        for call_id, (message, _) in self.unanswered.items():
            if call_id not in reasons:
                reasons[call_id] = self.rewound.get(message) or unanswered_reason(
                    self.turns[self.dispatched[call_id]], self.aborted, open_turn)
        return reasons

    def requested_calls(self) -> dict[str, tuple[int, int, int]]:
        """Return each requested call's turn, step and the row of the message that
        requested it, in order of request (``foreign.EventWriter.calls``)."""
        turns, steps, requests = self.turns, self.steps, self.requests
        message = dict(zip(requests.call_id, requests.row, strict=True))  # the last request's
        return {call_id: (turns[row], steps[row], message[call_id])
                for call_id, row in self.dispatched.items()}

    def answered_calls(self) -> set[str]:
        """Return the requested calls that have an output."""
        return set(self.dispatched).difference(self.unanswered)

    def flush(self) -> None:
        """Scatter the values staged so far into the columns (``StagedRows.scatter``, then
        the held rows' facts); an open step's message text is then set in its column."""
        self.scatter()
        for facts in self.held_rows:
            self.put_table(facts.seq[0], facts)
        self.held_rows = []
        if self.message is not None:
            self.message_text = None

    def table(self) -> EventTable:
        """Return the rows as the session's table (``EventTable.of`` of the dict route's
        events, column for column)."""
        self.close_message()
        self.flush()
        return self.staged_table()


def unanswered_reason(turn: int, aborted: set[int], open_turn: int | None) -> StatusReason:
    """Return why a call of ``turn`` has no output: the turn was aborted, is still open at
    the end of the file (``open_turn``), or was closed without it."""
    if turn in aborted:
        return ABORTED
    return AT_END if turn == open_turn else IN_CLOSED_STEP


def first_chunk_taken(first: Any) -> bool:
    """Return whether a rollout whose first chunk is ``first`` may go the typed route: it is
    bytes, with none of what ``reader.opened_chunks`` says of a file's start (a byte order
    mark, compression magic) before its lines."""
    return (isinstance(first, bytes) and bool(first) and not first.startswith(UTF8_BOM)
            and first[:2] not in UTF16_BOMS
            and not any(first.startswith(magic) for magic in COMPRESSION_MAGIC))


def _int(value: Any) -> int:
    """Return an int64 column's value (``table._int``)."""
    return value if value.__class__ is int and MISSING < value < 1 << 63 else MISSING


_MINUTES: dict[str, int | None] = {}
"""The epoch ms of each minute a ``YYYY-MM-DDTHH:MM`` prefix names (None: no time)."""
_SECONDS = {f":{second:02d}": second * 1000 for second in range(60)}
_MILLIS = {f".{millis:03d}Z": millis for millis in range(1000)}
_MINUTE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}")


def _epoch_ms(stamp: Any) -> int | None:
    """Return ``foreign.epoch_ms(stamp)``; Codex's own ``…THH:MM:SS.mmmZ`` stamps from the
    epoch ms of their minute (parsed once per minute)."""
    if stamp.__class__ is str:
        millis = _MILLIS.get(stamp[19:])
        if millis is not None:
            seconds = _SECONDS.get(stamp[16:19])
            if seconds is not None:
                prefix = stamp[:16]
                minute = _MINUTES.get(prefix, -1)
                if minute == -1:
                    minute = _minute(prefix)
                if minute is not None:
                    return minute + seconds + millis
    return epoch_ms(stamp)


def _minute(prefix: str) -> int | None:
    """Return the epoch ms of the minute ``prefix`` names, or None; kept for the next."""
    if len(_MINUTES) > 1 << 16:
        _MINUTES.clear()
    minute = _MINUTES[prefix] = epoch_ms(f"{prefix}:00Z") if _MINUTE.fullmatch(prefix) \
        else None
    return minute
