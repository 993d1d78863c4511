"""Nested content of any depth: no ``RecursionError`` from the context, the provider export
a runtime calls, or the frames (issue 38)."""

from __future__ import annotations

import json
import sys

from ledgerviz.recovery import analyze, export, project_context
from ledgerviz.recovery.nesting import MAX_ARGUMENT_DEPTH, flat_blocks, nests_deeper

DEPTH = sys.getrecursionlimit() * 5
"""Far deeper than any recursion could go."""


def _deep_arguments(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _nested_result(depth: int) -> list[dict]:
    """Return content blocks: a tool-result block holding one, ``depth`` times, then a text."""
    content: list[dict] = [{"type": "text", "text": "bottom"}]
    for _ in range(depth):
        content = [{"type": "tool-result", "toolCallId": "A", "content": content}]
    return content


def _events(arguments: str, result_content: list[dict]) -> list[dict]:
    call = {"type": "tool-call", "id": "A", "name": "ls", "arguments": arguments}
    source = {"kind": "tool", "callId": "A"}
    return [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 2, "time": 0, "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "stream": [], "message": {
             "id": "m", "role": "assistant", "content": [call],
             "source": {"kind": "model"}}}},
        {"type": "tool/call", "seq": 3, "time": 0,
         "data": {"turn": 1, "step": 1, "callId": "A", "name": "ls", "arguments": arguments}},
        {"type": "tool/result", "seq": 4, "time": 0, "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "message": {
             "id": "r", "role": "user", "source": source, "content": result_content}}},
    ]


def test_the_provider_export_keeps_too_deep_arguments_as_text() -> None:
    deep, shallow = _deep_arguments(DEPTH), _deep_arguments(MAX_ARGUMENT_DEPTH)
    for arguments, expected in ((deep, {"_raw_arguments": deep}),
                                (shallow, json.loads(shallow))):
        messages = project_context(analyze(_events(arguments, []), policy="synthesize"))
        anthropic = export(messages, "anthropic").payload
        assistant = anthropic["messages"][0]["content"]
        assert assistant[-1]["input"] == expected
        openai = export(messages, "openai").payload
        assert openai["messages"][0]["tool_calls"][0]["function"]["arguments"] == arguments


def test_a_result_nested_as_deep_as_it_likes_gives_its_text() -> None:
    result = [{"type": "tool-result", "toolCallId": "A", "content": _nested_result(DEPTH)}]
    messages = project_context(analyze(_events("{}", result), policy="synthesize"))
    for provider, text in (("openai", lambda p: p["messages"][1]["content"]),
                           ("anthropic", lambda p: p["messages"][1]["content"][0]["content"])):
        assert text(export(messages, provider).payload) == "bottom"


def test_flat_blocks_yields_the_blocks_of_nested_results_in_place() -> None:
    blocks = [{"type": "text", "text": "a"}, 7, None,
              {"type": "tool-result", "content": [{"type": "text", "text": "b"}, None,
                                                  {"type": "tool-result", "content": "x"}]},
              {"type": "text", "text": "c"}]
    assert [b["text"] for b in flat_blocks(blocks)] == ["a", "b", "c"]
    assert list(flat_blocks({"type": "text"})) == []


def test_nesting_depth_counts_brackets_outside_strings_only() -> None:
    assert not nests_deeper('{"a":"' + "[" * 500 + '"}', 3)
    assert not nests_deeper('[[["\\"[[[["]]]', 3)
    assert nests_deeper("[[[[1]]]]", 3)
    assert not nests_deeper("[[[1]]]", 3)
