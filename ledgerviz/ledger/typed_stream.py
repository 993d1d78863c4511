"""The streamed check's blocks: what ``ledgerviz check --stream`` reads of a block the typed
check (``typed.typed_block``) accepted, its types, seqs and times, and each event's facts
(``Fact``) made a type at a time from what the check read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import chain, repeat
from operator import attrgetter
from typing import Any, NamedTuple

import orjson

from ledgerviz.ledger.checks import CheckState
from ledgerviz.ledger.typed import Messages, TypedBlock, message_shape, typed_block
from ledgerviz.ledger.typed_schema import Block
from ledgerviz.ledger.vocabulary import surface_types


class ReadOnDemand(Sequence[Any]):
    """A column read from ``items`` (each by ``read``) only when an item is asked for."""

    __slots__ = ("_items", "_read")

    def __init__(self, items: Sequence[Any], read: Callable[[Any], Any]) -> None:
        self._items, self._read = items, read

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(map(self._read, self._items[index]))
        return self._read(self._items[index])


def _payload(line: bytes) -> Any:
    """Return the ``data`` payload of an event's line."""
    return orjson.loads(line)["data"]


_TIME = attrgetter("time")


Fact = tuple[str, Any, Any, Any]
"""What an event tells the streamed summary (``streams.recovery``), in log order:

- ``("calls", seq, (turn, step), [(id, name), ...])`` per assistant/message whose message
  of role assistant requests calls (its tool-call blocks' ids and names) and is one of the
  model's context (a surface event): one request per call, then the message, whose
  ``recovery.pairing_memo.pairing_shape`` is a ``tool_use`` block per call;
- ``("request", id, seq, (turn, step, name))`` per tool-call block of any other
  assistant/message;
- ``("dispatch", callId, seq, None)`` per tool/call;
- ``("answer", call id, error code, is_error)`` per tool/result, ``"result"`` instead of
  ``"answer"`` when the result is also a message of the model's context (a surface
  event: its ``pairing_shape`` answers that call id);
- ``("user", typed by the human, None, None)`` per user/message;
- for any other message of the model's context (``recovery.context.context_message``) of a
  surface event, after the facts above: ``("said", role, has text, None)`` when its
  ``pairing_shape`` names no call (its Anthropic ``role`` and a text block, or none), else
  ``("asked", [id, ...], None, None)`` (a ``tool_use`` block per id);
- ``("close", type, seq, time)`` per step/end and turn/end, ``("turn", turn, seq, time)``
  per turn/start;
- ``("edit", line, None, None)`` per surface/rewind, surface/restore and replace op.
"""


class StreamBlock(NamedTuple):
    """A block of events checked without diagnostics, as the streamed summary reads it."""

    types: list[str]
    seqs: list[int]
    times: Sequence[int | None]
    datas: Sequence[dict[str, Any]]
    """Each event's ``data``, decoded from its line when read (the summary reads few)."""
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
    return StreamBlock(typed.types, typed.seqs, ReadOnDemand(typed.events, _TIME),
                       ReadOnDemand(lines, _payload), typed.lines, _facts(typed, version))


def _facts(typed: TypedBlock, version: int | None) -> list[Fact]:
    """Return the facts of a typed block's events, in log order (see ``Fact``).

    They are made a type at a time from what the check read, as one tuple of facts per
    event (an assistant message without context gives one per call it requests), then
    taken in log order by each event's type."""
    surface = surface_types(version)
    rows, datas, seqs, events = typed.rows, typed.datas, typed.seqs, typed.events
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
    facts["turn/start"] = iter([(("turn", datas[row].turn, seqs[row], events[row].time),)
                                for row in found])
    for kind in ("step/end", "turn/end"):
        facts[kind] = iter([(("close", kind, seqs[row], events[row].time),)
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
    messages, calls, seqs, datas = found.messages, found.calls, typed.seqs, typed.datas
    # a message whose content is one non-empty text block (the common case) names no call
    facts: list[Any] = ([_SAID[message.role == "assistant"] if text else None
                         for message, text in zip(messages, found.texts, strict=True)]
                        if in_context else [None] * len(rows))
    requests = kind == "assistant/message"
    for index in [index for index, fact in enumerate(facts) if fact is None]:
        message, row, blocks = messages[index], rows[index], calls.get(index, _NO_CALLS)
        shape = (message_shape(message, blocks) if in_context and message is not None and (
            kind == "user/message" or message.content) else None)
        if requests and blocks:
            data = datas[row]
            facts[index] = message_facts(seqs[row], (data.turn, data.step),
                                         [(block.id, block.name) for block in blocks], shape)
        else:
            facts[index] = message_facts(seqs[row], None, _NO_PAIRS, shape)
    if kind == "user/message":
        return [(("user", (source := message.source) is not None and source.kind == "user",
                  None, None), *fact) for message, fact in zip(messages, facts, strict=True)]
    return facts


def message_facts(seq: Any, place: tuple[Any, Any] | None, calls: list[tuple[Any, Any]],
                  shape: tuple[str, list[Any]] | None) -> tuple[Fact, ...]:
    """Return the facts of a message event (see ``Fact``) at ``seq``: the ``calls`` (id and
    name) an assistant/message requests at ``place`` (its turn and step), then its context
    message, whose ``pairing_shape`` is ``shape`` (None: it gives none)."""
    if calls and shape is not None and shape[0] == "assistant":  # the shape is its calls
        return (("calls", seq, place, calls),)
    facts: list[Fact] = [("request", call_id, seq, (*place, name))  # type: ignore[misc]
                         for call_id, name in calls]
    if shape is not None:
        speaker, blocks = shape
        if blocks and blocks[0][0] == "tool_use":
            facts.append(("asked", [call_id for _, call_id in blocks], None, None))
        else:
            facts.append(("said", speaker, bool(blocks), None))
    return tuple(facts)


_NO_PAIRS: list[tuple[Any, Any]] = []
_SAID = {mine: message_facts(None, None, _NO_PAIRS, (role, [("text", None)]))
         for mine, role in ((True, "assistant"), (False, "user"))}
"""The facts of a context message with text and no call, by whether it is the assistant's."""
_NO_CALLS: list[Block] = []
"""The tool-call blocks of a message without any."""
