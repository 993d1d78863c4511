"""The typed check: well-formed blocks read without their dicts, for the load and the
streamed check.

The load (``tabled``) needs, per event, the facts the event table holds; ``ledgerviz check
--stream`` the type, seq and time, the call ids requested, dispatched and answered; both
need what the reader's checks decide. ``msgspec`` decodes exactly those fields into small
structs whose types are the shapes ``shapes.FAST_PAYLOAD_CHECKS`` accepts, skipping the
rest of each line in C; ``typed_block`` then checks the block a column at a time, and
``stream_block`` adds the streamed summary's facts.

It is a fast path only. A block is taken here when every line decodes into the
schema *and* the reader's check would say nothing about any of them; anything else
(a line that fails the schema, a seq gap, an orphan result, an unknown type, a
replace op, a seed marker) returns None, and the block is checked the usual way, so
its diagnostics are exactly the reader's. Lines whose validity msgspec and orjson
could judge differently are screened out per block first (``_may_differ``).
"""

from __future__ import annotations

import codecs
import re
import sys
from bisect import bisect_right
from collections.abc import Callable, Container, Iterator, Sequence
from itertools import chain, repeat
from typing import Annotated, Any, Literal, NamedTuple, Union

import msgspec
import orjson
from msgspec import UNSET, Meta, Struct, UnsetType

from ledgerviz.ledger.boundaries import OpenBoundaries
from ledgerviz.ledger.checks import CheckState
from ledgerviz.ledger.lineage import SEED_MARKER
from ledgerviz.ledger.shapes import MAX_INTEGER, MIN_INTEGER
from ledgerviz.ledger.table import MISSING
from ledgerviz.ledger.vocabulary import (
    CHUNK_EVENT,
    KNOWN_EVENT_TYPES,
    PACKED_CHUNK_ROWS,
    surface_types,
)
from ledgerviz.recovery.nesting import may_nest_deeper

Int = Annotated[int, Meta(ge=MIN_INTEGER, le=MAX_INTEGER)]
"""An integer the runtime could have written (``shapes.integer_problem`` accepts it)."""


class _Source(Struct, gc=False):
    kind: str | None = None
    provider: str | None = None
    model: str | None = None


class _ResultSource(_Source):
    callId: str | None = None


class _Block(Struct, gc=False):
    type: str | None = None
    id: str | None = None
    name: str | None = None
    text: str | UnsetType | None = UNSET
    """The text (``UNSET`` when absent)."""
    arguments: str | None = None
    toolCallId: str | None = None
    isError: bool | None = None
    content: list[_Block] | None = None
    """The blocks a ``tool-result`` block nests (the table reads their text)."""


class _Message(Struct, gc=False):
    role: str | None = None
    source: _Source | None = None
    content: list[_Block] | None = None


class _UserMessage(_Message):
    turn: Int | None = None
    step: Int | None = None


class _ResultMessage(_Message):
    source: _ResultSource | None = None
    toolCallId: str | None = None
    isError: bool | UnsetType | None = UNSET
    id: Any = None


class _TurnStep(Struct, gc=False):
    turn: Int | None = None
    step: Int | None = None


Count = Annotated[int, Meta(ge=0, le=MAX_INTEGER)]
"""A usage count the frames add (``table._count``); another number is read the usual way."""


class _Usage(Struct, gc=False):
    inputTokens: Count = MISSING
    outputTokens: Count = MISSING
    cacheReadTokens: Count = MISSING
    reasoningTokens: Count = MISSING


class _CarriesMessage(_TurnStep):
    message: _Message | None = None
    usage: _Usage | None = None


class _ToolCall(_TurnStep, kw_only=True):
    callId: str
    name: str | None = None
    arguments: str | None = None


class _Error(Struct, gc=False):
    name: str | None = None
    code: str | None = None


class _ToolResult(_TurnStep):
    message: _ResultMessage | None = None
    error: _Error | None = None


class _Reason(Struct, gc=False):
    kind: str


class _TurnEnd(_TurnStep):
    reason: _Reason | None = None


class _Route(_TurnStep):
    provider: str | None = None
    model: str | None = None


