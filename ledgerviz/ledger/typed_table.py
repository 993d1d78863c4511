"""The event table decoded straight from a block of dsh lines, without their dicts.

``msgspec`` decodes each line into small structs that hold exactly the fields the table
reads (``table.EventTable``, schema from ``LEDGER_FORMAT.md`` §3-§5), every other field
skipped in C; the table's columns are then read from the structs. The structs' types are
strict (a string is a ``str``, a count an ``int``...), so a struct reads exactly as its
dict does in ``EventTable.of``; a line that does not fit them (an unusual value, an
unknown type, a packed row, a second header) makes the block return None,
and the caller builds that block's table from its dicts, the one route every format
has. Equality with that route, line for line, is the contract (tests/ledger/test_table.py).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import accumulate, repeat
from typing import Annotated, Any, Union

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from ledgerviz.ledger.shapes import MAX_INTEGER
from ledgerviz.ledger.table import (
    MESSAGE_TYPES,
    MISSING,
    OBJECT_COLUMNS,
    USAGE_COLUMNS,
    EventTable,
    Requests,
    Shared,
    int_array,
    surface_op_code,
)
from ledgerviz.ledger.vocabulary import KNOWN_EVENT_TYPES, surface_types
from ledgerviz.recovery.vocab import RECOVERY_CODES, SYNTHETIC_ID_PREFIXES

Int = Annotated[int, Meta(ge=MISSING + 1, le=(1 << 63) - 1)]
"""An integer an int64 column holds (``time`` and the counts default to ``MISSING``, read
into their column as they are: a ``null`` there goes to the dicts; ``turn`` and ``step``,
often ``null`` between turns, take it)."""

Count = Annotated[int, Meta(ge=0, le=MAX_INTEGER)]
"""A usage count the frames add (``table._count``); another number goes to the dicts."""


class _Block(Struct, gc=False):
    type: str | None = None
    text: str | None = None
    id: str | None = None
    name: str | None = None
    arguments: str | None = None
    toolCallId: str | None = None
    isError: bool | None = None
    content: list[_Block] | None = None


class _Source(Struct, gc=False):
    kind: str | None = None
    provider: str | None = None
    model: str | None = None
    callId: str | None = None


class _Message(Struct, gc=False):
    role: str | None = None
    source: _Source | None = None
    content: list[_Block] | None = None
    toolCallId: str | None = None
    isError: bool | UnsetType | None = UNSET


class _ResultMessage(_Message):
    id: Any = None


class _TurnStep(Struct, gc=False):
    turn: Int | None = None
    step: Int | None = None


class _UserMessage(_Message):
    turn: Int | None = None
    step: Int | None = None


class _Usage(Struct, gc=False):
    inputTokens: Count = MISSING
    outputTokens: Count = MISSING
    cacheReadTokens: Count = MISSING
    reasoningTokens: Count = MISSING


class _CarriesMessage(_TurnStep):
    message: _Message | None = None
    usage: _Usage | None = None


class _Error(Struct, gc=False):
    code: str | None = None


class _ToolResult(_TurnStep):
    message: _ResultMessage | None = None
    error: _Error | None = None


class _ToolCall(_TurnStep):
    callId: str | None = None
    name: str | None = None
    arguments: str | None = None


class _Reason(Struct, gc=False):
    kind: str | None = None


class _TurnEnd(_TurnStep):
    reason: _Reason | None = None


class _Config(Struct, gc=False):
    provider: str | None = None
    model: str | None = None


class _Header(Struct, gc=False):
    config: _Config | None = None


class _RequestHeader(_TurnStep):
    header: _Header | None = None


class _RequestContext(_TurnStep):
    provider: str | None = None
    model: str | None = None


_PAYLOADS: dict[str, type[Struct]] = {
    "assistant/message": _CarriesMessage,
    "system/message": _CarriesMessage,
    "developer/message": _CarriesMessage,
    "user/message": _UserMessage,
    "tool/call": _ToolCall,
    "tool/result": _ToolResult,
    "turn/end": _TurnEnd,
    "request/header": _RequestHeader,
    "request/context": _RequestContext,
}
"""The payload struct of each type the table reads facts of; every other type: ``_TurnStep``."""


class _Event(Struct, tag_field="type", gc=False):
    seq: Int | UnsetType = UNSET
    time: Int = MISSING
    surfaceOp: str | dict[str, Any] | None = None


_DECODERS: dict[frozenset[str], tuple[Any, dict[type, str]]] = {}


def _decoder(version: int | None) -> tuple[Any, dict[type, str]]:
    """Return the decoder of a line of ``version`` and the type of each event class."""
    types = KNOWN_EVENT_TYPES | surface_types(version)
    found = _DECODERS.get(types)
    if found is None:
        kinds = {}
        for kind in sorted(types - {"session"}):
            event = msgspec.defstruct("Event", [("data", _PAYLOADS.get(kind, _TurnStep))],
                                      bases=(_Event,), tag=kind, kw_only=True)
            kinds[event] = kind
        decoder = msgspec.json.Decoder(Union[tuple(kinds)])  # type: ignore[valid-type]  # noqa: UP007
        found = _DECODERS[types] = (decoder.decode, kinds)
    return found


def decode_table(lines: Sequence[bytes], first_line: int, first_position: int,
                 version: int | None, first_offset: int = MISSING) -> EventTable | None:
    """Return the table of the events on ``lines`` (file lines from ``first_line``, the
    first event at ``first_position`` in its session, the lines consecutive from byte
    ``first_offset`` of the file, each ended by one newline; default: offsets not known),
    or None when a line does not fit the structs (see the module docstring)."""
    decode, kinds_of = _decoder(version)
    try:
        events = list(map(decode, lines))
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    kinds = [kinds_of[event.__class__] for event in events]
    return table_of(events, kinds, lines, first_line, first_position, first_offset)


def table_of(events: list[Any], kinds: list[str], lines: Sequence[bytes], first_line: int,
             first_position: int, first_offset: int = MISSING) -> EventTable:
    """Return the table of decoded ``events`` of types ``kinds`` (arguments as in
    ``decode_table``): read from this module's structs or from the streamed check's
    (``typed``), which hold the same fields under the same names (there, an absent
    ``surfaceOp`` is ``UNSET``; ``time`` may be None)."""
    if any(event.seq is UNSET for event in events):
        seqs = [first_position + i if event.seq is UNSET else event.seq
                for i, event in enumerate(events)]
    else:
        seqs = [event.seq for event in events]
    share = Shared()
    datas = [event.data for event in events]
    names = list(dict.fromkeys(kinds))
    code_of = {name: code for code, name in enumerate(names)}
    rows_of: dict[str, list[int]] = {name: [] for name in names}
    for row, kind in enumerate(kinds):
        rows_of[kind].append(row)
    count = len(events)
    objects: dict[str, list[Any]] = {name: [None] * count for name in OBJECT_COLUMNS}
    usage = {name: array("q", [MISSING]) * count for name in USAGE_COLUMNS}
    is_error, synthetic = array("b", [-1]) * count, array("b", [-1]) * count
    requests = Requests(array("q"), [], [], [])
    rows = rows_of.get("tool/call", ())
    dispatches = [datas[row] for row in rows]
    _scatter(objects["call_id"], rows, [data.callId for data in dispatches])
    _scatter(objects["tool_name"], rows, share([data.name for data in dispatches]))
    _scatter(objects["arguments"], rows, [data.arguments for data in dispatches])
    rows = rows_of.get("tool/result", ())
    results = [datas[row] for row in rows]
    facts = [_result_facts(data.message) for data in results]
    _scatter(objects["call_id"], rows, [call_id for call_id, _ in facts])
    _scatter(is_error, rows, [error for _, error in facts])
    codes = share([data.error.code if data.error is not None else None for data in results])
    _scatter(objects["error_code"], rows, codes)
    _scatter(synthetic, rows, list(map(_synthetic, codes, results)))
    rows = rows_of.get("turn/end", ())
    _scatter(objects["end_reason"], rows, share([
        reason.kind if reason is not None else None for reason in (datas[r].reason for r in rows)]))
    for row in rows_of.get("request/header", ()):
        header = datas[row].header
        _route(objects, row, header.config if header is not None else None, share)
    for row in rows_of.get("request/context", ()):
        _route(objects, row, datas[row], share)
    for kind in MESSAGE_TYPES.intersection(rows_of):
        _messages(kind, rows_of[kind], datas, objects, share)
    _assistants(rows_of.get("assistant/message", ()), datas, objects, usage, requests, share)
    return EventTable(
        type_names=names,
        type_code=array("H", map(code_of.__getitem__, kinds)),
        seq=array("q", seqs),
        time=int_array([event.time for event in events]),
        turn=int_array([data.turn for data in datas]),
        step=int_array([data.step for data in datas]),
        surface_op=array("b", map(surface_op_code, [
            None if (op := event.surfaceOp) is UNSET else op for event in events])),
        line=array("q", range(first_line, first_line + count)),
        **line_spans(lines, first_offset),
        is_error=is_error,
        synthetic=synthetic,
        requests=requests,
        **objects,
        **usage,
    )


def line_spans(lines: Sequence[bytes], first_offset: int) -> dict[str, array]:
    """Return the ``start`` and ``stop`` columns of consecutive newline-ended lines."""
    if first_offset == MISSING:
        missing = array("q", [MISSING]) * len(lines)
        return {"start": missing, "stop": array("q", missing)}
    ends = array("q", accumulate([len(line) + 1 for line in lines], initial=first_offset))
    starts = ends[:-1]
    return {"start": starts, "stop": array("q", map(int.__sub__, ends[1:], repeat(1)))}


def _route(objects: dict[str, list[Any]], row: int, config: _Config | None, share: Shared
           ) -> None:
    """Fill the provider and model a request event names (``table.route_of``)."""
    if config is not None and config.model is not None:
        objects["provider"][row], objects["model"][row] = share([config.provider, config.model])


def _result_facts(message: _Message | None) -> tuple[str | None, int]:
    """Return a tool result's call id and isError flag (``payload_result_facts``)."""
    if message is None:
        return None, 0
    wrapper = next((b for b in message.content or () if b.type == "tool-result"), None)
    if message.source is not None and message.source.callId is not None:
        call_id = message.source.callId
    elif message.toolCallId is not None:
        call_id = message.toolCallId
    else:
        call_id = wrapper.toolCallId if wrapper is not None else None
    if message.isError is not UNSET:
        return call_id, int(bool(message.isError))
    return call_id, int(wrapper is not None and bool(wrapper.isError))


