"""The event table of a block the typed check accepted, filled from its structs in bulk.

The typed check (``typed.typed_block``) decodes a block's lines into ``msgspec`` structs
holding exactly the fields the table reads (``table.EventTable``, schema from
``LEDGER_FORMAT.md`` §3-§5) and reads, type by type, what it checks: the rows of each
type, the messages, the requested calls, what each result answers. The columns are
filled from those a type at a time, by comprehensions, with no Python step per event
beyond them. The structs' types are strict (a string is a ``str``, a count an ``int``...),
so a struct reads exactly as its dict does in ``EventTable.of``: equality with that
route, line for line, is the contract (tests/ledger/test_table.py).

A call id, and a dispatch's arguments, equal to those the block's assistant messages
request are held once (the request's string), not once per event that names them.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from ledgerviz.ledger.table import (
    MISSING,
    OBJECT_COLUMNS,
    USAGE_COLUMNS,
    EventTable,
    Requests,
    Shared,
    seq_column,
)
from ledgerviz.ledger.typed import TypedBlock
from ledgerviz.recovery.vocab import RECOVERY_CODES, SURFACE_OPS, SYNTHETIC_ID_PREFIXES


def table_of(typed: TypedBlock, start: array, stop: array) -> EventTable:
    """Return the table of a typed block whose lines span bytes ``start`` to ``stop``
    of the file (see ``EventTable.start``)."""
    count, rows, datas, events = len(typed.types), typed.rows, typed.datas, typed.events
    share = Shared()
    codes, schema = typed.codes, typed.schema
    present = list(dict.fromkeys(codes))  # the schema's codes, in order of first appearance
    renumbered = bytearray(256)
    for code, schema_code in enumerate(present):
        renumbered[schema_code] = code
    objects: dict[str, list[Any]] = {name: [None] * count for name in OBJECT_COLUMNS}
    usage = {name: array("q", [MISSING]) * count for name in USAGE_COLUMNS}
    is_error, synthetic = array("b", [-1]) * count, array("b", [-1]) * count
    requests = Requests(array("q", [row for row, _ in typed.requests]),
                        [block.id for _, block in typed.requests],
                        share([block.name for _, block in typed.requests]),
                        [block.arguments for _, block in typed.requests])
    requested = dict(zip(requests.call_id, requests.arguments, strict=True))
    one_id = dict(zip(requests.call_id, requests.call_id, strict=True)).get
    _dispatches(rows.get("tool/call", ()), datas, objects, requested, one_id, share)
    _results(typed, objects, is_error, synthetic, one_id, share)
    found = rows.get("turn/end", ())
    _scatter(objects["end_reason"], found, share([
        reason.kind if (reason := datas[row].reason) is not None else None for row in found]))
    for row in rows.get("request/header", ()):
        header = datas[row].header
        _route(objects, row, header.config if header is not None else None, share)
    for row in rows.get("request/context", ()):
        _route(objects, row, datas[row], share)
    _messages(typed, objects, share)
    _assistants(rows.get("assistant/message", ()), datas, objects, usage, share)
    return EventTable(
        type_names=[schema.names[code] for code in present],
        type_code=array("H", list(codes.translate(renumbered))),
        seq=seq_column(typed.seqs),
        time=array("q", [MISSING if (time := event.time) is None else time for event in events]),
        turn=array("q", [MISSING if (turn := data.turn) is None else turn for data in datas]),
        step=array("q", [MISSING if (step := data.step) is None else step for data in datas]),
        surface_op=_surface_ops(typed),
        line=array("q", typed.lines),
        start=start,
        stop=stop,
        is_error=is_error,
        synthetic=synthetic,
        requests=requests,
        **objects,
        **usage,
    )


_REPLACE = SURFACE_OPS.index("replace")


def _surface_ops(typed: TypedBlock) -> array:
    """Return the ``surface_op`` column: each type's op, a replace op's rows apart."""
    ops = array("b", typed.codes.translate(typed.schema.surface_ops))
    for row in typed.replaced:
        ops[row] = _REPLACE
    return ops


def _scatter(column: list[Any] | array, rows: Sequence[int], values: Sequence[Any]) -> None:
    """Set ``column[rows[i]]`` to ``values[i]``."""
    for row, value in zip(rows, values, strict=True):
        column[row] = value


def _dispatches(rows: Sequence[int], datas: list[Any], objects: dict[str, list[Any]],
                requested: dict[str, Any], one_id: Any, share: Shared) -> None:
    """Fill the call id, tool name and arguments of the ``tool/call`` rows (a call id and
    arguments the block requests: the request's strings)."""
    calls = [datas[row] for row in rows]
    ids = [call.callId for call in calls]
    _scatter(objects["call_id"], rows, list(map(one_id, ids, ids)))
    _scatter(objects["tool_name"], rows, share([call.name for call in calls]))
    _scatter(objects["arguments"], rows, [
        asked if (asked := requested.get(call.callId)) == (arguments := call.arguments)
        else arguments for call in calls])


def _results(typed: TypedBlock, objects: dict[str, list[Any]], is_error: array,
             synthetic: array, one_id: Any, share: Shared) -> None:
    """Fill the call id, error flag, error code and recovery mark of the ``tool/result``
    rows (``payload_result_facts``)."""
    rows = typed.rows.get("tool/result", ())
    if not rows:
        return
    answers = typed.answers
    _scatter(objects["call_id"], rows, list(map(one_id, answers.call_id, answers.call_id)))
    _scatter(is_error, rows, answers.is_error)
    codes = share(answers.code)
    if codes.count(None) != len(codes):
        _scatter(objects["error_code"], rows, codes)
    _scatter(synthetic, rows, [
        code in RECOVERY_CODES or ((made := message.id).__class__ is str
                                   and made.startswith(SYNTHETIC_ID_PREFIXES))
        for code, message in zip(codes, typed.messages["tool/result"].messages, strict=True)])


def _route(objects: dict[str, list[Any]], row: int, config: Any, share: Shared) -> None:
    """Fill the provider and model a request event names (``table.route_of``)."""
    if config is not None and config.model is not None:
        objects["provider"][row], objects["model"][row] = share([config.provider, config.model])


def _messages(typed: TypedBlock, objects: dict[str, list[Any]], share: Shared) -> None:
    """Fill the role, source kind and visible text of the rows of every message type (the
    check read the text of a lone text block, the common content), all types at once."""
    rows: list[int] = []
    messages: list[Any] = []
    texts: list[str | None] = []
    for kind, found in typed.messages.items():
        rows += typed.rows[kind]
        messages += found.messages
        texts += found.texts
    _scatter(objects["role"], rows, share([
        None if message is None else message.role for message in messages]))
    _scatter(objects["source_kind"], rows, share([
        None if message is None or (source := message.source) is None else source.kind
        for message in messages]))
    _scatter(objects["text"], rows, [
        _text(message.content) if text is None else text
        for text, message in zip(texts, messages, strict=True)])


def _text(content: list[Any] | None) -> str:
    """Return the visible text of content blocks (``nesting.visible_text``)."""
    if not content:
        return ""
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
    return "\n".join(parts)


def _assistants(rows: Sequence[int], datas: list[Any], objects: dict[str, list[Any]],
                usage: dict[str, array], share: Shared) -> None:
    """Fill the model and usage of the ``assistant/message`` rows."""
    payloads = [datas[row] for row in rows]
    named = [(row, source.provider, source.model) for row, data in zip(rows, payloads, strict=True)
             if (source := data.message.source) is not None and source.model is not None]
    if named:
        named_rows, providers, models = zip(*named, strict=True)
        _scatter(objects["provider"], named_rows, share(list(providers)))
        _scatter(objects["model"], named_rows, share(list(models)))
    used = [(row, used.inputTokens, used.outputTokens, used.cacheReadTokens,
             used.reasoningTokens)
            for row, data in zip(rows, payloads, strict=True) if (used := data.usage) is not None]
    if used:
        used_rows, *counts = zip(*used, strict=True)
        for name, column in zip(USAGE_COLUMNS, counts, strict=True):
            if column.count(MISSING) != len(column):
                _scatter(usage[name], used_rows, column)
