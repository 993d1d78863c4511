"""The typed schema: the ``msgspec`` structs an event's fields decode into, and the decode.

The structs hold exactly the fields the typed check (``typed``), the event table
(``typed_table``) and the streamed facts (``typed_stream``) read, typed as the shapes
``shapes.FAST_PAYLOAD_CHECKS`` accepts; msgspec skips the rest of each line in C. A line
that fails the schema, or a block whose lines msgspec and orjson could judge differently
(``may_differ``), is not decoded here: the reader checks it the usual way.
"""

from __future__ import annotations

import codecs
import re
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NamedTuple, Union

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from ledgerviz.ledger.lineage import SEED_MARKER
from ledgerviz.ledger.shapes import MAX_INTEGER, MIN_INTEGER
from ledgerviz.ledger.table import MISSING
from ledgerviz.ledger.vocabulary import (
    CHUNK_EVENT,
    KNOWN_EVENT_TYPES,
    PACKED_CHUNK_ROWS,
    surface_types,
)
from ledgerviz.recovery.payload import surface_op_code

Int = Annotated[int, Meta(ge=MIN_INTEGER, le=MAX_INTEGER)]
"""An integer the runtime could have written (``shapes.integer_problem`` accepts it)."""


class Source(Struct, gc=False):
    kind: str | None = None
    provider: str | None = None
    model: str | None = None


class ResultSource(Source):
    callId: str | None = None


class Block(Struct, gc=False):
    type: str | None = None
    id: str | None = None
    name: str | None = None
    text: str | UnsetType | None = UNSET
    """The text (``UNSET`` when absent)."""
    arguments: str | None = None
    toolCallId: str | None = None
    isError: bool | None = None
    content: list[Block] | None = None
    """The blocks a ``tool-result`` block nests (the table reads their text)."""


class Message(Struct, gc=False):
    role: str | None = None
    source: Source | None = None
    content: list[Block] | None = None


class UserMessage(Message):
    turn: Int | None = None
    step: Int | None = None


class ResultMessage(Message):
    source: ResultSource | None = None
    toolCallId: str | None = None
    isError: bool | UnsetType | None = UNSET
    id: Any = None


class TurnStep(Struct, gc=False):
    turn: Int | None = None
    step: Int | None = None


Count = Annotated[int, Meta(ge=0, le=MAX_INTEGER)]
"""A usage count the frames add (``table._count``); another number is read the usual way."""


class Usage(Struct, gc=False):
    inputTokens: Count = MISSING
    outputTokens: Count = MISSING
    cacheReadTokens: Count = MISSING
    reasoningTokens: Count = MISSING


class CarriesMessage(TurnStep):
    message: Message | None = None
    usage: Usage | None = None


class ToolCall(TurnStep, kw_only=True):
    callId: str
    name: str | None = None
    arguments: str | None = None


class Error(Struct, gc=False):
    name: str | None = None
    code: str | None = None


class ToolResult(TurnStep):
    message: ResultMessage | None = None
    error: Error | None = None


class Reason(Struct, gc=False):
    kind: str


class TurnEnd(TurnStep):
    reason: Reason | None = None


class Route(TurnStep):
    provider: str | None = None
    model: str | None = None


class Labels(Struct, gc=False):
    provider: str | None = None
    model: str | None = None


class Header(Struct, gc=False):
    config: Labels | None = None


class RequestHeader(TurnStep):
    header: Header | None = None


class Rewind(TurnStep):
    start: Int | None = None
    end: Int | None = None
    shadowedSeqs: list[Int] | None = None


class Restore(TurnStep):
    rewindSeq: Int | None = None


_PAYLOADS: dict[str, type[Struct]] = {
    "assistant/message": CarriesMessage,
    "system/message": CarriesMessage,
    "developer/message": CarriesMessage,
    "user/message": UserMessage,
    "tool/call": ToolCall,
    "tool/result": ToolResult,
    "turn/end": TurnEnd,
    "request/header": RequestHeader,
    "request/context": Route,
    "surface/rewind": Rewind,
    "surface/restore": Restore,
}
"""The payload schema per event type with a payload check or facts the event table
(``typed_table``) reads; every other type: ``TurnStep``."""


class Event(Struct, tag_field="type", gc=False):
    seq: Int | UnsetType = UNSET
    time: Int | None = None


class Replace(Struct, gc=False):
    """A replace ``surfaceOp`` (§6): its range's keys, the integers
    ``shapes._surface_op_problem`` checks (any other op is checked the usual way)."""

    op: Literal["replace"]
    start: Int | UnsetType = UNSET
    end: Int | UnsetType = UNSET
    startSeq: Int | UnsetType = UNSET
    endSeq: Int | UnsetType = UNSET


