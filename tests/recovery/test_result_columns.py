"""The engine's per-event marks and per-call facts as columns, and the list forms dict callers
read, on LEDGER_FORMAT.md §9.1's constructed example (values worked by hand from §9.1 and the
fork rule in DESIGN.md).

The example: turn/start 0, step/start 1, assistant/message 2 asking for A (rm) and B (ls),
tool/call A 3; the process died. Synthesize appends result A (outcome unknown, seq 4),
result B (not started, seq 5), step/end 6, turn/end 7; results are appended to the surface.
Fork: A was dispatched without a result, so the assistant message (seq 2) is the fork point:
no closers, and the surface from it on is abandoned.
"""

from __future__ import annotations

from array import array
from typing import Any

import pytest

from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery import Analysis, CallFacts, analyze
from ledgerviz.recovery.analyze import joined_call_columns
from ledgerviz.recovery.result_columns import CallColumns, EventMarks

from .build import LedgerBuilder

EVENTS: list[dict[str, Any]] = [
    {"type": "turn/start", "seq": 0, "time": 100, "data": {"turn": 1}},
    {"type": "step/start", "seq": 1, "time": 101, "data": {"turn": 1, "step": 1}},
    {"type": "assistant/message", "seq": 2, "time": 105, "data": {
        "turn": 1, "step": 1, "stream": [], "message": {
            "id": "m1", "role": "assistant", "source": {"kind": "model", "provider": "p",
                                                       "model": "m"},
            "content": [{"type": "tool-call", "id": "A", "name": "rm", "arguments": "{}"},
                        {"type": "tool-call", "id": "B", "name": "ls", "arguments": "{}"}]}},
     "surfaceOp": "append"},
    {"type": "tool/call", "seq": 3, "time": 106,
     "data": {"turn": 1, "step": 1, "callId": "A", "name": "rm", "arguments": "{}"}},
]

# branch codes: BRANCHES = (active, abandoned, log); statuses: (ok, error, outcome_unknown,
# not_started); recovery codes: (None, TOOL_OUTCOME_UNKNOWN, TOOL_NOT_STARTED)
MARKS = {
    "synthesize": EventMarks(branch=array("b", [2, 2, 0, 2, 0, 0, 2, 2]),
                             synthetic=array("b", [0, 0, 0, 0, 1, 1, 1, 1]),
                             recorded=array("b", [1, 1, 1, 1, 0, 0, 0, 0]),
                             recovery_code=array("b", [0, 0, 0, 0, 1, 2, 0, 0])),
    "fork": EventMarks(branch=array("b", [2, 2, 1, 2]), synthetic=array("b", [0, 0, 0, 0]),
                       recorded=array("b", [1, 1, 1, 1]), recovery_code=array("b", [0, 0, 0, 0])),
}
CALLS = {
    "synthesize": [
        CallFacts("A", "rm", "{}", 1, 1, 2, 3, 4, "outcome_unknown", "TOOL_OUTCOME_UNKNOWN",
                  True, "active", False),
        CallFacts("B", "ls", "{}", 1, 1, 2, None, 5, "not_started", "TOOL_NOT_STARTED",
                  True, "active", True),
    ],
    "fork": [
        CallFacts("A", "rm", "{}", 1, 1, 2, 3, None, "outcome_unknown", None, False,
                  "abandoned", False),
        CallFacts("B", "ls", "{}", 1, 1, 2, None, None, "not_started", None, False,
                  "abandoned", False),
    ],
}
CALL_CODES = {  # (status, branch, is_error, settled) of A and B
    "synthesize": ([2, 3], [0, 0], [1, 1], [0, 1]),
    "fork": ([2, 3], [1, 1], [0, 0], [0, 0]),
}
LISTS = {
    "synthesize": (["log", "log", "active", "log", "active", "active", "log", "log"],
                   [False] * 4 + [True] * 4, [True] * 4 + [False] * 4,
                   [None] * 4 + ["TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED", None, None]),
    "fork": (["log", "log", "abandoned", "log"], [False] * 4, [True] * 4, [None] * 4),
}


@pytest.mark.parametrize("tabled", [False, True], ids=["dicts", "table"])
@pytest.mark.parametrize("policy", ["synthesize", "fork"])
def test_the_engine_gives_its_results_as_columns(policy: str, tabled: bool) -> None:
    columns = EventTable.of(EVENTS) if tabled else None
    analysis = analyze(EVENTS, policy=policy, version=4, columns=columns)  # type: ignore[arg-type]
    assert analysis.marks == MARKS[policy]
    calls = analysis.call_columns
    assert (calls.call_id, calls.dispatched_seq, calls.result_seq) == (
        ["A", "B"], [3, None], [4, 5] if policy == "synthesize" else [None, None])
    assert [list(column) for column in (calls.status, calls.branch, calls.is_error,
                                        calls.settled)] == list(map(list, CALL_CODES[policy]))


