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
from operator import itemgetter
from typing import Any

from ledgerviz.ledger.fact_groups import (
    Calls,
    Ends,
    Messages,
    Requests,
    Results,
    Routes,
    Usage,
)
from ledgerviz.ledger.table import MISSING, EventTable, Shared, seq_column
from ledgerviz.ledger.typed import TypedBlock
from ledgerviz.recovery.vocab import RECOVERY_CODES, SURFACE_OPS, SYNTHETIC_ID_PREFIXES


def table_of(typed: TypedBlock, start: array, stop: array) -> EventTable:
    """Return the table of a typed block whose lines span bytes ``start`` to ``stop``
    of the file (see ``EventTable.start``)."""
    rows, datas, events = typed.rows, typed.datas, typed.events
    share = Shared()
    codes, schema = typed.codes, typed.schema
    present = list(dict.fromkeys(codes))  # the schema's codes, in order of first appearance
    renumbered = bytearray(256)
    for code, schema_code in enumerate(present):
        renumbered[schema_code] = code
    requests = Requests(array("q", [row for row, _ in typed.requests]),
                        [block.id for _, block in typed.requests],
                        share([block.name for _, block in typed.requests]),
                        [block.arguments for _, block in typed.requests])
    requested = dict(zip(requests.call_id, requests.arguments, strict=True))
    one_id = dict(zip(requests.call_id, requests.call_id, strict=True)).get
    ended = rows.get("turn/end", ())
    assistants = rows.get("assistant/message", ())
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
        calls=_dispatches(rows.get("tool/call", []), datas, requested, one_id, share),
        results=_results(typed, one_id, share),
        messages=_messages(typed, share),
        ends=Ends(array("q", ended), share([
            reason.kind if (reason := datas[row].reason) is not None else None
            for row in ended])),
        routes=_routes(typed, share),
        usage=_usage(assistants, datas),
        requests=requests,
    )


_REPLACE = SURFACE_OPS.index("replace")


def _surface_ops(typed: TypedBlock) -> array:
    """Return the ``surface_op`` column: each type's op, a replace op's rows apart."""
    ops = array("b", typed.codes.translate(typed.schema.surface_ops))
    for row in typed.replaced:
        ops[row] = _REPLACE
    return ops


def _dispatches(rows: list[int], datas: list[Any], requested: dict[str, Any], one_id: Any,
                share: Shared) -> Calls:
    """Return the call id, tool name and arguments of the ``tool/call`` rows (a call id and
    arguments the block requests: the request's strings)."""
    calls = [datas[row] for row in rows]
    ids = [call.callId for call in calls]
    return Calls(array("q", rows), list(map(one_id, ids, ids)),
                 share([call.name for call in calls]),
                 [asked if (asked := requested.get(call.callId)) == (arguments := call.arguments)
                  else arguments for call in calls])


def _results(typed: TypedBlock, one_id: Any, share: Shared) -> Results:
    """Return the call id, error code, error flag and recovery mark of the ``tool/result``
    rows (``payload_result_facts``)."""
    rows = typed.rows.get("tool/result", [])
    if not rows:
        return Results()
    answers = typed.answers
    codes = share(answers.code)
    return Results(
        array("q", rows), list(map(one_id, answers.call_id, answers.call_id)), codes,
        array("b", answers.is_error),
        array("b", [code in RECOVERY_CODES or ((made := message.id).__class__ is str
                                               and made.startswith(SYNTHETIC_ID_PREFIXES))
                    for code, message in zip(codes, typed.messages["tool/result"].messages,
                                             strict=True)]))


def _routes(typed: TypedBlock, share: Shared) -> Routes:
    """Return the provider and model of the rows that name a model (``table.route_of``):
    request/header and request/context rows, assistant messages whose source names one."""
    rows, datas = typed.rows, typed.datas
    named = [(row, config) for row in rows.get("request/header", ())
             if (header := datas[row].header) is not None and (config := header.config)
             is not None and config.model is not None]
    named += [(row, datas[row]) for row in rows.get("request/context", ())
              if datas[row].model is not None]
    named += [(row, source) for row in rows.get("assistant/message", ())
              if (source := datas[row].message.source) is not None and source.model is not None]
    named.sort(key=itemgetter(0))
    return Routes(array("q", [row for row, _ in named]),
                  share([route.provider for _, route in named]),
                  share([route.model for _, route in named]))


def _messages(typed: TypedBlock, share: Shared) -> Messages:
    """Return the role, source kind and visible text of the rows of every message type (the
    check read the text of a lone text block, the common content), all types at once."""
    rows: list[int] = []
    messages: list[Any] = []
    texts: list[str | None] = []
    for kind, found in typed.messages.items():
        rows += typed.rows[kind]
        messages += found.messages
        texts += found.texts
    order = sorted(range(len(rows)), key=rows.__getitem__)
    messages = list(map(messages.__getitem__, order))
    texts = list(map(texts.__getitem__, order))
    return Messages(
        array("q", map(rows.__getitem__, order)),
        share([None if message is None else message.role for message in messages]),
        share([None if message is None or (source := message.source) is None else source.kind
               for message in messages]),
        [_text(message.content) if text is None else text
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


def _usage(rows: Sequence[int], datas: list[Any]) -> Usage:
    """Return the usage counts of the ``assistant/message`` rows that have usage."""
    used = [(row, used.inputTokens, used.outputTokens, used.cacheReadTokens,
             used.reasoningTokens)
            for row in rows if (used := datas[row].usage) is not None]
    if not used:
        return Usage()
    return Usage(*[array("q", column) for column in zip(*used, strict=True)])