class _Labels(Struct, gc=False):
    provider: str | None = None
    model: str | None = None


class _Header(Struct, gc=False):
    config: _Labels | None = None


class _RequestHeader(_TurnStep):
    header: _Header | None = None


class _Rewind(_TurnStep):
    start: Int | None = None
    end: Int | None = None
    shadowedSeqs: list[Int] | None = None


class _Restore(_TurnStep):
    rewindSeq: Int | None = None


_PAYLOADS: dict[str, type[Struct]] = {
    "assistant/message": _CarriesMessage,
    "system/message": _CarriesMessage,
    "developer/message": _CarriesMessage,
    "user/message": _UserMessage,
    "tool/call": _ToolCall,
    "tool/result": _ToolResult,
    "turn/end": _TurnEnd,
    "request/header": _RequestHeader,
    "request/context": _Route,
    "surface/rewind": _Rewind,
    "surface/restore": _Restore,
}
"""The payload schema per event type with a payload check or facts the event table
(``typed_table``) reads; every other type: ``_TurnStep``."""


class _Event(Struct, tag_field="type", gc=False):
    seq: Int | UnsetType = UNSET
    time: Int | None = None


_SURFACE_FIELDS = [
    ("surfaceOp", Literal["append"]),
    ("sourceEventSeqs", list[Int] | UnsetType, UNSET),
]
"""A surface event's: ``surfaceOp`` "append" (a replace op is checked the usual way) and
plain ``sourceEventSeqs``."""

_PLAIN_FIELDS = [("surfaceOp", UnsetType, UNSET), ("sourceEventSeqs", UnsetType, UNSET)]
"""Any other event's: neither (``UnsetType`` decodes from nothing)."""

_READ_APART = frozenset({"session", SEED_MARKER, *PACKED_CHUNK_ROWS})
"""Lines the reader handles apart (a second header, packed chunk rows) or reads the
payload of (the seed marker): their blocks are checked the usual way."""

_LETTERS = {"turn/start": ord("T"), "turn/end": ord("E"), "step/start": ord("S"),
            "step/end": ord("F")}
"""The boundary types as one letter each (every other type: ``.``), so a block's turns and
steps are followed by bytes methods (``_boundaries_after``)."""
_TURN_LETTERS_ONLY = b"SF."
"""What deleting leaves the turn boundaries alone."""
_STEP_LEVEL = bytes.maketrans(b"TE", b"FF")
"""Turn boundaries close the open step: read at the step level as a step/end."""


class _Schema(NamedTuple):
    decode: Callable[[bytes], _Event]
    kinds: dict[type, str]
    """Each event class's type."""
    letters: dict[type, int]
    """Each event class's letter (see ``_LETTERS``)."""


def _schema(surface: frozenset[str], chunks: bool) -> _Schema:
    """Return the decoder of the events of a format version with ``surface`` types (and
    ``assistant/chunk`` events when ``chunks``: before version 2)."""
    kinds = {}
    known = KNOWN_EVENT_TYPES if chunks else KNOWN_EVENT_TYPES - {CHUNK_EVENT}
    for kind in sorted(known | surface - _READ_APART):
        fields = [("data", _PAYLOADS.get(kind, _TurnStep)),
                  *(_SURFACE_FIELDS if kind in surface else _PLAIN_FIELDS)]
        event = msgspec.defstruct("Event", fields, bases=(_Event,), tag=kind, kw_only=True)
        kinds[event] = kind
    letters = {event: _LETTERS.get(kind, ord(".")) for event, kind in kinds.items()}
    decoder = msgspec.json.Decoder(Union[tuple(kinds)])  # type: ignore[valid-type]  # noqa: UP007
    return _Schema(decoder.decode, kinds, letters)


_SCHEMAS: dict[tuple[frozenset[str], bool], _Schema] = {}


def _schema_of(version: int | None) -> _Schema:
    """Return the schema of ``version``'s events (built once per set of surface types and
    whether chunk events are known: ``checks._kind_table``)."""
    key = surface_types(version), version is None or version < 2
    schema = _SCHEMAS.get(key)
    if schema is None:
        schema = _SCHEMAS[key] = _schema(*key)
    return schema