def _synthetic(code: str | None, result: _ToolResult) -> int:
    """Return 1 for a tool result recovery wrote, else 0 (``payload_result_facts``)."""
    if code in RECOVERY_CODES:
        return 1
    message_id = result.message.id if result.message is not None else None
    return int(type(message_id) is str and message_id.startswith(SYNTHETIC_ID_PREFIXES))


def _text(content: list[_Block] | None) -> str:
    """Return the visible text of content blocks (``nesting.visible_text``)."""
    if content is None:
        return ""
    if len(content) == 1 and content[0].type == "text":
        return content[0].text or ""
    parts: list[str] = []
    pending = [iter(content)]
    while pending:
        block = next(pending[-1], None)
        if block is None:
            pending.pop()
        elif block.type == "tool-result":
            pending.append(iter(block.content or ()))
        elif block.type == "text" and block.text:
            parts.append(block.text)
    return parts[0] if len(parts) == 1 else "\n".join(parts)


def _scatter(column: list[Any] | array, rows: Sequence[int], values: Sequence[Any]) -> None:
    """Set ``column[rows[i]]`` to ``values[i]``."""
    for row, value in zip(rows, values, strict=True):
        column[row] = value


def _messages(kind: str, rows: Sequence[int], datas: list[Any], objects: dict[str, list[Any]],
              share: Shared) -> None:
    """Fill the role, source kind and visible text of the rows of message type ``kind``
    (a lone text block, the common content, read in the comprehension)."""
    if kind == "user/message":
        messages = [datas[row] for row in rows]
    else:
        messages = [datas[row].message for row in rows]
    facts = [_NO_MESSAGE if m is None else (
        m.role, m.source.kind if m.source is not None else None,
        (c[0].text or "") if (c := m.content) and len(c) == 1 and c[0].type == "text"
        else _text(c)) for m in messages]
    roles, kinds, texts = zip(*facts, strict=True) if facts else ((), (), ())
    _scatter(objects["role"], rows, share(list(roles)))
    _scatter(objects["source_kind"], rows, share(list(kinds)))
    _scatter(objects["text"], rows, texts)


