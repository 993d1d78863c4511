"""The typed check: well-formed blocks read without their dicts, for the load and the
streamed check.

The load (``tabled``) needs, per event, the facts the event table holds; ``ledgerviz check
--stream`` the type, seq and time, the call ids requested, dispatched and answered; both
need what the reader's checks decide. The block's lines are decoded into the structs of
``typed_schema``; ``typed_block`` then checks the block a column at a time, and
``typed_stream.stream_block`` adds the streamed summary's facts.

It is a fast path only. A block is taken here when every line decodes into the
schema *and* the reader's check would say nothing about any of them; anything else
(a line that fails the schema, a seq gap, an orphan result, an unknown type, an
op other than "append" or a well-formed replace, a seed marker) returns None, and the
block is checked the usual way, so its diagnostics are exactly the reader's. A replace
op is taken only where the caller reads it (the table does; the streamed facts do not).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Container, Sequence
from itertools import repeat
from operator import attrgetter, lt
from typing import Any, NamedTuple

from msgspec import UNSET

from ledgerviz.ledger.boundaries import OpenBoundaries
from ledgerviz.ledger.checks import CheckState
from ledgerviz.ledger.typed_schema import (
    LETTERS,
    Block,
    Message,
    Replace,
    ResultMessage,
    Schema,
    ToolResult,
    decoded,
    schema_of,
)
from ledgerviz.ledger.vocabulary import surface_types
from ledgerviz.recovery.nesting import may_nest_deeper

_TURN_LETTERS_ONLY = b"SF."
"""What deleting leaves the turn boundaries alone."""
_STEP_LEVEL = bytes.maketrans(b"TE", b"FF")
"""Turn boundaries close the open step: read at the step level as a step/end."""

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
    calls: dict[int, list[Block]]
    """The tool-call blocks of each message that has some, by its index here (ascending)."""


class TypedBlock(NamedTuple):
    """A block of events the typed check accepted (every line fits the schema and the
    reader's check would say nothing), as the structs decoded and what the check read."""

    types: list[str]
    """Each event's type."""
    seqs: list[int]
    datas: list[Any]
    """Each event's ``data`` struct."""
    lines: Sequence[int]
    """The file line of each event: a ``range`` for a block of one file (a run of whole
    files, ``typed_runs``: each file's in turn)."""
    events: list[Any]
    """The decoded events (structs)."""
    rows: dict[str, list[int]]
    """The rows of each type present, ascending."""
    messages: dict[str, Messages]
    """The messages of each message-producing type present (``MESSAGE_TYPES``)."""
    requests: list[tuple[int, Block]]
    """The tool-call blocks of the assistant messages, each with its row, in log order."""
    answers: Answers
    """What the tool/results answer, in the order of ``rows["tool/result"]``."""
    codes: bytes
    """Each event's type as one byte: its code in ``schema``."""
    schema: Schema
    replaced: list[int]
    """The rows whose ``surfaceOp`` is a replace (a ``Replace``), ascending."""


MESSAGE_TYPES = ("user/message", "system/message", "developer/message", "assistant/message",
                 "tool/result")
"""The types whose payload gives a message (§7): ``user/message``'s is the payload itself."""

def by_type(events: Sequence[Any], schema: Schema
            ) -> tuple[bytes, dict[str, list[int]], list[Any]]:
    """Return the type code of each of ``events`` (structs of ``schema``), the rows of each
    type by name, and each event's payload."""
    codes = bytes(map(schema.codes.__getitem__, map(type, events)))
    of_code: dict[int, list[int]] = {code: [] for code in set(codes)}
    for row, code in enumerate(codes):
        of_code[code].append(row)
    names = schema.names
    return codes, {names[code]: found for code, found in of_code.items()}, [
        event.data for event in events]


def typed_block(
    lines: Sequence[bytes], block: bytes, marks: bytes, first_line: int, state: CheckState,
    version: int | None, replace_ops: bool = False,
) -> TypedBlock | None:
    """Return the events of ``lines`` (file lines from ``first_line``, split from
    ``block``, whose ``numbers.number_marks`` are ``marks``) as structs, or None when they
    must be checked the usual way: a line fails the schema, or the reader's check would
    record a diagnostic, or holds a replace op and ``replace_ops`` is false. ``state``
    moves on only when a block is returned. The caller screens out blocks that may hold
    integers beyond 64 bits (``numbers.may_hold_big_integers``).

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
    replaced = _replaced(events)
    if replaced and not replace_ops:
        return None  # a replace op the caller does not read
    schema = schema_of(version)
    codes, rows, datas = by_type(events, schema)
    boundaries = _boundaries_after(state.boundaries, codes.translate(schema.letters), datas,
                                   first_line)
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
    answering = rows.get("tool/result", ()), answers.checked
    if replaced:  # a result that replaces another answers nothing (``checks``: "append" only)
        answering = _without_rows(*answering, frozenset(replaced))
    answered = _once_per_turn(*answering, turn_cuts, state.answered)
    if dispatched is None or answered is None:
        return None  # dispatched or answered again in the turn: warned the usual way
    numbering.expected += count
    state.kept += count
    state.numbered = True
    state.boundaries = boundaries
    state.requested.update(fresh)
    state.dispatched, state.answered = dispatched, answered
    return TypedBlock(list(map(schema.names.__getitem__, codes)), seqs, datas,
                      range(first_line, first_line + count), events, rows, messages, requests,
                      answers, codes, schema, replaced)


def _replaced(events: list[Any]) -> list[int]:
    """Return the rows of the events whose ``surfaceOp`` is a replace (their op types
    taken in C first: the usual block has none)."""
    if Replace not in set(map(type, map(_SURFACE_OP, events))):
        return []
    return [row for row, event in enumerate(events) if event.surfaceOp.__class__ is Replace]


_SURFACE_OP = attrgetter("surfaceOp")


def _without_rows(rows: Sequence[int], ids: list[Any], left_out: frozenset[int]
                  ) -> tuple[list[int], list[Any]]:
    """Return ``rows`` and their ``ids`` but those at the rows ``left_out``."""
    kept = [(row, call_id) for row, call_id in zip(rows, ids, strict=True)
            if row not in left_out]
    return [row for row, _ in kept], [call_id for _, call_id in kept]


def _boundaries_after(opened: OpenBoundaries, letters: bytes, datas: list[Any],
                      first_line: int) -> OpenBoundaries | None:
    """Return the turn and step open after a block whose events are ``letters`` (see
    ``LETTERS``) with payloads ``datas``, from file line ``first_line``; None when one
    opens inside an open one (what ``OpenBoundaries.see`` warns of)."""
    turns = (b"T" if opened.turn is not None else b"E") + letters.translate(
        None, _TURN_LETTERS_ONLY)
    steps = (b"S" if opened.step is not None else b"F") + letters.translate(_STEP_LEVEL, b".")
    if b"TT" in turns or b"SS" in steps:
        return None
    after = opened.copy()
    last = max(letters.rfind(b"T"), letters.rfind(b"E"))
    if last >= 0:
        after.turn = (datas[last].turn, first_line + last) if letters[last] == LETTERS[
            "turn/start"] else None
    last = max(last, letters.rfind(b"S"), letters.rfind(b"F"))
    if last >= 0:
        data = datas[last]
        after.step = (data.turn, data.step, first_line + last) if letters[last] == LETTERS[
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
        calls: dict[int, list[Block]] = {}
        for index in others:
            message = messages[index]
            blocks = _call_blocks(message)
            if blocks is None:
                return None  # ``shapes._message_call_ids`` would call it suspect
            if blocks:
                calls[index] = blocks
            if (kind in surface and kind != "tool/result" and message.content and any(
                    block.type == "tool-result" for block in message.content)
                    and message_shape(message, blocks) is None):
                return None  # nested results: read the usual way
        found[kind] = Messages(messages, texts, calls)
    return found


def _requests(rows: Sequence[int], messages: Messages | None) -> list[tuple[int, Block]]:
    """Return the tool-call blocks of the assistant messages at ``rows``, each with its row."""
    if messages is None:
        return []
    return [(rows[index], block) for index, blocks in messages.calls.items()
            for block in blocks]


def _answers(results: list[ToolResult], messages: list[ResultMessage]) -> Answers:
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


def _all_asked(rows: Sequence[int], answered: list[Any], requests: Sequence[tuple[int, Block]],
               requested: Container[str]) -> bool:
    """Return whether each result (at ``rows``, answering ``answered``) answers a call an
    earlier assistant message of the block requests, or one ``requested`` before it."""
    asked = {block.id: row for row, block in requests}
    if all(map(lt, map(asked.get, answered, rows), rows)):
        return True  # the usual block: each result answers a call asked before it in the block
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


def _call_blocks(message: Message | None) -> list[Block] | None:
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


def message_shape(message: Message, calls: list[Block]) -> tuple[str, list[Any]] | None:
    """Return ``pairing_shape`` of the context message ``message`` (not a tool result) whose
    tool-call blocks are ``calls``; None when its text is nested in a ``tool-result`` block."""
    if message.role == "assistant" and calls:
        return "assistant", [("tool_use", block.id) for block in calls]
    texts = _has_text(message.content or ())
    if texts is None:
        return None
    return "assistant" if message.role == "assistant" else "user", [_TEXT] if texts else []


def _has_text(blocks: list[Block]) -> bool | None:
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


def _answer(data: ToolResult) -> tuple[str | None, Any, str | None, bool]:
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


def _wrapper(message: ResultMessage) -> Block | None:
    """Return a result message's first ``tool-result`` block (None: none)."""
    return next((b for b in message.content or () if b.type == "tool-result"), None)


def _wrapped_error(message: ResultMessage) -> bool:
    """Return the is_error of a result message without its own flag: its tool-result
    block's (``payload_result_facts``)."""
    wrapper = _wrapper(message)
    return wrapper is not None and bool(wrapper.isError)