class DecodedOnRead(Sequence[dict[str, Any]]):
    """The ``data`` payloads of a block's lines, each decoded when it is read."""

    __slots__ = ("_lines",)

    def __init__(self, lines: Sequence[bytes]) -> None:
        self._lines = lines

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [orjson.loads(line)["data"] for line in self._lines[index]]
        return orjson.loads(self._lines[index])["data"]


Fact = tuple[str, Any, Any, Any]
"""What an event tells the streamed summary (``streams.recovery``), in log order:

- ``("request", id, seq, (turn, step, name))`` per tool-call block of an assistant/message;
- ``("dispatch", callId, seq, None)`` per tool/call;
- ``("answer", call id, error code, is_error)`` per tool/result, ``"result"`` instead of
  ``"answer"`` when the result is also a message of the model's context (a surface
  event: its ``pairing_shape`` answers that call id);
- ``("user", typed by the human, None, None)`` per user/message;
- ``("context", seq, (type, role), shape)`` for a surface event that gives a message of the
  model's context (``recovery.context.context_message``), after the facts above; ``shape``
  is its ``recovery.pairing_memo.pairing_shape``;
- ``("close", type, seq, time)`` per step/end and turn/end, ``("turn", turn, seq, time)``
  per turn/start;
- ``("edit", line, None, None)`` per surface/rewind, surface/restore and replace op.
"""

_TEXT = ("text", None)
"""A text block as ``pairing_shape`` reads it."""


class Answers(NamedTuple):
    """What the tool/results of a block answer, one item per result (in log order)."""

    checked: list[Any]
    """The call id the reader's check reads (``_answer``)."""
    call_id: list[Any]
    """The call id as ``recovery.payload.payload_result_facts`` reads it."""
    code: list[Any]
    """``error.code``."""
    is_error: list[bool]


class Messages(NamedTuple):
    """The messages of the events of one message-producing type in a block, in log order."""

    messages: list[Any]
    """Each event's message struct (None: none)."""
    texts: list[str | None]
    """Each message's text when its content is one text block (or none), else None."""
    calls: dict[int, list[_Block]]
    """The tool-call blocks of each message that has some, by its index here (ascending)."""


class TypedBlock(NamedTuple):
    """A block of events the typed check accepted (every line fits the schema and the
    reader's check would say nothing), as the structs decoded and what the check read."""

    types: list[str]
    """Each event's type."""
    seqs: list[int]
    datas: list[Any]
    """Each event's ``data`` struct."""
    lines: range
    """The file line of each event."""
    events: list[Any]
    """The decoded events (structs)."""
    rows: dict[str, list[int]]
    """The rows of each type present, ascending."""
    messages: dict[str, Messages]
    """The messages of each message-producing type present (``MESSAGE_TYPES``)."""
    requests: list[tuple[int, _Block]]
    """The tool-call blocks of the assistant messages, each with its row, in log order."""
    answers: Answers
    """What the tool/results answer, in the order of ``rows["tool/result"]``."""


MESSAGE_TYPES = ("user/message", "system/message", "developer/message", "assistant/message",
                 "tool/result")
"""The types whose payload gives a message (§7): ``user/message``'s is the payload itself."""

