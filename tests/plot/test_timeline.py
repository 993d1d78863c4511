"""Timeline structure on real ledgers: lanes, call bars, abandoned items and fork marker
match what the frames and the recovery analysis say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import ledgerviz
from ledgerviz.examples import example_paths
from ledgerviz.plot import detail, style, timeline
from ledgerviz.plot.axis import epoch_ms
from ledgerviz.plot.groups import Groups
from ledgerviz.plot.traces import compact
from ledgerviz.recovery.analysis import POLICIES

TESTS = Path(__file__).resolve().parents[1]
DSH = sorted((TESTS / "data" / "dsh").glob("*.jsonl"))
HOSTILE = TESTS / "browser" / "data" / "hostile.v4.jsonl"
SHOWCASE = next(p for p in DSH if "preview-showcase" in p.name)
SEMANTIC = next(p for p in DSH if "semantic-checkpoint" in p.name)
LEDGERS = [*DSH, HOSTILE]


def lanes(figure: go.Figure) -> dict[float, str]:
    """Lane value -> lane name, from the y axis ticks."""
    axis = figure.layout.yaxis
    return dict(zip(axis.tickvals, axis.ticktext, strict=True))


def lane_of(figure: go.Figure, trace: Any) -> str:
    lowest = float(np.nanmin(np.asarray(trace.y, dtype=float)))
    return lanes(figure).get(round(lowest), "across lanes")


def items(trace: Any) -> int:
    """Bars are start/end/gap triples; markers are one point each."""
    return len(trace.x) // 3 if trace.mode != "markers" else len(trace.x)


def starts(trace: Any) -> np.ndarray:
    x = np.asarray(trace.x, dtype=float)
    return x[0::3] if trace.mode != "markers" else x


def call_items(figure: go.Figure, status: str, lane: str, *, bars: bool) -> list[Any]:
    return [t for t in figure.data if t.legendgroup == status and lane_of(figure, t) == lane
            and (t.mode != "markers") == bars]


def ledger_ids(paths: list[Path]) -> list[str]:
    return [p.name.split("__")[-1] for p in paths]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("path", LEDGERS, ids=ledger_ids(LEDGERS))
def test_call_bars_and_markers_match_the_calls_frame(path: Path, policy: str) -> None:
    ledger = ledgerviz.load(path)
    calls = ledger.recovery(policy).frames.calls
    figure = timeline(ledger, policy=policy, axis="order")
    for status in style.STATUS_ORDER:
        for lane, abandoned in ((style.LANE_CALLS, False), (style.LANE_ABANDONED_CALLS, True)):
            mine = calls[(calls["status"] == status) & ((calls["branch"] == "abandoned")
                                                        == abandoned)]
            ran = mine[mine["dispatched_seq"].notna()]
            bar_traces = call_items(figure, status, lane, bars=True)
            assert sum(items(t) for t in bar_traces) == len(ran)
            drawn = np.sort(np.concatenate([starts(t) for t in bar_traces] or [np.array([])]))
            assert drawn.tolist() == sorted(ran["dispatched_seq"].astype(float))
            waiting = mine[mine["dispatched_seq"].isna()]
            marker_traces = call_items(figure, status, lane, bars=False)
            assert sum(items(t) for t in marker_traces) == len(waiting)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("path", LEDGERS, ids=ledger_ids(LEDGERS))
def test_lanes_turns_steps_and_abandoned_items(path: Path, policy: str) -> None:
    ledger = ledgerviz.load(path)
    frames = ledger.recovery(policy).frames
    figure = timeline(ledger, policy=policy, axis="order")
    names = list(lanes(figure).values())
    assert names[:4] == [style.LANE_TURNS, style.LANE_STEPS, style.LANE_EVENTS, style.LANE_CALLS]
    abandoned_events = int((frames.events["branch"] == "abandoned").sum())
    abandoned_calls = int((frames.calls["branch"] == "abandoned").sum())
    assert (style.LANE_ABANDONED_EVENTS in names) == (abandoned_events > 0)
    assert (style.LANE_ABANDONED_CALLS in names) == (abandoned_calls > 0)

    def drawn(lane: str) -> int:
        return sum(items(t) for t in figure.data if lane_of(figure, t) == lane
                   and not t.name.startswith("fork point"))

    assert drawn(style.LANE_TURNS) == len(frames.turns)
    assert drawn(style.LANE_STEPS) == len(frames.steps)
    if abandoned_events:
        assert drawn(style.LANE_ABANDONED_EVENTS) == abandoned_events
    if abandoned_calls:
        assert drawn(style.LANE_ABANDONED_CALLS) == abandoned_calls
    placed = frames.events[frames.events["seq"].notna() & (frames.events["branch"] != "abandoned")]
    assert drawn(style.LANE_EVENTS) == len(placed)


def test_hostile_crash_forks_at_the_assistant_message_of_the_dispatched_call() -> None:
    # seq 8 is the assistant message asking for call-2 (dispatched at seq 9, never answered)
    # and call-3 (never dispatched); seq 10 is a trailing unknown event.
    ledger = ledgerviz.load(HOSTILE)
    key = ledger.keys[0]
    fork = ledger.recovery("fork")
    assert fork.analyses[key].fork_points == [8]
    figure = timeline(ledger, policy="fork", axis="order")
    marker = next(t for t in figure.data if t.name.startswith("fork point"))
    assert starts(marker).tolist() == [8.0]
    abandoned = fork.frames.events.loc[fork.frames.events["branch"] == "abandoned", "seq"]
    assert sorted(abandoned.astype(int)) == fork.analyses[key].abandoned_seqs == [8]
    lane = next(t for t in figure.data if t.name == style.LEGEND_ABANDONED)
    assert starts(lane).tolist() == [8.0]
    # the fork policy appends nothing to the parent: its turn stays open, and the shaded
    # abandoned span runs to the end of call-2's bar, the last event (no result)
    assert pd.isna(fork.frames.turns.set_index("turn").loc[1, "end_seq"])
    shaded = [(s.x0, s.x1) for s in figure.layout.shapes if s.fillcolor == style.ABANDONED_FILL]
    assert shaded == [(8.0, 10.0)]
    bar = next(t for t in figure.data if t.legendgroup == "outcome_unknown")
    assert np.asarray(bar.x, dtype=float)[:2].tolist() == [9.0, 10.0]
    calls = fork.frames.calls.set_index("call_id")
    assert calls.loc["call-2", "status"] == "outcome_unknown"
    assert calls.loc["call-3", "status"] == "not_started"
    assert set(calls.index[calls["branch"] == "abandoned"]) == {"call-2", "call-3"}


@pytest.mark.parametrize("policy", ["recorded", "synthesize"])
def test_no_fork_marker_without_fork_points(policy: str) -> None:
    ledger = ledgerviz.load(SHOWCASE)
    assert ledger.recovery(policy).analyses[ledger.keys[0]].fork_points == []
    figure = timeline(ledger, policy=policy)
    assert not [t for t in figure.data if t.name.startswith("fork point")]


def test_time_axis_places_calls_at_their_recorded_times() -> None:
    ledger = ledgerviz.load(SHOWCASE)
    calls = ledger.frames.calls
    figure = timeline(ledger, policy="recorded", axis="time")
    assert figure.layout.xaxis.type == "date"
    # the file records ten dispatched calls; one result is an ENOENT error
    assert calls["status"].value_counts()[["ok", "error"]].tolist() == [9, 1]
    for status in ("ok", "error"):
        bars = call_items(figure, status, style.LANE_CALLS, bars=True)
        mine = calls[calls["status"] == status]
        drawn = np.sort(np.concatenate([starts(t) for t in bars]))
        assert drawn.tolist() == sorted(epoch_ms(mine["dispatch_time"]).tolist())
        ends = np.sort(np.concatenate([np.asarray(t.x, dtype=float)[1::3] for t in bars]))
        assert ends.tolist() == sorted(epoch_ms(mine["result_time"]).tolist())
    assert figure.layout.xaxis.title.text == "time (UTC)"


def test_positions_go_to_the_browser_as_float32_only_where_it_holds_them_exactly() -> None:
    seqs = compact(np.array([0.0, 12.0, np.nan, 1_020_671.0]))
    assert seqs.dtype == np.float32
    assert seqs.tolist()[:2] == [0.0, 12.0] and np.isnan(seqs[2]) and seqs[3] == 1_020_671
    assert compact(np.array([1_773_832_865_441.0, np.nan])).dtype == np.float64  # epoch ms
    assert compact(np.array([4.15])).dtype == np.float64
    ledger = ledgerviz.load(SHOWCASE)
    kinds = {axis: {trace.x.dtype for trace in
                    timeline(ledger, policy="recorded", axis=axis).data}
             for axis in ("order", "time")}
    assert kinds == {"order": {np.dtype(np.float32)}, "time": {np.dtype(np.float64)}}


def test_order_axis_and_auto_for_ledgers_without_times() -> None:
    ledger = ledgerviz.load(SEMANTIC)
    assert ledger.frames.events["time"].isna().all()
    auto = timeline(ledger, policy="synthesize")
    assert auto.layout.xaxis.type == "linear"
    assert auto.layout.xaxis.title.text == "event seq"
    with pytest.raises(ValueError, match="no event times"):
        timeline(ledger, policy="synthesize", axis="time")


def test_synthesize_draws_recovery_closers_as_synthetic_events() -> None:
    ledger = ledgerviz.load(HOSTILE)
    events = ledger.recovery("synthesize").frames.events
    synthetic = events[events["synthetic"].fillna(False).astype(bool) & events["seq"].notna()]
    # closers: results for call-2 and call-3, step/end, turn/end, after seq 10
    assert sorted(synthetic["seq"].astype(int)) == [11, 12, 13, 14]
    figure = timeline(ledger, policy="synthesize", axis="order")
    trace = next(t for t in figure.data if t.name.startswith("added by recovery"))
    assert sorted(starts(trace).tolist()) == [11.0, 12.0, 13.0, 14.0]


def test_title_names_session_and_policy_escaped() -> None:
    ledger = ledgerviz.load(HOSTILE)
    title = timeline(ledger, policy="fork").layout.title.text
    assert "policy: fork" in title
    # plotly decodes &lt; &gt; &amp; but not &quot;: quotes stay as they are (no tag can form)
    assert 'hostile&lt;img src=x onerror="window.__pwned=1;alert(1)"&gt;' in title
    assert "<img" not in title


def test_title_counts_in_the_singular_and_the_plural() -> None:
    # worked out from the files: the hostile ledger has 11 recorded events (seq 0-10) in one
    # turn, and 3 calls: read_file answered, fetch dispatched without a result, write never
    # dispatched; the crash-mid-dispatch example has 22 events (seq 0-21) in 2 turns and 6
    # calls: edit, read and the first read of turn 2 answered, grep dispatched without a
    # result, the second read and web_fetch never dispatched
    hostile = timeline(ledgerviz.load(HOSTILE), policy="fork").layout.title.text
    assert hostile.endswith("<sup>1 turn · 11 events · 3 tool calls "
                            "(1 ok, 1 outcome unknown, 1 not started)</sup>")
    crashed = next(p for p in example_paths() if p.name == "crash-mid-dispatch.jsonl")
    two = timeline(ledgerviz.load(crashed), policy="fork").layout.title.text
    assert two.endswith("<sup>2 turns · 22 events · 6 tool calls "
                        "(3 ok, 1 outcome unknown, 2 not started)</sup>")


def ledger_strings(value: Any) -> list[str]:
    """Every string anywhere in a figure's JSON-ready dict."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in ledger_strings(v)]
    if isinstance(value, list | tuple | np.ndarray):
        return [s for v in value for s in ledger_strings(v)]
    return []


