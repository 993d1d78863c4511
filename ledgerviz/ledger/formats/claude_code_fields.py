"""The fields of a Claude Code record line the reader reads, as ``msgspec`` structs, and what
the typed route (``claude_code_typed``) writes of each record (``Facts``).

A record line is decoded once, by the first pass (``claude_code_scan``), into the fields both
the first pass and the typed route read: the graph facts its ``Entry`` holds and the writer's
(a message's blocks, model and usage; a tool result's agent). The first pass hands the typed
route each record's ``Facts`` (the values its rows are written with: texts, a call's
arguments as JSON text), not the structs; a record it read with ``orjson`` has its dict
converted to those fields (``converted_facts``). A session the route writes after the plan
has its lines read again, into ``Record``.

The fields of the blocks, message, usage and tool result take any JSON value (``NOT_OBJECT``
beside a struct), so that only a line whose top-level shapes the first pass refuses is not
read this way; the helpers here read them as ``claude_code_records`` reads the dicts.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Struct
from msgspec.structs import replace

from ledgerviz.ledger.formats.claude_code_records import INTERRUPT_PREFIX
from ledgerviz.ledger.formats.staged import usage_count
from ledgerviz.ledger.numbers import json_text
from ledgerviz.ledger.reread import Typed
from ledgerviz.recovery.vocab import MISSING

NOT_OBJECT = list | str | int | float | bool | None
"""Any JSON value but an object: beside a struct, a field's type that takes any value."""
_INT64 = range(MISSING + 1, 1 << 63)


class Block(Struct, gc=False):
    """A content block: the fields of a text, a ``tool_use`` or a ``tool_result``."""

    type: Any = None
    text: Any = None
    id: Any = None
    name: Any = None
    input: Any = UNSET
    tool_use_id: Any = None
    is_error: Any = None
    content: Content = None


Content = list[Block | NOT_OBJECT] | str | int | float | bool | dict | None
"""A message's (or a ``tool_result``'s) content: blocks, a string, or any other value."""


class Usage(Struct, gc=False):
    input_tokens: Any = None
    output_tokens: Any = None
    cache_read_input_tokens: Any = None


class Message(Struct, gc=False):
    id: Any = None
    model: Any = None
    usage: Usage | NOT_OBJECT = None
    content: Content = None


class Spawned(Struct, gc=False):
    """A ``toolUseResult`` object: the subagent a ``Task``/``Agent`` call started."""

    agentId: Any = None


class Record(Struct, gc=False):
    """The fields of a record line the writer reads, when its line is read again."""

    turn: Any = None
    step: Any = None
    isCompactSummary: Any = None
    message: Message | NOT_OBJECT = None
    toolUseResult: Spawned | NOT_OBJECT = None


RECORD = Typed(Record)


class Result(Struct, gc=False):
    """A ``tool_result`` block of a user record (a struct untracked by the garbage
    collector, as ``Facts``: smaller than a tuple)."""

    place: int
    """Its place among the record's content blocks."""
    call_id: Any
    is_error: Any
    text: str
    """Its content's visible text."""


class Facts(Struct, gc=False):
    """What the typed route writes of one record (a struct untracked by the garbage
    collector: 40 bytes less than a tuple of its fields, for every record held)."""

    turn: int
    """``turn`` when an int64 (a log-only row's), else ``MISSING``; so is ``step``."""
    step: int
    compact: bool
    """Whether ``isCompactSummary`` is true."""
    texts: tuple[str, ...]
    """The non-empty texts of its message's text blocks."""
    results: tuple[Result, ...]
    """A user record's tool results."""
    note: bool
    """Whether a user record is written as a message too: it has blocks besides its results,
    or no result."""
    interrupted: bool
    """Whether the first of those blocks is an interrupt note."""
    spawned: bool
    """Whether its ``toolUseResult`` names an ``agentId``."""
    model: str | None
    usage: tuple[int, int, int] | None
    """An assistant record's input, output and cache-read counts (``usage_count``), when its
    ``usage`` is an object."""
    calls: tuple[tuple[str, str | None, str], ...]
    """An assistant record's ``tool_use`` blocks with a string id: id, name, arguments."""


