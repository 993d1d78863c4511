"""Edges the mutation run found untested: export text of odd blocks, roles kept, the system
string, malformed replacements and nested rewinds (expected values by hand)."""

from __future__ import annotations

import pytest

from ledgerviz.recovery import analyze, export
from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.providers import anthropic_turns, block_text

from .build import LedgerBuilder


def test_block_text_of_odd_blocks() -> None:
    assert block_text([{"type": "text"}]) == ""
    assert block_text([{"type": "tool-addition", "toolName": "bash"}]) == "[tool-addition: bash]"
    assert block_text([{"type": "image", "attachment": {}}, "x"]) == "[image]"
    assert block_text("not a list") == ""


def message(role: str, text: str) -> ContextMessage:
    kind = f"{role}/message"
    return ContextMessage(1, kind, {"role": role, "content": [{"type": "text", "text": text}]})


def test_roles_kept_and_system_joined() -> None:
    messages = [message("system", "a"), message("system", "b"), message("developer", "d")]
    assert [m["role"] for m in export(messages, "openai").payload["messages"]] == [
        "system",
        "system",
        "developer",
    ]
    assert export(messages, "anthropic").payload["system"] == "a\n\nb"


def test_anthropic_turns_keep_system_texts_by_default() -> None:
    def blocks_of(item: ContextMessage) -> tuple[str, list[dict]]:
        return "user", [{"type": "text", "text": item.message["content"][0]["text"]}]

    system: list[str] = []
    messages = [message("system", "rules"), message("user", "hi")]
    turns = anthropic_turns(messages, map(blocks_of, messages), system)
    assert system == ["rules"]
    assert turns.turns == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_replacement_with_start_after_end_changes_nothing() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user("a")  # 1
    b.user("b")  # 2
    bad = b.user("summary")  # 3
    b.events[bad]["surfaceOp"] = {"op": "replace", "startSeq": 2, "endSeq": 1}
    assert [a for a in analyze(b.events, policy="recorded").surface] == [1, 2]


def test_a_node_under_two_rewinds_stays_hidden_until_both_are_restored() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user("a")  # 1
    first = b.log("surface/rewind")  # 2
    b.events[first]["data"] = {"start": 1, "end": 1, "shadowedSeqs": [1]}
    second = b.log("surface/rewind")  # 3
    b.events[second]["data"] = {"start": 1, "end": 1, "shadowedSeqs": [1]}
    restore = b.log("surface/restore")  # 4
    b.events[restore]["data"] = {"rewindSeq": second}
    assert analyze(b.events, policy="recorded").abandoned_seqs == [1]
    again = b.log("surface/restore")  # 5
    b.events[again]["data"] = {"rewindSeq": first}
    assert analyze(b.events, policy="recorded").abandoned_seqs == []


def test_anthropic_input_of_missing_or_object_arguments() -> None:
    call = {"type": "tool-call", "id": "A", "name": "bash"}
    assistant = ContextMessage(1, "assistant/message", {"role": "assistant", "content": [call]})
    (turn,) = export([assistant], "anthropic").payload["messages"]
    assert turn["content"][0]["input"] == {"_raw_arguments": None}
    with_object = {**call, "arguments": {"n": 1}}
    assistant = ContextMessage(1, "assistant/message",
                               {"role": "assistant", "content": [with_object]})
    (turn,) = export([assistant], "anthropic").payload["messages"]
    assert turn["content"][0]["input"] == {"n": 1}


def test_a_rewind_leaves_an_unlogged_result_before_it_in_place() -> None:
    # the synthetic result of turn 1's not-started call (never logged: seq None) sits
    # before the rewound turn 2, so the rewind of turn 2 leaves it on the surface
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.step_start()  # 2
    b.assistant("A")  # 3
    b.step_end()  # 4: closes A unanswered, never dispatched
    b.turn_end()  # 5
    b.turn_start()  # 6
    b.user("two")  # 7
    b.step_start()  # 8
    b.assistant(text="x")  # 9
    rewind = b.log("surface/rewind")  # 10
    b.events[rewind]["data"] = {"start": 7, "end": 9, "shadowedSeqs": [7, 9]}
    synth = analyze(b.events, policy="synthesize")
    assert [synth.seqs[k] for k in synth.surface] == [1, 3, None]
    assert synth.abandoned_seqs == [7, 9]


def text(value: str) -> dict:
    return {"type": "text", "text": value}


@pytest.mark.parametrize(("blocks", "expected"), [
    ([text("a"), 5, text("b")], "a\nb"),  # a stray non-block is skipped, not the end
    ([{"type": "tool-result", "content": [text("inner"), text("more")]}], "inner\nmore"),
    ([{"type": "tool-removal", "toolName": "bash"}], "[tool-removal: bash]"),
    ([{"type": "reasoning", "text": "r"}, {"type": "tool-call", "id": "A"}, text("x")], "x"),
    (None, ""),
])
def test_block_text_flattens_and_drops(blocks: object, expected: str) -> None:
    assert block_text(blocks) == expected


def test_a_message_of_no_known_role_is_a_user_message() -> None:
    unlabelled = ContextMessage(1, "user/message", {"content": [text("x")]})
    assert export([unlabelled], "openai").payload["messages"] == [
        {"role": "user", "content": "x"}
    ]


def test_anthropic_request_in_full() -> None:
    # turn 1 asks (no text: no empty text block), an empty message is dropped without
    # ending the export, the result carries its text, the reply follows
    asks = ContextMessage(1, "assistant/message", {"role": "assistant", "content": [
        {"type": "tool-call", "id": "A", "name": "ls", "arguments": "{}"}]})
    empty = ContextMessage(2, "user/message", {"role": "user", "content": []})
    answer = ContextMessage(3, "tool/result", {"role": "tool", "toolCallId": "A",
                                               "isError": True, "content": [text("out")]})
    reply = ContextMessage(4, "assistant/message", {"role": "assistant", "content": [text("ok")]})
    request = export([asks, empty, answer, reply], "anthropic")
    assert request.provider == "anthropic"
    assert request.payload == {"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "A", "name": "ls",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "A",
                                      "content": "out", "is_error": True}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]}
    assert request.seqs == [(1,), (3,), (4,)]


def test_an_unknown_provider_is_named() -> None:
    with pytest.raises(ValueError, match=r"^unknown provider 'gemini'; expected one of "
                                         r"\('openai', 'anthropic'\)$"):
        export([], "gemini")  # type: ignore[arg-type]
