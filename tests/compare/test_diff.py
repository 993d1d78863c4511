"""``lv.diff`` on hand-built pairs whose answer is known by construction."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

import ledgerviz as lv
from ledgerviz.cli import main
from ledgerviz.ledger import SessionLog
from ledgerviz.simulate.examples import bundled_examples_dir
from ledgerviz.streams.fork_file import write_fork
from tests.compare.pairs import disguised, example, ids, renumbered, write


def test_a_copy_with_shifted_times_and_other_ids_is_the_same(tmp_path: Path) -> None:
    header, events = example("tool-error.jsonl")
    a = write(tmp_path / "a.jsonl", header, events)
    b = write(tmp_path / "b.jsonl", {**header, "id": "another-session"}, disguised(events))
    diff = lv.diff(a, b)
    assert diff.same
    assert diff.first_divergence is None
    assert (diff.a_only, diff.b_only, diff.changed) == ([], [], [])
    assert diff.counts() == {"same": 33, "changed": 0, "a_only": 0, "b_only": 0}
    assert diff.status_changes == []


def test_one_changed_tool_result_is_one_changed_pair(tmp_path: Path) -> None:
    header, events = example("tool-error.jsonl")
    changed = copy.deepcopy(events)
    changed[9]["data"]["message"]["content"][0]["text"] = "Fetched nothing: 0 KB of text."
    diff = lv.diff(write(tmp_path / "a.jsonl", header, events),
                   write(tmp_path / "b.jsonl", header, changed))
    assert not diff.same
    assert diff.first_divergence == (9, 9, "changed", ("result text",))
    assert (diff.a_only, diff.b_only, diff.changed) == ([], [], [(9, 9)])


def test_an_error_status_and_a_changed_tool_are_named(tmp_path: Path) -> None:
    header, events = example("tool-error.jsonl")
    changed = copy.deepcopy(events)
    changed[8]["data"]["message"]["isError"] = True  # seq 8: the result of read README.md
    changed[26]["data"]["name"] = "bash"  # seq 26: the tool/call of read README.md
    diff = lv.diff(write(tmp_path / "a.jsonl", header, events),
                   write(tmp_path / "b.jsonl", header, changed))
    # seq 27, the result of seq 26's call, is signed with the tool the call names
    assert diff.changed == [(8, 8), (26, 26), (27, 27)]
    frame = diff.frame.set_index("a_seq")
    assert frame.loc[8, "differs"] == "status"
    assert frame.loc[26, "differs"] == "tool"
    assert frame.loc[27, "differs"] == "tool"
    assert diff.first_divergence.differs == ("status",)


def test_a_removed_turn_is_exactly_its_events_only_in_a(tmp_path: Path) -> None:
    header, events = example("clean.jsonl")
    starts = [n for n, event in enumerate(events) if event["type"] == "turn/start"]
    middle = events[starts[1]:starts[2]]
    without = renumbered(events[:starts[1]] + events[starts[2]:])
    diff = lv.diff(write(tmp_path / "a.jsonl", header, events),
                   write(tmp_path / "b.jsonl", header, without))
    assert diff.a_only == [event["seq"] for event in middle]
    assert (diff.b_only, diff.changed) == ([], [])
    assert diff.first_divergence == (middle[0]["seq"], middle[0]["seq"], "a_only", ())
    # and the other way round: the turn is only in b, at its place
    back = lv.diff(write(tmp_path / "c.jsonl", header, without),
                   write(tmp_path / "d.jsonl", header, events))
    assert back.b_only == diff.a_only
    assert back.a_only == []


def test_an_inserted_step_is_only_in_b(tmp_path: Path) -> None:
    header, events = example("tool-error.jsonl")
    # a step that reads a file nobody read, inserted before seq 24's step of turn 2
    step = [
        {"type": "step/start", "seq": 0, "time": 1, "data": {"turn": 2, "step": 2}},
        {"type": "assistant/message", "seq": 0, "time": 1, "data": {"turn": 2, "step": 2,
         "message": {"id": "m-new", "role": "assistant", "content": [
             {"type": "text", "text": "Let me read CHANGES.md."},
             {"type": "tool-call", "id": "c-new", "name": "read",
              "arguments": "{\"path\": \"CHANGES.md\"}"}]}}},
        {"type": "tool/call", "seq": 0, "time": 1, "data": {"turn": 2, "step": 2,
         "callId": "c-new", "name": "read", "arguments": "{\"path\": \"CHANGES.md\"}"}},
        {"type": "tool/result", "seq": 0, "time": 1, "data": {"turn": 2, "step": 2, "message": {
            "id": "m-new-result", "role": "tool", "toolCallId": "c-new", "isError": False,
            "content": [{"type": "text", "text": "1: v0.1"}]}}},
        {"type": "step/end", "seq": 0, "time": 1, "data": {"turn": 2, "step": 2}},
    ]
    inserted = renumbered(events[:24] + step + events[24:])
    diff = lv.diff(write(tmp_path / "a.jsonl", header, events),
                   write(tmp_path / "b.jsonl", header, inserted))
    assert diff.b_only == [24, 25, 26, 27, 28]
    assert (diff.a_only, diff.changed) == ([], [])
    assert diff.first_divergence == (24, 24, "b_only", ())


def test_a_fork_child_parts_from_its_parent_at_the_fork_point(tmp_path: Path) -> None:
    parent = bundled_examples_dir() / "crash-mid-dispatch.jsonl"
    [point] = lv.load(parent).recovery("fork").analyses["sim-crash-mid-dispatch-7"].fork_points
    child = tmp_path / "child.jsonl"
    with child.open("w") as out:
        write_fork(parent, out.write, session_id="child", created_at=1)
    diff = lv.diff(parent, child)
    same = diff.frame[diff.frame["kind"] == "same"]
    assert list(same["a_seq"][:point]) == list(range(point))
    assert list(same["b_seq"][:point]) == list(range(point))
    assert diff.first_divergence.a_seq == point
    assert diff.first_divergence.b_seq == point  # the child's seed marker
    assert point in diff.a_only
    assert point in diff.b_only


def test_a_call_without_its_result_is_a_status_change(tmp_path: Path) -> None:
    header, events = example("clean.jsonl")
    result = next(n for n, event in enumerate(events) if event["type"] == "tool/result")
    call_id = events[result]["data"]["message"]["toolCallId"]
    crashed = events[:result]  # the process died before the first result was written
    diff = lv.diff(write(tmp_path / "a.jsonl", header, events),
                   write(tmp_path / "b.jsonl", header, crashed))
    assert diff.b_only == []
    assert diff.a_only == [event["seq"] for event in events[result:]]
    [(a, b)] = [(a, b) for a, b in diff.status_changes if a.call_id == call_id]
    assert (a.status, b.status) == ("ok", "outcome_unknown")
    assert b.call_id == call_id
    frame = diff.status_frame
    assert list(frame.columns) == ["tool", "a_call_id", "b_call_id", "a_seq", "b_seq",
                                   "a_status", "b_status"]
    assert frame.loc[frame["a_call_id"] == call_id, "b_status"].item() == "outcome_unknown"


def _normalized(path: Path) -> list[bytes]:
    """Return the events of a ledger with seqs, times and ids blanked (the test's oracle)."""
    events = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    for event in events:
        event.pop("time", None)
        event.pop("seq", None)
    found = {value for event in events for value in ids(event)}
    blanked = orjson.dumps(events).decode()
    for value in sorted(found, key=len, reverse=True):
        blanked = blanked.replace(value, "ID")
    return [orjson.dumps(event) for event in orjson.loads(blanked)]


def test_two_simulator_runs_with_other_seeds_part_where_their_events_first_differ(
        tmp_path: Path) -> None:
    paths = []
    for seed in (1, 2):
        path = tmp_path / f"seed{seed}.jsonl"
        assert main(["simulate", "--scenario", "clean", "--seed", str(seed),
                     "-o", str(path)]) == 0
        paths.append(path)
    a, b = (_normalized(path) for path in paths)
    first = next(n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    diff = lv.diff(*paths)
    assert not diff.same
    assert diff.first_divergence[:2] == (first, first)
    assert list(diff.frame["kind"][:first]) == ["same"] * first
    assert lv.diff(paths[0], paths[0]).same


def test_a_side_must_hold_one_session(tmp_path: Path) -> None:
    header, events = example("clean.jsonl")
    write(tmp_path / "a.jsonl", header, events)
    write(tmp_path / "b.jsonl", {**header, "id": "other"}, events)
    with pytest.raises(ValueError, match="holds 2 sessions"):
        lv.diff(tmp_path, tmp_path / "a.jsonl")
    with pytest.raises(ValueError, match="unknown policy"):
        lv.diff(tmp_path / "a.jsonl", tmp_path / "b.jsonl", policy="nope")  # type: ignore[arg-type]


TESTS = Path(__file__).resolve().parents[1]
EVERY_LEDGER = [*sorted((TESTS / "data" / "dsh").glob("*.jsonl")),
                TESTS / "browser" / "data" / "hostile.v4.jsonl",
                *sorted(bundled_examples_dir().glob("*.jsonl"))]


@pytest.mark.parametrize("path", EVERY_LEDGER, ids=lambda path: path.name)
def test_every_ledger_is_the_same_as_itself(path: Path) -> None:
    ledger = lv.load(path)
    for key in ledger.keys:
        one = ledger.session(key)
        diff = lv.diff(one, one)
        assert diff.same, key
        assert len(diff.rows) == len(one.sessions[0].events)


def test_unhashable_ids_and_names_are_compared_as_their_json() -> None:
    # the reader refuses such events; a SessionLog built by hand can still hold them
    header, events = example("tool-error.jsonl")
    odd = copy.deepcopy(events)
    odd[6]["data"]["callId"] = {"not": "a string"}
    odd[6]["data"]["name"] = ["read"]
    odd[8]["data"]["message"]["toolCallId"] = ["x"]
    logs = [SessionLog("a.jsonl", "a", header, 4, events),
            SessionLog("b.jsonl", "b", header, 4, odd)]
    diff = lv.diff(*logs)
    # seq 6's name differs; seq 8's result no longer names its tool
    assert diff.changed == [(6, 6), (8, 8)]
    assert diff.frame.set_index("a_seq").loc[[6, 8], "differs"].tolist() == ["tool", "tool"]


def test_notebook_display_lists_the_first_rows_escaped(tmp_path: Path) -> None:
    header, events = example("tool-error.jsonl")
    changed = copy.deepcopy(events)
    changed[9]["data"]["message"]["content"][0]["text"] = "other"
    hostile = "<script>alert(1)</script>"
    diff = lv.diff(write(tmp_path / "a.jsonl", header, events),
                   write(tmp_path / "b.jsonl", {**header, "id": hostile}, changed))
    shown = diff._repr_html_()
    assert "<script>alert" not in shown
    assert "&lt;script&gt;" in shown
    assert "a seq 9, b seq 9: changed (result text)" in shown
    assert shown.count("<tr>") == 2  # the header and the one differing row
    assert repr(diff) == (f"<SessionDiff 'sim-tool-error-7' vs {hostile!r}: a seq 9, b seq 9: "
                          "changed (result text); 32 same, 1 changed, 0 only in a, 0 only in b>")
