"""Provider export shapes and tool-call pairing problems."""

from __future__ import annotations

import pytest

from ledgerviz.recovery import analyze, export, pairing_problems, project_context
from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.providers import (
    ExportMemo,
    Provider,
    ProviderRequest,
    block_text,
    has_text,
    to_anthropic,
    to_openai,
)

from .build import LedgerBuilder
from .ledgers import dsh_fixture


def parallel_turn() -> LedgerBuilder:
    b = LedgerBuilder(3)
    b.turn_start()
    b.user("list")  # 1
    b.step_start()
    b.assistant("A", "B")  # 3
    b.events[3]["data"]["message"]["content"].insert(0, {"type": "reasoning", "text": "hmm"})
    b.events[3]["data"]["message"]["content"][-1]["arguments"] = "{not json"
    b.tool_call("A")
    b.tool_call("B")
    b.tool_result("A")  # 6
    b.tool_result("B", is_error=True)  # 7
    return b


def exported(context: list[ContextMessage], provider: Provider, remembered: bool
             ) -> ProviderRequest:
    """Return ``export(context, provider)``; when ``remembered``, through a memo that every
    prefix of the context (in both orders) was exported through first."""
    if not remembered:
        return export(context, provider)
    memo: ExportMemo = {}
    for n in [*range(len(context) + 1), *reversed(range(len(context) + 1))]:
        export(context[:n], provider, memo)
    return export(context, provider, memo)


