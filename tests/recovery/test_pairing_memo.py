"""Pairing checks of overlapping contexts, each resumed from a state kept for the context
checked before (``PairingMemo``).

Contexts are hand-built lists of ``ContextMessage``; a message's seq names it. Each call
states, worked out by hand from the provider rules and the memo's documented resume rule,
the problems found and which messages (OpenAI) or turns (Anthropic) the scan read: a state
is kept before message ``i`` when ``i`` is a multiple of ``MARK_EVERY`` (OpenAI), or before
a turn that begins at least ``MARK_EVERY`` messages after the last kept state (Anthropic);
a context resumes from the last state whose messages it shares (Anthropic: and the message
after them, which may merge into the turn before), kept for the context checked last or for
the longest one checked so far.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from ledgerviz.recovery import pairing_memo
from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.pairing import AnthropicPairing, Block, OpenAIPairing
from ledgerviz.recovery.pairing_memo import PairingMemo

Reads = dict[str, list[tuple[int, tuple[Any, ...]]]]


def said(seq: int, text: str = "go on") -> ContextMessage:
    return ContextMessage(seq, "user/message",
                          {"role": "user", "content": [{"type": "text", "text": text}]})


def asks(seq: int, *call_ids: str) -> ContextMessage:
    blocks = [{"type": "tool-call", "id": i, "name": "ls", "arguments": "{}"} for i in call_ids]
    return ContextMessage(seq, "assistant/message", {"role": "assistant", "content": blocks})


def answer(seq: int, call_id: str) -> ContextMessage:
    return ContextMessage(seq, "tool/result", {
        "role": "tool", "toolCallId": call_id, "source": {"kind": "tool", "callId": call_id},
        "content": [{"type": "text", "text": "out"}]})


def system(seq: int, text: str) -> ContextMessage:
    return ContextMessage(seq, "system/message",
                          {"role": "system", "content": [{"type": "text", "text": text}]})


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    """What each provider's scan reads: (message or turn index, seqs), in order."""
    log: Reads = defaultdict(list)

    class OpenAIRecorded(OpenAIPairing):
        def read_result(self, index: int, call_id: Any, seqs: tuple[Any, ...]) -> None:
            log["openai"].append((index, seqs))
            super().read_result(index, call_id, seqs)

        def read_calls(self, index: int, call_ids: list[Any], seqs: tuple[Any, ...]) -> None:
            log["openai"].append((index, seqs))
            super().read_calls(index, call_ids, seqs)

    class AnthropicRecorded(AnthropicPairing):
        def read_blocks(self, index: int, role: str, blocks: list[Block],
                        seqs: tuple[Any, ...]) -> None:
            log["anthropic"].append((index, seqs))
            super().read_blocks(index, role, blocks, seqs)

    monkeypatch.setattr(pairing_memo, "OpenAIPairing", OpenAIRecorded)
    monkeypatch.setattr(pairing_memo, "AnthropicPairing", AnthropicRecorded)
    return log


def checked(memo: PairingMemo, messages: list[ContextMessage], reads: Reads
            ) -> tuple[dict[str, list[tuple[Any, ...]]], Reads]:
    """(kind, call id, message index, seqs) of each provider's problems, and the reads."""
    reads.clear()
    found = memo.problems(messages)
    summary = {provider: [(p.kind, p.call_id, p.message, p.seqs) for p in problems]
               for provider, problems in found.items()}
    return summary, dict(reads)


def new_memo() -> PairingMemo:
    return PairingMemo()


