"""Edges the mutation run found untested: export text of odd blocks, roles kept, the system
string, malformed replacements and nested rewinds (expected values by hand)."""

from __future__ import annotations

from ledgerviz.recovery import analyze, export
from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.providers import block_text

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
