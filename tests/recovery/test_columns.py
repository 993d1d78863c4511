"""The scan reads a session as columns (``recovery.columns``): from a reader's table it asks
for an event dict only at the rows a column cannot tell, and it finds what the dicts say."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery import analyze
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.recovery.columns import columns_of

from .build import LedgerBuilder


class Counted(Sequence[dict[str, Any]]):
    """A session's events that note every row read (as a lazy reader would decode it)."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.read: set[int] = set()

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            self.read.update(range(*row.indices(len(self.events))))
        else:
            self.read.add(row)
        return self.events[row]


def closed_session() -> LedgerBuilder:
    b = LedgerBuilder()
    b.turn_start()                  # 0
    b.user("go")                    # 1
    b.step_start()                  # 2
    b.assistant("c1", "c2")         # 3
    b.tool_call("c1")               # 4
    b.tool_result("c1")             # 5
    b.tool_call("c2")               # 6
    b.tool_result("c2", is_error=True)  # 7
    b.step_end()                    # 8
    b.turn_end()                    # 9
    return b


def test_the_columns_of_dicts_read_by_hand() -> None:
    b = closed_session()
    b.events[4]["data"].pop("callId")
    del b.events[2]["seq"]
    columns = columns_of(b.events, start=10)
    assert columns.type_names == ["turn/start", "user/message", "step/start",
                                  "assistant/message", "tool/call", "tool/result", "step/end",
                                  "turn/end"]
    assert columns.type_code == [0, 1, 2, 3, 4, 5, 4, 5, 6, 7]
    assert columns.seq == [0, 1, 12, 3, 4, 5, 6, 7, 8, 9]  # a seqless event: its position
    assert columns.surface_op == [0, 1, 0, 1, 0, 1, 0, 1, 0, 0]
    def read(column: Any, rows: range | list[int]) -> list[Any]:
        return [column[row] for row in rows]

    assert read(columns.call_id, range(4, 8)) == [None, "c1", "c2", "c2"]
    assert read(columns.is_error, [5, 7]) == [False, True]
    assert read(columns.synthetic, [5, 7]) == [False, False]
    assert read(columns.error_code, [5, 7]) == [None, None]
    assert read(columns.turn, [0, 3, 8, 9]) == [1, 1, 1, 1]
    assert read(columns.step, [3]) == [1]
    assert read(columns.time, [0, 8, 9]) == [1000, 1080, 1090]
    assert read(columns.end_reason, [0, 8, 9]) == [None, None, "completed"]
    assert read(columns.source_kind, [1]) == ["user"]
    assert columns.requests.row == [3, 3]
    assert columns.requests.call_id == ["c1", "c2"]


@pytest.mark.parametrize("policy", POLICIES)
def test_a_closed_session_is_analysed_from_its_table_without_one_event_read(policy: str) -> None:
    b = closed_session()
    events = Counted(b.events)
    analysis = analyze(events, policy=policy, version=4, columns=EventTable.of(b.events))
    # the log ends with a turn/end: no turn is open, so the closers read no event either
    assert events.read == set()
    assert analysis.closers == []
    assert [(c.call_id, c.status, c.result_seq) for c in analysis.calls] == [
        ("c1", "ok", 5), ("c2", "error", 7)]
    assert analysis.events[3] is b.events[3]  # the caller's dicts, not copies


def test_only_the_rows_a_column_cannot_tell_are_read() -> None:
    b = LedgerBuilder()
    b.turn_start()                               # 0
    b.user("go")                                 # 1
    b.step_start()                               # 2
    b.assistant("c1")                            # 3: its turn is no integer
    b.events[3]["data"]["turn"] = "one"
    b.tool_call("c1")                            # 4: no callId
    b.events[4]["data"].pop("callId")
    b.tool_result("c1")                          # 5
    b.events[5]["surfaceOp"] = {"op": "replace", "startSeq": 3, "endSeq": 3}
    b.step_end()                                 # 6
    b.turn_end()                                 # 7
    events = Counted(b.events)
    analysis = analyze(events, policy="recorded", version=4, columns=EventTable.of(b.events))
    assert events.read == {3, 4, 5}
    (call,) = analysis.calls
    assert (call.turn, call.dispatched_seq, call.result_seq) == ("one", None, 5)
    assert [analysis.seqs[node] for node in analysis.surface] == [1, 5]  # 3 replaced by 5


def test_an_open_tail_reads_its_last_turn_for_the_closers() -> None:
    b = closed_session()
    del b.events[6:]                              # crashed after c1's result
    events = Counted(b.events)
    analysis = analyze(events, policy="synthesize", version=4, columns=EventTable.of(b.events))
    assert events.read == set(range(6))           # from the open turn's turn/start on
    assert [e["type"] for e in analysis.closers] == ["tool/result", "step/end", "turn/end"]
    assert analysis.closers[0]["data"]["message"]["source"]["callId"] == "c2"
    assert len(analysis.events) == 9 and analysis.events[6] is analysis.closers[0]


def test_a_tool_call_without_id_matches_a_block_without_one() -> None:
    # a block without ``id`` is filed under JavaScript's undefined, which a tool/call
    # without ``callId`` names too (null would not): the table's None is read from the dict
    b = LedgerBuilder()
    b.turn_start()
    b.step_start()
    b.assistant("c1")
    del b.events[2]["data"]["message"]["content"][1]["id"]
    b.tool_call("c1")
    b.events[3]["data"].pop("callId")
    table = analyze(b.events, policy="fork", version=4, columns=EventTable.of(b.events))
    assert [(c.call_id, c.dispatched_seq) for c in table.calls] == [(None, 3)]
    assert table.fork_points == [2]
    assert table == analyze(b.events, policy="fork", version=4)


@pytest.mark.parametrize("last", [6, 9])
def test_an_open_turn_is_closed_from_the_events_after_its_turn_start(last: int) -> None:
    b = closed_session()
    del b.events[last:]  # 6: c2 requested, never dispatched; 9: only the turn/end missing
    events = Counted(b.events)
    analysis = analyze(events, policy="synthesize", version=4, columns=EventTable.of(b.events))
    assert events.read == set(range(last))  # the tracker's, from the turn/start (row 0) on
    expected = {6: ["tool/result", "step/end", "turn/end"], 9: ["turn/end"]}[last]
    assert [closer["type"] for closer in analysis.closers] == expected
    assert [closer["seq"] for closer in analysis.closers] == list(range(last, last + len(expected)))


def test_a_turn_end_followed_by_an_event_is_read_for_the_closers() -> None:
    b = closed_session()
    b.turn_start()  # 10: a turn opened after the closed one, nothing in it
    events = Counted(b.events)
    analysis = analyze(events, policy="synthesize", version=4, columns=EventTable.of(b.events))
    assert events.read == {10}
    assert [(c["type"], c["seq"], c["data"]["turn"]) for c in analysis.closers] == [
        ("turn/end", 11, 2)]