def test_contexts_resume_from_the_last_state_they_share(
        reads: Reads, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pairing_memo, "MARK_EVERY", 2)
    m0, m1, m2, m3, m4 = said(1), asks(2, "A"), answer(3, "A"), said(4), asks(5, "B")
    m5 = answer(6, "B")
    memo = new_memo()

    # Anthropic turns: 0 [m0], 1 [m1], 2 [m2 m3] (both user), 3 [m4]. States kept: OpenAI
    # before messages 2 and 4; Anthropic before turn 2 (message 2) and turn 3 (message 4).
    first = [m0, m1, m2, m3, m4]
    assert checked(memo, first, reads) == (
        {"openai": [("missing_result", "B", 4, (5,))],
         "anthropic": [("missing_result", "B", 3, (5,))]},
        {"openai": [(0, (1,)), (1, (2,)), (2, (3,)), (3, (4,)), (4, (5,))],
         "anthropic": [(0, (1,)), (1, (2,)), (2, (3, 4)), (3, (5,))]})

    # B answered: both resume before message 4 (turn 3)
    second = [*first, m5]
    assert checked(memo, second, reads) == (
        {"openai": [], "anthropic": []},
        {"openai": [(4, (5,)), (5, (6,))], "anthropic": [(3, (5,)), (4, (6,))]})

    # one more message: OpenAI keeps a state before message 6; Anthropic's last turn grows
    assert checked(memo, [*second, said(13)], reads) == (
        {"openai": [], "anthropic": []},
        {"openai": [(4, (5,)), (5, (6,)), (6, (13,))],
         "anthropic": [(3, (5,)), (4, (6, 13))]})

    # parts after message 2: the states before message 4 and 6 are dropped
    third = [m0, m1, m2, asks(7, "C")]
    assert checked(memo, third, reads) == (
        {"openai": [("missing_result", "C", 3, (7,))],
         "anthropic": [("missing_result", "C", 3, (7,))]},
        {"openai": [(2, (3,)), (3, (7,))], "anthropic": [(2, (3,)), (3, (7,))]})

    # back to the first context: it shares messages 0-4 with the longest context checked
    # ([*second, said(13)]), whose states before message 4 (turn 3) both scans resume from
    assert checked(memo, first, reads) == (
        {"openai": [("missing_result", "B", 4, (5,))],
         "anthropic": [("missing_result", "B", 3, (5,))]},
        {"openai": [(4, (5,))], "anthropic": [(3, (5,))]})

    # shares messages 0-3: OpenAI resumes before message 4, but Anthropic's message 4 (user)
    # joins turn 2, so Anthropic resumes before turn 2
    assert checked(memo, [m0, m1, m2, m3, said(11)], reads) == (
        {"openai": [], "anthropic": []},
        {"openai": [(4, (11,))], "anthropic": [(2, (3, 4, 11))]})

    # shares messages 0-1: the states before message (turn) 2 are dropped too
    assert checked(memo, [m0, m1, said(12)], reads) == (
        {"openai": [("missing_result", "A", 1, (2,))],
         "anthropic": [("missing_result", "A", 1, (2,))]},
        {"openai": [(2, (12,))], "anthropic": [(0, (1,)), (1, (2,)), (2, (12,))]})

    # shares nothing: both start over
    assert checked(memo, [said(8), asks(9, "D"), answer(10, "D")], reads) == (
        {"openai": [], "anthropic": []},
        {"openai": [(0, (8,)), (1, (9,)), (2, (10,))],
         "anthropic": [(0, (8,)), (1, (9,)), (2, (10,))]})


def test_a_resumed_scan_forgets_the_answers_read_after_its_state(
        reads: Reads, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pairing_memo, "MARK_EVERY", 1)
    call = asks(1, "A")
    memo = new_memo()
    assert checked(memo, [call, answer(2, "A"), answer(3, "A")], reads) == (
        {"openai": [("duplicate_result", "A", 2, (3,))],
         "anthropic": [("duplicate_result", "A", 1, (2, 3))]},
        {"openai": [(0, (1,)), (1, (2,)), (2, (3,))], "anthropic": [(0, (1,)), (1, (2, 3))]})
    # OpenAI resumes before message 1 with A open and not yet answered: A is missing and its
    # late answer is an orphan (not a duplicate); Anthropic's user turn [text, result] answers A
    assert checked(memo, [call, said(4), answer(5, "A")], reads) == (
        {"openai": [("missing_result", "A", 0, (1,)), ("orphan_result", "A", 2, (5,))],
         "anthropic": []},
        {"openai": [(1, (4,)), (2, (5,))], "anthropic": [(0, (1,)), (1, (4, 5))]})


def test_cuts_after_a_shorter_one_resume_from_the_longest_context(
        reads: Reads, monkeypatch: pytest.MonkeyPatch) -> None:
    # the explorer's order: the whole session, then cuts of it that move forward
    monkeypatch.setattr(pairing_memo, "MARK_EVERY", 2)
    whole = [said(1), asks(2, "A"), answer(3, "A"), said(4), asks(5, "B"), answer(6, "B"),
             said(7)]
    memo = new_memo()
    checked(memo, whole, reads)
    # a cut after message 2 ends in its own closer; OpenAI resumes before message 2
    assert checked(memo, [*whole[:2], answer(8, "A")], reads)[1]["openai"] == [(2, (8,))]
    # the next cut shares messages 0-4 with the whole session, but only 0-1 with the cut
    # before: both resume from the whole session's state before message 4 (turn 3)
    assert checked(memo, [*whole[:5], answer(9, "B")], reads) == (
        {"openai": [], "anthropic": []},
        {"openai": [(4, (5,)), (5, (9,))], "anthropic": [(3, (5,)), (4, (9,))]})


OPENAI_READS = ({"role": "assistant", "tool_calls": [{"id": "A"}]},
                {"role": "tool", "tool_call_id": "A"}, {"role": "user"})