def typed_block(
    lines: Sequence[bytes], block: bytes, marks: bytes, first_line: int, state: CheckState,
    version: int | None,
) -> TypedBlock | None:
    """Return the events of ``lines`` (file lines from ``first_line``, split from
    ``block``, whose ``numbers.number_marks`` are ``marks``) as structs, or None when they
    must be checked the usual way: a line fails the schema, or the reader's check would
    record a diagnostic. ``state`` moves on only when a block is returned. The caller
    screens out blocks that may hold integers beyond 64 bits
    (``numbers.may_hold_big_integers``).

    The check reads the block a column at a time (no Python step per event but the few
    a column needs), so the load pays little beyond the decode.
    """
    numbering = state.numbering
    if not lines or numbering.repeat_end is not None:
        return None
    events = decoded(lines, block, marks, version)
    if events is None:
        return None
    count, expected = len(events), numbering.expected
    seqs = [event.seq for event in events]
    if seqs != list(range(expected, expected + count)):
        return None  # a gap, or an event without a seq: the reader's check records either
    schema = _schema_of(version)
    classes = list(map(type, events))
    of_class: dict[type, list[int]] = {cls: [] for cls in set(classes)}
    for row, cls in enumerate(classes):
        of_class[cls].append(row)
    rows = {schema.kinds[cls]: found for cls, found in of_class.items()}
    datas = [event.data for event in events]
    boundaries = _boundaries_after(state.boundaries, bytes(map(schema.letters.__getitem__,
                                                               classes)), datas, first_line)
    if boundaries is None:
        return None  # a turn or step inside an open one: warned the usual way
    surface = surface_types(version)
    messages = _messages(rows, datas, surface)
    if messages is None:
        return None
    requests = _requests(rows.get("assistant/message", ()), messages.get("assistant/message"))
    answers = _answers([datas[row] for row in rows.get("tool/result", ())],
                       messages["tool/result"].messages if "tool/result" in messages else [])
    fresh = [block.id for _, block in requests] if "assistant/message" in surface else []
    if len(set(fresh)) != len(fresh) or not state.requested.isdisjoint(fresh):
        return None  # requested again: warned the usual way
    if "tool/result" in surface and not _all_asked(
            rows.get("tool/result", ()), answers.checked, requests if fresh else (),
            state.requested):
        return None  # names no call, or a call never requested
    turn_cuts = sorted([*rows.get("turn/start", ()), *rows.get("turn/end", ())])
    dispatched = _once_per_turn(rows.get("tool/call", ()),
                                [datas[row].callId for row in rows.get("tool/call", ())],
                                turn_cuts, state.dispatched)
    answered = _once_per_turn(rows.get("tool/result", ()), answers.checked, turn_cuts,
                              state.answered)
    if dispatched is None or answered is None:
        return None  # dispatched or answered again in the turn: warned the usual way
    numbering.expected += count
    state.kept += count
    state.numbered = True
    state.boundaries = boundaries
    state.requested.update(fresh)
    state.dispatched, state.answered = dispatched, answered
    kinds = schema.kinds
    return TypedBlock([kinds[cls] for cls in classes], seqs, datas,
                      range(first_line, first_line + count), events, rows, messages, requests,
                      answers)


def _boundaries_after(opened: OpenBoundaries, letters: bytes, datas: list[Any],
                      first_line: int) -> OpenBoundaries | None:
    """Return the turn and step open after a block whose events are ``letters`` (see
    ``_LETTERS``) with payloads ``datas``, from file line ``first_line``; None when one
    opens inside an open one (what ``OpenBoundaries.see`` warns of)."""
    turns = (b"T" if opened.turn is not None else b"E") + letters.translate(
        None, _TURN_LETTERS_ONLY)
    steps = (b"S" if opened.step is not None else b"F") + letters.translate(_STEP_LEVEL, b".")
    if b"TT" in turns or b"SS" in steps:
        return None
    after = opened.copy()
    last = max(letters.rfind(b"T"), letters.rfind(b"E"))
    if last >= 0:
        after.turn = (datas[last].turn, first_line + last) if letters[last] == _LETTERS[
            "turn/start"] else None
    last = max(last, letters.rfind(b"S"), letters.rfind(b"F"))
    if last >= 0:
        data = datas[last]
        after.step = (data.turn, data.step, first_line + last) if letters[last] == _LETTERS[
            "step/start"] else None
    return after


