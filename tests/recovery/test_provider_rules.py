"""Each provider pairing rule broken by the smallest request, with the exact problems expected.

The requests are written by hand in the provider's own shape (not exported from a ledger),
so every expected problem below is worked out from the provider's rule, not from the engine.
Each message's seqs are ``(10 + index,)`` so a problem's seqs show which message it names.
"""

from __future__ import annotations

from typing import Any

import pytest

from ledgerviz.recovery import Problem, ProviderRequest, pairing_problems


def request(provider: str, *messages: dict[str, Any]) -> ProviderRequest:
    return ProviderRequest(
        provider,  # type: ignore[arg-type]
        {"messages": list(messages)},
        [(10 + index,) for index in range(len(messages))],
    )


def problems(provider: str, *messages: dict[str, Any]) -> list[tuple]:
    """(kind, call id, message index, seqs) of each problem, in report order."""
    return [
        (p.kind, p.call_id, p.message, p.seqs)
        for p in pairing_problems(request(provider, *messages))
    ]


# --- OpenAI chat completions: tool messages right after the assistant that asked ---------


def calls(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ],
    }


def tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "out"}


USER = {"role": "user", "content": "next"}
SAID = {"role": "assistant", "content": "text only"}


def test_openai_answered_calls_are_valid() -> None:
    assert problems("openai", USER, calls("A", "B"), tool("B"), tool("A"), USER) == []
    assert problems("openai", USER, SAID, USER) == []


def test_openai_call_without_any_tool_message() -> None:
    assert problems("openai", USER, calls("A")) == [("missing_result", "A", 1, (11,))]


def test_openai_non_tool_message_closes_open_calls() -> None:
    # The answer after a user message is too late: A is missing at 0 and the answer is stray.
    assert problems("openai", calls("A"), USER, tool("A")) == [
        ("missing_result", "A", 0, (10,)),
        ("orphan_result", "A", 2, (12,)),
    ]


def test_openai_next_assistant_message_closes_open_calls() -> None:
    assert problems("openai", calls("A"), calls("B"), tool("A"), tool("B")) == [
        ("missing_result", "A", 0, (10,)),
        ("orphan_result", "A", 2, (12,)),
    ]
    assert problems("openai", calls("A"), SAID, tool("A")) == [
        ("missing_result", "A", 0, (10,)),
        ("orphan_result", "A", 2, (12,)),
    ]


def test_openai_only_the_unanswered_calls_are_missing_in_request_order() -> None:
    assert problems("openai", calls("A", "B", "C"), tool("B"), USER) == [
        ("missing_result", "A", 0, (10,)),
        ("missing_result", "C", 0, (10,)),
    ]


def test_openai_orphan_result() -> None:
    assert problems("openai", tool("Q")) == [("orphan_result", "Q", 0, (10,))]
    assert problems("openai", USER, calls("A"), tool("A"), tool("Z")) == [
        ("orphan_result", "Z", 3, (13,))
    ]


def test_openai_duplicate_result_even_after_a_later_message() -> None:
    assert problems("openai", calls("A"), tool("A"), tool("A")) == [
        ("duplicate_result", "A", 2, (12,))
    ]
    assert problems("openai", calls("A"), tool("A"), USER, tool("A")) == [
        ("duplicate_result", "A", 3, (13,))
    ]


def test_openai_problem_objects_in_full() -> None:
    found = pairing_problems(request("openai", calls("A"), USER, tool("A"), tool("A")))
    missing = "tool call 'A' has no tool message after it"
    stray = "tool message for 'A' answers no open call"
    assert found == [
        Problem("openai", "missing_result", "A", 0, (10,), missing),
        Problem("openai", "orphan_result", "A", 2, (12,), stray),
        Problem("openai", "orphan_result", "A", 3, (13,), stray),
    ]


# --- Anthropic messages: tool_result blocks in the very next user turn ------------------