def test_a_shape_only_request_leaves_out_texts_and_parsing() -> None:
    context = project_context(analyze(parallel_turn().events, policy="recorded", version=3))
    openai = export(context, "openai", full=False).payload["messages"]
    assert [(m["role"], m["content"]) for m in openai] == [
        ("user", None), ("assistant", None), ("tool", None), ("tool", None)]
    assert [c["id"] for c in openai[1]["tool_calls"]] == ["A", "B"]
    turns = export(context, "anthropic", full=False).payload["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][0] == {"type": "text", "text": ""}  # text there: it is kept
    assert turns[1]["content"][2]["input"] == "{not json"
    assert [b["content"] for b in turns[2]["content"]] == ["", ""]


@pytest.mark.parametrize(("blocks", "text"), [
    ([], False),
    ("not a list", False),
    ([{"type": "reasoning", "text": "hm"}, {"type": "tool-call", "id": "A"}], False),
    ([{"type": "text", "text": ""}, 7], False),
    ([{"type": "text", "text": None}], True),  # block_text writes "None"
    ([{"type": "tool-result", "content": [{"type": "text", "text": ""}]}], False),
    ([{"type": "tool-result", "content": [{"type": "text", "text": "out"}]}], True),
    ([{"type": "reasoning"}, {"type": "image"}], True),  # "[image]"
    ([{"type": "tool-addition", "toolName": "grep"}], True),
])
def test_has_text_says_whether_block_text_is_empty(blocks: object, text: bool) -> None:
    assert has_text(blocks) is text
    assert bool(block_text(blocks)) is text


@pytest.mark.parametrize("remembered", [False, True])
def test_openai_shape(remembered: bool) -> None:
    context = project_context(analyze(parallel_turn().events, policy="recorded", version=3))
    request = exported(context, "openai", remembered)
    messages = request.payload["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert messages[1]["content"] == "ok"  # reasoning dropped
    assert messages[1]["tool_calls"][1] == {
        "id": "B",
        "type": "function",
        "function": {"name": "bash", "arguments": "{not json"},
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "B", "content": "out"}
    assert request.seqs == [(1,), (3,), (6,), (7,)]
    assert pairing_problems(request) == []


@pytest.mark.parametrize("remembered", [False, True])
def test_anthropic_shape_merges_results_and_parses_arguments(remembered: bool) -> None:
    context = project_context(analyze(parallel_turn().events, policy="recorded", version=3))
    request = exported(context, "anthropic", remembered)
    turns = request.payload["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][1] == {
        "type": "tool_use",
        "id": "A",
        "name": "bash",
        "input": {"n": 1},
    }
    assert turns[1]["content"][2]["input"] == {"_raw_arguments": "{not json"}
    assert [(b["tool_use_id"], b["is_error"]) for b in turns[2]["content"]] == [
        ("A", False),
        ("B", True),
    ]
    assert request.seqs == [(1,), (3,), (6, 7)]
    assert pairing_problems(request) == []


def test_system_head_becomes_anthropic_system_string() -> None:
    _, events = dsh_fixture("headless-profile")
    context = project_context(analyze(events, policy="recorded", version=3))
    assert context[0].event_type == "system/message"
    anthropic = export(context, "anthropic").payload
    openai = export(context, "openai").payload
    assert openai["messages"][0]["role"] == "system"
    assert anthropic["system"] == openai["messages"][0]["content"]
    assert anthropic["messages"][0]["role"] == "user"


@pytest.mark.parametrize("full", [True, False])
def test_missing_result_is_reported_for_both_providers(full: bool) -> None:
    b = parallel_turn()
    del b.events[7]  # B's result never landed
    b.user("next")
    context = project_context(analyze(b.events, policy="recorded", version=3))
    for provider in ("openai", "anthropic"):
        (problem,) = pairing_problems(export(context, provider, full=full))
        assert (problem.provider, problem.kind, problem.call_id) == (
            provider,
            "missing_result",
            "B",
        )
        assert problem.seqs == (3,)


def _result(seq: int, call_id: str) -> ContextMessage:
    message = {
        "id": f"r{seq}",
        "role": "tool",
        "toolCallId": call_id,
        "source": {"kind": "tool", "callId": call_id},
        "content": [{"type": "text", "text": "x"}],
    }
    return ContextMessage(seq, "tool/result", message)


@pytest.mark.parametrize("full", [True, False])
def test_orphan_and_duplicate_results(full: bool) -> None:
    context = project_context(analyze(parallel_turn().events, policy="recorded", version=3))
    context = [*context, _result(8, "A"), _result(9, "Z")]
    openai = pairing_problems(export(context, "openai", full=full))
    assert [(p.kind, p.call_id, p.seqs) for p in openai] == [
        ("duplicate_result", "A", (8,)),
        ("orphan_result", "Z", (9,)),
    ]
    anthropic = pairing_problems(export(context, "anthropic", full=full))
    assert [(p.kind, p.call_id, p.message) for p in anthropic] == [
        ("duplicate_result", "A", 2),
        ("orphan_result", "Z", 2),
    ]
    orphan_first = pairing_problems(export([_result(0, "Q")], "anthropic", full=full))
    assert [(p.kind, p.call_id) for p in orphan_first] == [("orphan_result", "Q")]


def test_the_converters_give_full_requests_by_default() -> None:
    said = ContextMessage(4, "user/message", {"role": "user", "content": [
        {"type": "text", "text": "hello"}]})
    rules = ContextMessage(0, "system/message", {"role": "system", "content": [
        {"type": "text", "text": "rules"}]})
    assert to_openai([said]).payload["messages"] == [{"role": "user", "content": "hello"}]
    assert to_anthropic([rules, said]).payload == {
        "system": "rules",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
    }


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_memo_holds_what_each_message_became(provider: Provider) -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    memo: ExportMemo = {}
    export([ContextMessage(4, "user/message", message)], provider, memo)
    became = ({"role": "user", "content": "hello"} if provider == "openai"
              else ("user", [{"type": "text", "text": "hello"}]))
    assert memo == {id(message): (message, "user/message", became)}


def said(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_a_memo_entry_is_used_only_for_its_own_message_and_event_type() -> None:
    message = said("hello")
    item = ContextMessage(4, "user/message", message)
    fresh = {"role": "user", "content": "hello"}
    kept = {"role": "user", "content": "remembered"}
    stale_entries = [
        (said("hello"), "user/message", kept),  # another dict that had the same id
        (message, "system/message", kept),  # the same message from another event type
    ]
    for stale in stale_entries:
        memo: ExportMemo = {id(message): stale}
        assert to_openai([item], memo).payload["messages"] == [fresh]
        assert memo == {id(message): (message, "user/message", fresh)}
    memo = {id(message): (message, "user/message", kept)}
    assert to_openai([item], memo).payload["messages"] == [kept]


def test_a_shape_only_anthropic_request_leaves_out_the_system_text() -> None:
    rules = ContextMessage(0, "system/message", {"role": "system", "content": [
        {"type": "text", "text": "rules"}]})
    assert export([rules], "anthropic", full=False).payload == {"system": "", "messages": []}