def _messages(rows: dict[str, list[int]], datas: list[Any], surface: frozenset[str]
              ) -> dict[str, Messages] | None:
    """Return the messages of the message types' rows (see ``TypedBlock.messages``), or
    None when one is a message the reader's check records something of: an assistant
    message (or result) without one (or without content), a user/message payload ``{}``,
    a tool-call block without a string id or with arguments that may nest deep; or one
    the streamed check reads the usual way (text nested in a tool-result block)."""
    found: dict[str, Messages] = {}
    for kind in MESSAGE_TYPES:
        kind_rows = rows.get(kind)
        if kind_rows is None:
            continue
        payloads = [datas[row] for row in kind_rows]
        if kind == "user/message":
            messages = payloads
            if None in [message.role for message in messages] and any(
                    m.role is None and m.source is None and m.content is None
                    for m in messages):
                return None  # a payload {} gives no message: read the usual way
        else:
            messages = [data.message for data in payloads]
            if kind == "assistant/message" and (None in messages or None in [
                    message.content for message in messages]):
                return None  # the runtime's repair scan fails on it: an error to record
            if kind == "tool/result" and (None in messages or None in [
                    message.source for message in messages]):
                return None  # the runtime's repair scan fails on it: an error to record
        texts = ["" if message is None else (content[0].text or "")
                 if (content := message.content) and len(content) == 1
                 and content[0].type == "text" else None for message in messages]
        others = [index for index, text in enumerate(texts) if text is None]
        calls: dict[int, list[_Block]] = {}
        for index in others:
            message = messages[index]
            blocks = _call_blocks(message)
            if blocks is None:
                return None  # ``shapes._message_call_ids`` would call it suspect
            if blocks:
                calls[index] = blocks
            if (kind in surface and kind != "tool/result" and message.content and any(
                    block.type == "tool-result" for block in message.content)
                    and _shape(message, blocks) is None):
                return None  # nested results: read the usual way
        found[kind] = Messages(messages, texts, calls)
    return found


def _requests(rows: Sequence[int], messages: Messages | None) -> list[tuple[int, _Block]]:
    """Return the tool-call blocks of the assistant messages at ``rows``, each with its row."""
    if messages is None:
        return []
    return [(rows[index], block) for index, blocks in messages.calls.items()
            for block in blocks]


def _answers(results: list[_ToolResult], messages: list[_ResultMessage]) -> Answers:
    """Return what the tool/results ``results`` (whose messages are ``messages``) answer."""
    call_ids = [message.source.callId for message in messages]
    if None in call_ids:  # named elsewhere in the message: read one at a time
        facts = list(map(_answer, results))
        checked, call_ids, codes, errors = (list(column) for column in zip(*facts, strict=True))
        return Answers(checked, call_ids, codes, errors)
    flags = [message.isError for message in messages]
    if UNSET in flags:  # read from the tool-result block
        errors = [_wrapped_error(message) if flag is UNSET else flag is True
                  for flag, message in zip(flags, messages, strict=True)]
    else:
        errors = [flag is True for flag in flags]
    codes = [error.code if (error := result.error) is not None else None for result in results]
    return Answers(call_ids, call_ids, codes, errors)


def _all_asked(rows: Sequence[int], answered: list[Any], requests: Sequence[tuple[int, _Block]],
               requested: Container[str]) -> bool:
    """Return whether each result (at ``rows``, answering ``answered``) answers a call an
    earlier assistant message of the block requests, or one ``requested`` before it."""
    asked = {block.id: row for row, block in requests}
    return all(asked.get(call_id, row) < row or call_id in requested
               for row, call_id in zip(rows, answered, strict=True))


def _once_per_turn(rows: Sequence[int], ids: list[Any], turn_cuts: list[int],
                   before: set[Any]) -> set[Any] | None:
    """Return the ids (at ``rows``) of the turn open at the block's end, with ``before``
    (the ids of the turn open at its start) when no turn boundary is at ``turn_cuts``;
    None when an id comes twice in one turn."""
    if not turn_cuts:
        if len(set(ids)) != len(ids) or not before.isdisjoint(ids):
            return None
        return before.union(ids)
    turns = list(map(bisect_right, repeat(turn_cuts, len(rows)), rows))
    if len(set(zip(turns, ids, strict=True))) != len(ids) or not before.isdisjoint(
            [call_id for turn, call_id in zip(turns, ids, strict=True) if turn == 0]):
        return None
    last = len(turn_cuts)
    return {call_id for turn, call_id in zip(turns, ids, strict=True) if turn == last}


