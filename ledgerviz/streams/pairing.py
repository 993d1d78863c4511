"""Whether a model context read a message at a time breaks the providers' tool-call pairing.

The rules are ``recovery.pairing``'s (OpenAI message by message; Anthropic turn by turn,
consecutive messages of a role merged as ``providers.anthropic_turns`` merges them, messages
without blocks left out), read from each message's ``pairing_memo.pairing_shape``. The
request leaves leading system messages out of its turns; read as a first user turn they
change nothing (a user turn without results breaks no rule), so they are read as any other.
Only whether a rule was broken is kept, never the problems, so the whole state is a few
values: :meth:`PairingState.mark` copies it and :meth:`PairingState.restored` resumes from a
copy.
"""

from __future__ import annotations

from typing import Any

from ledgerviz.recovery.pairing_memo import Shape
from ledgerviz.recovery.providers import PROVIDERS, Provider

_CALL_KIND = {"assistant": "tool_use", "user": "tool_result"}
"""The block type naming a call in a turn of each role (``pairing_shape`` gives no other)."""


class PairingState:
    """Both providers' pairing rules over the messages read so far (see the module)."""

    __slots__ = ("asked", "broken_anthropic", "broken_openai", "ids", "open", "speaker")

    def __init__(self) -> None:
        self.open: set[Any] = set()
        """OpenAI: the calls of the last message but a tool one, not answered yet."""
        self.broken_openai = False
        self.speaker: str | None = None
        """Anthropic: the role of the turn being merged (None: no turn yet)."""
        self.ids: list[Any] = []
        """The call ids the turn being merged names (tool_use or tool_result ids)."""
        self.asked: set[Any] | None = None
        """The tool_use ids of the last turn ended, when it was the assistant's."""
        self.broken_anthropic = False

    def read(self, source: tuple[Any, Any], shape: Shape) -> None:
        """Read one context message (``source``: its event type and role; only whether it
        is a tool result is read)."""
        speaker, blocks = shape
        if source[0] == "tool/result":
            self.read_result(blocks[0][1])
        elif speaker == "assistant" and blocks and blocks[0][0] == "tool_use":
            self.read_calls([call_id for _, call_id in blocks])
        else:  # no calls: a text block or nothing
            self.read_text(speaker, bool(blocks))

    def read_calls(self, call_ids: list[Any]) -> None:
        """Read an assistant message whose shape is a ``tool_use`` block per id of
        ``call_ids`` (one at least)."""
        if self.open:  # the last message's calls are left unanswered
            self.broken_openai = True
        self.open = set(call_ids)
        if self.speaker == "assistant":
            self.ids += call_ids
        else:
            self._end_turn()
            self.speaker, self.ids = "assistant", list(call_ids)

    def read_text(self, speaker: str, has_text: bool) -> None:
        """Read a message of Anthropic role ``speaker`` that names no call: its shape is a
        text block when ``has_text``, else no block (a message the turns leave out)."""
        if self.open:  # the last message's calls are left unanswered
            self.broken_openai = True
            self.open = set()
        if has_text and speaker != self.speaker:
            self._end_turn()
            self.speaker, self.ids = speaker, []

    def read_result(self, call_id: Any) -> None:
        """Read a tool result answering ``call_id`` (its shape: that ``tool_result`` id)."""
        self._answer(call_id)
        if self.speaker == "user":
            self.ids.append(call_id)
        else:
            self._end_turn()
            self.speaker, self.ids = "user", [call_id]

    def _answer(self, call_id: Any) -> None:
        """OpenAI: a tool message answers ``call_id``, which must be open."""
        try:
            self.open.remove(call_id)
        except KeyError:
            self.broken_openai = True

    def _end_turn(self) -> None:
        """Anthropic: end the turn being merged. An assistant turn's calls must all be answered
        by the next turn, a user one; a user turn's results must answer each call of the
        assistant turn just before, once."""
        if self.speaker == "assistant":
            if self.asked:
                self.broken_anthropic = True
            self.asked = set(self.ids)
        elif self.speaker is not None:
            answered = set(self.ids)
            if len(answered) != len(self.ids) or answered != (self.asked or set()):
                self.broken_anthropic = True
            self.asked = None

    def mark(self) -> tuple[Any, ...]:
        """Return the state after the messages read so far (see :meth:`restored`)."""
        return (frozenset(self.open), self.broken_openai, self.speaker, tuple(self.ids),
                self.asked, self.broken_anthropic)

    @classmethod
    def restored(cls, mark: tuple[Any, ...]) -> PairingState:
        """Return a new state equal to the one ``mark`` was taken from when it was taken."""
        state = cls()
        opened, state.broken_openai, state.speaker, ids, state.asked, state.broken_anthropic = mark
        state.open, state.ids = set(opened), list(ids)
        return state

    def valid(self) -> dict[Provider, bool]:
        """End the reading; return whether each provider would accept the context."""
        self._end_turn()
        self.speaker = None
        broken = {"openai": self.broken_openai or bool(self.open),
                  "anthropic": self.broken_anthropic or bool(self.asked)}
        return {provider: not broken[provider] for provider in PROVIDERS}
