"""The event accessors a runtime imports from ``ledgerviz.recovery``, on literal events.

Expected values are read off LEDGER_FORMAT.md: range-encoded ``sourceEventSeqs`` (§3), the
two tool-result message forms (§4.4), ``data.error.code`` and the turn/end reason (§4.1).
"""

from __future__ import annotations

import pytest

from ledgerviz.recovery import result_call_id, result_error_code, seq_of, source_seqs
from ledgerviz.recovery.events import end_reason_kind, is_user_typed, message_of, result_facts
from ledgerviz.recovery.payload import message_call_id, message_is_error, result_content

TEXT = [{"type": "text", "text": "out"}]
V4 = {
    "id": "r",
    "role": "tool",
    "toolCallId": "A",
    "isError": True,
    "source": {"kind": "tool", "callId": "A"},
    "content": TEXT,
}
WRAPPED = {
    "id": "r",
    "role": "user",
    "source": {"kind": "tool", "callId": "B"},
    "content": [{"type": "tool-result", "toolCallId": "B", "isError": True, "content": TEXT}],
}


@pytest.mark.parametrize(
    ("stored", "decoded"),
    [
        ([[4, 7], 9], [4, 5, 6, 7, 9]),
        ([4, 5], [4, 5]),
        ([19, 20, 4], [19, 20, 4]),
        ([[0, 2]], [0, 1, 2]),
        ([3, [5, 6]], [3, 5, 6]),
    ],
)
def test_source_seqs_decode_ranges(stored: list, decoded: list[int]) -> None:
    assert source_seqs({"type": "tool/result", "sourceEventSeqs": stored}) == decoded


def test_source_seqs_absent_or_empty() -> None:
    assert source_seqs({"type": "tool/result"}) == []
    assert source_seqs({"type": "tool/result", "sourceEventSeqs": None}) == []


def test_seq_of_falls_back_to_the_position() -> None:
    assert seq_of({"seq": 7}, 2) == 7
    assert seq_of({"seq": 0}, 2) == 0
    assert seq_of({}, 2) == 2


def test_result_error_code() -> None:
    assert result_error_code({"data": {"error": {"name": "FsError", "code": "ENOENT"}}}) == "ENOENT"
    assert result_error_code({"data": {"error": "ENOENT"}}) is None
    assert result_error_code({"data": {}}) is None
    assert result_error_code({"data": "x"}) is None
    assert result_error_code({}) is None


def test_both_result_forms() -> None:
    v4 = {"type": "tool/result", "data": {"message": V4}}
    wrapped = {"type": "tool/result", "data": {"message": WRAPPED}}
    assert (result_call_id(v4), result_call_id(wrapped)) == ("A", "B")
    assert result_content(V4) == TEXT and result_content(WRAPPED) == TEXT
    assert message_is_error(V4) and message_is_error(WRAPPED)
    assert not message_is_error({**V4, "isError": False})
    assert not message_is_error({"content": [{"type": "tool-result", "toolCallId": "B"}]})
    assert result_call_id({"type": "tool/result", "data": {}}) is None
    # without a source the call id is read from toolCallId, then from the wrapped block
    assert result_call_id({"data": {"message": {"toolCallId": "C"}}}) == "C"
    assert result_call_id({"data": {"message": {"content": WRAPPED["content"]}}}) == "B"


def test_result_facts() -> None:
    recorded = {"data": {"message": V4, "error": {"name": "FsError", "code": "ENOENT"}}}
    assert result_facts(recorded) == ("A", "ENOENT", True, False)
    closer = {"data": {"message": {**V4, "id": "interrupted-tool-result-A-4"}}}
    assert result_facts(closer) == ("A", None, True, True)
    forked = {"data": {"message": {**V4, "id": "forked-tool-result-A-4"}}}
    assert result_facts(forked)[3] is True
    coded = {"data": {"message": V4, "error": {"code": "TOOL_NOT_STARTED"}}}
    assert result_facts(coded) == ("A", "TOOL_NOT_STARTED", True, True)
    assert result_facts({"data": {"error": {"code": "TOOL_OUTCOME_UNKNOWN"}}}) == (
        None,
        "TOOL_OUTCOME_UNKNOWN",
        False,
        True,
    )
    assert result_facts({"data": {}}) == (None, None, False, False)


def test_message_of_each_event_kind() -> None:
    user = {"id": "u", "role": "user", "content": TEXT, "source": {"kind": "user"}}
    assert message_of({"type": "user/message", "data": user}) is user
    assert message_of({"type": "user/message", "data": {}}) is None
    assert message_of({"type": "tool/result", "data": {"message": V4}}) is V4
    assert message_of({"type": "tool/result", "data": {"message": "x"}}) is None
    assert message_of({"type": "turn/start", "data": {"turn": 1}}) is None


def test_end_reason_and_typed_user() -> None:
    assert end_reason_kind({"data": {"reason": {"kind": "forked"}}}) == "forked"
    assert end_reason_kind({"data": {"reason": "forked"}}) is None
    assert is_user_typed({"data": {"source": {"kind": "user"}}})
    assert not is_user_typed({"data": {"source": {"kind": "goal"}}})
    assert not is_user_typed({"data": {"source": "user"}})


def text_block(value: str) -> dict:
    return {"type": "text", "text": value}


def wrapper(content: object) -> dict:
    return {"type": "tool-result", "toolCallId": "A", "content": content}


@pytest.mark.parametrize(("message", "content"), [
    # a tool-role (v4) result's content is its own, even when a block in it is a wrapper
    ({"role": "tool", "content": [text_block("a"), wrapper([text_block("b")])]},
     [text_block("a"), wrapper([text_block("b")])]),
    # a v0-v3 result's content is its first wrapper block's (with or without a role)
    ({"role": "user", "content": [text_block("note"), wrapper([text_block("b")])]},
     [text_block("b")]),
    ({"content": [wrapper([text_block("b")])]}, [text_block("b")]),
    ({"role": "user", "content": [text_block("a")]}, [text_block("a")]),
    # anything but a list is no content
    ({"role": "tool", "content": "a"}, []),
    ({"role": "user", "content": [wrapper("b")]}, []),
])
def test_result_content_of_either_form(message: dict, content: list) -> None:
    assert result_content(message) == content


def test_a_result_named_only_by_its_source_answers_that_call() -> None:
    assert message_call_id({"role": "tool", "source": {"kind": "tool", "callId": "A"}}) == "A"


@pytest.mark.parametrize("message", [{"role": "tool"}, {"role": "tool", "content": []}])
def test_a_result_message_naming_no_call_answers_none(message: dict) -> None:
    assert message_call_id(message) is None