class StreamBlock(NamedTuple):
    """A block of events checked without diagnostics, as the streamed summary reads it."""

    types: list[str]
    seqs: list[int]
    times: list[int | None]
    datas: Sequence[dict[str, Any]]
    lines: range
    facts: list[Fact]


def stream_block(
    lines: Sequence[bytes], block: bytes, marks: bytes, first_line: int, state: CheckState,
    version: int | None,
) -> StreamBlock | None:
    """Return the events of ``lines`` as the streamed summary reads them, or None when
    they must be checked the usual way (see ``typed_block``, whose arguments these are)."""
    typed = typed_block(lines, block, marks, first_line, state, version)
    if typed is None:
        return None
    times = [event.time for event in typed.events]
    return StreamBlock(typed.types, typed.seqs, times, DecodedOnRead(lines), typed.lines,
                       _facts(typed, times, version))


def _facts(typed: TypedBlock, times: list[int | None], version: int | None) -> list[Fact]:
    """Return the facts of a typed block's events, in log order (see ``Fact``).

    They are made a type at a time from what the check read, as one tuple of facts per
    event (an assistant message gives one per call it requests, then its context
    message), then taken in log order by each event's type."""
    surface = surface_types(version)
    rows, datas, seqs = typed.rows, typed.datas, typed.seqs
    facts: dict[str, Iterator[tuple[Fact, ...]]] = {kind: repeat(()) for kind in rows}
    found = rows.get("tool/call", ())
    facts["tool/call"] = iter([(("dispatch", datas[row].callId, seqs[row], None),)
                               for row in found])
    answer = "result" if "tool/result" in surface else "answer"
    answers = typed.answers
    facts["tool/result"] = iter([((answer, call_id, code, is_error),) for call_id, code, is_error
                                 in zip(answers.call_id, answers.code, answers.is_error,
                                        strict=True)])
    found = rows.get("turn/start", ())
    facts["turn/start"] = iter([(("turn", datas[row].turn, seqs[row], times[row]),)
                                for row in found])
    for kind in ("step/end", "turn/end"):
        facts[kind] = iter([(("close", kind, seqs[row], times[row]),)
                            for row in rows.get(kind, ())])
    for kind in ("surface/rewind", "surface/restore"):
        facts[kind] = iter([(("edit", typed.lines[row], None, None),)
                            for row in rows.get(kind, ())])
    for kind, messages in typed.messages.items():
        if kind != "tool/result":  # a result's context message is its answer fact's
            facts[kind] = iter(_message_facts(kind, rows[kind], messages, typed,
                                              kind in surface))
    return list(chain.from_iterable(map(next, map(facts.__getitem__, typed.types))))


def _message_facts(kind: str, rows: Sequence[int], found: Messages, typed: TypedBlock,
                   in_context: bool) -> list[tuple[Fact, ...]]:
    """Return the facts of the events at ``rows`` of one message type (not ``tool/result``)
    whose messages are ``found``; ``in_context``: its messages are the model's context."""
    messages, calls, seqs = found.messages, found.calls, typed.seqs
    if in_context:
        facts = [(("context", seqs[row], (kind, message.role),
                   _shape(message, calls.get(index, _NO_CALLS))),)
                 if message is not None and (kind == "user/message" or message.content)
                 else () for index, (row, message) in enumerate(zip(rows, messages,
                                                                    strict=True))]
    else:
        facts = [()] * len(rows)
    if kind == "user/message":
        return [(("user", (source := message.source) is not None and source.kind == "user",
                  None, None), *context) for message, context in zip(messages, facts,
                                                                     strict=True)]
    if kind == "assistant/message":
        for index, blocks in calls.items():
            row = rows[index]
            data, seq = typed.datas[row], seqs[row]
            facts[index] = (*[("request", block.id, seq, (data.turn, data.step, block.name))
                              for block in blocks], *facts[index])
    return facts


_NO_CALLS: list[_Block] = []
"""The tool-call blocks of a message without any."""


def decoded(lines: Sequence[bytes], block: bytes, marks: bytes, version: int | None
            ) -> list[Any] | None:
    """Return the typed events of ``lines`` (split from ``block``, whose number marks are
    ``marks``), or None when a line fails the schema or msgspec and orjson may judge a
    line differently (``_may_differ``)."""
    if _may_differ(block, marks) or sys.getrecursionlimit() > ORJSON_DEPTH:
        return None
    try:
        return list(map(_schema_of(version).decode, lines))
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None