class Range(Struct, array_like=True, forbid_unknown_fields=True, gc=False):
    """A ``[first, last]`` range of ``sourceEventSeqs``; one that runs backwards fails the
    schema (``shapes._source_seqs_problem`` refuses it). A struct, not ``tuple[Int, Int]``:
    msgspec 0.23 crashes building a decoder of ``Int | tuple[Int, Int]``."""

    first: Int
    last: Int

    def __post_init__(self) -> None:
        if self.first > self.last:
            raise ValueError("a sourceEventSeqs range runs backwards")


_SURFACE_FIELDS = [
    ("surfaceOp", Literal["append"] | Replace),
    ("sourceEventSeqs", list[Int | Range] | UnsetType, UNSET),
]
"""A surface event's: ``surfaceOp`` "append" or a ``Replace``, and ``sourceEventSeqs`` of
seqs and ranges."""

_PLAIN_FIELDS = [("surfaceOp", UnsetType, UNSET), ("sourceEventSeqs", UnsetType, UNSET)]
"""Any other event's: neither (``UnsetType`` decodes from nothing)."""

_READ_APART = frozenset({"session", SEED_MARKER, *PACKED_CHUNK_ROWS})
"""Lines the reader handles apart (a second header, packed chunk rows) or reads the
payload of (the seed marker): their blocks are checked the usual way."""

LETTERS = {"turn/start": ord("T"), "turn/end": ord("E"), "step/start": ord("S"),
           "step/end": ord("F")}
"""The boundary types as one letter each (every other type: ``.``), so a block's turns and
steps are followed by bytes methods (``typed._boundaries_after``)."""


class Schema(NamedTuple):
    decode: Callable[[bytes], Event]
    kinds: dict[type, str]
    """Each event class's type."""
    codes: dict[type, int]
    """Each event class's code: its type's index in ``names`` (a block's types are one
    byte per event, so the columns read by type are made by ``bytes.translate``)."""
    names: list[str]
    """The types, by code."""
    letters: bytes
    """The ``bytes.translate`` table from a code to its type's letter (see ``LETTERS``)."""
    surface_ops: bytes
    """The table from a code to its type's ``surface_op_code``: "append" for a surface
    type (a ``Replace`` op's rows are set apart, ``TypedBlock.replaced``), none for any
    other."""


def _schema(surface: frozenset[str], chunks: bool) -> Schema:
    """Return the decoder of the events of a format version with ``surface`` types (and
    ``assistant/chunk`` events when ``chunks``: before version 2)."""
    kinds = {}
    known = KNOWN_EVENT_TYPES if chunks else KNOWN_EVENT_TYPES - {CHUNK_EVENT}
    for kind in sorted(known | surface - _READ_APART):
        fields = [("data", _PAYLOADS.get(kind, TurnStep)),
                  *(_SURFACE_FIELDS if kind in surface else _PLAIN_FIELDS)]
        event = msgspec.defstruct("Event", fields, bases=(Event,), tag=kind, kw_only=True)
        kinds[event] = kind
    if len(kinds) > 256:
        raise ValueError(f"{len(kinds)} event types: more than one byte per event codes")
    names = list(kinds.values())
    letters = bytes([LETTERS.get(kind, ord(".")) for kind in names]).ljust(256, b".")
    ops = bytes([surface_op_code("append" if kind in surface else None) for kind in names])
    decoder = msgspec.json.Decoder(Union[tuple(kinds)])  # type: ignore[valid-type]  # noqa: UP007
    return Schema(decoder.decode, kinds, {event: code for code, event in enumerate(kinds)},
                  names, letters, ops.ljust(256, b"\0"))


_SCHEMAS: dict[tuple[frozenset[str], bool], Schema] = {}


def schema_of(version: int | None) -> Schema:
    """Return the schema of ``version``'s events (built once per set of surface types and
    whether chunk events are known: ``checks._kind_table``)."""
    key = surface_types(version), version is None or version < 2
    schema = _SCHEMAS.get(key)
    if schema is None:
        schema = _SCHEMAS[key] = _schema(*key)
    return schema


def decoded(lines: Sequence[bytes], block: bytes, marks: bytes, version: int | None
            ) -> list[Any] | None:
    """Return the typed events of ``lines`` (split from ``block``, whose number marks are
    ``marks``), or None when a line fails the schema or msgspec and orjson may judge a
    line differently (``may_differ``)."""
    if may_differ(block, marks) or sys.getrecursionlimit() > ORJSON_DEPTH:
        return None
    try:
        return list(map(schema_of(version).decode, lines))
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None


ORJSON_DEPTH = 1024
"""How deep orjson nests arrays and objects. msgspec nests as deep as Python's recursion
limit allows, less the stack in use: under this limit it refuses every line orjson
refuses for its depth."""

_HUGE_EXPONENT = re.compile(rb"e000+[,}\]\s]")
"""In ``number_marks``: a positive exponent of three digits or more ending a number, the
only numbers (with no run of 19 digits, see ``numbers``) that may be beyond a double."""


def may_differ(block: bytes, marks: bytes) -> bool:
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
    return _HUGE_EXPONENT.search(marks) is not None  # (a quarter faster than finding "e000")
