"""The columnar event table: its columns read by hand from a small ledger, and the table the
read route fills from the typed check's structs (``typed_table.table_of``) equal to the
table built from the dicts on every scenario, every fixture and any one value changed (or
the block sent to the dicts)."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger_lines import HEADER, containers, encode

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.reader import FileScan
from ledgerviz.ledger.table import MISSING, EventTable
from ledgerviz.ledger.tabled import TableBlock
from ledgerviz.simulate import SCENARIOS, write_scenario

DATA = Path(__file__).resolve().parents[1] / "data" / "dsh"
M = MISSING


def call_block(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}


SMALL = [
    {"type": "turn/start", "seq": 0, "time": 100, "data": {"turn": 1}},
    {"type": "user/message", "seq": 1, "time": 101, "surfaceOp": "append",
     "data": {"id": "u1", "role": "user", "source": {"kind": "user"},
              "content": [{"type": "text", "text": "hi"}]}},
    {"type": "request/header", "seq": 2, "time": 102,
     "data": {"turn": 1, "step": 1, "header": {"config": {"provider": "p", "model": "m1"}}}},
    {"type": "assistant/message", "seq": 3, "time": 103, "surfaceOp": "append",
     "data": {"turn": 1, "step": 1,
              "message": {"id": "a1", "role": "assistant",
                          "source": {"kind": "model", "provider": "p", "model": "m2"},
                          "content": [{"type": "text", "text": "one"},
                                      {"type": "reasoning", "text": "hidden"},
                                      call_block("c1", "ls", "{}"),
                                      {"type": "text", "text": "two"},
                                      call_block("c2", "cat", '{"a":1}')]},
              "usage": {"inputTokens": 10, "outputTokens": 2**53, "reasoningTokens": True}}},
    {"type": "tool/call", "seq": 4, "time": 104,
     "data": {"turn": 1, "step": 1, "callId": "c1", "name": "ls", "arguments": "{}"}},
    {"type": "tool/result", "seq": 5, "time": 105, "surfaceOp": "append",
     "data": {"turn": 1, "step": 1, "error": {"name": "FsError", "code": "ENOENT"},
              "message": {"id": "r1", "role": "tool", "source": {"kind": "tool", "callId": "c1"},
                          "toolCallId": "c1", "isError": True,
                          "content": [{"type": "text", "text": "no such file"}]}}},
    {"type": "tool/result", "seq": 6, "time": 106, "surfaceOp": "append",
     "data": {"turn": 1, "step": 1,
              "message": {"id": "r2", "role": "user", "source": {"kind": "tool"},
                          "content": [{"type": "tool-result", "toolCallId": "c2",
                                       "content": [{"type": "text", "text": "a"},
                                                   {"type": "text", "text": "b"}]}]}}},
    {"type": "turn/end", "seq": 7, "time": 107, "data": {"turn": 1, "reason": {"kind": "error"}}},
    {"type": "title/set", "time": 108, "data": {"title": "x", "turn": "one"}},
]


EXPECTED: dict[str, list[Any]] = {
    "type_code": [0, 1, 2, 3, 4, 5, 5, 6, 7],
    "seq": [0, 1, 2, 3, 4, 5, 6, 7, 8],  # the last one: its position
    "time": [100, 101, 102, 103, 104, 105, 106, 107, 108],
    "turn": [1, M, 1, 1, 1, 1, 1, 1, M],  # "one" is no integer
    "step": [M, M, 1, 1, 1, 1, 1, M, M],
    "surface_op": [0, 1, 0, 1, 0, 1, 1, 0, 0],
    "line": list(range(2, 11)),
    "call_id": [None, None, None, None, "c1", "c1", "c2", None, None],
    "tool_name": [None, None, None, None, "ls", None, None, None, None],
    "arguments": [None, None, None, None, "{}", None, None, None, None],
    "is_error": [-1, -1, -1, -1, -1, 1, 0, -1, -1],
    "synthetic": [-1, -1, -1, -1, -1, 0, 0, -1, -1],
    "error_code": [None, None, None, None, None, "ENOENT", None, None, None],
    "role": [None, "user", None, "assistant", None, "tool", "user", None, None],
    "source_kind": [None, "user", None, "model", None, "tool", "tool", None, None],
    "text": [None, "hi", None, "one\ntwo", None, "no such file", "a\nb", None, None],
    "end_reason": [None] * 7 + ["error", None],
    "provider": [None, None, "p", "p", None, None, None, None, None],
    "model": [None, None, "m1", "m2", None, None, None, None, None],
    "input_tokens": [M, M, M, 10, M, M, M, M, M],
    "output_tokens": [M] * 9,  # beyond 2**53 - 1: not counted
    "cache_read_tokens": [M] * 9,
    "reasoning_tokens": [M] * 9,  # a bool is no count
}
GROUP_ROWS = {"calls": [4], "results": [5, 6], "messages": [1, 3, 5, 6], "ends": [7],
              "routes": [2, 3], "usage": [3], "requests": [3, 3]}
"""The rows each fact group holds: those of its types (the routes: the rows naming a model;
the usage: the assistant message with a usage object; the requests: one per call block)."""
TYPES = ["turn/start", "user/message", "request/header", "assistant/message", "tool/call",
         "tool/result", "turn/end", "title/set"]


def assert_small(table: EventTable, rows: int) -> None:
    """Assert the first ``rows`` rows of the table of ``SMALL`` are the ones worked out."""
    assert len(table) == rows
    assert table.type_names == TYPES[:table.type_code[-1] + 1]
    for name, expected in EXPECTED.items():
        assert list(table.column(name)) == expected[:rows], name
    for name, held in GROUP_ROWS.items():
        assert list(getattr(table, name).row) == [row for row in held if row < rows], name
    assert list(table.requests.row) == [3, 3]
    assert table.requests.call_id == ["c1", "c2"]
    assert table.requests.name == ["ls", "cat"]
    assert table.requests.arguments == ["{}", '{"a":1}']


def test_the_columns_of_a_small_ledger_read_by_hand() -> None:
    assert_small(EventTable.of(SMALL, range(2, 11)), 9)


def read_blocks(content: bytes, chunk_bytes: int = 1 << 20
                ) -> tuple[list[TableBlock], EventTable]:
    """The blocks the read route tables ``content`` (a whole file) into, read in chunks of
    ``chunk_bytes`` (a block per chunk that ends a line), and the file's table."""
    chunks = [content[at:at + chunk_bytes] for at in range(0, len(content), chunk_bytes)]
    scan = FileScan("t.jsonl", tabled=True)
    blocks = list(scan.blocks(chunks))
    return blocks, scan.session_log(blocks).table