def _call_blocks(message: _Message | None) -> list[_Block] | None:
    """Return a message's tool-call blocks, or None when one has no string id or arguments
    that may nest deep (``shapes._message_call_ids`` would call it suspect)."""
    if message is None or not message.content:
        return []
    blocks = []
    for block in message.content:
        if block.type == "tool-call":
            if block.id.__class__ is not str or (
                    block.arguments is not None and may_nest_deeper(block.arguments)):
                return None
            blocks.append(block)
    return blocks


def _shape(message: _Message, calls: list[_Block]) -> tuple[str, list[Any]] | None:
    """Return ``pairing_shape`` of the context message ``message`` (not a tool result) whose
    tool-call blocks are ``calls``; None when its text is nested in a ``tool-result`` block."""
    if message.role == "assistant" and calls:
        return "assistant", [("tool_use", block.id) for block in calls]
    texts = _has_text(message.content or ())
    if texts is None:
        return None
    return "assistant" if message.role == "assistant" else "user", [_TEXT] if texts else []


def _has_text(blocks: list[_Block]) -> bool | None:
    """Return ``providers.has_text`` of content blocks (None: a ``tool-result`` block, whose
    nested blocks are not decoded)."""
    for block in blocks:
        kind = block.type
        if kind == "text":
            text = block.text
            if text is None or (text is not UNSET and text != ""):
                return True
        elif kind == "tool-result":
            return None
        elif kind not in ("reasoning", "tool-call"):
            return True
    return False


def _answer(data: _ToolResult) -> tuple[str | None, Any, str | None, bool]:
    """Return the call id the reader's check reads from a tool/result, then its call id,
    error code and is_error as ``recovery.payload.payload_result_facts`` reads them."""
    code = data.error.code if data.error is not None else None
    message = data.message
    if message is None:
        return None, None, code, False
    source = message.source
    if source is not None and source.callId is not None:
        call_id = source.callId
        checked = call_id
    elif message.toolCallId is not None:
        call_id = checked = message.toolCallId
    else:
        wrapper = _wrapper(message)
        call_id = wrapper.toolCallId if wrapper is not None else None
        first = message.content[0].toolCallId if message.content else None
        checked = first if first.__class__ is str else None
    flag = message.isError
    return checked, call_id, code, bool(flag) if flag is not UNSET else _wrapped_error(message)


def _wrapper(message: _ResultMessage) -> _Block | None:
    """Return a result message's first ``tool-result`` block (None: none)."""
    return next((b for b in message.content or () if b.type == "tool-result"), None)


def _wrapped_error(message: _ResultMessage) -> bool:
    """Return the is_error of a result message without its own flag: its tool-result
    block's (``payload_result_facts``)."""
    wrapper = _wrapper(message)
    return wrapper is not None and bool(wrapper.isError)


ORJSON_DEPTH = 1024
"""How deep orjson nests arrays and objects. msgspec nests as deep as Python's recursion
limit allows, less the stack in use: under this limit it refuses every line orjson
refuses for its depth."""

_HUGE_EXPONENT = re.compile(rb"e000+[,}\]\s]")
"""In ``number_marks``: a positive exponent of three digits or more ending a number, the
only numbers (with no run of 19 digits, see ``numbers``) that may be beyond a double."""


def _may_differ(block: bytes, marks: bytes) -> bool:
    """Return whether msgspec and orjson may judge a line of ``block`` differently.

    msgspec skips the fields outside the schema without checking that their strings are
    valid UTF-8 or that their numbers fit a double (orjson refuses both), so a block
    with a byte that is not UTF-8, or with a number of a large exponent, goes the usual
    way. An incomplete character at the block's end belongs to the next block.
    """
    if not block.isascii():
        try:
            codecs.utf_8_decode(block, "strict", False)
        except UnicodeDecodeError:
            return True
    return _HUGE_EXPONENT.search(marks) is not None
