"""The settled scan (``recovery.settled``): a session whose calls all settle inside their steps
is scanned column at a time; any other is left to the event-by-event scan. Either way the
analysis is the one the event-by-event scan makes of the same events (read as dicts)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery import analyze
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.recovery.analyze import _Scan
from ledgerviz.recovery.settled import scan_settled
from ledgerviz.simulate import SCENARIOS, write_scenario

from .build import LedgerBuilder

FIELDS = ("seqs", "calls", "call_columns", "marks", "closers", "fork_points", "abandoned_seqs",
          "unanswered_in_closed_steps", "surface")


def settles(events: list[dict[str, Any]]) -> bool:
    """Return whether the settled scan takes the session (on a scan of its own)."""
    return scan_settled(_Scan("recorded", "v2"), EventTable.of(events), events)


def assert_same_as_event_by_event(events: list[dict[str, Any]], version: int = 4) -> None:
    """The analysis from the table equals the one from the dicts, under every policy."""
    for policy in POLICIES:
        table = analyze(events, policy=policy, version=version, columns=EventTable.of(events))
        dicts = analyze(events, policy=policy, version=version)
        for name in FIELDS:
            assert getattr(table, name) == getattr(dicts, name), (policy, name)
        assert list(table.events) == list(dicts.events)


def two_steps() -> LedgerBuilder:
    b = LedgerBuilder()
    b.turn_start()                      # 0
    b.user("go")                        # 1
    b.step_start()                      # 2
    b.assistant("c1", "c2")             # 3
    b.tool_call("c1")                   # 4
    b.tool_call("c1")                   # 5: dispatched again: the last seq counts
    b.tool_call("c2")                   # 6
    b.tool_result("c2", is_error=True)  # 7
    b.tool_result("c1", code="E_OTHER")  # 8
    b.step_end()                        # 9
    b.step_start()                      # 10
    b.assistant("c3")                   # 11
    b.tool_result("c3")                 # 12: never dispatched
    b.step_end()                        # 13
    b.turn_end()                        # 14
    return b


def test_a_settled_session_read_by_hand() -> None:
    b = two_steps()
    assert settles(b.events)
    analysis = analyze(b.events, policy="recorded", version=4,
                       columns=EventTable.of(b.events))
    calls = [(c.call_id, c.turn, c.step, c.requested_seq, c.dispatched_seq, c.result_seq,
              c.status, c.error_code, c.is_error, c.branch) for c in analysis.calls]
    assert calls == [("c1", 1, 1, 3, 5, 8, "ok", "E_OTHER", False, "active"),
                     ("c2", 1, 1, 3, 6, 7, "error", None, True, "active"),
                     ("c3", 1, 2, 11, None, 12, "ok", None, False, "active")]
    assert analysis.surface == [1, 3, 7, 8, 11, 12]
    assert analysis.seqs == list(range(15))
    assert analysis.unanswered_in_closed_steps == []
    assert_same_as_event_by_event(b.events)


def test_an_open_last_step_settles_and_its_calls_get_closers() -> None:
    b = two_steps()
    b.turn_start()          # 15
    b.step_start()          # 16
    b.assistant("c4", "c5")  # 17
    b.tool_call("c4")       # 18: dispatched, then the process died
    assert settles(b.events)
    synthesized = analyze(b.events, policy="synthesize", version=4,
                          columns=EventTable.of(b.events))
    assert [(c.call_id, c.dispatched_seq, c.status) for c in synthesized.calls[3:]] == [
        ("c4", 18, "outcome_unknown"), ("c5", None, "not_started")]
    forked = analyze(b.events, policy="fork", version=4, columns=EventTable.of(b.events))
    assert forked.fork_points == [17]
    assert_same_as_event_by_event(b.events)


def test_an_event_of_an_unknown_type_is_never_on_the_surface() -> None:
    b = two_steps()
    b.events[1]["type"] = "user/note"  # seq 1 appends, but the runtime skips the type
    assert settles(b.events)
    for policy in POLICIES:
        analysis = analyze(b.events, policy=policy, version=4, columns=EventTable.of(b.events))
        assert analysis.surface == [3, 7, 8, 11, 12]
        assert analysis.events[1]["type"] == "user/note"


def _edit(change: Callable[[LedgerBuilder], None]) -> list[dict[str, Any]]:
    b = two_steps()
    change(b)
    return b.events


def _move(events: list[dict[str, Any]], row: int, to: int) -> None:
    events.insert(to, events.pop(row))


DECLINED = {
    "a call unanswered when its step closes": lambda b: b.events.pop(12),
    "an id requested twice": lambda b: b.events[11]["data"]["message"]["content"][1].update(
        id="c1"),
    "a result before its request": lambda b: _move(b.events, 12, 10),
    "a dispatch after its answer": lambda b: _move(b.events, 5, 8),
    "a call's last dispatch before its request": lambda b: _move(b.events, 6, 2),
    "an outcome-unknown result": lambda b: b.events[8]["data"].update(
        error={"name": "E", "code": "TOOL_OUTCOME_UNKNOWN"}),
    "an interrupted turn": lambda b: b.events[14]["data"].update(reason={"kind": "interrupted"}),
    "a rewind": lambda b: b.events.insert(10, {"type": "surface/rewind", "seq": 99,
                                               "data": {"shadowedSeqs": [7]}}),
    "a replaced surface": lambda b: b.events[12].update(
        surfaceOp={"op": "replace", "startSeq": 3, "endSeq": 8}),
    "a message without turn": lambda b: b.events[11]["data"].pop("turn"),
    "a dispatch without callId": lambda b: b.events[6]["data"].pop("callId"),
    "a number for an id": lambda b: b.events[11]["data"]["message"]["content"][1].update(id=3),
    "an array for an id": lambda b: b.events[11]["data"]["message"]["content"][1].update(
        id=["c3"]),
    "an object for an id": lambda b: b.events[3]["data"]["message"]["content"][1].update(
        id={"c1": 1}),
    "a seq that is no integer": lambda b: b.events[10].update(seq="ten"),
}


@pytest.mark.parametrize("name", DECLINED)
def test_a_session_the_settled_scan_declines_is_scanned_event_by_event(name: str) -> None:
    events = _edit(DECLINED[name])
    assert not settles(events)
    assert_same_as_event_by_event(events)


KEPT = {
    "a result naming no call": lambda b: b.events[12]["data"]["message"].update(
        toolCallId="zz"),
    "a second result for an answered call": lambda b: b.events.insert(
        9, dict(b.events[8], seq=50)),
    "a dispatch naming no call": lambda b: b.events[6]["data"].update(callId="zz"),
    "a recovery code on a result": lambda b: b.events[8]["data"].update(
        error={"name": "E", "code": "TOOL_NOT_STARTED"}),
    "an earlier dispatch before the request": lambda b: _move(b.events, 4, 2),
    "an event without seq (its position stands in)": lambda b: b.events[10].pop("seq"),
    "a step with no calls": lambda b: b.events[11]["data"]["message"].update(content=[]),
    "an event of an unknown type that appends": lambda b: b.events[1].update(type="user/note"),
}


@pytest.mark.parametrize("name", KEPT)
def test_a_session_still_settled_gives_the_event_by_event_analysis(name: str) -> None:
    events = _edit(KEPT[name])
    assert settles(events)
    assert_same_as_event_by_event(events)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_scenario_gives_the_event_by_event_analysis(scenario: str, tmp_path: Path) -> None:
    for path in write_scenario(scenario, tmp_path / "out", seed=3, turns=6):
        lines = path.read_text().splitlines()
        events = [json.loads(line) for line in lines[1:] if line.endswith("}")]  # torn: cut
        assert_same_as_event_by_event(events)
