"""Tool-call pairing checks of provider requests, as scans that read one message (OpenAI) or
one turn (Anthropic) at a time, so that a caller can keep a scan's state and resume it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ledgerviz.recovery.providers import Provider, ProviderRequest

Seqs = tuple[int | None, ...]
Block = tuple[str, Any]
"""An Anthropic content block as the pairing rule reads it: its type and the call id it names
(a ``tool_use`` block's ``id``, a ``tool_result`` block's ``tool_use_id``; None for others)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """A tool-call pairing rule the request breaks."""

    provider: Provider
    kind: Literal["missing_result", "orphan_result", "duplicate_result"]
    call_id: str | None
    message: int
    """Index in ``payload["messages"]`` of the offending (or unanswered) message."""
    seqs: Seqs
    detail: str


class OpenAIPairing:
    """The OpenAI rule, message by message: every assistant ``tool_calls`` id answered by a
    ``tool`` message before the next non-tool message, no stray answers.

    :meth:`mark` and :meth:`rewind` keep and restore the state after any message; a mark
    stays good after other rewinds and reads (see :meth:`rewind`).
    """

    def __init__(self, *, remember_answers: bool = True) -> None:
        self.problems: list[Problem] = []
        self._remember = remember_answers
        """Whether answered ids are kept to tell a ``duplicate_result`` from an
        ``orphan_result``; without, memory does not grow with the calls answered and every
        stray answer is an ``orphan_result`` (the request is invalid either way)."""
        self._open: dict[Any, tuple[int, Seqs]] = {}
        self._answered: set[Any] = set()
        """Each call id a tool message has answered."""
        self._answers: list[Any] = []
        """``_answered`` in the order it grew, so a mark keeps it as a length."""

    def read(self, index: int, message: dict[str, Any], seqs: Seqs) -> None:
        """Read message ``index`` of the request (``seqs``: the events it came from)."""
        if message["role"] == "tool":
            self.read_result(index, message.get("tool_call_id"), seqs)
        else:
            self.read_calls(index, [call["id"] for call in message.get("tool_calls") or ()],
                            seqs)

    def read_result(self, index: int, call_id: Any, seqs: Seqs) -> None:
        """Read message ``index``, a ``tool`` message answering ``call_id``."""
        if call_id in self._open:
            del self._open[call_id]
            if self._remember and call_id not in self._answered:
                self._answered.add(call_id)
                self._answers.append(call_id)
            return
        kind = "duplicate_result" if call_id in self._answered else "orphan_result"
        self.problems.append(Problem("openai", kind, call_id, index, seqs,
                                     f"tool message for {call_id!r} answers no open call"))

    def read_calls(self, index: int, call_ids: list[Any], seqs: Seqs) -> None:
        """Read message ``index``, any message but a ``tool`` one, asking for ``call_ids``."""
        self._report_missing()
        for call_id in call_ids:
            self._open[call_id] = (index, seqs)

    def _report_missing(self) -> None:
        for call_id, (index, seqs) in self._open.items():
            self.problems.append(Problem("openai", "missing_result", call_id, index, seqs,
                                         f"tool call {call_id!r} has no tool message after it"))
        self._open.clear()

    def finish(self) -> list[Problem]:
        """Return every problem of the messages read (the calls left open included)."""
        self._report_missing()
        return self.problems

    def mark(self) -> tuple[Any, ...]:
        """Return the state after the messages read so far, for :meth:`rewind`."""
        return dict(self._open), self.problems, len(self.problems), self._answers, len(
            self._answers)

    def rewind(self, mark: tuple[Any, ...]) -> None:
        """Restore the state of :meth:`mark` (messages read since are forgotten).

        The lists a mark refers to are never cut back, only read: rewinding copies their
        first entries, so every mark of this scan can be rewound to, in any order.
        """
        opened, problems, problem_count, answers, answer_count = mark
        self._open = dict(opened)
        self.problems = problems[:problem_count]
        self._answers = answers[:answer_count]
        self._answered = set(self._answers)


class AnthropicPairing:
    """The Anthropic rule, turn by turn: every ``tool_use`` answered once in the next user
    turn, no ``tool_result`` without a ``tool_use`` in the turn just before.

    :meth:`mark` and :meth:`rewind` keep and restore the state after any turn; a mark
    stays good after other rewinds and reads.
    """

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self._asked: tuple[int, Seqs, dict[Any, int]] | None = None
        """The last turn read, when it was the assistant's: its index, seqs and tool_use ids."""

    def read(self, index: int, turn: dict[str, Any], seqs: Seqs) -> None:
        """Read turn ``index`` of the request (``seqs``: the events it came from)."""
        blocks = [(block["type"], _named_call(block)) for block in turn["content"]]
        self.read_blocks(index, turn["role"], blocks, seqs)

    def read_blocks(self, index: int, role: str, blocks: list[Block], seqs: Seqs) -> None:
        """Read turn ``index``, of ``role``, whose content ``blocks`` are given as
        (type, call id) pairs."""
        if role == "assistant":
            self._report_missing(set())
            requested = {call_id: index for kind, call_id in blocks if kind == "tool_use"}
            self._asked = (index, seqs, requested)
            return
        answers = ({call_id for kind, call_id in blocks if kind == "tool_result"}
                   if role == "user" else set())
        requested = self._asked[2] if self._asked else {}
        self._report_missing(answers)
        seen: set[Any] = set()
        for kind, call_id in blocks:
            if kind != "tool_result":
                continue
            if call_id in seen:
                broken, detail = "duplicate_result", f"tool_result {call_id!r} appears twice"
            elif call_id not in requested:
                broken, detail = "orphan_result", f"tool_result {call_id!r} follows no tool_use"
            else:
                seen.add(call_id)
                continue
            self.problems.append(Problem("anthropic", broken, call_id, index, seqs, detail))

    def _report_missing(self, answers: set[Any]) -> None:
        """Report the asked calls that ``answers`` (the next turn's results) leave out."""
        if self._asked is None:
            return
        index, seqs, requested = self._asked
        self.problems.extend(
            Problem("anthropic", "missing_result", call_id, index, seqs,
                    f"tool_use {call_id!r} has no tool_result in the next user turn")
            for call_id in requested if call_id not in answers)
        self._asked = None

    def finish(self) -> list[Problem]:
        """Return every problem of the turns read (a last assistant turn's calls included)."""
        self._report_missing(set())
        return self.problems

    def mark(self) -> tuple[Any, ...]:
        """Return the state after the turns read so far, for :meth:`rewind`."""
        return self._asked, self.problems, len(self.problems)

    def rewind(self, mark: tuple[Any, ...]) -> None:
        """Restore the state of :meth:`mark` (turns read since are forgotten; as
        :meth:`OpenAIPairing.rewind`, the list the mark refers to is copied, not cut)."""
        self._asked, problems, count = mark
        self.problems = problems[:count]


def _named_call(block: dict[str, Any]) -> Any:
    """Return the call id an Anthropic content block names (see :data:`Block`)."""
    kind = block["type"]
    return (block["id"] if kind == "tool_use" else block["tool_use_id"] if kind == "tool_result"
            else None)


def pairing_problems(request: ProviderRequest) -> list[Problem]:
    """Return every tool-call pairing problem of a provider request ([] when valid)."""
    scan = OpenAIPairing() if request.provider == "openai" else AnthropicPairing()
    for index, (message, seqs) in enumerate(zip(request.payload["messages"], request.seqs,
                                                strict=True)):
        scan.read(index, message, seqs)
    return scan.finish()