def typed_table(lines: list[bytes], header: bytes = orjson.dumps(HEADER)) -> EventTable | None:
    """The table the read route fills from the typed structs for ``lines`` after
    ``header``, or None when it sends the block to the dicts."""
    (block,), table = read_blocks(encode([header, *lines]))
    return table if block.held is None else None


def without_spans(table: EventTable, other: EventTable) -> EventTable:
    """``table`` with ``other``'s byte ranges (the dicts' table knows none)."""
    return dataclasses.replace(table, start=other.start, stop=other.stop)


def test_the_typed_table_of_a_small_ledger_read_by_hand() -> None:
    lines = [orjson.dumps(event) for event in SMALL]
    assert typed_table(lines) is None  # an unknown type, a string turn
    assistant = copy.deepcopy(SMALL[3])
    lines[3] = orjson.dumps(assistant)
    assert typed_table(lines[:-1]) is None  # odd counts: to the dicts
    del assistant["data"]["usage"]["reasoningTokens"], assistant["data"]["usage"]["outputTokens"]
    lines[3] = orjson.dumps(assistant)
    assert_small(typed_table(lines[:-1]), 8)


@pytest.mark.parametrize("cuts", [(4,), (2, 5), (1, 2, 3, 4, 5, 6, 7, 8)])
def test_the_tables_of_parts_join_to_the_small_ledger_read_by_hand(cuts: tuple[int, ...]
                                                                   ) -> None:
    bounds = [0, *cuts, len(SMALL)]
    parts = [EventTable.of(SMALL[a:b], range(2 + a, 2 + b), a)
             for a, b in itertools.pairwise(bounds)]
    assert_small(EventTable.joined(parts), 9)


def test_a_file_read_in_many_typed_blocks_is_the_small_ledger_read_by_hand() -> None:
    assistant = copy.deepcopy(SMALL[3])
    del assistant["data"]["usage"]["reasoningTokens"], assistant["data"]["usage"]["outputTokens"]
    events = [*SMALL[:3], assistant, *SMALL[4:8]]
    for chunk_bytes in (64, 300):
        blocks, table = read_blocks(encode([HEADER, *events]), chunk_bytes)
        assert len(blocks) > 2 and all(block.held is None for block in blocks if block.lines)
        assert_small(table, 8)


def test_the_typed_table_gives_each_line_its_byte_range() -> None:
    lines = [orjson.dumps(event) for event in SMALL[:3]]
    table = typed_table(lines)
    first = len(orjson.dumps(HEADER)) + 1
    one, two, three = map(len, lines)
    assert list(table.start) == [first, first + 1 + one, first + 2 + one + two]
    assert list(table.stop) == [first + one, first + 1 + one + two, first + 2 + one + two + three]
    assert EventTable.of(SMALL).start is EventTable.of(SMALL).stop is None
    assert list(EventTable.of(SMALL).line) == [M] * 9


def test_integer_columns_are_handed_to_numpy_without_a_copy() -> None:
    table = EventTable.of(SMALL, range(2, 11))
    lines = np.frombuffer(table.line, dtype=np.int64)
    assert lines.tolist() == list(range(2, 11))
    table.line[0] = 42
    assert lines[0] == 42  # one buffer


def test_labels_share_one_object() -> None:
    events = [SMALL[4], {**SMALL[4], "seq": 5, "data": {**SMALL[4]["data"],
                                                         "name": "".join(["l", "s"])}}]
    table = EventTable.of(events)
    assert table.calls.tool_name[0] is table.calls.tool_name[1]


