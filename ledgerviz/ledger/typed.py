"""A typed decoder for the streamed check: well-formed blocks read without their dicts.

``ledgerviz check --stream`` needs, per event, the type, seq and time, the call ids
requested, dispatched and answered, and what the reader's checks decide; the payloads
themselves are dropped. ``msgspec`` decodes exactly those fields into small structs
whose types are the shapes ``shapes.FAST_PAYLOAD_CHECKS`` accepts, skipping the rest
of each line in C.

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
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NamedTuple, Union

import msgspec
import orjson
from msgspec import UNSET, Meta, Struct, UnsetType

from ledgerviz.ledger.boundaries import BOUNDARY_TYPES, TURN_BOUNDARIES
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

_ROLES = {"assistant/message": "request", "tool/call": "dispatch", "tool/result": "answer",
          "system/message": "message", "developer/message": "message", "user/message": "user",
          "surface/rewind": "edit", "surface/restore": "edit",
          **dict.fromkeys(BOUNDARY_TYPES, "boundary")}
"""What reading an event of these types takes beyond its schema."""


class _Schema(NamedTuple):
    decode: Callable[[bytes], _Event]
    kinds: dict[type, str]
    """Each event class's type."""
    roles: dict[type, str]
    """Each event class's entry in ``_ROLES``."""


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
    roles = {event: _ROLES[kind] for event, kind in kinds.items() if kind in _ROLES}
    decoder = msgspec.json.Decoder(Union[tuple(kinds)])  # type: ignore[valid-type]  # noqa: UP007
    return _Schema(decoder.decode, kinds, roles)


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


class StreamBlock(NamedTuple):
    """A block of events checked without diagnostics, as the streamed summary reads it."""

    types: list[str]
    seqs: list[int]
    times: list[int | None]
    datas: Sequence[dict[str, Any]]
    lines: range
    facts: list[Fact]
    events: list[Any]
    """The decoded events (structs), from which ``typed_table.table_of`` fills the table."""


