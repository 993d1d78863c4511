"""The envelope columns a table holds only where they say something, worked out by hand: ``seq``
a ``range`` when the seqs count up by one from the first row's (an array otherwise), and
``start``/``stop`` None when no row's byte range is known."""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

import orjson
import pytest
from ledger_lines import HEADER, encode, mark

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.table import MISSING, EventTable, seq_column

CODEX = Path(__file__).resolve().parents[1] / "data" / "codex" / "basic.jsonl"


def marks(*seqs: int) -> list[dict[str, Any]]:
    return [mark(seq) for seq in seqs]


def read_table(tmp_path: Path, events: list[dict[str, Any]]) -> tuple[EventTable, bytes]:
    """The table the read route fills for a dsh file of ``events``, and the file's bytes."""
    content = encode([HEADER, *events])
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    (log,) = read_sessions(path)
    assert log.table is not None
    return log.table, content


def line_ranges(content: bytes, events: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """Each event's line's first byte and the byte after its last, found in ``content``."""
    starts = [content.index(orjson.dumps(event)) for event in events]
    return starts, [start + len(orjson.dumps(event)) for start, event in
                    zip(starts, events, strict=True)]


def test_a_dsh_file_whose_seqs_count_up_by_one_holds_a_range(tmp_path: Path) -> None:
    events = marks(0, 1, 2, 3)
    table, content = read_table(tmp_path, events)
    assert isinstance(table.seq, range) and table.seq == range(0, 4)
    assert (list(table.start), list(table.stop)) == line_ranges(content, events)
    assert list(table.line) == [2, 3, 4, 5]


def test_seqs_that_count_from_another_first_are_a_range_too() -> None:
    assert EventTable.of(marks(7, 8, 9)).seq == range(7, 10)
    seqless = [{"type": "plan/mode", "time": 1, "data": {}}] * 3  # each: its position
    assert EventTable.of(seqless, first_position=4).seq == range(4, 7)


def test_a_dsh_file_with_a_gap_holds_the_array_with_the_gap(tmp_path: Path) -> None:
    events = marks(0, 1, 2, 5, 6)
    table, content = read_table(tmp_path, events)
    assert table.seq == array("q", [0, 1, 2, 5, 6])
    assert (list(table.start), list(table.stop)) == line_ranges(content, events)
    assert EventTable.of(events).seq == array("q", [0, 1, 2, 5, 6])


@pytest.mark.parametrize(("seq", "held"), [("1", MISSING), (True, MISSING), (1.0, MISSING),
                                           (3, 3), (0, 0)])
def test_a_seq_out_of_step_or_of_a_wrong_type_holds_an_array(seq: Any, held: int) -> None:
    events = [mark(0), {**mark(1), "seq": seq}, mark(2)]
    assert EventTable.of(events).seq == array("q", [0, held, 2])


def test_a_foreign_table_holds_a_range_and_no_byte_ranges() -> None:
    (log,) = read_sessions(CODEX)
    table = log.table
    assert table is not None and len(table) > 10
    assert isinstance(table.seq, range) and table.seq == range(0, len(table))
    assert table.start is None and table.stop is None
    with pytest.raises(ValueError, match="not read from a file's lines"):
        table.byte_ranges()


def test_split_and_rows_hold_a_range_where_the_part_counts_up_by_one() -> None:
    table = EventTable.of(marks(0, 1, 2, 5, 6))
    first, second = table.split([0, 3, 5])
    assert isinstance(first.seq, range) and first.seq == range(0, 3)
    assert isinstance(second.seq, range) and second.seq == range(5, 7)
    assert table.rows(1, 4).seq == array("q", [1, 2, 5])
    assert EventTable.of(marks(3, 4, 5, 6)).rows(1, 3).seq == range(4, 6)
    assert table.rows(2, 2).seq == range(0)


def test_joined_parts_hold_a_range_only_when_contiguous() -> None:
    joined = EventTable.joined([EventTable.of(marks(0, 1)), EventTable.of(marks(2, 3))])
    assert isinstance(joined.seq, range) and joined.seq == range(0, 4)
    apart = EventTable.joined([EventTable.of(marks(0, 1)), EventTable.of(marks(3))])
    assert apart.seq == array("q", [0, 1, 3])
    with_gap = EventTable.joined([EventTable.of(marks(0, 1, 2, 5)), EventTable.of(marks(6, 7))])
    assert with_gap.seq == array("q", [0, 1, 2, 5, 6, 7])
    parts = EventTable.of(marks(0, 1, 2, 5, 6)).split([0, 3, 5])
    assert EventTable.joined(parts).seq == array("q", [0, 1, 2, 5, 6])
    assert isinstance(parts[0].seq, range)  # the parts untouched by the join


def test_joined_byte_ranges_hold_missing_for_the_rows_read_from_no_line(tmp_path: Path) -> None:
    events = marks(0, 1)
    read, content = read_table(tmp_path, events)
    starts, stops = line_ranges(content, events)
    made = EventTable.of(marks(2))
    after = EventTable.joined([read, made])
    assert (list(after.start), list(after.stop)) == ([*starts, MISSING], [*stops, MISSING])
    assert after.seq == range(0, 3)
    before = EventTable.joined([EventTable.of(marks(0)), read.rows(1, 2)])
    assert (list(before.start), list(before.stop)) == ([MISSING, starts[1]], [MISSING, stops[1]])
    assert EventTable.joined([made, EventTable.of(marks(3))]).start is None


def test_seq_column_reads_a_list_an_array_or_a_range() -> None:
    assert seq_column([4, 5, 6]) == range(4, 7)
    assert seq_column(array("q", [4, 5, 7])) == array("q", [4, 5, 7])
    assert seq_column([4, 6, 6]) == array("q", [4, 6, 6])  # first and last agree, middle not
    assert seq_column(range(2, 9)) == range(2, 9)
    assert seq_column([]) == range(0)