ANTHROPIC_READS = ({"role": "assistant", "content": [{"type": "tool_use", "id": "A"}]},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "A"}]},
                   {"role": "user", "content": [{"type": "text", "text": "hi"}]})


@pytest.mark.parametrize(("scan", "reads", "again"), [
    (OpenAIPairing(), OPENAI_READS, "duplicate_result"),
    (AnthropicPairing(), ANTHROPIC_READS, "orphan_result"),  # a result turn after a result turn
], ids=["openai", "anthropic"])
def test_a_mark_survives_rewinds_to_earlier_marks(
        scan: Any, reads: tuple[dict[str, Any], ...], again: str) -> None:
    call, result, text = reads
    start = scan.mark()
    scan.read(0, call, (1,))
    scan.read(1, result, (2,))
    answered = scan.mark()
    scan.read(2, result, (3,))
    twice = scan.mark()
    scan.rewind(start)  # and read something else from the start
    scan.read(0, text, (4,))
    assert scan.finish() == []
    scan.rewind(twice)
    assert [(p.kind, p.message, p.seqs) for p in scan.finish()] == [(again, 2, (3,))]
    scan.rewind(answered)
    scan.read(2, text, (5,))
    assert scan.finish() == []


def test_a_turn_resumed_after_turns_keeps_its_system_message(
        reads: Reads, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pairing_memo, "MARK_EVERY", 2)
    # Anthropic: the leading system message makes no turn; turn 0 [asks], turn 1 [system]
    # (a later system message is user text), a state kept before turn 1 (message 2)
    first = [system(1, "rules"), asks(2, "A"), system(3, "note")]
    memo = new_memo()
    assert checked(memo, first, reads) == (
        {"openai": [("missing_result", "A", 1, (2,))],
         "anthropic": [("missing_result", "A", 0, (2,))]},
        {"openai": [(0, (1,)), (1, (2,)), (2, (3,))], "anthropic": [(0, (2,)), (1, (3,))]})
    # resumed before message 2 / turn 1: the note still opens turn 1, which now answers A
    assert checked(memo, [*first, answer(4, "A")], reads) == (
        {"openai": [("missing_result", "A", 1, (2,)), ("orphan_result", "A", 3, (4,))],
         "anthropic": []},
        {"openai": [(2, (3,)), (3, (4,))], "anthropic": [(1, (3, 4))]})


def replies(seq: int, text: str) -> ContextMessage:
    return ContextMessage(seq, "assistant/message",
                          {"role": "assistant", "content": [{"type": "text", "text": text}]})


def test_pairing_shapes_name_the_calls_and_mark_text_only_where_it_keeps_a_message() -> None:
    thinks = ContextMessage(9, "assistant/message", {"role": "assistant", "content": [
        {"type": "reasoning", "text": "hm"}, {"type": "text", "text": "let me look"},
        {"type": "tool-call", "id": "A", "name": "ls", "arguments": "{}"},
        {"type": "tool-call", "id": "B", "name": "cat", "arguments": "{}"}]})
    text = ("text", None)
    assert pairing_memo.pairing_shape(thinks) == (
        "assistant", [("tool_use", "A"), ("tool_use", "B")])
    assert pairing_memo.pairing_shape(replies(1, "done")) == ("assistant", [text])
    assert pairing_memo.pairing_shape(replies(2, "")) == ("assistant", [])
    assert pairing_memo.pairing_shape(answer(3, "A")) == ("user", [("tool_result", "A")])
    assert pairing_memo.pairing_shape(said(4)) == ("user", [text])
    assert pairing_memo.pairing_shape(said(5, "")) == ("user", [])
    assert pairing_memo.pairing_shape(system(6, "note")) == ("user", [text])


@pytest.mark.parametrize("between", ["done", ""], ids=["text", "empty"])
def test_an_assistant_message_between_a_call_and_its_result(reads: Reads, between: str) -> None:
    # OpenAI: any non-tool message closes the calls before it, so A is missing and its result
    # answers nothing. Anthropic: the text joins the asking turn (or, empty, is dropped), and
    # the next user turn answers A.
    context = [asks(1, "A"), replies(2, between), answer(3, "A")]
    anthropic_reads = [(0, (1, 2)), (1, (3,))] if between else [(0, (1,)), (1, (3,))]
    assert checked(new_memo(), context, reads) == (
        {"openai": [("missing_result", "A", 0, (1,)), ("orphan_result", "A", 2, (3,))],
         "anthropic": []},
        {"openai": [(0, (1,)), (1, (2,)), (2, (3,))], "anthropic": anthropic_reads})
