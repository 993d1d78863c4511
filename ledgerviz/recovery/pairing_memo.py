"""Pairing checks of many overlapping contexts (the cuts of one session), each resumed from
the longest prefix it shares with a context checked before.

A scan's state after some messages depends only on those messages (see ``pairing``): a
context that begins with messages equal to those of the last one checked, or of the
longest one checked, resumes from the last state kept for it at or before where they part,
and reads only the messages after it.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import islice
from operator import itemgetter
from typing import Any, NamedTuple

from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.pairing import AnthropicPairing, Block, OpenAIPairing, Problem
from ledgerviz.recovery.payload import message_call_id, message_tool_call_blocks
from ledgerviz.recovery.providers import Provider, anthropic_turns, has_text
from ledgerviz.recovery.sequences import first_difference

MARK_EVERY = 512
"""Messages between two kept scan states."""
_INDEX = itemgetter(0)
_TEXT: Block = ("text", None)

Shape = tuple[str, list[Block]]
"""A context message's Anthropic role and its content blocks as the pairing rules read them."""


def pairing_shape(item: ContextMessage) -> Shape:
    """Return what both providers' pairing rules read of one context message: its Anthropic
    role and blocks, a text block standing first where the message has text and no calls.

    OpenAI's rule reads the same: a tool result's call id, or the ids of the ``tool_use``
    blocks (an assistant message's tool calls, in order). Texts decide only which messages an
    Anthropic request keeps, so the text of a message with calls is not looked at.
    """
    message = item.message
    if item.is_tool_result:
        return "user", [("tool_result", message_call_id(message))]
    if message.get("role") != "assistant":
        return "user", [_TEXT] if has_text(message.get("content")) else []
    uses: list[Block] = [("tool_use", c.get("id")) for c in message_tool_call_blocks(message)]
    return "assistant", uses or ([_TEXT] if has_text(message.get("content")) else [])


class _History(NamedTuple):
    """A context a scan read and the states it kept on the way."""

    messages: list[ContextMessage]
    marks: list[tuple[int, int, tuple[Any, ...]]]
    """(message index, turn index, scan state) in message order."""


class _Resumable:
    """One provider's scan, with the states it kept reading the context checked last and
    the longest context checked so far (the whole session, when cuts of it follow)."""

    def __init__(self, scan: OpenAIPairing | AnthropicPairing) -> None:
        self.scan = scan
        self.last = self.longest = _History([], [(0, 0, scan.mark())])

    def resume(self, messages: list[ContextMessage], lead: int) -> tuple[int, int]:
        """Rewind to the latest state kept for a context that begins as ``messages`` do: a
        state kept before message i serves if the contexts share their first i + ``lead``
        messages. Return its message and turn index; the states kept from here on go with
        ``messages``."""
        def served(history: _History) -> list[tuple[int, int, tuple[Any, ...]]]:
            valid = first_difference(history.messages, messages) + lead
            return history.marks[:max(1, bisect_left(history.marks, valid, key=_INDEX))]

        histories = (self.last,) if self.last is self.longest else (self.last, self.longest)
        marks = max(map(served, histories), key=lambda kept: kept[-1][0])
        message, turn, mark = marks[-1]
        self.scan.rewind(mark)
        self.last = _History(messages, marks)
        if len(messages) >= len(self.longest.messages):
            self.longest = self.last
        return message, turn


class PairingMemo:
    """Checks the tool-call pairing of contexts against every provider, resuming scans (one
    per session, for every policy).

    ``problems(messages)`` equals ``pairing_problems(export(messages, provider))`` for
    each provider.
    """

    def __init__(self) -> None:
        self._openai = _Resumable(OpenAIPairing())
        self._anthropic = _Resumable(AnthropicPairing())

    def problems(self, messages: list[ContextMessage]) -> dict[Provider, list[Problem]]:
        """Return the pairing problems of the request ``messages`` make, per provider (the
        shape of each message read is made once for both)."""
        openai_start, _ = self._openai.resume(messages, 1)
        anthropic_start, first_turn = self._anthropic.resume(messages, 0)
        start = min(openai_start, anthropic_start)
        shapes = [pairing_shape(item) for item in islice(messages, start, None)]
        return {"openai": self._openai_problems(messages, openai_start,
                                                shapes[openai_start - start:]),
                "anthropic": self._anthropic_problems(messages, anthropic_start, first_turn,
                                                      shapes[anthropic_start - start:])}

    def _openai_problems(self, messages: list[ContextMessage], start: int,
                         shapes: list[Shape]) -> list[Problem]:
        scan, marks = self._openai.scan, self._openai.last.marks
        for index, (_, blocks) in enumerate(shapes, start):
            if index % MARK_EVERY == 0 and index > start:
                marks.append((index, index, scan.mark()))
            seqs = (messages[index].seq,)
            if messages[index].is_tool_result:
                scan.read_result(index, blocks[0][1], seqs)
            else:
                scan.read_calls(index, [call_id for kind, call_id in blocks if kind == "tool_use"],
                                seqs)
        return list(scan.finish())

    def _anthropic_problems(self, messages: list[ContextMessage], start: int, first_turn: int,
                            shapes: list[Shape]) -> list[Problem]:
        # a kept state at message i follows whole turns; message i starts the next turn,
        # so it must be shared too for that turn to start there again
        merged = anthropic_turns(messages[start:], shapes, None, after_turns=first_turn > 0)
        scan, last, marks = self._anthropic.scan, start, self._anthropic.last.marks
        for offset, (turn, seqs, begins) in enumerate(zip(merged.turns, merged.seqs(),
                                                          merged.starts, strict=True)):
            if start + begins - last >= MARK_EVERY and offset:
                last = start + begins
                marks.append((last, first_turn + offset, scan.mark()))
            scan.read_blocks(first_turn + offset, turn["role"], turn["content"], seqs)
        return list(scan.finish())