def stream_block(
    lines: Sequence[bytes], block: bytes, marks: bytes, first_line: int, state: CheckState,
    version: int | None,
) -> StreamBlock | None:
    """Return the events of ``lines`` (file lines from ``first_line``, split from
    ``block``, whose ``numbers.number_marks`` are ``marks``), or None when they must be
    checked the usual way: a line fails the schema, or the reader's check would record a
    diagnostic. ``state`` moves on only when a block is returned. The caller screens
    out blocks that may hold integers beyond 64 bits (``numbers.may_hold_big_integers``).
    """
    numbering = state.numbering
    if not lines or numbering.repeat_end is not None:
        return None
    events = decoded(lines, block, marks, version)
    if events is None:
        return None
    schema = _schema_of(version)
    seqs = _numbered([event.seq for event in events], numbering.expected)
    if seqs is None:
        return None
    surface, requested = surface_types(version), state.requested
    fresh: set[str] = set()  # requested in this block: added to ``requested`` on success
    dispatched: set[str] = set()  # likewise for ``state.dispatched`` and ``state.answered``
    answered_here: set[str] = set()
    dispatched_before, answered_before = state.dispatched, state.answered
    boundaries = state.boundaries.copy()  # taken on success
    facts: list[Fact] = []
    add = facts.append
    results_surface = "tool/result" in surface
    requests_surface = "assistant/message" in surface
    roles, kinds = schema.roles, schema.kinds
    for index, event in enumerate(events):
        role = roles.get(event.__class__)
        if role is None:
            continue
        data = event.data
        if role == "boundary":
            kind = kinds[event.__class__]
            if boundaries.see(kind, data.turn, data.step, first_line + index) is not None:
                return None  # a turn or step inside an open one: warned the usual way
            if kind in TURN_BOUNDARIES:  # the turn's dispatched and answered ids forgotten
                dispatched_before, answered_before = _NONE, _NONE
                dispatched, answered_here = set(), set()
            if kind == "turn/start":
                add(("turn", data.turn, seqs[index], event.time))
            elif kind != "step/start":
                add(("close", kind, seqs[index], event.time))
        elif role == "dispatch":
            call_id = data.callId
            if call_id in dispatched or call_id in dispatched_before:
                return None  # dispatched again: warned the usual way
            dispatched.add(call_id)
            add(("dispatch", call_id, seqs[index], None))
        elif role == "answer":
            if data.message is None or data.message.source is None:
                return None  # the runtime's repair scan fails on it: an error to record
            answer = _answer(data)
            if answer is None:
                return None
            answered, call_id, code, is_error = answer
            if results_surface and answered not in fresh and answered not in requested:
                return None  # names no call, or a call never requested
            if answered in answered_here or answered in answered_before:
                return None  # answered again: warned the usual way
            answered_here.add(answered)
            add(("result" if results_surface else "answer", call_id, code, is_error))
        elif role == "edit":
            add(("edit", first_line + index, None, None))
        else:
            message = data if role == "user" else data.message
            if role == "request" and (message is None or message.content is None):
                return None  # the runtime's repair scan fails on it: an error to record
            blocks = _call_blocks(message)
            if blocks is None:
                return None
            seq = seqs[index]
            if role == "request":
                place = (data.turn, data.step)
                facts.extend([("request", block.id, seq, (*place, block.name))
                              for block in blocks])
                if requests_surface:
                    for block in blocks:
                        call_id = block.id
                        if call_id in fresh:
                            return None  # requested again: warned the usual way
                        fresh.add(call_id)
            elif role == "user":
                if message.role is None and message.source is None and message.content is None:
                    return None  # a payload {} gives no message: read the usual way
                source = message.source
                add(("user", source is not None and source.kind == "user", None, None))
            kind = kinds[event.__class__]
            if kind in surface and message is not None and (role == "user" or message.content):
                shape = _shape(message, blocks)
                if shape is None:
                    return None  # nested results: read the usual way
                add(("context", seq, (kind, message.role), shape))
    if not requested.isdisjoint(fresh):
        return None  # requested before this block: warned the usual way
    numbering.expected += len(events)
    state.kept += len(events)
    state.boundaries = boundaries
    requested.update(fresh)
    if dispatched_before is _NONE:  # a turn began or ended in the block
        state.dispatched, state.answered = dispatched, answered_here
    else:
        state.dispatched |= dispatched
        state.answered |= answered_here
    types = [kinds[event.__class__] for event in events]
    times = [event.time for event in events]
    return StreamBlock(types, seqs, times, DecodedOnRead(lines),
                       range(first_line, first_line + len(lines)), facts, events)


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


_NONE: frozenset[str] = frozenset()
"""The ids seen before a turn boundary of the block: none."""


def _numbered(seqs: list[Any], expected: int) -> list[int] | None:
    """Return the seqs of a block of ``seq`` values that count on from ``expected`` without
    a gap; None otherwise (a gap, or an event without a seq: the reader's check records
    either)."""
    return seqs if seqs == list(range(expected, expected + len(seqs))) else None


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


def _answer(data: _ToolResult) -> tuple[str | None, Any, str | None, bool] | None:
    """Return the call id the reader's check reads from a tool/result, then its call id,
    error code and is_error as ``recovery.events.payload_result_facts`` reads them; None: a
    suspect tool-call block."""
    code = data.error.code if data.error is not None else None
    message = data.message
    if message is None:
        return None, None, code, False
    if _call_blocks(message) is None:
        return None
    wrapper = next((b for b in message.content or () if b.type == "tool-result"), None)
    source = message.source
    if source is not None and source.callId is not None:
        call_id = source.callId
        checked = call_id
    elif message.toolCallId is not None:
        call_id = checked = message.toolCallId
    else:
        call_id = wrapper.toolCallId if wrapper is not None else None
        first = message.content[0].toolCallId if message.content else None
        checked = first if first.__class__ is str else None
    if message.isError is not UNSET:
        is_error = bool(message.isError)
    else:
        is_error = wrapper is not None and bool(wrapper.isError)
    return checked, call_id, code, is_error


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