def uses(*ids: str, text: str | None = None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": "f", "input": {}} for i in ids]
    return {"role": "assistant", "content": blocks}


def results(*ids: str, text: str | None = None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": i, "content": "out", "is_error": False} for i in ids
    ]
    if text:
        blocks.append({"type": "text", "text": text})
    return {"role": "user", "content": blocks}


ASK = {"role": "user", "content": [{"type": "text", "text": "next"}]}
REPLY = {"role": "assistant", "content": [{"type": "text", "text": "text only"}]}


def test_anthropic_answered_calls_are_valid() -> None:
    assert problems("anthropic", ASK, uses("A", "B", text="t"), results("B", "A", text="go")) == []
    assert problems("anthropic", ASK, REPLY, ASK) == []


def test_anthropic_tool_use_as_last_turn_is_missing() -> None:
    assert problems("anthropic", ASK, uses("A")) == [("missing_result", "A", 1, (11,))]


def test_anthropic_result_in_a_later_user_turn_does_not_count() -> None:
    # A's result two user turns later is both missing where it was due and stray where it is.
    assert problems("anthropic", uses("A"), ASK, REPLY, results("A")) == [
        ("missing_result", "A", 0, (10,)),
        ("orphan_result", "A", 3, (13,)),
    ]


def test_anthropic_next_turn_must_be_a_user_turn() -> None:
    assert problems("anthropic", uses("A"), uses("B"), results("A", "B")) == [
        ("missing_result", "A", 0, (10,)),
        ("orphan_result", "A", 2, (12,)),
    ]


def test_anthropic_partly_answered_turn() -> None:
    assert problems("anthropic", uses("A", "B", "C"), results("B")) == [
        ("missing_result", "A", 0, (10,)),
        ("missing_result", "C", 0, (10,)),
    ]


def test_anthropic_orphan_results() -> None:
    assert problems("anthropic", results("Q")) == [("orphan_result", "Q", 0, (10,))]
    assert problems("anthropic", uses("A"), results("A", "Z")) == [("orphan_result", "Z", 1, (11,))]
    # only the assistant turn just before counts: A belongs to turn 0, not to turn 2
    assert problems("anthropic", uses("A"), results("A"), uses("B"), results("A", "B")) == [
        ("orphan_result", "A", 3, (13,))
    ]
    # a second user turn in a row answers nothing
    assert problems("anthropic", uses("A"), results("A"), results("A")) == [
        ("orphan_result", "A", 2, (12,))
    ]


def test_anthropic_results_after_a_text_block_are_still_checked() -> None:
    note_first = {"role": "user", "content": [{"type": "text", "text": "note"},
                                              *results("Z", "A")["content"]]}
    assert problems("anthropic", uses("A"), note_first) == [("orphan_result", "Z", 1, (11,))]


def test_anthropic_results_count_only_in_a_user_turn() -> None:
    # a turn of another role holding A's result does not answer A (A's use is just before
    # it, so the result is no orphan either)
    not_user = {**results("A"), "role": "tool"}
    assert problems("anthropic", uses("A"), not_user) == [("missing_result", "A", 0, (10,))]


def test_anthropic_duplicate_result_in_one_turn() -> None:
    assert problems("anthropic", uses("A"), results("A", "A")) == [
        ("duplicate_result", "A", 1, (11,))
    ]


def test_anthropic_problem_objects_in_full() -> None:
    found = pairing_problems(
        request("anthropic", uses("A"), ASK, results("B", "B"), uses("C"), results("C", "C"))
    )
    assert found == [
        Problem(
            "anthropic",
            "missing_result",
            "A",
            0,
            (10,),
            "tool_use 'A' has no tool_result in the next user turn",
        ),
        Problem("anthropic", "orphan_result", "B", 2, (12,), "tool_result 'B' follows no tool_use"),
        Problem("anthropic", "orphan_result", "B", 2, (12,), "tool_result 'B' follows no tool_use"),
        Problem("anthropic", "duplicate_result", "C", 4, (14,), "tool_result 'C' appears twice"),
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_empty_request_is_valid(provider: str) -> None:
    assert problems(provider) == []


@pytest.mark.parametrize(("provider", "said"), [("openai", USER), ("anthropic", ASK)])
def test_seqs_not_parallel_to_the_messages_are_refused(provider: str, said: dict) -> None:
    short = ProviderRequest(provider, {"messages": [said, said]}, [(10,)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="shorter"):
        pairing_problems(short)