@pytest.mark.parametrize("policy", ["synthesize", "fork"])
def test_dict_callers_read_lists_and_call_facts(policy: str) -> None:
    analysis = analyze(EVENTS, policy=policy, version=4)  # type: ignore[arg-type]
    branch, synthetic, recorded, codes = LISTS[policy]
    assert analysis.branch == branch and type(analysis.branch) is list
    assert (analysis.synthetic, analysis.recorded, analysis.recovery_code) == (
        synthetic, recorded, codes)
    assert analysis.calls == CALLS[policy]
    assert repr(analysis).endswith("calls: 1 outcome_unknown, 1 not_started>")


@pytest.mark.parametrize("policy", ["synthesize", "fork"])
def test_an_analysis_given_lists_makes_the_columns(policy: str) -> None:
    """The other way round (a caller that builds an ``Analysis`` itself): the columns are
    made from the lists, and the analysis equals the engine's."""
    engine = analyze(EVENTS, policy=policy, version=4)  # type: ignore[arg-type]
    branch, synthetic, recorded, codes = LISTS[policy]
    given = Analysis(policy, engine.generation, engine.events, engine.seqs, branch, synthetic,
                     recorded, codes, CALLS[policy], engine.closers, engine.fork_points,
                     engine.abandoned_seqs, engine.unanswered_in_closed_steps, engine.surface)
    assert given.marks == MARKS[policy]
    assert given.call_columns == CallColumns.of_facts(CALLS[policy])
    assert given == engine


def test_an_analysis_needs_one_form_of_each() -> None:
    with pytest.raises(TypeError, match="marks"):
        Analysis("recorded", "v4", [], [], calls=[])
    with pytest.raises(TypeError, match="call_columns"):
        Analysis("recorded", "v4", [], [], [], [], [], [])


def test_call_columns_join_one_session_after_another() -> None:
    one, other = (CallColumns.of_facts(CALLS[policy]) for policy in ("synthesize", "fork"))
    joined = CallColumns.joined([one, other, CallColumns.of_facts([])])
    assert joined.facts() == CALLS["synthesize"] + CALLS["fork"]
    assert CallColumns.joined([]).facts() == []


@pytest.mark.parametrize("first", ["calls", "call_columns"])
def test_a_session_without_calls_gives_empty_calls_in_either_order(first: str) -> None:
    analysis = analyze(EVENTS[:2], policy="synthesize", version=4)  # no assistant message
    assert analysis.call_count() == 0
    getattr(analysis, first)
    assert (analysis.calls, analysis.call_columns) == ([], CallColumns.of_facts([]))


def _settled_session() -> list[dict[str, Any]]:
    """EVENTS with A answered, B dispatched and answered in error, the step and turn closed:
    a session whose calls all settle (the engine scans it a column at a time)."""
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.step_start()  # 1
    b.assistant("A", "B")  # 2
    for call_id, is_error in (("A", False), ("B", True)):
        b.tool_call(call_id)  # 3, 5
        b.tool_result(call_id, is_error=is_error)  # 4, 6
    b.step_end()  # 7
    b.turn_end()  # 8
    return b.events


def test_many_analyses_calls_are_joined_in_one_pass() -> None:
    settled = _settled_session()
    analyses = [
        analyze(EVENTS, policy="synthesize", version=4, columns=EventTable.of(EVENTS)),
        analyze(settled, policy="synthesize", version=4, columns=EventTable.of(settled)),
        analyze(EVENTS[:2], policy="synthesize", version=4),  # no call
        Analysis("fork", "v4", EVENTS, [0, 1, 2, 3], *LISTS["fork"], CALLS["fork"]),  # given
        analyze(settled, policy="synthesize", version=4, columns=EventTable.of(settled)),
    ]
    settled_calls = [
        CallFacts("A", "bash", '{"n":1}', 1, 1, 2, 3, 4, "ok", None, False, "active", True),
        CallFacts("B", "bash", '{"n":1}', 1, 1, 2, 5, 6, "error", None, True, "active", True),
    ]
    made = analyses[1].call_columns  # made before the join: the join makes the same
    joined = joined_call_columns(analyses)
    assert analyses[1].call_columns is made
    assert joined.facts() == (CALLS["synthesize"] + settled_calls + CALLS["fork"]
                              + settled_calls)
    assert [analysis.call_source() is None for analysis in analyses] == [
        False, False, False, True, False]  # the engine's analyses hold their scans' calls
    assert [analysis.calls for analysis in analyses] == [
        CALLS["synthesize"], settled_calls, [], CALLS["fork"], settled_calls]
    assert joined_call_columns([]).facts() == []
