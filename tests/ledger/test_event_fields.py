"""The envelope columns of a session's events (``SessionLog.event_fields``) and the typed
table the reader fills (``SessionLog.table``)."""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from pathlib import Path

import pytest
from gc_watch import collections_started
from ledger_lines import HEADER, assistant_calls, encode, tool_result, turn_start

from ledgerviz.ledger import read_session, read_sessions
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.table import EventTable

DSH = Path(__file__).parents[1] / "data" / "dsh"
Writer = Callable[..., Path]


@pytest.mark.parametrize("path", sorted(DSH.glob("*.jsonl")), ids=lambda p: p.name)
def test_the_read_table_equals_the_table_of_the_events(path: Path) -> None:
    (session,) = read_sessions(path)
    table = session.table
    assert table is not None  # filled by the reader, not made from the dicts
    of_dicts = EventTable.of(session.events, session.lines)
    assert dataclasses.replace(table, start=of_dicts.start, stop=of_dicts.stop) == of_dicts
    content = path.read_bytes()  # the byte ranges (unknown to the dicts) hold the lines
    file_lines = content.split(b"\n")
    for start, stop, line in zip(table.start, table.stop, table.line, strict=True):
        assert content[start:stop] == file_lines[line - 1]


def test_columns_skip_rejected_lines_and_follow_packed_chunks(write_ledger: Writer) -> None:
    v0 = {"type": "session", "version": 0, "id": "old", "createdAt": 0}
    packed = {
        "type": "text-chunks",
        "seq0": 1,
        "time0": 500,
        "data": {"turn": 1, "step": 2, "index": 0, "dt": [3], "texts": ["a", "b"]},
    }
    lines = [v0, turn_start(0), b"[1, 2]", packed, {"type": 7, "seq": 3, "data": {}}]
    (session,) = read_sessions(write_ledger(lines))
    fields = session.event_fields()
    assert fields.types == ["turn/start", "assistant/chunk", "assistant/chunk"]
    assert fields.times == [1000, 500, 503]
    assert (fields.turns, fields.steps) == ([1, 1, 1], [None, 2, 2])
    assert fields == EventFields.of(session.events)


def test_columns_hold_the_raw_values(write_ledger: Writer) -> None:
    replace = {**tool_result(2, "c1"), "surfaceOp": {"op": "replace", "seq": 1}}
    no_time = {"type": "step/start", "seq": 3, "data": {"turn": 1, "step": 1}}
    lines = [HEADER, turn_start(0), assistant_calls(1, "c1"), replace, no_time]
    (session,) = read_sessions(write_ledger(lines))
    fields = session.event_fields()
    assert fields.surface_ops == [None, "append", {"op": "replace", "seq": 1}, None]
    assert fields.times == [1000, 1001, 1002, None]
    assert fields.datas[2] is session.events[2]["data"]


def test_seq_column_numbers_seqless_events_by_position_among_kept_events(
    write_ledger: Writer,
) -> None:
    seqless = {"type": "turn/start", "data": {"turn": 1}}
    lines = [HEADER, seqless, b"[1, 2]", seqless, turn_start(2)]
    (session,) = read_sessions(write_ledger(lines))
    fields = session.event_fields()
    assert fields.seqs == [0, 1, 2]
    assert fields == EventFields.of(session.events)
    assert EventFields.of(session.events[1:], start=1).seqs == [1, 2]


def test_columns_of_events_without_data() -> None:
    fields = EventFields.of([{"type": "x", "data": [1]}, {"seq": 0}])
    assert fields.types == ["x", None]
    assert fields.datas == [{}, {}]
    assert (fields.turns, fields.steps, fields.times) == ([None, None],) * 3


def test_slicing_and_concatenating_columns() -> None:
    events = [turn_start(i, turn=i) for i in range(4)]
    fields = EventFields.of(events)
    assert fields[1:3] == EventFields.of(events[1:3])
    assert fields[:2] + fields[2:] == fields