@pytest.mark.parametrize("policy", POLICIES)
def test_hostile_text_is_escaped_in_the_figure(policy: str) -> None:
    figure = timeline(ledgerviz.load(HOSTILE), policy=policy)
    strings = ledger_strings(figure.to_plotly_json())
    joined = "\n".join(strings).lower()
    for raw in ("<script", "<img", "<a ", "&quot;"):
        assert raw not in joined
    assert "&lt;script&gt;window.__pwned=1;alert(1)&lt;/script&gt;" in joined
    assert "read_file&lt;script&gt;" in joined
    assert "javascript:window.__pwned=1" in joined  # present, but only as escaped text


def bin_counts(trace: Any) -> list[int]:
    """The item count each bin's hover label states (``<b>N what</b>``)."""
    return [int(h.split("<b>")[1].split(" ")[0]) for h in trace.hovertext if h]


def test_lanes_above_the_detail_limit_are_drawn_in_bins() -> None:
    ledger = ledgerviz.load(SHOWCASE)
    frames = ledger.frames
    figure = timeline(ledger, policy="recorded", axis="order", detail_limit=5)
    ok = frames.calls[(frames.calls["status"] == "ok") & frames.calls["dispatched_seq"].notna()]
    assert len(ok) > 5
    grouped = next(t for t in figure.data if t.name.endswith("(grouped)")
                   and t.legendgroup == "ok")
    assert sum(bin_counts(grouped)) == len(ok)
    assert items(grouped) <= detail.BINS
    x = np.asarray(grouped.x, dtype=float)
    assert x[0::3].min() == ok["dispatched_seq"].min()
    assert (x[0::3] <= x[1::3]).all()
    active = frames.events[(frames.events["branch"] == "active")
                           & ~frames.events["synthetic"].fillna(False).astype(bool)]
    events = next(t for t in figure.data if t.name == f"{style.LEGEND_EVENT} (grouped)")
    assert sum(bin_counts(events)) == len(active)
    assert starts(events).min() == active["seq"].min()
    assert np.asarray(events.x, dtype=float)[1::3].max() == active["seq"].max()
    for trace in figure.data:  # every lane part of this ledger has more than 5 items or few
        assert items(trace) <= max(5, detail.BINS)


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("counted", [detail.PAIRS_COUNTED, 0])
def test_bins_split_the_extent_into_equal_slices(shuffled: bool, counted: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(detail, "PAIRS_COUNTED", counted)  # 0: the names are sorted instead
    order = np.random.default_rng(7).permutation(1000) if shuffled else np.arange(1000)
    starts_ = np.arange(1000, dtype=float)[order]
    seqs = np.arange(1000, dtype=float)[order]
    names = pd.Series(["read_file", "grep"] * 500)[order]
    if shuffled:  # and an item without a position, which no bin holds
        starts_, seqs, names = np.r_[starts_, np.nan], np.r_[seqs, 5000], pd.concat(
            [names, pd.Series(["lost"])])
    level = detail.binned(starts_, starts_ + 0.5, seqs, names, "calls", bins=10)
    assert level.binned
    # the extent 0..999 in 10 slices of width 99.9: items 0-99 fall in the first slice, etc.
    assert level.starts.tolist() == [0, 100, 200, 300, 400, 500, 600, 700, 800, 900]
    assert level.ends.tolist() == [99.5, 199.5, 299.5, 399.5, 499.5, 599.5, 699.5, 799.5,
                                   899.5, 999.5]
    assert level.labels[0].startswith("<b>100 calls</b> · seqs 0–99<br>grep, read_file")


def test_at_or_below_the_limit_every_item_is_drawn() -> None:
    xs = np.array([3.0, 4.0, 9.0])
    labels = np.array(["item 3", "item 4", "item 9"], dtype=object)
    names = np.array(["grep", "grep", "read_file"], dtype=object)
    rows = np.array([0, 2])
    every = np.ones(3, dtype=bool)
    (level,) = detail.levels(rows, every, None, xs, xs, labels, xs, names, what="calls",
                             note="n")
    assert not level.binned and list(level.labels) == ["item 3", "item 9"]
    assert level.starts.tolist() == [3.0, 9.0]
    (level,) = detail.levels(rows, ~every, None, xs, xs, labels, xs, names, what="calls",
                             note="n")
    assert level.binned and level.labels[0].startswith("<b>1 calls</b> · seqs 3–3<br>grep")


def test_rows_of_no_session_and_sessions_without_a_range_lie_before_every_view() -> None:
    # x 0..5; rows 1 and 4 belong to no session drawn (code -1); the view 1.5..3.5
    xs = np.arange(6, dtype=float)
    codes = np.array([0, -1, 0, 0, -1, 0])
    sides = detail.view_sides(xs, xs, codes, [(1.5, 3.5)])
    assert sides is not None and sides.tolist() == [-1, -1, 0, 0, -1, 1]
    # two sessions, the second without a range: its rows count as before it
    two = detail.view_sides(xs, xs, np.array([0, 1, 0, 0, 1, 0]), [(1.5, 3.5), None])
    assert two is not None and two.tolist() == [-1, -1, 0, 0, -1, 1]
    assert detail.view_sides(xs, xs, codes, [None]) is None


def test_items_in_view_are_drawn_one_by_one_and_the_rest_in_bins() -> None:
    # items 0..9 at x 0..9 of one session; the view 2.5..5.5 holds items 3, 4 and 5
    xs = np.arange(10, dtype=float)
    codes = np.zeros(10, dtype=np.int64)
    sides = detail.view_sides(xs, xs, codes, [(2.5, 5.5)])
    assert sides is not None and sides.tolist() == [-1, -1, -1, 0, 0, 0, 1, 1, 1, 1]
    visible = sides == 0
    groups = Groups(codes, np.zeros(10, dtype=np.int64), 1, 1)
    single = groups.one_by_one(3, visible)  # 10 items > 3, but 3 in view <= 3
    assert np.flatnonzero(single).tolist() == [3, 4, 5]
    labels = np.array([f"item {i}" for i in range(10)], dtype=object)
    names = np.array(["grep"] * 10, dtype=object)
    one, grouped = detail.levels(np.arange(10), single, sides, xs, xs, labels, xs, names,
                                 what="calls", note="n")
    assert list(one.labels) == ["item 3", "item 4", "item 5"] and not one.binned
    assert grouped.binned and sum(int(h.split("<b>")[1].split(" ")[0])
                                  for h in grouped.labels) == 7
    assert np.flatnonzero(groups.one_by_one(2, visible)).tolist() == []  # 3 in view > 2


def test_frames_of_other_sessions_are_left_out() -> None:
    ledger = ledgerviz.load([SHOWCASE, HOSTILE])
    assert len(ledger.keys) == 2
    figure = timeline(ledger, policy="fork", session=1, axis="order")
    only = ledger.session(1).recovery("fork").frames
    assert sum(items(t) for t in figure.data if lane_of(figure, t) == style.LANE_TURNS) == len(
        only.turns)
    assert pd.Series(only.calls["session"]).unique().tolist() == [ledger.keys[1]]


def test_parallel_calls_of_a_step_get_their_own_rows() -> None:
    from ledgerviz.examples import example_path

    ledger = ledgerviz.load(example_path("clean"))
    calls = ledger.frames.calls
    figure = timeline(ledger, policy="recorded", axis="order")
    row_of: dict[float, float] = {}
    for trace in call_items(figure, "ok", style.LANE_CALLS, bars=True):
        x, y = np.asarray(trace.x, dtype=float), np.asarray(trace.y, dtype=float)
        row_of.update(zip(x[0::3].tolist(), y[0::3].tolist(), strict=True))
    per_step = calls.groupby(["turn", "step"])["dispatched_seq"].apply(list)
    assert max(len(seqs) for seqs in per_step) >= 2  # the example does run calls in parallel
    for seqs in per_step:
        rows = [row_of[float(s)] for s in seqs]
        assert len(set(rows[:3])) == min(len(rows), 3)


def test_lazy_top_level_export() -> None:
    assert ledgerviz.timeline is timeline


def test_one_session_ledger_reuses_its_cached_recovery(monkeypatch: pytest.MonkeyPatch) -> None:
    view = ledgerviz.load(SHOWCASE)
    expected = view.recovery("fork")
    figure_before = timeline(view, policy="fork")

    def no_second_analysis(*_args: Any) -> None:
        raise AssertionError("the session was analysed again")

    monkeypatch.setattr("ledgerviz.api._analyze", no_second_analysis)
    figure = timeline(view, policy="fork", session=view.keys[0])
    assert view.recovery("fork") is expected
    assert figure.to_json() == figure_before.to_json()


def test_many_sessions_in_one_pass_match_each_drawn_alone() -> None:
    from ledgerviz.plot.timeline import session_timeline_specs, timeline_spec

    ledger = ledgerviz.load([*example_paths(), HOSTILE])
    recovery = ledger.recovery("fork")
    specs = session_timeline_specs(
        recovery.frames, ledger.keys, policy="fork", detail_limit=6,
        fork_points={k: a.fork_points for k, a in recovery.analyses.items()})
    assert len(specs) == len(ledger.keys)
    for key, spec in zip(ledger.keys, specs, strict=True):
        alone = ledger.session(key).recovery("fork")
        turns = [t for t in spec["data"] if t["name"].startswith("turn")]
        grouped = ["(grouped)" in t["name"] for t in turns]
        if len(alone.frames.turns) <= 6:  # every turn drawn one by one, once
            assert not any(grouped)
            assert sum(len(t["x"]) // 3 for t in turns) == len(alone.frames.turns)
        else:
            assert any(grouped)
        turns_text = re.search(r"<sup>(\d+) turns? · ", spec["layout"]["title"]["text"])
        assert turns_text and int(turns_text.group(1)) == len(alone.frames.turns)
        single = timeline_spec(alone.frames, session=key, policy="fork", detail_limit=6,
                               fork_points=alone.analyses[key].fork_points)
        assert go.Figure(spec).to_json() == go.Figure(single).to_json()