_NO_MESSAGE = (None, None, "")
"""The role, source kind and text of a message event without a message."""


def _assistants(rows: Sequence[int], datas: list[Any], objects: dict[str, list[Any]],
                usage: dict[str, array], requests: Requests, share: Shared) -> None:
    """Fill the model, usage and requested calls of the ``assistant/message`` rows."""
    payloads = [datas[row] for row in rows]
    named = [(row, s.provider, s.model) for row, d in zip(rows, payloads, strict=True)
             if d.message is not None and (s := d.message.source) is not None
             and s.model is not None]
    if named:
        named_rows, providers, models = zip(*named, strict=True)
        _scatter(objects["provider"], named_rows, share(list(providers)))
        _scatter(objects["model"], named_rows, share(list(models)))
    used = [(row, u.inputTokens, u.outputTokens, u.cacheReadTokens, u.reasoningTokens)
            for row, d in zip(rows, payloads, strict=True) if (u := d.usage) is not None]
    if used:
        used_rows, *counts = zip(*used, strict=True)
        for name, column in zip(USAGE_COLUMNS, counts, strict=True):
            _scatter(usage[name], used_rows, column)
    calls = [(row, block.id, block.name, block.arguments)
             for row, d in zip(rows, payloads, strict=True)
             if d.message is not None and d.message.content
             for block in d.message.content if block.type == "tool-call"]
    if calls:
        call_rows, ids, names, arguments = zip(*calls, strict=True)
        requests.row.extend(call_rows)
        requests.call_id.extend(ids)
        requests.name.extend(share(list(names)))
        requests.arguments.extend(arguments)