def facts_of(kind: str, line: Any, shared: dict[Any, Any] | None = None) -> Facts:
    """Return the ``Facts`` of a record of ``kind`` decoded as ``line`` (a ``Record``, or the
    first pass's struct of the same field names; ``shared``: one object per equal usage or
    model met, as the records of one step repeat them)."""
    turn, step = line.turn, line.step  # (absent in most records: no call)
    turn = MISSING if turn is None else _int64(turn)
    step = MISSING if step is None else _int64(step)
    if kind != "user" and kind != "assistant":  # only ever a log-only row
        return _LOG_ONLY if turn == step == MISSING else replace(_LOG_ONLY, turn=turn, step=step)
    message = line.message
    content = message.content if message.__class__ is Message else None
    texts: list[str] = []
    results: list[Result] = []
    calls: list[tuple[str, str | None, str]] = []
    other: Any = None  # the first block that is no tool result
    if content.__class__ is str:  # one text block
        texts, other = [content] if content else [], Block("text", content)
    for place, block in enumerate(content if content.__class__ is list else ()):
        if block.__class__ is Block:
            if block.type == "text":
                if (text := block.text).__class__ is str and text:
                    texts.append(text)
            elif block.type == "tool_result":
                results.append(Result(place, block.tool_use_id, block.is_error,
                                      _content_text(block)))
                continue
            elif block.type == "tool_use" and block.id.__class__ is str:
                calls.append((block.id, block.name if block.name.__class__ is str else None,
                              json_text({} if block.input is UNSET else block.input)))
        if other is None:
            other = block if block is not None else _NO_TEXT
    note = interrupted = False
    model = usage = None
    if kind == "user":
        results_only = other is None and results
        note = not results_only
        interrupted = note and block_text(other).startswith(INTERRUPT_PREFIX)
        calls = []
    elif message.__class__ is Message:
        results = []
        model = message.model if message.model.__class__ is str else None
        if model is not None and shared is not None:
            model = shared.setdefault(model, model)
        counts = message.usage
        if counts.__class__ is Usage:
            usage = (usage_count(counts.input_tokens), usage_count(counts.output_tokens),
                     usage_count(counts.cache_read_input_tokens))
            if shared is not None:
                usage = shared.setdefault(usage, usage)
    spawned = line.toolUseResult
    agent = spawned.agentId if spawned.__class__ is Spawned else None
    return Facts(turn, step, line.isCompactSummary is True, tuple(texts), tuple(results), note,
                 interrupted, agent.__class__ is str and agent != "", model, usage, tuple(calls))

def converted_facts(kind: str, raw: dict[str, Any]) -> Facts | None:
    """Return the ``Facts`` of a record of ``kind`` decoded with ``orjson`` as ``raw``, or
    None when ``msgspec`` does not convert it to the fields read (nested too deep)."""
    try:
        return facts_of(kind, RECORD.of(raw))
    except (msgspec.ValidationError, RecursionError):
        return None


_NO_TEXT = Block()
"""Stands for a null block (no text) as the first block that is no tool result."""


_LOG_ONLY = Facts(MISSING, MISSING, False, (), (), False, False, False, None, None, ())
"""The facts of a record of any other kind without ``turn`` or ``step`` (one object)."""


def visible_text(texts: tuple[str, ...]) -> str:
    """Return the visible text of blocks whose non-empty texts are ``texts``, as the table
    reads it of the dsh blocks they are written as (``nesting.visible_text``): joined (a
    Claude Code block of any other type is written as no text block)."""
    return texts[0] if len(texts) == 1 else "\n".join(texts)


def block_text(block: Any) -> str:
    """Return the text of a text block, or of a tool_result's content, else ""
    (``records.block_text``)."""
    if block.__class__ is not Block:
        return ""
    if block.type == "text":
        return block.text if block.text.__class__ is str else ""
    content = block.content
    if content.__class__ is str:
        return content
    return "".join(map(block_text, content)) if content.__class__ is list else ""


def _texts(blocks: list[Any]) -> tuple[str, ...]:
    """Return the non-empty texts of the text blocks of ``blocks``."""
    return tuple(text for block in blocks if block.__class__ is Block
                 and block.type == "text" and (text := block.text).__class__ is str and text)


def _content_text(block: Block) -> str:
    """Return the visible text of a ``tool_result``'s content."""
    content = block.content
    if content.__class__ is str:
        return content
    return visible_text(_texts(content)) if content.__class__ is list else ""


def _int64(value: Any) -> int:
    """Return a log-only row's turn or step: its record's when an int64, else ``MISSING``
    (as the table reads an event's)."""
    return value if value.__class__ is int and value in _INT64 else MISSING
