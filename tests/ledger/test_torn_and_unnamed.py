"""Hostile input, worded alike: a torn last line says the same in every format (its size,
that no newline ends it and, where the reader decodes it, that it is no JSON), and a Codex
record whose payload type is no name says what that type is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ledgerviz

DATA = Path(__file__).resolve().parents[1] / "data"
DSH = ("dsh/packages__test-support__session-snapshot__tests__fixtures__suite__plain-turn__"
       "session.v3.jsonl")
TORN = b'{"type":"us'  # 11 bytes
MISSING_KEY = object()  # a field left out of the record


def torn_tail_messages(path: Path) -> list[tuple[int, str]]:
    return [(d.line, d.message) for d in ledgerviz.load(path).diagnostics
            if d.kind == "torn_tail"]


@pytest.mark.parametrize(("name", "lines", "decoded"), [
    ("claude_code/basic.jsonl", 21, True), ("codex/basic.jsonl", 33, True),
    ("gemini/basic.jsonl", 11, True), (DSH, 6, False)])
def test_a_torn_last_line_is_worded_alike_in_every_format(
        tmp_path: Path, name: str, lines: int, decoded: bool) -> None:
    """11 bytes after the last newline; Claude Code said "last line does not decode:
    dropped" (no size), Codex and Gemini "is no JSON", dsh "has no newline" (it never decodes
    the line: the runtime drops it whatever it holds)."""
    path = tmp_path / "torn.jsonl"
    path.write_bytes((DATA / name).read_bytes() + TORN)
    fact = "has no newline and is no JSON" if decoded else "has no newline"
    assert torn_tail_messages(path) == [
        (lines + 1, f"last line {fact} (11 bytes): an interrupted append, dropped")]


def test_a_claude_code_torn_line_held_in_part_says_its_whole_size(tmp_path: Path) -> None:
    """3 MiB of NUL bytes after a line's start, no newline: only the start is held, the
    warning counts every byte (13 + 3 MiB)."""
    path = tmp_path / "torn.jsonl"
    path.write_bytes((DATA / "claude_code/basic.jsonl").read_bytes()
                     + b'{"timestamp":' + b"\x00" * (3 << 20))
    assert torn_tail_messages(path) == [
        (22, "last line has no newline and is no JSON (3145741 bytes): an interrupted "
             "append, dropped")]


def test_a_newline_ended_last_line_that_is_no_json_says_only_that(tmp_path: Path) -> None:
    """A newline ends it: it is no JSON, and still the torn append, in a Codex rollout."""
    path = tmp_path / "torn.jsonl"
    path.write_bytes((DATA / "codex/basic.jsonl").read_bytes() + TORN + b"\n")
    assert torn_tail_messages(path) == [
        (34, "last line is no JSON (11 bytes): an interrupted append, dropped")]


@pytest.mark.parametrize(("payload", "said"), [
    ({}, "missing"), ({"type": None}, "null, not a string"),
    ({"type": ["a"]}, "array, not a string"), ({"type": 3}, "number, not a string"),
    ({"type": ""}, "an empty string")])
@pytest.mark.parametrize("wrapper", ["event_msg", "response_item"])
def test_a_codex_payload_type_that_is_no_name_is_named_for_what_it_is(
        tmp_path: Path, wrapper: str, payload: dict, said: str) -> None:
    """Line 9 of the rollout wraps a payload with no usable type: it was reported as
    ``unknown codex record 'event_msg '`` (a trailing space, the type left out)."""
    lines = (DATA / "codex/basic.jsonl").read_bytes().splitlines(keepends=True)
    record = {"timestamp": "2026-01-05T10:00:01.500Z", "type": wrapper,
              "payload": {**payload, "message": "x"}}
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(lines[:8]) + json.dumps(record).encode() + b"\n"
                     + b"".join(lines[8:]))
    found = [(d.kind, d.message) for d in ledgerviz.load(path).diagnostics if d.line == 9]
    assert found == [("unknown_record", f"codex {wrapper} record whose payload 'type' is "
                      f"{said}: kept as a log-only event")]


@pytest.mark.parametrize(("role", "said"), [
    (None, "null, not a string"), (3, "number, not a string"), (["a"], "array, not a string"),
    ("", "an empty string"), (MISSING_KEY, "missing")])
def test_a_codex_message_role_that_is_no_name_is_named_for_what_it_is(
        tmp_path: Path, role: object, said: str) -> None:
    """A null role was reported as ``unknown codex record 'message role '`` (a trailing
    space, the null left out)."""
    item = {"type": "message", "content": []} | ({} if role is MISSING_KEY else {"role": role})
    found = _line_nine(tmp_path, "codex/basic.jsonl", {
        "timestamp": "2026-01-05T10:00:01.500Z", "type": "response_item", "payload": item})
    assert found == [("unknown_record",
                      f"codex message whose 'role' is {said}: kept as a log-only event")]


def test_a_codex_message_of_an_unknown_role_keeps_its_name(tmp_path: Path) -> None:
    found = _line_nine(tmp_path, "codex/basic.jsonl", {
        "timestamp": "2026-01-05T10:00:01.500Z", "type": "response_item",
        "payload": {"type": "message", "role": "tool", "content": []}})
    assert found == [("unknown_record",
                      "unknown codex record 'message role tool': kept as a log-only event")]


@pytest.mark.parametrize(("record", "said"), [
    ({"a": 1}, "gemini record whose 'type' is missing"),
    ({}, "gemini record whose 'type' is missing"),
    ({"type": None, "content": "x"}, "gemini record whose 'type' is null, not a string"),
    ({"type": ""}, "gemini record whose 'type' is an empty string"),
    ({"type": "user", "content": "x"}, "gemini 'user' message whose 'id' is missing"),
    ({"id": 3, "type": "user"}, "gemini record whose 'id' is number, not a string"),
    ({"$rewindTo": None}, "gemini record whose '$rewindTo' is null, not a string"),
    ({"$set": [1]}, "gemini record whose '$set' is array, not an object"),
    ({"sessionId": "s", "projectHash": "p"}, "gemini session header after the first")])
def test_a_gemini_record_of_no_kind_says_why(tmp_path: Path, record: dict, said: str) -> None:
    """Gemini tells a record's kind by its fields: one that none tells was named by its
    sorted keys (``unknown gemini record '["a"]'``, ``'[]'``), whatever made it kindless."""
    found = _line_nine(tmp_path, "gemini/basic.jsonl", record)
    assert found == [("unknown_record", f"{said}: kept as a log-only event")]


def _line_nine(tmp_path: Path, name: str, record: object) -> list[tuple[str, str]]:
    """The diagnostics of line 9 of fixture ``name`` with ``record`` (a JSON value) put in
    as that line."""
    lines = (DATA / name).read_bytes().splitlines(keepends=True)
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(b"".join(lines[:8]) + json.dumps(record).encode() + b"\n"
                     + b"".join(lines[8:]))
    return [(d.kind, d.message) for d in ledgerviz.load(path).diagnostics if d.line == 9]


@pytest.mark.parametrize(("value", "said"), [
    ([1], "array"), (3, "number"), ("x", "string"), (None, "null"), (True, "boolean")])
@pytest.mark.parametrize("name", ["claude_code/basic.jsonl", "codex/basic.jsonl",
                                  "gemini/basic.jsonl"])
def test_a_line_that_is_no_object_is_named_in_json_words_alike(
        tmp_path: Path, name: str, value: object, said: str) -> None:
    """Python's type names reached the reader ('line is JSON NoneType, not an object' in
    Claude Code, 'a JSON list, not an object: skipped' in Codex and Gemini)."""
    assert _line_nine(tmp_path, name, value) == [
        ("not_an_object", f"line is a JSON {said}, not an object: skipped")]


def test_a_model_of_a_wrong_type_is_named_in_json_words(tmp_path: Path) -> None:
    """Line 6 of the Codex rollout is its turn_context: its model made a number said
    "'model' is int, not a string"."""
    lines = (DATA / "codex/basic.jsonl").read_bytes().splitlines(keepends=True)
    lines[5] = lines[5].replace(b'"gpt-5-codex"', b"5")
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(lines))
    assert [(d.line, d.kind, d.message) for d in ledgerviz.load(path).diagnostics] == [
        (6, "wrong_shape", "'model' is number, not a string: ignored")]


@pytest.mark.parametrize(("record", "said"), [
    ({"a": 1}, "'type' is missing"),
    ({"sessionId": "s", "projectHash": "p"}, "'type' is missing"),  # a Gemini header
    ({"type": None, "payload": {"type": "message"}}, "'type' is null, not a string"),
    ({"type": 5}, "'type' is number, not a string"),
    ({"type": "", "payload": {"type": "message"}}, "'type' is an empty string")])
def test_a_codex_line_whose_type_is_no_name_says_so(
        tmp_path: Path, record: dict, said: str) -> None:
    """Such a line was named 'unknown codex record 'unknown'' (or '' for an empty type)."""
    assert _line_nine(tmp_path, "codex/basic.jsonl", record) == [
        ("unknown_record", f"codex record whose {said}: kept as a log-only event")]
