"""The typed routes' shared staging of rows (``formats/staged``): values staged by row,
scattered in two rounds into fact groups (a type's rows held whole, missing values where
nothing was staged), and the table
assembled from them; every expected value is worked out by hand."""

from __future__ import annotations

from ledgerviz.ledger.formats.staged import StagedRows, usage_count
from ledgerviz.ledger.table import GROUPS
from ledgerviz.recovery.vocab import MISSING


def _row(staged: StagedRows, kind: str, time: int, turn: int = MISSING, step: int = MISSING,
         op: int = 0) -> int:
    """Append one row as a route's ``add`` does (line = row + 10)."""
    row = len(staged.codes)
    staged.codes.append(staged.code_of[kind])
    staged.times.append(time)
    staged.turns.append(turn)
    staged.steps.append(step)
    staged.ops.append(op)
    staged.lines.append(row + 10)
    return row


def test_rows_staged_scattered_in_two_rounds_and_assembled() -> None:
    staged = StagedRows()
    _row(staged, "turn/start", 100, 1)
    message = _row(staged, "assistant/message", 101, 1, 1, 1)
    staged.messages.add(message, "assistant", "model", "hi")
    staged.models.add(message, "openai", "gpt")
    staged.usage.add(message, 5, 7, MISSING, 2)
    staged.request(message, "c1", "shell", "{}")
    call = _row(staged, "tool/call", 101, 1, 1)
    staged.dispatches.add(call, "c1", "shell", "{}")
    staged.scatter()  # the first round: rows 0-2
    assert staged.filled == 3
    result = _row(staged, "tool/result", 102, 1, 1, 1)
    staged.messages.add(result, "tool", "tool", "out")
    staged.answers.add(result, "c1")
    staged.errors[result] = (True, False)
    end = _row(staged, "turn/end", 103, 1)
    staged.ends.add(end, "completed")
    _row(staged, "turn/start", 104, 2)  # a type met again: its first code
    staged.scatter()

    table = staged.staged_table()
    assert table.type_names == ["turn/start", "assistant/message", "tool/call", "tool/result",
                                "turn/end"]
    assert list(table.type_code) == [0, 1, 2, 3, 4, 0]
    assert list(table.seq) == [0, 1, 2, 3, 4, 5] and isinstance(table.seq, range)
    assert list(table.time) == [100, 101, 101, 102, 103, 104]
    assert list(table.turn) == [1, 1, 1, 1, 1, 2]
    assert list(table.step) == [MISSING, 1, 1, 1, MISSING, MISSING]
    assert list(table.surface_op) == [0, 1, 0, 1, 0, 0]
    assert list(table.line) == [10, 11, 12, 13, 14, 15]
    assert table.start is table.stop is None  # no byte range known: none held
    assert table.column("role") == [None, "assistant", None, "tool", None, None]
    assert table.column("source_kind") == [None, "model", None, "tool", None, None]
    assert table.column("text") == [None, "hi", None, "out", None, None]
    assert table.column("call_id") == [None, None, "c1", "c1", None, None]
    assert table.column("tool_name") == [None, None, "shell", None, None, None]
    assert table.column("arguments") == [None, None, "{}", None, None, None]
    assert table.column("end_reason") == [None, None, None, None, "completed", None]
    assert table.column("provider") == [None, "openai", None, None, None, None]
    assert table.column("model") == [None, "gpt", None, None, None, None]
    assert table.column("error_code") == [None] * 6
    assert list(table.column("input_tokens")) == [MISSING, 5, MISSING, MISSING, MISSING, MISSING]
    assert list(table.column("output_tokens")) == [MISSING, 7, MISSING, MISSING, MISSING, MISSING]
    assert list(table.column("cache_read_tokens")) == [MISSING] * 6
    assert list(table.column("reasoning_tokens")) == [MISSING, 2] + [MISSING] * 4
    assert list(table.column("is_error")) == [-1, -1, -1, 1, -1, -1]
    assert list(table.column("synthetic")) == [-1, -1, -1, 0, -1, -1]
    held = {name: list(group.row) for name, group in zip(GROUPS, table.groups(), strict=True)}
    assert held == {"calls": [2], "results": [3], "messages": [1, 3], "ends": [4],
                    "routes": [1], "usage": [1], "requests": [1]}
    assert list(table.requests.row) == [1]
    assert table.requests.call_id == ["c1"]
    assert table.requests.name == ["shell"]
    assert table.requests.arguments == ["{}"]
    # the staged values were let go once scattered
    assert len(staged.messages.rows) == 0 and staged.errors == {}


def test_usage_count_keeps_only_a_count_the_runtime_writes_exactly() -> None:
    # a non-negative int up to 2**53 - 1 (JavaScript's exact integers), nothing else
    assert [usage_count(value) for value in (0, 12, (1 << 53) - 1, 1 << 53, -1, 1.5, True,
                                             "3", None)] == \
        [0, 12, (1 << 53) - 1, MISSING, MISSING, MISSING, MISSING, MISSING, MISSING]


def test_values_staged_out_of_order_or_after_their_round_land_at_their_rows() -> None:
    staged = StagedRows()
    first = _row(staged, "assistant/message", 100, 1, 1)
    result = _row(staged, "tool/result", 101, 1, 1)
    second = _row(staged, "assistant/message", 102, 1, 2)
    staged.models.add(second, "p", "m2")  # the later row staged first
    staged.models.add(first, "p", "m1")
    staged.scatter()
    staged.errors[result] = (True, True)  # a flag known after its row's round
    staged.put("messages", first, text="late")
    staged.scatter()
    table = staged.staged_table()
    assert list(table.routes.row) == [0, 2]
    assert table.routes.model == ["m1", "m2"]
    assert table.results.values_at(result) == (None, None, 1, 1)
    assert list(table.messages.row) == [0, 1, 2]
    assert table.column("text") == ["late", None, None]
