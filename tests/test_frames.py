"""Frames on the real fixtures (counts worked out from the files) and on hand-built analyses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ledgerviz
from ledgerviz.frames import FRAME_NAMES, build_frames, columns
from ledgerviz.frames.columns import category_column, int_column, joined_inferred
from ledgerviz.frames.view import Chained
from ledgerviz.frames.view_table import ViewTable
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.analysis import Analysis, CallFacts
from ledgerviz.recovery.analyze import analyze

DSH = Path(__file__).parent / "data" / "dsh"
EXAMPLES = Path(ledgerviz.__file__).parent / "examples"
UNRECOVERED = Path(__file__).parent / "data" / "scheduler-failure-unrecovered.jsonl"

COLUMNS = {
    "events": "session seq time type turn step call_id surface_op synthetic recorded inherited "
    "branch "
    "recovery_code",
    "turns": "session turn start_seq end_seq start_time end_time duration end_reason steps calls "
    "outcome_unknown not_started forked",
    "steps": "session turn step start_seq end_seq start_time end_time provider model input_tokens "
    "output_tokens cache_read_tokens reasoning_tokens calls",
    "calls": "session call_id tool turn step requested_seq dispatched_seq result_seq dispatch_time "
    "result_time status status_reason error_code is_error duration arguments branch settled",
    "messages": "session seq role kind text branch",
    "lineage": "session parent_session relation seeded inherited_events boundary_seq "
    "anchor_call_id anchor_seq origin "
    "delegation_depth "
    "agent_preset",
}

# file suffix -> (events, turns, steps, calls, messages, {status: count}), counted in the files:
# messages = user/system/developer/assistant messages + tool results of that format version.
EXPECTED = {
    "goal-round-driver__session.expected.jsonl": (45, 3, 5, 2, 11, {"ok": 2}),
    "headless-profile__session.expected.jsonl": (23, 1, 2, 1, 6, {"ok": 1}),
    "semantic-checkpoint__session.expected.jsonl": (24, 2, 2, 1, 6, {"outcome_unknown": 1}),
    "subagent-inheritance__child.expected.jsonl": (20, 1, 2, 1, 5, {"error": 1}),
    "subagent-inheritance__parent.expected.jsonl": (31, 2, 3, 1, 9, {"ok": 1}),
    "subagent-settlement__child.replay.jsonl": (7, 1, 1, 0, 0, {}),
    "preview-architecture-review__session.v3.jsonl": (177, 29, 29, 0, 58, {}),
    "preview-follow-up-builder__session.v2.jsonl": (7, 1, 1, 0, 2, {}),
    "preview-showcase__session.v3.jsonl": (199, 29, 30, 10, 69, {"ok": 9, "error": 1}),
    "plain-turn__session.v3.jsonl": (5, 1, 1, 0, 1, {}),
}


@pytest.fixture(scope="module")
def ledger() -> ledgerviz.Ledger:
    return ledgerviz.load(DSH)


def key_of(ledger: ledgerviz.Ledger, suffix: str) -> str:
    (key,) = [log.key for log in ledger.sessions if log.path.endswith(suffix)]
    return key


def rows(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    return frame[frame["session"] == key]


@pytest.mark.parametrize("name", FRAME_NAMES)
def test_columns_are_exactly_the_documented_ones(ledger: ledgerviz.Ledger, name: str) -> None:
    assert list(getattr(ledger.frames, name).columns) == COLUMNS[name].split()


@pytest.mark.parametrize("suffix", sorted(EXPECTED))
def test_fixture_counts(ledger: ledgerviz.Ledger, suffix: str) -> None:
    key = key_of(ledger, suffix)
    frames = ledger.frames
    events, turns, steps, calls, messages, statuses = EXPECTED[suffix]
    assert len(rows(frames.events, key)) == events
    assert len(rows(frames.turns, key)) == turns
    assert len(rows(frames.steps, key)) == steps
    assert len(rows(frames.calls, key)) == calls
    assert len(rows(frames.messages, key)) == messages
    counted = rows(frames.calls, key)["status"].value_counts()
    assert {status: n for status, n in counted.items() if n} == statuses
    assert rows(frames.turns, key)["calls"].sum() == calls


def test_totals_across_sessions(ledger: ledgerviz.Ledger) -> None:
    frames = ledger.frames
    assert [len(frames.events), len(frames.turns), len(frames.steps)] == [538, 70, 76]
    assert [len(frames.calls), len(frames.messages), len(frames.lineage)] == [16, 167, 10]
    assert frames.events["session"].cat.categories.tolist() == ledger.keys


def test_dtypes(ledger: ledgerviz.Ledger) -> None:
    frames = ledger.frames
    assert str(frames.events["time"].dtype) == "datetime64[ms, UTC]"
    assert str(frames.calls["dispatch_time"].dtype) == "datetime64[ms, UTC]"
    assert str(frames.calls["duration"].dtype) == "timedelta64[ms]"
    for frame, column in [("events", "seq"), ("turns", "turn"), ("steps", "input_tokens")]:
        assert str(getattr(frames, frame)[column].dtype) == "Int64"
    for frame, column in [
        ("events", "type"),
        ("calls", "status"),
        ("events", "branch"),
        ("turns", "end_reason"),
        ("messages", "role"),
        ("events", "session"),
    ]:
        assert isinstance(getattr(frames, frame)[column].dtype, pd.CategoricalDtype)
    assert isinstance(frames.messages["text"].dtype, pd.StringDtype)
    assert frames.calls["status"].cat.categories.tolist() == [
        "ok",
        "error",
        "outcome_unknown",
        "not_started",
    ]


def test_showcase_turn_29(ledger: ledgerviz.Ledger) -> None:
    key = key_of(ledger, "showcase__session.v3.jsonl")
    turn = rows(ledger.frames.turns, key).set_index("turn").loc[29]
    assert (turn["start_seq"], turn["end_seq"], turn["steps"], turn["calls"]) == (169, 198, 2, 10)
    assert turn["start_time"] == pd.Timestamp(1787472000169, unit="ms", tz="UTC")
    assert turn["duration"] == pd.Timedelta(milliseconds=29)
    assert turn["end_reason"] == "completed"
    calls = rows(ledger.frames.calls, key).set_index("call_id")
    assert calls.loc["preview-todo", "duration"] == pd.Timedelta(milliseconds=2)
    assert calls.loc["preview-read", "duration"] == pd.Timedelta(milliseconds=1)
    failing = calls.loc["preview-failure"]
    assert (failing["status"], failing["error_code"], failing["is_error"]) == (
        "error",
        "ENOENT",
        True,
    )
    assert (failing["dispatched_seq"], failing["result_seq"], failing["requested_seq"]) == (
        192,
        193,
        172,
    )
    steps = rows(ledger.frames.steps, key)
    assert set(steps["model"]) == {"deterministic"}
    assert steps[steps["turn"] == 29]["calls"].tolist() == [10, 0]


def test_step_usage_and_route(ledger: ledgerviz.Ledger) -> None:
    steps = rows(ledger.frames.steps, key_of(ledger, "headless-profile__session.expected.jsonl"))
    assert steps["input_tokens"].tolist() == [11, 7]
    assert steps["output_tokens"].tolist() == [3, 5]
    assert steps["cache_read_tokens"].tolist() == [2, pd.NA]
    assert steps["reasoning_tokens"].tolist() == [pd.NA, 1]


def test_normalised_snapshots_have_no_times(ledger: ledgerviz.Ledger) -> None:
    events = rows(ledger.frames.events, key_of(ledger, "goal-round-driver__session.expected.jsonl"))
    assert events["time"].isna().all()
    assert events["seq"].tolist() == list(range(45))


def test_recorded_open_tail_and_synthesized_closers(ledger: ledgerviz.Ledger) -> None:
    key = key_of(ledger, "subagent-settlement__child.replay.jsonl")
    recorded = rows(ledger.frames.turns, key)
    assert recorded["end_seq"].isna().all()
    assert recorded["end_reason"].isna().all()
    frames = ledger.recovery("synthesize").frames
    events = rows(frames.events, key)
    assert events["type"].tolist()[-2:] == ["step/end", "turn/end"]
    assert events["synthetic"].tolist() == [False] * 7 + [True, True]
    assert events["recorded"].tolist() == [True] * 7 + [False, False]
    turn = rows(frames.turns, key).iloc[0]
    assert (turn["end_seq"], turn["end_reason"]) == (8, "interrupted")


def test_crash_closer_already_in_the_file(ledger: ledgerviz.Ledger) -> None:
    key = key_of(ledger, "semantic-checkpoint__session.expected.jsonl")
    events = rows(ledger.frames.events, key)
    closer = events[events["seq"] == 5].iloc[0]
    assert (closer["type"], closer["call_id"], closer["surface_op"]) == (
        "tool/result",
        "unknown-outcome-call",
        "append",
    )
    assert (closer["synthetic"], closer["recorded"]) == (True, True)
    assert closer["recovery_code"] == "TOOL_OUTCOME_UNKNOWN"
    turns = rows(ledger.frames.turns, key)
    assert turns["end_reason"].tolist() == ["interrupted", "completed"]
    assert turns["outcome_unknown"].tolist() == [1, 0]


def test_messages(ledger: ledgerviz.Ledger) -> None:
    child = rows(
        ledger.frames.messages, key_of(ledger, "subagent-inheritance__child.expected.jsonl")
    )
    assert child["role"].tolist() == ["user", "user", "assistant", "user", "assistant"]
    assert child["kind"].tolist()[-2:] == ["tool", "model"]
    parent = rows(
        ledger.frames.messages, key_of(ledger, "subagent-inheritance__parent.expected.jsonl")
    )
    assert parent["role"].value_counts().to_dict() == {
        "user": 3,
        "system": 2,
        "assistant": 2,
        "developer": 1,
        "tool": 1,
    }


def test_lineage(ledger: ledgerviz.Ledger) -> None:
    lineage = ledger.frames.lineage.set_index("session")
    review = lineage.loc["preview-architecture-review"]
    assert (review["parent_session"], review["relation"]) == ("preview-showcase", "forked-subagent")
    assert (review["seeded"], review["inherited_events"], review["delegation_depth"]) == (
        True,
        169,
        1,
    )
    builder = lineage.loc["preview-follow-up-builder"]
    assert (builder["relation"], builder["seeded"], builder["inherited_events"]) == (
        "subagent",
        False,
        0,
    )
    showcase = lineage.loc["preview-showcase"]
    assert (showcase["relation"], showcase["agent_preset"]) == ("root", "standard")
    assert pd.isna(showcase["parent_session"])
    assert lineage["relation"].value_counts().to_dict() == {
        "root": 6,
        "subagent": 3,
        "forked-subagent": 1,
        "fork": 0,
    }


def test_frames_are_lazy_and_cached() -> None:
    frames = ledgerviz.load(DSH / "*showcase*").frames
    assert "events" not in frames.__dict__
    assert frames.events is frames.events
    assert "calls" not in frames.__dict__


def test_no_sessions_gives_typed_empty_frames() -> None:
    frames = build_frames([])
    for name in FRAME_NAMES:
        frame = getattr(frames, name)
        assert frame.empty
        assert list(frame.columns) == COLUMNS[name].split()
    assert str(frames.events["time"].dtype) == "datetime64[ms, UTC]"


def test_frames_use_the_analysis_not_their_own_pairing() -> None:
    """Statuses, branches and fork points come from the Analysis handed in."""
    events = [
        {"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 11, "data": {"turn": 1, "step": 1}},
        {"type": "tool/call", "seq": 2, "time": 15, "data": {"turn": 1, "step": 1, "callId": "A"}},
    ]
    closer = {
        "type": "turn/end",
        "seq": 3,
        "time": 15,
        "data": {"turn": 1, "reason": {"kind": "forked"}},
    }
    call = CallFacts(
        "A", "rm", "{}", 1, 1, 1, 2, None, "outcome_unknown", None, False, "abandoned", False
    )
    analysis = Analysis(
        policy="fork",
        generation="v4",
        events=[*events, closer],
        seqs=[0, 1, 2, 3],
        branch=["active", "abandoned", "abandoned", "log"],
        synthetic=[False, False, False, True],
        recorded=[True, True, True, False],
        recovery_code=[None, None, None, None],
        calls=[call],
        fork_points=[1],
        abandoned_seqs=[1, 2],
    )
    log = SessionLog("x.jsonl", "x", {"type": "session", "version": 4, "id": "x"}, 4, events)
    frames = build_frames([("x", log, analysis)])
    assert frames.events["branch"].tolist() == ["active", "abandoned", "abandoned", "log"]
    assert frames.events["call_id"].tolist()[2] == "A"
    turn = frames.turns.iloc[0]
    assert (turn["forked"], turn["outcome_unknown"], turn["end_reason"]) == (True, 1, "forked")
    row = frames.calls.iloc[0]
    assert (row["status"], row["branch"], row["settled"]) == ("outcome_unknown", "abandoned", False)
    assert row["dispatch_time"] == pd.Timestamp(15, unit="ms", tz="UTC")
    assert pd.isna(row["result_time"]) and pd.isna(row["duration"])


@pytest.mark.parametrize("policy", ["recorded", "synthesize", "fork"])
def test_view_table_equals_a_table_of_the_analysis_events(policy: str) -> None:
    """The reader's table (plus the events recovery computed, appended or, as in the
    unrecovered scheduler failure, inserted into closed steps) at each position equals
    the table made from the analysis events themselves."""
    ledger = ledgerviz.load([DSH, EXAMPLES, UNRECOVERED])
    view = ledger.recovery(policy)  # type: ignore[arg-type]
    inserted = 0
    for log in ledger.sessions:
        analysis = view.analyses[log.key]
        table = ViewTable.of([log], [analysis])
        expected = EventTable.of(analysis.events)
        assert table.type_array().tolist() == expected.types
        for name in ("time", "turn", "step", "surface_op", "call_id", "end_reason", "provider",
                     "model", "role", "source_kind", "text", "input_tokens", "reasoning_tokens"):
            assert table.column(name).tolist() == list(expected.column(name)), name
        inserted += not all(analysis.recorded[: len(log.events)])
    if policy == "recorded":
        assert inserted == 0
    if policy == "synthesize":
        assert inserted >= 1


@pytest.mark.parametrize("policy", ["recorded", "synthesize", "fork"])
def test_view_table_of_many_sessions_equals_their_tables_one_after_another(policy: str) -> None:
    """Every session in one view (runs of whole tables made into one column at once, the
    sessions with computed events in between) equals the tables of each session's
    analysis events, made from their dicts, laid one after another."""
    ledger = ledgerviz.load([DSH, EXAMPLES, UNRECOVERED])
    analyses = ledger.recovery(policy).analyses  # type: ignore[arg-type]
    logs = list(ledger.sessions)
    table = ViewTable.of(logs, [analyses[log.key] for log in logs])
    expected = [EventTable.of(analyses[log.key].events) for log in logs]
    assert len(logs) > 10
    assert table.type_array().tolist() == [kind for one in expected for kind in one.types]
    for name in ("time", "turn", "step", "surface_op", "call_id", "is_error", "role",
                 "text", "input_tokens", "synthetic"):
        values = [value for one in expected for value in one.column(name)]
        assert table.column(name).tolist() == values, name


def test_recorded_view_reads_the_readers_table_without_a_copy(ledger: ledgerviz.Ledger) -> None:
    log = ledger.sessions[0]
    table = ViewTable.of([log], [ledger.recovery("recorded").analyses[log.key]])
    assert np.shares_memory(table.column("turn"), np.frombuffer(log.event_table().turn, np.int64))


def test_a_head_then_no_events_reads_the_head_without_a_copy(ledger: ledgerviz.Ledger) -> None:
    """A prefix that adds no event to the whole session's first ones (a fork parent cut at
    its last event) reads the whole table's columns: nothing is copied (a copy of every
    column of a 1M-event session was ~0.3 s of the first fork toggle), values as before."""
    log = ledger.sessions[0]
    whole = ViewTable.of([log], [ledger.recovery("recorded").analyses[log.key]])
    head = whole.head_then(len(whole) - 1, ViewTable.of_events([]))
    for name in ("turn", "call_id"):
        assert head.column(name).tolist() == whole.column(name).tolist()[:-1]
        assert np.shares_memory(head.column(name), whole.column(name))
    assert ViewTable.of_events([]).head_then(0, ViewTable.of_events([])).column("turn").dtype \
        == np.int64  # every part empty: still typed


@pytest.mark.parametrize(
    "values",
    [
        ["b", "a", None, "b"],
        [None, None],
        [],
        [1, None, 3],
        ["x", 2],
        [True, False],
    ],
)
def test_category_column_matches_pandas_inference(values: list[object]) -> None:
    built = category_column(values)
    expected = pd.Categorical(values)
    assert built.categories.equals(expected.categories)
    assert built.categories.dtype == expected.categories.dtype
    assert built.codes.tolist() == expected.codes.tolist()


def test_category_column_with_fixed_categories() -> None:
    built = category_column(["log", "active", "other", None], ("active", "abandoned", "log"))
    assert built.categories.tolist() == ["active", "abandoned", "log"]
    assert built.tolist()[:2] == ["log", "active"]
    assert pd.isna(built[2]) and pd.isna(built[3])


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([3, None, -5], [3, pd.NA, -5]),
        ([None, 2**53 + 1], [pd.NA, 2**53 + 1]),  # too large for an exact double
        ([1, True, "2", 2.0, None], [1, pd.NA, pd.NA, pd.NA, pd.NA]),
        ([None], [pd.NA]),
        ([7, 8], [7, 8]),
        ([-(2**63), None, 2**63 - 1], [-(2**63), pd.NA, 2**63 - 1]),
    ],
)
@pytest.mark.parametrize("pyarrow", [True, False])
def test_int_column_is_exact_and_only_takes_ints(
    values: list[object], expected: list[object], pyarrow: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not pyarrow:  # pyarrow is optional: the numpy conversion must give the same
        monkeypatch.setattr(columns, "_pa", None)
    column = int_column(values)
    assert str(column.dtype) == "Int64"
    assert column.tolist() == expected


def test_joined_inferred_keeps_only_the_categories_some_value_holds() -> None:
    # a slice of a column keeps every category of the whole, used or not
    head = pd.Categorical(["b", None, "b", "c"], categories=["a", "b", "c"])[:3]
    tail = pd.Categorical(["z", None], categories=["c", "z"])
    joined = joined_inferred(head, tail)
    assert joined is not None
    assert joined.categories.tolist() == ["b", "z"]
    assert joined.codes.tolist() == [0, -1, 0, 1, -1]
    assert joined_inferred(pd.Categorical([1]), tail) is None  # not a string category
    # no value at all: what pandas infers for missing values alone, not the parts' categories
    missing = joined_inferred(head[1:2], tail[1:])
    assert missing is not None
    assert missing.codes.tolist() == [-1, -1]
    pd.testing.assert_extension_array_equal(missing, pd.Categorical([None, None]))
    pd.testing.assert_extension_array_equal(joined_inferred(head[:0], tail[:0]),
                                            pd.Categorical([]))


@pytest.mark.parametrize(("seed_length", "inherited"), [
    (2, [True, True, False, False]),
    (10, [True, True, True, False]),  # past the log (a torn child): every recorded event
])
def test_a_v1_childs_seed_length_marks_its_inherited_events(
        seed_length: int, inherited: list[bool], tmp_path: Path) -> None:
    header = {"type": "session", "version": 1, "id": "child", "createdAt": 1000,
              "parentSession": "parent", "seedLength": seed_length, "delegationDepth": 0}
    events = [{"type": "turn/start", "seq": seq, "time": 1000 + seq, "data": {"turn": 1}}
              for seq in range(3)]
    path = tmp_path / "child.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *events]))
    frames = ledgerviz.load(path).recovery("synthesize").frames  # + the closer turn/end
    assert frames.events["inherited"].tolist() == inherited


def test_calls_without_a_dispatch_or_result_have_no_time_for_it() -> None:
    # A call never dispatched (or never answered) must not take the time of another
    # event without a seq (results recovery once added inside closed steps had none).
    ledger = ledgerviz.load(EXAMPLES)
    for policy in ("recorded", "synthesize", "fork"):
        calls = ledger.recovery(policy).frames.calls
        assert calls.dispatched_seq.isna().any()
        assert calls.dispatch_time[calls.dispatched_seq.isna()].isna().all()
        assert calls.result_time[calls.result_seq.isna()].isna().all()
        assert calls.duration[calls.result_seq.isna()].isna().all()


@pytest.mark.parametrize("seqs", [(0, 1, 2), ("a", "b", "c")])
def test_calls_take_their_times_from_the_events_with_their_seqs(seqs: tuple[object, ...]) -> None:
    # integer seqs are looked up as one int per (session, seq), any other as the pair
    assistant, call, result = seqs
    message = {"role": "assistant",
               "content": [{"type": "tool-call", "id": "c1", "name": "ls", "arguments": "{}"}]}
    events = [
        {"type": "assistant/message", "seq": assistant, "time": 1000, "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "message": message}},
        {"type": "tool/call", "seq": call, "time": 2000,
         "data": {"turn": 1, "step": 1, "callId": "c1", "name": "ls"}},
        {"type": "tool/result", "seq": result, "time": 3500, "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "message": {"role": "tool", "toolCallId": "c1",
                                                     "content": [{"type": "text", "text": "ok"}]}}},
    ]
    others = [{"type": "turn/start", "seq": assistant, "time": 500, "data": {"turn": 1}},
              {"type": "tool/call", "seq": call, "time": 9000,  # same seq, another session
               "data": {"turn": 1, "step": 1, "callId": "c9", "name": "ls"}}]
    sessions = [(key, SessionLog(key, key, {}, 4, log), analyze(log, policy="recorded", version=4))
                for key, log in (("other", others), ("mine", events))]
    calls = build_frames(sessions).calls
    assert calls["dispatch_time"].tolist() == [pd.Timestamp(2000, unit="ms", tz="UTC")]
    assert calls["result_time"].tolist() == [pd.Timestamp(3500, unit="ms", tz="UTC")]
    assert calls["duration"].tolist() == [pd.Timedelta(1500, unit="ms")]


def test_status_reasons_of_dsh_calls_are_derived() -> None:
    reasons = {
        policy: ledgerviz.load(UNRECOVERED).recovery(policy).frames.calls["status_reason"].tolist()
        for policy in ("recorded", "synthesize")
    }
    # the scheduler failed with three calls unanswered; synthesize's results keep the reason
    assert reasons["recorded"] == reasons["synthesize"] == [
        "answered", "answered", "answered", *["no result in a closed step"] * 3]
    semantic = ledgerviz.load(next(DSH.glob("*semantic-checkpoint*"))).frames.calls
    assert semantic["status_reason"].tolist() == ["synthetic closer"]  # a runtime's closer
    assert ledgerviz.load(EXAMPLES).frames.calls["status_reason"].cat.categories.tolist() == [
        "answered", "synthetic closer", "no result in a closed step", "no result at end of file",
        "rejected by user", "interrupted mid-run", "aborted", "rolled back", "denied by policy"]


def test_chained_events_are_indexed_without_a_copy() -> None:
    first, second = [{"seq": 0}, {"seq": 1}], [{"seq": 0}]
    chained = Chained([first, [], second])
    assert len(chained) == 3
    assert chained[1] is first[1] and chained[np.int64(2)] is second[0]
    with pytest.raises(IndexError):
        chained[3]
