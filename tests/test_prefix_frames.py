"""A cut's frames, sliced from the frames of its whole session, equal the frames the reader
gives for the file truncated at that cut (an independent build: another file, read anew)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ledgerviz
from ledgerviz.frames import FRAME_NAMES, Frames
from ledgerviz.frames.columns import int_values
from ledgerviz.frames.events import TOOL_EVENTS, event_columns
from ledgerviz.frames.fork_frames import ForkFrames
from ledgerviz.frames.joined import JoinedFrames
from ledgerviz.frames.prefix import _CALL_STEP_KEY, _CALL_TURN, PrefixFrames
from ledgerviz.frames.rows import Rows
from ledgerviz.frames.session_frames import ToolPositions, int_call_rows
from ledgerviz.frames.story import StoryFrames
from ledgerviz.frames.turns import arrays_of
from ledgerviz.frames.view_table import ViewTable
from ledgerviz.plot.story import fork_pair, fork_story
from ledgerviz.simulate import write_scenario

TESTS = Path(__file__).resolve().parent
CONFORMANCE = TESTS / "data" / "conformance" / "inputs"
POLICIES = ("synthesize", "fork")
SLICED_BUILDERS = ("event_columns", "turn_columns", "step_columns", "call_columns")
"""The builders of the frames a cut slices (messages and lineage are built as usual)."""


def truncated(path: Path, lines: range, n: int, out: Path) -> Path:
    """Write the header line of ``path`` and the lines of its first ``n`` events to ``out``."""
    text = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [text[0], *(text[line - 1] for line in lines[:n])]
    out.write_text("".join(kept), encoding="utf-8")
    return out


@pytest.fixture
def rebuilt(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each frame a cut built from scratch instead of slicing it."""
    names: list[str] = []
    original = Frames._build

    def build(self: Frames, columns_of, schema):
        if isinstance(self, PrefixFrames):
            names.append(columns_of.__name__)
        return original(self, columns_of, schema)

    monkeypatch.setattr(Frames, "_build", build)
    return names


def assert_cuts_match(path: Path, cuts: list[int], tmp_path: Path) -> None:
    """Every cut of ``path`` in ``cuts``, under both policies, gives the truncated file's frames."""
    whole = ledgerviz.load(path)
    (log,) = whole.sessions
    for n in cuts:
        cut = whole.cut(n, reuse=True)
        expected = ledgerviz.load(truncated(path, log.lines, n, tmp_path / f"cut-{n}.jsonl"))
        assert expected.keys == cut.keys
        for policy in POLICIES:
            got, want = cut.recovery(policy).frames, expected.recovery(policy).frames
            assert isinstance(got, PrefixFrames) or n == len(log.events)  # else: the whole's
            for name in FRAME_NAMES:
                pd.testing.assert_frame_equal(getattr(got, name), getattr(want, name),
                                              obj=f"{path.name} cut {n} {policy} {name}")


def fork_cuts(path: Path) -> list[int]:
    """Return cuts around each fork point of ``path`` (the fork policy's, at the whole file):
    the cut ending at the assistant message, one event before and after it."""
    ledger = ledgerviz.load(path)
    analysis = ledger.recovery("fork").analyses[ledger.keys[0]]
    indices = [analysis.seqs.index(point) for point in analysis.fork_points]
    assert indices, f"{path.name} has no fork point"
    return sorted({c for i in indices for c in (i, i + 1, i + 2) if c <= len(analysis.seqs)})


@pytest.mark.parametrize("name", ["random-01-v4.jsonl"])
def test_every_cut_of_a_conformance_input_gives_the_truncated_files_frames(
        name: str, tmp_path: Path, rebuilt: list[str]) -> None:
    path = CONFORMANCE / name
    count = len(ledgerviz.load(path).sessions[0].events)
    assert_cuts_match(path, list(range(1, count + 1)), tmp_path)
    assert not [n for n in rebuilt if n in SLICED_BUILDERS]


