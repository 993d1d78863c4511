"""The streamed check's blocks: what ``ledgerviz check --stream`` reads of a block the typed
check (``typed.typed_block``) accepted, its types, seqs and times, and each event's facts
(``Fact``) made a type at a time from what the check read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain, repeat
from typing import Any, NamedTuple

import orjson

from ledgerviz.ledger.checks import CheckState
from ledgerviz.ledger.typed import Messages, TypedBlock, message_shape, typed_block
from ledgerviz.ledger.typed_schema import Block
from ledgerviz.ledger.vocabulary import surface_types


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
                   message_shape(message, calls.get(index, _NO_CALLS))),)
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


_NO_CALLS: list[Block] = []
"""The tool-call blocks of a message without any."""
