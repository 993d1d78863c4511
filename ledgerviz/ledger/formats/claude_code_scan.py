"""The Claude Code reader's first pass over a block of lines, typed: each line decoded with
``msgspec`` into the fields the reader reads (``claude_code_fields``; the rest of the line
skipped in C, never made into Python objects), kept as the same entry ``entries.entry_of``
makes of the line's ``Record`` and as the typed route's ``Facts`` of it (so that the route
decodes no line again).

A line whose fields are not all of the shapes the fast path of ``records.record_of``
accepts is read that way (decoded with ``orjson``, its diagnostics recorded). A block
``msgspec`` cannot decode whole, whose lines ``msgspec`` and ``orjson`` may judge
differently (``typed_schema.may_differ``), or that may hold an integer beyond 64 bits, is
not read here: the reader decodes it with ``orjson`` (``None``), such integers exact.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import msgspec
import orjson
from msgspec import UNSET, Struct, UnsetType, field

from ledgerviz.ledger.diagnostics import DiagnosticSink
from ledgerviz.ledger.formats.claude_code_entries import Entry, Marks, entry_of, new_entry
from ledgerviz.ledger.formats.claude_code_fields import (
    NOT_OBJECT,
    Block,
    Facts,
    Message,
    Spawned,
    block_text,
    facts_of,
)
from ledgerviz.ledger.formats.claude_code_records import (
    BOOKKEEPING_KINDS,
    CONVERSATION_KINDS,
    INTERRUPT_FOR_TOOL,
    INTERRUPT_PREFIX,
    REJECTION_PREFIXES,
    record_of,
)
from ledgerviz.ledger.formats.foreign import epoch_ms
from ledgerviz.ledger.numbers import may_hold_big_integers
from ledgerviz.ledger.typed_schema import ORJSON_DEPTH, may_differ

_KNOWN_KINDS = CONVERSATION_KINDS | BOOKKEEPING_KINDS


class _Line(Struct):
    """The fields of a record line an ``Entry`` and its ``Facts`` are made of (UNSET:
    absent)."""

    type: Any = None
    uuid: Any = None
    parentUuid: Any = None
    sessionId: Any = None
    timestamp: Any = None
    isSidechain: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    message: Message | UnsetType | None = UNSET
    cwd: Any = None
    agentId: Any = None
    toolUseID: Any = None
    parentToolUseID: Any = None
    toolUseResult: Spawned | NOT_OBJECT = None
    turn: Any = None
    step: Any = None
    projectHash: Any = UNSET
    rewind_to: Any = field(default=UNSET, name="$rewindTo")
    set: Any = field(default=UNSET, name="$set")


_DECODE = msgspec.json.Decoder(_Line).decode


def scanned(lines: Sequence[bytes], block: bytes, marks: bytes, first: int, start: int,
            found: DiagnosticSink, shared: dict[Any, Any] | None, facts: bool = True
            ) -> list[tuple[int, Entry, Facts | None]] | None:
    """Return the entries of ``lines`` (split from ``block``, whose ``numbers.number_marks``
    are ``marks``; the first is file line ``first`` and becomes entry ``start``), each with
    its place among them and its ``Facts`` (None unless ``facts`` asks for them), or None
    when the block is to be read with ``orjson`` (see the module docstring). Diagnostics of
    lines read the checked way go to ``found`` (their facts are the struct's all the same:
    ``msgspec`` decoded the block)."""
    if sys.getrecursionlimit() > ORJSON_DEPTH:
        return None
    if may_differ(block, marks) or may_hold_big_integers(block, marks):
        return None  # (an integer beyond 64 bits is kept exact, with a warning, that way)
    try:
        decoded = list(map(_DECODE, lines))
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    entries = []
    for at, value in enumerate(decoded):
        index = start + len(entries)
        entry = _fast_entry(value, first + at, index, shared)
        if entry is None:  # read as record_of reads it, with its diagnostics
            record = record_of(orjson.loads(lines[at]), first + at, found)
            if record is None:
                continue
            entry = entry_of(record, index, shared)
        entries.append((at, entry, facts_of(entry.kind, value, shared) if facts else None))
    return entries


def _fast_entry(value: _Line, line: int, index: int, shared: dict[Any, Any] | None
                ) -> Entry | None:
    """Return the entry of a line whose fields all have the shapes ``records._plain_record``
    accepts (it reads them the same way), else None."""
    kind = value.type
    if kind.__class__ is not str or kind not in _KNOWN_KINDS or value.projectHash is not UNSET \
            or value.rewind_to is not UNSET or value.set is not UNSET:
        return None
    uuid, parent, session = value.uuid, value.parentUuid, value.sessionId
    if not ((uuid is None or uuid.__class__ is str) and (session is None
            or session.__class__ is str) and parent.__class__ is str):
        return None
    message = value.message
    is_message = message.__class__ is Message
    if not is_message and (kind == "user" or kind == "assistant"):
        return None
    stamp = value.timestamp
    time = None if stamp is None else epoch_ms(stamp)
    if time is None and stamp is not None:
        return None
    prompt = kind == "user" and is_message and _is_prompt(value, message)
    key = None
    if kind == "assistant":
        key = message.id if message.id.__class__ is str else uuid
    sidechain = value.isSidechain is True
    return new_entry(shared, index, line, kind, uuid, parent, time, session, sidechain, prompt,
                     is_message, key, value.cwd, value.agentId if sidechain else None,
                     _marks(value, kind, prompt, message if is_message else None)
                     if kind == "user" or kind == "progress" else None)


def _blocks(message: Message) -> list[Any]:
    """Return a message's content as blocks (``records.content_blocks``): a string is one
    text block."""
    content = message.content
    if content.__class__ is str:
        return [Block("text", content)]
    return content if content.__class__ is list else []


def _is_prompt(value: _Line, message: Message) -> bool:
    """Return whether a user line starts a turn (``records._is_prompt``)."""
    if value.isMeta is True or value.isCompactSummary is True:
        return False
    if message.content.__class__ is str:
        return not message.content.startswith(INTERRUPT_PREFIX)
    first: str | None = None
    for block in _blocks(message):
        kind = block.type if block.__class__ is Block else None
        if kind == "tool_result":
            return False
        if kind == "text" and first is None:
            first = block_text(block)
    return first is not None and not first.startswith(INTERRUPT_PREFIX)


def _marks(value: _Line, kind: str, prompt: bool, message: Message | None) -> Marks | None:
    """Return what a line shows about refused calls (``entries._marks``)."""
    if kind == "progress":
        ran = tuple(call for call in (value.toolUseID, value.parentToolUseID)
                    if call.__class__ is str)
        return Marks(ran, (), False) if ran else None
    if kind != "user" or prompt or message is None:
        return None
    structured = value.toolUseResult.__class__ is Spawned
    ran: list[str] = []
    rejected: list[str] = []
    interrupted = False
    for block in _blocks(message):
        if block.__class__ is not Block:
            continue
        if block.type == "text":
            interrupted = interrupted or block_text(block).startswith(INTERRUPT_FOR_TOOL)
        elif block.type == "tool_result" and block.tool_use_id.__class__ is str:
            if structured:
                ran.append(block.tool_use_id)
            if block.is_error is True and block_text(block).startswith(REJECTION_PREFIXES):
                rejected.append(block.tool_use_id)
    if not (ran or rejected or interrupted):
        return None
    return Marks(tuple(ran), tuple(rejected), interrupted)