def test_a_result_recovery_wrote_is_marked_synthetic_by_both_routes() -> None:
    # recovery's codes mark a result (the id aside), and so do its id prefixes (any code)
    marks = [("interrupted-tool-result-c0", None), ("forked-tool-result-c1", "ENOENT"),
             ("r2", "TOOL_OUTCOME_UNKNOWN"), ("r3", "TOOL_NOT_STARTED"),
             ("tool-result-c4", None), ("r5", "ENOENT")]
    asked = copy.deepcopy(SMALL[3])
    asked["seq"] = 1
    asked["data"]["message"]["content"] = [call_block(f"c{n}", "ls", "{}") for n in range(6)]
    del asked["data"]["usage"]
    events = [SMALL[0], asked]
    for n, (message_id, code) in enumerate(marks):
        result = copy.deepcopy(SMALL[5])
        result["seq"] = 2 + n
        message = result["data"]["message"]
        message["id"], message["toolCallId"], message["source"]["callId"] = (
            message_id, f"c{n}", f"c{n}")
        result["data"]["error"] = {"code": code}
        events.append(result)
    of_dicts = EventTable.of(events, range(2, 10))
    assert list(of_dicts.column("synthetic")) == [-1, -1, 1, 1, 1, 1, 0, 0]
    typed = typed_table([orjson.dumps(event) for event in events])
    assert typed is not None and without_spans(typed, of_dicts) == of_dicts


def assert_read_as_the_dicts(content: bytes) -> int:
    """Assert that the read route, in small blocks, tables ``content`` as the dicts of the
    events it reads do (a block sent to the dicts holds them; a typed block's are its
    lines decoded); return how many blocks were tabled from the typed structs."""
    blocks, table = read_blocks(content, 4096)
    file_lines = content.split(b"\n")
    events = [event for block in blocks for event in (
        block.held if block.held is not None
        else [orjson.loads(file_lines[line - 1]) for line in block.lines])]
    of_dicts = EventTable.of(events, [line for block in blocks for line in block.lines])
    assert without_spans(table, of_dicts) == of_dicts
    return sum(block.held is None for block in blocks)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_typed_table_reads_every_scenario_as_the_dicts_do(tmp_path: Path,
                                                              scenario: str) -> None:
    for path in write_scenario(scenario, tmp_path / scenario, turns=6):
        assert assert_read_as_the_dicts(path.read_bytes()) > 0


def clean_raw_log(path: Path) -> bool:
    """Whether the fixture is read without a diagnostic and numbers every event (not a
    normalised snapshot, whose seqless events the typed check leaves to the dicts)."""
    events = path.read_bytes().splitlines()[1:]
    return not read_sessions(path)[0].diagnostics and all(
        "seq" in orjson.loads(event) for event in events)


@pytest.mark.parametrize("path", sorted(DATA.glob("*.jsonl")), ids=lambda p: p.name[-40:])
def test_the_typed_table_reads_every_fixture_as_the_dicts_do(path: Path) -> None:
    content = path.read_bytes()
    typed = assert_read_as_the_dicts(content)
    if clean_raw_log(path):  # every block is tabled from the structs
        assert typed == len(read_blocks(content, 4096)[0])


def test_the_raw_log_fixtures_are_read_whole_from_the_structs() -> None:
    # the fixtures' README: the vfs-example files are raw logs, the others normalised
    # snapshots (no seq)
    raw = [path.name for path in sorted(DATA.glob("*.jsonl")) if clean_raw_log(path)]
    assert len(raw) == 3 and all("vfs-example" in name for name in raw)


def test_a_value_the_structs_do_not_hold_sends_the_block_to_the_dicts(tmp_path: Path) -> None:
    (path,) = write_scenario("clean", tmp_path / "base.jsonl", turns=2)
    header, *lines = path.read_bytes().splitlines()
    assert typed_table(lines, header) is not None
    odd = orjson.loads(lines[0])
    odd["data"]["turn"] = True
    assert typed_table([orjson.dumps(odd), *lines[1:]], header) is None
    assert EventTable.of([odd]).turn[0] == MISSING


JSON_VALUES = st.sampled_from(
    [None, True, 0, -1, 7, 1.5, 2**53, 2**63, "", "x", "text", "tool-call", "tool-result",
     "append", [], [1], [{"type": "text", "text": "t"}], {}, {"op": "replace"}, {"kind": "k"}]
)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, 400), path_choice=st.integers(0, 10_000), value=JSON_VALUES)
def test_any_one_value_changed_reads_as_the_dicts_or_goes_to_them(
    tmp_path: Path, line: int, path_choice: int, value: Any
) -> None:
    (path,) = write_scenario("crash-mid-dispatch", tmp_path / "base.jsonl", turns=3)
    header, *lines = path.read_bytes().splitlines()
    at = line % len(lines)
    event = orjson.loads(lines[at])
    container, key = list(containers(event))[path_choice % len(list(containers(event)))]
    container[key] = value
    lines[at] = json.dumps(event, separators=(",", ":")).encode()
    assert_read_as_the_dicts(encode([header, *lines]))