def test_a_cut_of_no_events_is_sliced_too(tmp_path: Path, rebuilt: list[str]) -> None:
    """No type column to join (no values): the empty frames come from slicing as well."""
    assert_cuts_match(CONFORMANCE / "random-01-v4.jsonl", [0], tmp_path)
    assert not [n for n in rebuilt if n in SLICED_BUILDERS]


@pytest.mark.parametrize("scenario", ["resume-synthesize", "scheduler-failure", "compaction"])
def test_every_cut_of_a_simulated_ledger_gives_the_truncated_files_frames(
        scenario: str, tmp_path: Path, rebuilt: list[str]) -> None:
    (path,) = write_scenario(scenario, tmp_path / f"{scenario}.jsonl")
    count = len(ledgerviz.load(path).sessions[0].events)
    assert_cuts_match(path, [*range(1, count, 5), count], tmp_path)
    assert not [n for n in rebuilt if n in SLICED_BUILDERS]


def test_cuts_at_the_fork_points_of_a_long_session(tmp_path: Path, rebuilt: list[str]) -> None:
    (path,) = write_scenario("crash-mid-dispatch", tmp_path / "crash.jsonl", turns=40)
    cuts = fork_cuts(path)
    count = len(ledgerviz.load(path).sessions[0].events)
    mid_step = list(range(count // 2, count // 2 + 8))  # inside an ordinary turn's steps
    assert_cuts_match(path, [*cuts, *mid_step, count], tmp_path)
    assert not [n for n in rebuilt if n in SLICED_BUILDERS]


def test_cuts_of_a_session_that_reuses_a_turn_number(tmp_path: Path, rebuilt: list[str]) -> None:
    """Turn 3 recorded as a second turn 1: two turn rows share a number, and turn 1's calls
    are not next to each other, so a cut's call counts cannot find rows by number alone."""
    (path,) = write_scenario("clean", tmp_path / "clean.jsonl", turns=4)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    events = [json.loads(line) for line in lines[1:]]
    starts = [i for i, event in enumerate(events) if event["type"] == "turn/start"]
    for event in events[starts[2]:starts[3]]:
        if event["data"].get("turn") == 3:
            event["data"]["turn"] = 1
    path.write_text(lines[0] + "".join(json.dumps(event) + "\n" for event in events),
                    encoding="utf-8")
    assert_cuts_match(path, list(range(starts[2], len(events) + 1)), tmp_path)
    assert not [n for n in rebuilt if n in SLICED_BUILDERS]


@pytest.mark.parametrize("scenario", [
    "clean",  # every call answered: both policies say the same of the whole session
    "crash-mid-dispatch",  # a call left unanswered: synthesize closes it, fork abandons
])
def test_a_whole_sessions_frames_serve_every_policy(
        scenario: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole session's events frame is built once: the other policy's cuts are sliced
    from it (where the policies differ, the events they share), and equal the truncated
    files' frames."""
    (path,) = write_scenario(scenario, tmp_path / f"{scenario}.jsonl", turns=3)
    whole_builds: list[str] = []
    original = Frames._build

    def build(self: Frames, columns_of, schema):
        if not isinstance(self, PrefixFrames) and columns_of is event_columns:
            whole_builds.append(type(self).__name__)
        return original(self, columns_of, schema)

    monkeypatch.setattr(Frames, "_build", build)
    count = len(ledgerviz.load(path).sessions[0].events)
    assert_cuts_match(path, [count // 2, count - 1, count], tmp_path)
    assert len(whole_builds) == 1 + 2 * 3  # and each truncated file's, per policy


def test_the_fork_story_of_a_cut_gives_the_truncated_files_story(
        tmp_path: Path, rebuilt: list[str]) -> None:
    (path,) = write_scenario("crash-mid-dispatch", tmp_path / "crash.jsonl", turns=40)
    whole = ledgerviz.load(path)
    (log,) = whole.sessions
    cuts = fork_cuts(path)
    stories = 0
    for n in [*cuts, len(log.events)]:
        story = whole.cut(n, reuse=True).with_fork()
        expected = ledgerviz.load(truncated(path, log.lines, n, tmp_path / f"cut-{n}.jsonl"))
        want = expected.with_fork()
        assert (story is None) == (want is None)
        if story is None:
            continue
        stories += 1
        assert story.keys == want.keys
        for policy in POLICIES:
            got = story.recovery(policy).frames
            assert isinstance(got, JoinedFrames)
            for name in FRAME_NAMES:
                pd.testing.assert_frame_equal(getattr(got, name),
                                              getattr(want.recovery(policy).frames, name),
                                              obj=f"story at cut {n} {policy} {name}")
    assert stories >= 2
    assert not [n for n in rebuilt if n in SLICED_BUILDERS]


def test_the_story_of_a_cut_is_built_from_the_childs_own_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The explorer's fork story (the cut's rows, then the rows its child adds, built
    without the child's whole frames) equals the story of the truncated file's fork, read
    anew and built from scratch, at cuts around every fork point."""
    (path,) = write_scenario("large", tmp_path / "large.jsonl", turns=60)
    whole = ledgerviz.load(path)
    (log,) = whole.sessions
    types = [event.get("type") for event in log.events]
    dispatches = [i + 1 for i, kind in enumerate(types) if kind == "tool/call"]
    cuts = [*dispatches[::14], len(log.events)]  # cuts that leave a dispatched call open
    built: list[str] = []
    original = Frames._build

    def build(self: Frames, columns_of, schema):
        if isinstance(self, PrefixFrames) and len(self._analysis.events) > 30:
            built.append(columns_of.__name__)  # a whole frame of the child (or the cut)
        return original(self, columns_of, schema)

    monkeypatch.setattr(Frames, "_build", build)
    stories = 0
    for n in cuts:
        story = whole.cut(n, reuse=True).with_fork()
        if story is None:
            continue
        stories += 1
        expected = ledgerviz.load(truncated(path, log.lines, n, tmp_path / f"cut-{n}.jsonl"))
        want_frames = expected.with_fork().recovery("fork").frames
        pair = fork_pair(want_frames)
        frames = story.recovery("fork").frames
        assert isinstance(frames, ForkFrames) and frames.pair == pair == fork_pair(frames)
        child = frames._parts[1]
        got = frames.story()
        assert got is not None and frames.story() is got  # built once, then kept
        assert not [name for name in child.__dict__ if name in FRAME_NAMES]  # never built
        want = fork_story(want_frames, *pair).joined()
        for name in StoryFrames._fields:
            pd.testing.assert_frame_equal(getattr(got, name).frame(), getattr(want, name),
                                          obj=f"story at cut {n} {name}")
        assert len(got.events) > len(frames._parts[0].events)  # the child adds its events
    assert stories >= 5
    assert built == []


def test_the_fork_story_after_the_synthesize_view_is_sliced_from_its_frames(
        tmp_path: Path) -> None:
    """The explorer's path: the whole session drawn under synthesize, then the fork story of
    each cut around the fork point, whose frames are sliced from the synthesize frames (the
    whole session's fork-policy frames are never built) and equal the truncated file's fork
    story built from scratch."""
    (path,) = write_scenario("crash-mid-dispatch", tmp_path / "crash.jsonl", turns=40)
    whole = ledgerviz.load(path)
    (log,) = whole.sessions
    count = len(log.events)
    first = whole.cut(count, reuse=True).recovery("synthesize").frames.events  # as displayed
    assert len(first) > count  # the recorded events and the closers synthesize adds
    stories = 0
    for n in [*fork_cuts(path), count]:
        story = whole.cut(n, reuse=True).with_fork()
        expected = ledgerviz.load(truncated(path, log.lines, n, tmp_path / f"cut-{n}.jsonl"))
        want_ledger = expected.with_fork()
        assert (story is None) == (want_ledger is None)
        if story is None or want_ledger is None:
            continue
        stories += 1
        want_frames = want_ledger.recovery("fork").frames
        frames = story.recovery("fork").frames
        pair = fork_pair(want_frames)
        got, want = fork_story(frames, *pair).joined(), fork_story(want_frames, *pair).joined()
        for name in StoryFrames._fields:
            pd.testing.assert_frame_equal(getattr(got, name), getattr(want, name),
                                          obj=f"story at cut {n} {name}")
    assert stories >= 2
    assert whole._session_frames(log, "fork").frames.built("events") is None


def test_a_cut_is_not_sliced_from_another_policys_frames_that_share_fewer_events(
        tmp_path: Path) -> None:
    """A step that failed without results: synthesize records its results before the file's
    last events, so the fork policy's last cuts share fewer events with the synthesize
    frames than with its own; they are sliced from its own (never built from scratch)."""
    path = TESTS / "data" / "scheduler-failure-unrecovered.jsonl"
    whole = ledgerviz.load(path)
    (log,) = whole.sessions
    count = len(log.events)
    whole.cut(count, reuse=True).recovery("synthesize").frames.events  # noqa: B018
    cuts = [count - 1, count]
    for n in cuts:
        frames = whole.cut(n, reuse=True).recovery("fork").frames
        assert type(frames) is not Frames  # sliced, or the whole session's own
    assert_cuts_match(path, cuts, tmp_path)


class _ToolView:
    """A view's tool events as ``ToolPositions`` reads them: their positions and every seq."""

    def __init__(self, positions: list[int], seqs: list[int | None]) -> None:
        self.tools = np.array(positions, dtype=np.int64)
        self.seq_array = pd.array(seqs, dtype="Int64")

    def positions_of(self, kinds: frozenset[str]) -> np.ndarray:
        assert kinds == TOOL_EVENTS
        return self.tools


def test_tool_positions_find_each_tool_event_by_its_seq() -> None:
    """Tool events at positions 2, 5 and 7 with seqs 10, 12 and 11 (the others are not
    tool events) are found by seq; a seq no tool event has gives the default."""
    view = _ToolView([2, 5, 7], [0, 1, 10, 3, 4, 12, 6, 11])
    found = ToolPositions.of(view)  # type: ignore[arg-type]
    assert found is not None
    assert [found.get(seq, -9) for seq in (10, 11, 12, 3, 13, -1)] == [2, 7, 5, -9, -9, -9]


@pytest.mark.parametrize(("positions", "seqs"), [
    ([2, 5], [0, 1, 10, 3, 4, 10]),  # two tool events share seq 10
    ([2, 5], [0, 1, None, 3, 4, 12]),  # a tool event without an int seq
    ([], [0, 1]),  # no tool event
])
def test_tool_positions_are_none_where_a_seq_does_not_name_one_tool_event(
        positions: list[int], seqs: list[int | None]) -> None:
    """The prefix's calls are then built from scratch, as with the dict of every tool event
    the positions were before (which an unnumbered or shared seq emptied)."""
    assert ToolPositions.of(_ToolView(positions, seqs)) is None  # type: ignore[arg-type]


class _CallsView:
    """The calls of a view as ``_CallKey.positions`` reads them."""

    def __init__(self, turns: list[Any], steps: list[Any]) -> None:
        self.calls = SimpleNamespace(turn=turns, step=steps)

    def call_ints(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return int_values(getattr(self.calls, name))


@pytest.mark.parametrize(("key", "stop", "wanted", "expected"), [
    (_CALL_TURN, 8, {2, None}, [2, 3, 5]),
    (_CALL_TURN, 4, {2, None}, [2, 3]),  # only the calls before ``stop``
    (_CALL_TURN, 8, {"2"}, [6]),  # a turn that is not an int is compared as it is
    (_CALL_TURN, 8, {True}, [0, 1, 7]),  # as a set has it: True == 1
    (_CALL_TURN, 8, {1 << 70}, []),  # beyond int64: no int64 holds it
    (_CALL_STEP_KEY, 8, {(2, 1), (None, 1)}, [3, 5]),
    (_CALL_STEP_KEY, 8, {(1, 2)}, [1]),
])
def test_calls_are_found_by_key_as_a_scan_of_every_call_finds_them(
        key: Any, stop: int, wanted: set[Any], expected: list[int]) -> None:
    """Calls of turns 1, 1, 2, None, 3, 2, "2", 1 (steps 1, 2, 2, 1, 1, 1, 1, 3): the
    positions before ``stop`` whose key is in ``wanted`` (worked by hand)."""
    view = _CallsView([1, 1, 2, None, 3, 2, "2", 1], [1, 2, 2, 1, 1, 1, 1, 3])
    assert key.positions(view, stop, wanted) == expected


def test_a_table_read_from_a_position_or_at_positions_joins_only_the_parts_there() -> None:
    """A table of events with turns 1, 2, 3 (the first two kept) then 7, 8: read from
    position 1 and at positions 0, 3, -1, as the whole column reads, without making it."""
    events = [{"type": "turn/start", "seq": seq, "data": {"turn": turn}}
              for seq, turn in enumerate((1, 2, 3, 7, 8))]
    table = ViewTable.of_events(events[:3]).head_then(2, ViewTable.of_events(events[3:]))
    assert table.column_from("turn", 2).tolist() == [7, 8]
    assert table.column_from("turn", 1).tolist() == [2, 7, 8]
    assert table.take("turn", np.array([0, 3, -1])).tolist() == [1, 8, 8]
    assert table.take("turn", np.array([], dtype=np.int64)).tolist() == []
    assert table.column("turn").tolist() == [1, 2, 7, 8]  # made now, then read from it
    assert table.column_from("turn", 1).tolist() == [2, 7, 8]
    assert table.take("turn", [2]).tolist() == [7]


@pytest.mark.parametrize(("fields", "rows", "calls", "expected"), [
    (("turn",), {"turn": [1, 2, 3]}, {"turn": [2, 2, 5, 1]}, [1, 1, -1, 0]),
    (("turn", "step"), {"turn": [1, 1, 2], "step": [1, 2, 1]},
     {"turn": [1, 2, 2], "step": [2, 1, 2]}, [1, 2, -1]),
    (("turn",), {"turn": [1, 1]}, {"turn": [1]}, None),  # two rows share a key
    (("turn",), {"turn": [1, None]}, {"turn": [1]}, None),  # a key that is not an int
    (("turn",), {"turn": [1]}, {"turn": [None]}, None),
    (("turn", "step"), {"turn": [1 << 31], "step": [1]}, {"turn": [1], "step": [1]}, None),
])
def test_every_calls_row_is_found_by_numpy_where_every_key_is_an_int(
        fields: tuple[str, ...], rows: dict[str, list[Any]], calls: dict[str, list[Any]],
        expected: list[int] | None) -> None:
    """The row each call is counted in (-1: none), worked by hand; None where the rows
    must be looked up one by one (``Rows.rows_of``)."""
    count = len(rows["turn"])
    table = Rows(arrays_of({"session": [0] * count, **rows, "last": list(range(count))}))
    view = _CallsView(calls["turn"], calls.get("step", [None] * len(calls["turn"])))
    found = int_call_rows(_SizedCalls(view), table, fields)  # type: ignore[arg-type]
    assert (None if found is None else found.tolist()) == expected


class _SizedCalls:
    """A ``_CallsView`` whose calls have a length."""

    def __init__(self, view: _CallsView) -> None:
        self.calls = [None] * len(view.calls.turn)
        self.call_ints = view.call_ints
