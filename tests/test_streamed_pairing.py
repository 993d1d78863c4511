"""``streams.pairing.PairingState``: the providers' pairing rules read a message at a time.

Expected values: hand-worked contexts, then random contexts checked against the whole
request the providers' export gives (``recovery.providers.export`` read by
``recovery.pairing.pairing_problems``), including states resumed from a mark.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.pairing import pairing_problems
from ledgerviz.recovery.pairing_memo import pairing_shape
from ledgerviz.recovery.providers import PROVIDERS, export
from ledgerviz.streams.pairing import PairingState


def _system(text: str = "be brief") -> ContextMessage:
    return ContextMessage(0, "system/message",
                          {"role": "system", "content": [{"type": "text", "text": text}]})


def _user(text: str = "hi") -> ContextMessage:
    return ContextMessage(0, "user/message",
                          {"role": "user", "content": [{"type": "text", "text": text}]})


def _assistant(*call_ids: str, text: str = "") -> ContextMessage:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool-call", "id": i, "name": "ls", "arguments": "{}"}
                for i in call_ids]
    return ContextMessage(0, "assistant/message", {"role": "assistant", "content": content})


def _result(call_id: str) -> ContextMessage:
    return ContextMessage(0, "tool/result", {
        "role": "tool", "toolCallId": call_id, "source": {"kind": "tool", "callId": call_id},
        "content": [{"type": "text", "text": "done"}]})


def _read(state: PairingState, messages: list[ContextMessage]) -> None:
    for item in messages:
        state.read((item.event_type, item.message.get("role")), pairing_shape(item))


def _valid(messages: list[ContextMessage]) -> dict[str, bool]:
    state = PairingState()
    _read(state, messages)
    return state.valid()


BOTH, NEITHER = {"openai": True, "anthropic": True}, {"openai": False, "anthropic": False}

HAND = [
    ([], BOTH),
    ([_system(), _user(), _assistant("a", "b"), _result("a"), _result("b"), _assistant(text="ok")],
     BOTH),
    ([_user(), _assistant("a")], NEITHER),  # a call left unanswered
    ([_user(), _result("z")], NEITHER),  # a result of no call
    ([_user(), _assistant("a"), _result("a"), _result("a")], NEITHER),  # answered twice
    # OpenAI wants each result before the next message; Anthropic merges the two assistant
    # messages into one turn, answered by the next user turn
    ([_user(), _assistant("a"), _assistant("b"), _result("a"), _result("b")],
     {"openai": False, "anthropic": True}),
    # OpenAI reads the results as soon as they come; Anthropic merges the user text after
    # the results into their turn, so it still answers both calls
    ([_user(), _assistant("a", "b"), _result("b"), _result("a"), _user("more")], BOTH),
    # a system message after the first turn is a user-side message in an Anthropic request:
    # it merges with the user turn before it
    ([_user(), _system(), _assistant("a"), _result("a")], BOTH),
]


@pytest.mark.parametrize(("messages", "expected"), HAND)
def test_hand_worked_contexts(messages: list[ContextMessage], expected: dict[str, bool]) -> None:
    assert _valid(messages) == expected


def test_results_read_by_call_id_read_as_their_messages() -> None:
    state = PairingState()
    _read(state, [_user(), _assistant("a", "b")])
    state.read_result("a")
    state.read_result("b")
    assert state.valid() == BOTH
    state = PairingState()
    _read(state, [_user(), _assistant("a")])
    state.read_result("b")
    assert state.valid() == NEITHER


_MESSAGES = st.one_of(
    st.builds(_system), st.builds(_user),
    st.builds(lambda ids, text: _assistant(*ids, text=text),
              st.lists(st.sampled_from("abc"), max_size=3), st.sampled_from(["", "so"])),
    st.builds(_result, st.sampled_from("abcz")),
    st.just(ContextMessage(0, "user/message", {"role": "user", "content": []})),
)


def _expected(messages: list[ContextMessage]) -> dict[str, bool]:
    return {provider: not pairing_problems(export(messages, provider, full=False))
            for provider in PROVIDERS}


@settings(max_examples=400, deadline=None)
@given(st.lists(_MESSAGES, max_size=12))
def test_random_contexts_are_judged_as_the_whole_request(messages: list[ContextMessage]) -> None:
    assert _valid(messages) == _expected(messages)


@settings(max_examples=300, deadline=None)
@given(st.lists(_MESSAGES, max_size=8), st.lists(_MESSAGES, max_size=6),
       st.lists(_MESSAGES, max_size=6))
def test_a_state_restored_from_a_mark_goes_on_as_the_prefix_would(
        prefix: list[ContextMessage], other: list[ContextMessage],
        suffix: list[ContextMessage]) -> None:
    state = PairingState()
    _read(state, prefix)
    mark = state.mark()
    _read(state, other)  # read on after the mark: the mark must not move
    restored = PairingState.restored(mark)
    _read(restored, suffix)
    assert restored.valid() == _expected(prefix + suffix)
    assert state.valid() == _expected(prefix + other)