def test_a_prefix_slices_each_column_when_it_is_first_read() -> None:
    events = [turn_start(i, turn=i) for i in range(5)]
    fields = EventFields.of(events)
    prefix = fields.prefix(3)
    assert prefix.turns == [0, 1, 2]
    assert "turns" in vars(prefix) and "datas" not in vars(prefix)  # the others wait
    assert prefix == EventFields.of(events[:3]) and len(prefix) == 3
    assert prefix.prefix(2) == fields.prefix(9).prefix(2) == EventFields.of(events[:2])
    joined = prefix.prefix_then(1, fields[4:])
    assert joined.types == ["turn/start"] * 2 and "datas" not in vars(joined)
    assert joined == EventFields.of([events[0], events[4]])
    assert joined.prefix(1) == EventFields.of(events[:1])  # a prefix of joined columns
    with pytest.raises(AttributeError, match="no attribute 'turn'"):
        prefix.turn  # noqa: B018


def test_rows_of_a_prefix_are_read_without_making_its_columns() -> None:
    events = [turn_start(i, turn=10 + i) for i in range(6)]
    fields = EventFields.of(events)
    tail = EventFields.of([turn_start(i, turn=20 + i) for i in range(6, 9)], start=6)
    joined = fields.prefix(9).prefix_then(4, tail)  # turns 10 11 12 13 26 27 28
    assert len(joined) == 7 and len(fields.prefix(9)) == 6
    assert joined.rows("turns", 2) == [12, 13, 26, 27, 28]
    assert joined.rows("turns", 5) == [27, 28]
    assert joined.rows("turns", 1, 3) == [11, 12]
    assert joined.rows("seqs", 3, 5) == [3, 6]
    assert joined.rows("turns", 7) == [] and joined.rows("turns", 4, 99) == [26, 27, 28]
    assert "turns" not in vars(joined) and "seqs" not in vars(joined)  # none made whole
    assert joined.turns == [10, 11, 12, 13, 26, 27, 28]  # what the rows were read from
    assert joined.rows("turns", 3) == [13, 26, 27, 28]  # a column made whole is sliced
    assert fields.rows("turns", 4) == [14, 15]


def test_paused_gc_promotes_instead_of_collecting_young_objects() -> None:
    with collections_started() as collections:
        with paused_gc():
            assert not gc.isenabled()
            made = [{"n": [i]} for i in range(10_000)]
        assert gc.isenabled()
        probe = [made[0]]  # one allocation after the pause
    assert collections == []
    assert gc.get_freeze_count() == 0
    oldest = {id(obj) for obj in gc.get_objects(generation=2)}
    assert id(made[0]) in oldest and id(made[-1]["n"]) in oldest
    assert probe[0] is made[0]


def test_paused_gc_leaves_a_callers_frozen_objects_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_gc():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_appenders_follow_the_declared_columns() -> None:
    columns = EventFields.empty()
    declared = [getattr(columns, field.name) for field in dataclasses.fields(columns)]
    appenders = columns.appenders()
    assert len(appenders) == len(declared)
    assert all(add.__self__ is column for add, column in zip(appenders, declared, strict=True))


def test_first_rows_then_other_columns() -> None:
    first = [
        {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 6, "data": {"turn": 1, "step": 1},
         "surfaceOp": "append"},
        {"type": "step/end", "seq": 2, "time": 7, "data": {"turn": 1, "step": 1}},
    ]
    tail = [{"type": "turn/end", "seq": 9, "data": {"turn": 2}}]
    joined = EventFields.of(first).prefix_then(2, EventFields.of(tail))
    assert joined == EventFields(
        types=["turn/start", "step/start", "turn/end"],
        seqs=[0, 1, 9],
        datas=[{"turn": 1}, {"turn": 1, "step": 1}, {"turn": 2}],
        times=[5, 6, None],
        turns=[1, 1, 2],
        steps=[None, 1, None],
        surface_ops=[None, "append", None],
    )


def test_a_seqless_event_after_numbered_ones_gets_its_position_as_seq() -> None:
    # row i holds seq_of(events[i], i), the position for an event without
    # a seq, whatever the numbering expected there (6, after the gap to 5)
    seqless = {"type": "turn/end", "time": 3, "data": {"turn": 1}}
    log = read_session("x.jsonl", encode([HEADER, turn_start(0), turn_start(5, 2), seqless]))
    assert list(log.event_fields().seqs) == [0, 5, 2]
    assert list(log.event_table().seq) == [0, 5, 2]
