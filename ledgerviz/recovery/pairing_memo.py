"""Pairing checks of many overlapping contexts (the cuts of one session), each resumed from
the longest prefix it shares with a context checked before.

A scan's state after some messages depends only on those messages (see ``pairing``): a
context that begins with messages equal to those of the last one checked, or of the
longest one checked, resumes from the last state kept for it at or before where they part,
and reads only the messages after it.
"""

from __future__ import annotations

from bisect import bisect_left
from operator import itemgetter
from typing import Any, NamedTuple

from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.pairing import AnthropicPairing, OpenAIPairing, Problem
from ledgerviz.recovery.providers import (
    Provider,
    _anthropic_shape,
    _openai_shape,
    anthropic_turns,
)
from ledgerviz.recovery.sequences import first_difference

MARK_EVERY = 512
"""Messages between two kept scan states."""
_INDEX = itemgetter(0)


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
        """Return the pairing problems of the request ``messages`` make, per provider."""
        return {"openai": self._openai_problems(messages),
                "anthropic": self._anthropic_problems(messages)}

    def _openai_problems(self, messages: list[ContextMessage]) -> list[Problem]:
        state = self._openai
        start, _ = state.resume(messages, 1)
        scan, shape, marks = state.scan, _openai_shape, state.last.marks
        for index in range(start, len(messages)):
            if index % MARK_EVERY == 0 and index > start:
                marks.append((index, index, scan.mark()))
            item = messages[index]
            scan.read(index, shape(item), (item.seq,))
        return list(scan.finish())

    def _anthropic_problems(self, messages: list[ContextMessage]) -> list[Problem]:
        # a kept state at message i follows whole turns; message i starts the next turn,
        # so it must be shared too for that turn to start there again
        state = self._anthropic
        start, first_turn = state.resume(messages, 0)
        merged = anthropic_turns(messages[start:], _anthropic_shape, None,
                                 after_turns=first_turn > 0)
        scan, last, marks = state.scan, start, state.last.marks
        for offset, (turn, seqs, begins) in enumerate(zip(merged.turns, merged.seqs(),
                                                          merged.starts, strict=True)):
            if start + begins - last >= MARK_EVERY and offset:
                last = start + begins
                marks.append((last, first_turn + offset, scan.mark()))
            scan.read(first_turn + offset, turn, seqs)
        return list(scan.finish())
