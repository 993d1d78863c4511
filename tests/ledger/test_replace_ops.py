"""Replace ops (§6) read by the typed check: a block holding a well-formed replace op is
tabled from the structs, with the dict route's table and diagnostics (``duplicate_keys``
turns the typed check off, so the same ``FileScan`` reads the dicts alone); a replace op
the reader flags sends its block to the dicts; the streamed check leaves replace ops to
the dicts. Expected kinds and columns are written by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger_lines import HEADER, assistant_calls, containers, encode, tool_result, turn_start

import ledgerviz
from ledgerviz.ledger import UnreadableSourceError, read_sessions
from ledgerviz.ledger.reader import FileScan
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.tabled import TableBlock
from ledgerviz.simulate import write_scenario
from ledgerviz.streams.summary import summarize


def read(content: bytes, *, dicts: bool = False, chunk_bytes: int = 1 << 20
         ) -> tuple[list[TableBlock], SessionLog]:
    """The read route's blocks and session of ``content`` (``dicts``: the dict route)."""
    chunks = [content[at:at + chunk_bytes] for at in range(0, len(content), chunk_bytes)]
    scan = FileScan("t.jsonl", tabled=True, duplicate_keys=dicts)
    blocks = list(scan.blocks(chunks))
    return blocks, scan.session_log(blocks)


def assert_read_as_the_dicts(content: bytes) -> int:
    """Assert the typed read gives the dict route's diagnostics, table and events, read
    whole and in small chunks; return how many blocks (read whole) were tabled from the
    structs."""
    for chunk_bytes in (300, 1 << 20):
        blocks, typed = read(content, chunk_bytes=chunk_bytes)
        _, dicts = read(content, dicts=True, chunk_bytes=chunk_bytes)
        assert typed.diagnostics == dicts.diagnostics
        assert typed.lines_skipped == dicts.lines_skipped
        assert typed.table == dicts.table
        assert list(typed.events) == list(dicts.events)
    return sum(block.held is None for block in blocks)


def user(seq: int, text: str, op: Any = "append", **envelope: Any) -> dict[str, Any]:
    return {"type": "user/message", "seq": seq, "time": 1000 + seq, "surfaceOp": op,
            "data": {"id": f"u{seq}", "role": "user", "source": {"kind": "user"},
                     "content": [{"type": "text", "text": text}]}, **envelope}


def compacted(**envelope: Any) -> bytes:
    """Two user messages replaced by a summary (v4 keys), its envelope given ``envelope``."""
    summary = user(3, "summary", {"op": "replace", "startSeq": 1, "endSeq": 2},
                   sourceEventSeqs=[1, [1, 2]])
    summary.update(envelope)
    return encode([HEADER, turn_start(0), user(1, "a"), user(2, "b"), summary])


def test_a_replace_op_is_tabled_from_the_structs() -> None:
    content = compacted()
    (block,), log = read(content)
    assert block.held is None and log.diagnostics == []
    assert list(log.table.surface_op) == [0, 1, 1, 2]  # none, append, append, replace
    assert log.table.column("text") == [None, "a", "b", "summary"]
    assert assert_read_as_the_dicts(content) == 1


def test_a_replace_spelled_with_an_escape_is_a_replace() -> None:
    content = compacted().replace(b'"op":"replace"', b'"op":"\\u0072eplace"')
    assert b"replace" not in content
    (block,), log = read(content)
    assert block.held is None and list(log.table.surface_op) == [0, 1, 1, 2]
    assert assert_read_as_the_dicts(content) == 1


def test_v0_replace_keys_are_tabled_from_the_structs() -> None:
    header = {**HEADER, "version": 2}
    lines = [header, turn_start(0), user(1, "a"),
             user(2, "summary", {"op": "replace", "start": 1, "end": 1}, sourceEventSeqs=[1])]
    (block,), log = read(encode(lines))
    assert block.held is None and log.diagnostics == []
    assert list(log.table.surface_op) == [0, 1, 2]


@pytest.mark.parametrize("envelope", [
    {"surfaceOp": {"op": "prepend", "startSeq": 1, "endSeq": 2}},
    {"surfaceOp": {"op": 5, "startSeq": 1, "endSeq": 2}},
    {"surfaceOp": {"op": "replace", "startSeq": 1.5, "endSeq": 2}},
    {"surfaceOp": {"op": "replace", "startSeq": 1, "endSeq": 2**60}},
    {"sourceEventSeqs": [[2, 1]]},
    {"sourceEventSeqs": [[1, 2, 3]]},
    {"sourceEventSeqs": [1, "2"]},
], ids=str)
def test_a_replace_the_reader_flags_is_read_from_the_dicts(envelope: dict[str, Any]) -> None:
    content = compacted(**envelope)
    (block,), log = read(content)
    assert block.held is not None
    assert [(d.line, d.kind) for d in log.diagnostics] == [(5, "invalid_event")]
    assert assert_read_as_the_dicts(content) == 0


def results_of_one_call(second_op: Any) -> bytes:
    """A call answered, then its result's node replaced (the pruner) or appended again."""
    first = tool_result(3, "A")
    second = tool_result(4, "A")
    second["surfaceOp"] = second_op
    return encode([HEADER, turn_start(0), assistant_calls(1, "A"),
                   {"type": "tool/call", "seq": 2, "time": 1002,
                    "data": {"turn": 1, "step": 1, "callId": "A", "name": "ls",
                             "arguments": "{}"}}, first, second])


def test_a_result_that_replaces_another_answers_nothing_again() -> None:
    content = results_of_one_call({"op": "replace", "startSeq": 3, "endSeq": 3})
    (block,), log = read(content)
    assert block.held is None and log.diagnostics == []
    assert list(log.table.surface_op) == [0, 1, 0, 1, 2]
    assert assert_read_as_the_dicts(content) == 1


def test_a_result_appended_twice_is_still_warned_from_the_dicts() -> None:
    content = results_of_one_call("append")
    (block,), log = read(content)
    assert block.held is not None
    # "tool/result answers call 'A' again"
    assert [(d.line, d.kind) for d in log.diagnostics] == [(6, "repeated_call")]
    assert assert_read_as_the_dicts(content) == 0


def test_the_streamed_check_leaves_a_replace_op_to_the_dicts(tmp_path: Path) -> None:
    path = tmp_path / "compacted.jsonl"
    path.write_bytes(compacted())
    (block,) = FileScan(str(path), typed=True).blocks([path.read_bytes()])
    assert block.__class__.__name__ == "CheckedEvents"
    (summary,) = summarize(path)
    assert summary.diagnostics == read(path.read_bytes())[1].diagnostics == []


def test_the_compaction_scenario_is_tabled_from_the_structs(tmp_path: Path) -> None:
    (path,) = write_scenario("compaction", tmp_path / "c.jsonl", turns=4)
    content = path.read_bytes()
    assert b'"op":"replace"' in content
    blocks, log = read(content)
    assert all(block.held is None for block in blocks) and log.diagnostics == []
    assert 2 in log.table.surface_op
    assert assert_read_as_the_dicts(content) == len(blocks)


JSON_VALUES = st.sampled_from(
    [None, True, 0, 3, -1, 1.5, 2**53, "", "x", "append", "replace", [], [1], [1, [2, 3]],
     [[3, 2]], [[1, 2, 3]], {}, {"op": "replace"}, {"op": "replace", "startSeq": 1},
     {"op": "replace", "start": 1, "end": 2}, {"op": "x"}]
)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, 400), path_choice=st.integers(0, 10_000), value=JSON_VALUES)
def test_any_one_value_of_a_compacted_ledger_changed_reads_as_the_dicts(
    tmp_path: Path, line: int, path_choice: int, value: Any
) -> None:
    (path,) = write_scenario("compaction", tmp_path / "base.jsonl", turns=3)
    header, *lines = path.read_bytes().splitlines()
    replaced = [at for at, raw in enumerate(lines) if b'"op":"replace"' in raw]
    at = replaced[line % len(replaced)] if line % 2 else line % len(lines)
    event = orjson.loads(lines[at])
    places = list(containers(event))
    container, key = places[path_choice % len(places)]
    container[key] = value
    lines[at] = json.dumps(event, separators=(",", ":")).encode()
    assert_read_as_the_dicts(encode([header, *lines]))


def test_a_replace_op_is_held_as_read(tmp_path: Path) -> None:
    path = tmp_path / "compacted.jsonl"
    path.write_bytes(compacted())
    ledger = ledgerviz.load(path)
    # the summary (seq 3) replaced both messages: the next request holds it alone
    context = ledger.context("synthesize")
    assert [message.seq for message in context.messages] == [3]
    (log,) = read_sessions(path)
    path.unlink()
    assert log.events[3]["surfaceOp"] == {"op": "replace", "startSeq": 1, "endSeq": 2}
    with pytest.raises(UnreadableSourceError):
        log.events[1]  # an append: decoded on demand, it needs the file
