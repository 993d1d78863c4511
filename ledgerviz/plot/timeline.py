"""The turn timeline: turns, steps, events and tool calls of one session under one policy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from ledgerviz.html import plotly_text
from ledgerviz.plot import hover, style
from ledgerviz.plot.axis import Axis, Locator, resolve_axis
from ledgerviz.plot.static import StaticFallbackFigure
from ledgerviz.plot.story import fork_pair, fork_story
from ledgerviz.plot.traces import bars, interleave, markers
from ledgerviz.recovery.analysis import DEFAULT_POLICY, Policy

if TYPE_CHECKING:
    from ledgerviz.api import Ledger

DETAIL_LIMIT = 10_000
PARALLEL_ROWS = 3
ROW_OFFSET = 0.24
TURN_BANDS_LIMIT = 150
LANE_HEIGHT = 70


class SessionFrames(Protocol):
    """The frames of one session that the timeline draws (columns as in docs/architecture.md)."""

    events: pd.DataFrame
    turns: pd.DataFrame
    steps: pd.DataFrame
    calls: pd.DataFrame


def _lanes(events: pd.DataFrame, calls: pd.DataFrame) -> dict[str, int]:
    names = [style.LANE_TURNS, style.LANE_STEPS, style.LANE_EVENTS, style.LANE_CALLS]
    if (events["branch"] == "abandoned").any():
        names.append(style.LANE_ABANDONED_EVENTS)
    if (calls["branch"] == "abandoned").any():
        names.append(style.LANE_ABANDONED_CALLS)
    return {name: len(names) - i for i, name in enumerate(names)}


def _turn_traces(turns: pd.DataFrame, at: Locator, y: int) -> list[dict[str, Any]]:
    finished = turns["end_reason"].astype("string").fillna("") == "completed"
    traces = []
    for mask, name, color in (
        (finished, style.LEGEND_TURN_DONE, style.TURN_COLOR),
        (~finished, style.LEGEND_TURN_OPEN, style.TURN_UNFINISHED_COLOR),
    ):
        part = turns[mask]
        if len(part):
            traces.append(bars(name, at.at(part["start_seq"]), at.at_or_end(part["end_seq"]), y,
                               hover.turn_hover(part), color, width=22))
    return traces


def _event_traces(events: pd.DataFrame, at: Locator, lanes: dict[str, int],
                  detail_limit: int) -> list[dict[str, Any]]:
    abandoned = events["branch"] == "abandoned"
    synthetic = events["synthetic"].fillna(False).astype(bool) & ~abandoned
    plain = events[~abandoned & ~synthetic]
    y = lanes[style.LANE_EVENTS]
    traces = []
    if len(plain) > detail_limit:
        firsts, labels = _grouped_per_turn(plain, plain["seq"], "type", "events")
        traces.append(markers("events (grouped per turn)", at.at(firsts), y, labels,
                              style.EVENT_COLOR, size=7))
    else:
        active = plain["branch"] == "active"
        for mask, name, color in ((active, style.LEGEND_EVENT, style.EVENT_COLOR),
                                  (~active, style.LEGEND_LOG_EVENT, style.LOG_EVENT_COLOR)):
            part = plain[mask]
            if len(part):
                traces.append(markers(name, at.at(part["seq"]), y, hover.event_hover(part),
                                      color, size=7))
    for mask, name, color, symbol, lane in (
        (synthetic, style.LEGEND_SYNTHETIC, style.SYNTHETIC_COLOR, "diamond", style.LANE_EVENTS),
        (abandoned, style.LEGEND_ABANDONED, style.ABANDONED_COLOR, "square",
         style.LANE_ABANDONED_EVENTS),
    ):
        part = events[mask]
        if len(part):
            traces.append(markers(name, at.at(part["seq"]), lanes[lane],
                                  hover.event_hover(part), color, symbol=symbol, size=10))
    return traces


def _grouped_per_turn(rows: pd.DataFrame, starts: Any, name_column: str,
                      what: str) -> tuple[pd.Series, list[str]]:
    """Return, per turn of ``rows``, the smallest of ``starts`` and an aggregate hover label."""
    turns = rows["turn"].astype("Int64").fillna(-1).to_numpy()
    firsts = pd.Series(starts, dtype="Float64").groupby(turns, sort=True).min()
    names: dict[int, list[str]] = {}
    counts: dict[int, int] = {}
    for (turn, name), size in rows.groupby([turns, rows[name_column].astype("string")],
                                           sort=True).size().items():
        names.setdefault(turn, []).append(name)
        counts[turn] = counts.get(turn, 0) + int(size)
    labels = [hover.group_hover(what, turn if turn >= 0 else None, counts[turn], names[turn])
              for turn in firsts.index]
    return firsts, labels


def _aggregate_calls(calls: pd.DataFrame, starts: Any, ends: Any) -> tuple[Any, Any, list[str]]:
    firsts, labels = _grouped_per_turn(calls, starts, "tool", "ok calls")
    turns = calls["turn"].astype("Int64").fillna(-1).to_numpy()
    lasts = pd.Series(ends, dtype="Float64").groupby(turns, sort=True).max()
    return firsts.to_numpy(dtype=float), lasts.to_numpy(dtype=float), labels


def _rows_within_step(calls: pd.DataFrame) -> np.ndarray:
    """Return a y offset per call so that the calls of one step (which may run in parallel)
    sit on up to :data:`PARALLEL_ROWS` rows of their lane instead of hiding each other."""
    order = calls.groupby(["turn", "step"], dropna=False, sort=False).cumcount().to_numpy()
    return ((order % PARALLEL_ROWS) - (PARALLEL_ROWS - 1) / 2) * -ROW_OFFSET


def _call_end_seqs(calls: pd.DataFrame, turns: pd.DataFrame) -> pd.Series:
    """Return where each call's bar ends: its result, else the end of its turn (else NA,
    which the locator turns into the session's last position)."""
    turn_end = turns.drop_duplicates("turn").set_index("turn")["end_seq"]
    fallback = calls["turn"].map(turn_end).astype("Int64")
    return calls["result_seq"].astype("Int64").fillna(fallback)


def _call_traces(calls: pd.DataFrame, turns: pd.DataFrame, at: Locator, lanes: dict[str, int],
                 detail_limit: int) -> list[dict[str, Any]]:
    traces = []
    shown_in_legend: set[str] = set()
    offsets = pd.Series(_rows_within_step(calls), index=calls.index)
    for status in style.STATUS_ORDER:
        for branch, lane, opacity in (("active", style.LANE_CALLS, 1.0),
                                      ("abandoned", style.LANE_ABANDONED_CALLS, 0.8)):
            part = calls[(calls["status"] == status) & ((calls["branch"] == "abandoned")
                                                        == (branch == "abandoned"))]
            if not len(part):
                continue
            dispatched = part["dispatched_seq"].notna()
            label = style.STATUS_LEGEND[status]
            color = style.STATUS_COLOR[status]
            common = {"legendgroup": status, "opacity": opacity}
            ran = part[dispatched]
            if len(ran):
                starts = at.at(ran["dispatched_seq"])
                ends = at.at_or_end(_call_end_seqs(ran, turns))
                rows = lanes[lane] + offsets[ran.index].to_numpy()
                if status == "ok" and branch == "active" and len(ran) > detail_limit:
                    starts, ends, labels = _aggregate_calls(ran, starts, ends)
                    name, rows = f"{label} (grouped per turn)", lanes[lane]
                else:
                    labels, name = hover.call_hover(ran), label
                traces.append(bars(name, starts, ends, rows, labels, color, width=9,
                                   end_markers=True, showlegend=status not in shown_in_legend,
                                   **common))
                shown_in_legend.add(status)
            waiting = part[~dispatched]
            if len(waiting):
                traces.append(markers(label, at.at(waiting["requested_seq"]),
                                      lanes[lane] + offsets[waiting.index].to_numpy(),
                                      hover.call_hover(waiting), color, symbol="x", size=12,
                                      showlegend=status not in shown_in_legend, **common))
                shown_in_legend.add(status)
    return traces


def _fork_trace(fork_points: Sequence[int], at: Locator, top: int) -> dict[str, Any]:
    xs = at.at(pd.Series(list(fork_points), dtype="Int64"))
    labels = [f"<b>fork point</b> · seq {seq}<br>the model's context ends before this event;"
              "<br>everything from here on is abandoned" for seq in fork_points]
    trace = bars(style.LEGEND_FORK, xs, xs, 0, labels, style.FORK_COLOR,
                 width=2)
    trace["y"] = interleave(np.full(len(xs), 0.4), np.full(len(xs), top + 0.6))
    trace["line"]["dash"] = "dash"
    return trace


def _abandoned_spans(frames: SessionFrames, fork_points: Sequence[int],
                     at: Locator) -> list[tuple[float, float]]:
    """Return, per fork point, the x span from it to the last abandoned item it starts."""
    events, calls = frames.events, frames.calls
    lost_calls = calls[calls["branch"] == "abandoned"]
    positions = np.concatenate([
        at.at(events.loc[events["branch"] == "abandoned", "seq"]),
        at.at_or_end(_call_end_seqs(lost_calls, frames.turns)),
    ])
    starts = at.at(pd.Series(sorted(fork_points), dtype="Int64"))
    uppers = np.append(starts, np.inf)[1:]
    spans = []
    for start, upper in zip(starts, uppers, strict=True):
        inside = positions[(positions >= start) & (positions < upper)]
        if not np.isnan(start):
            spans.append((start, float(inside.max()) if len(inside) else start))
    return spans


def _band(x0: float, x1: float, fill: str) -> dict[str, Any]:
    """Return a full-height background rectangle from ``x0`` to ``x1``."""
    return {"type": "rect", "xref": "x", "yref": "paper", "x0": x0, "x1": x1, "y0": 0, "y1": 1,
            "fillcolor": fill, "line": {"width": 0}, "layer": "below"}


def _shapes(frames: SessionFrames, fork_points: Sequence[int], at: Locator) -> list[dict]:
    """Return the background bands: every other turn, and each fork's abandoned span."""
    turns = frames.turns
    shapes = []
    if len(turns) <= TURN_BANDS_LIMIT:
        starts, ends = at.at(turns["start_seq"]), at.at_or_end(turns["end_seq"])
        for i, (x0, x1) in enumerate(zip(starts, ends, strict=True)):
            if i % 2 == 0 and not (np.isnan(x0) or np.isnan(x1)):
                shapes.append(_band(x0, x1, style.BAND_FILL))
    shapes += [_band(x0, x1, style.ABANDONED_FILL)
               for x0, x1 in _abandoned_spans(frames, fork_points, at)]
    return shapes


def _subtitle(frames: SessionFrames) -> str:
    """Return the facts line: counts, saying how many events recovery added."""
    counts = frames.calls["status"].value_counts()
    parts = ", ".join(f"{int(counts[s])} {s.replace('_', ' ')}" for s in style.STATUS_ORDER
                      if counts.get(s, 0))
    added = int((~frames.events["recorded"].fillna(True).astype(bool)).sum())
    events = f"{len(frames.events)} events" + (f" ({added} added by recovery)" if added else "")
    calls = f"{len(frames.calls)} tool calls" + (f" ({parts})" if parts else "")
    return f"{len(frames.turns)} turns · {events} · {calls}"


def _title(frames: SessionFrames, session: str | None, policy: str) -> str:
    """Return the title: session (unless the page around already names it), policy, facts."""
    head = f"Session {plotly_text(session, 120)} · " if session is not None else ""
    return f"{head}policy: {plotly_text(policy)}<br><sup>{_subtitle(frames)}</sup>"


def timeline_figure(
    frames: SessionFrames,
    *,
    session: str,
    policy: str,
    fork_points: Sequence[int] = (),
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
    name_session: bool = True,
) -> StaticFallbackFigure:
    """Return the timeline figure of one session's frames.

    Lanes from top to bottom: turns, steps, events, tool calls, and (when present) the
    abandoned events and calls. Call bars run from dispatch to result, coloured by status.
    Above ``detail_limit`` items, ok calls and plain events are grouped per turn. The title
    names the session unless ``name_session`` is False (a page that already names it).
    The figure fills the width it is given and carries a static fallback in notebooks.
    """
    concrete = resolve_axis(frames.events, axis, session)
    at = Locator(frames.events, concrete)
    lanes = _lanes(frames.events, frames.calls)
    traces = [
        *_turn_traces(frames.turns, at, lanes[style.LANE_TURNS]),
        bars("step", at.at(frames.steps["start_seq"]), at.at_or_end(frames.steps["end_seq"]),
             lanes[style.LANE_STEPS], hover.step_hover(frames.steps), style.STEP_COLOR,
             width=14, showlegend=False),
        *_event_traces(frames.events, at, lanes, detail_limit),
        *_call_traces(frames.calls, frames.turns, at, lanes, detail_limit),
    ]
    if fork_points:
        traces.append(_fork_trace(fork_points, at, max(lanes.values())))
    figure = StaticFallbackFigure(data=traces)
    figure.update_layout(
        title={"text": _title(frames, session if name_session else None, policy),
               "x": 0.01},
        height=170 + LANE_HEIGHT * len(lanes),
        autosize=True,
        margin={"l": 130, "r": 20, "t": 80, "b": 40},
        template="plotly_white",
        font={"family": style.FONT, "size": 12},
        hovermode="closest",
        hoverlabel={"align": "left"},
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0,
                "x": 0, "font": {"size": 11}},
        shapes=_shapes(frames, fork_points, at),
    )
    figure.update_yaxes(tickvals=list(lanes.values()), ticktext=list(lanes),
                        range=[0.4, max(lanes.values()) + 0.6], showgrid=False, zeroline=False,
                        fixedrange=True)
    figure.update_xaxes(title_text="time (UTC)" if concrete == "time" else "event seq",
                        type="date" if concrete == "time" else "linear", showgrid=True,
                        gridcolor="#eef1f4")
    return figure


def _one_session(ledger: Ledger, session: str | int | None) -> Ledger:
    """Return ``ledger`` itself when it already is the wanted single session (so its cached
    recovery is reused), else a one-session view of ``session`` (default: the first)."""
    if len(ledger) == 1 and session in (None, 0, ledger.keys[0]):
        return ledger
    return ledger.session(0 if session is None else session)


def timeline(
    ledger: Ledger,
    policy: Policy = DEFAULT_POLICY,
    session: str | int | None = None,
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
) -> StaticFallbackFigure:
    """Return the timeline figure of one session of ``ledger`` under ``policy``.

    ``session`` is a session key or index (default: the first session; a ledger of a
    parent and its fork child, without ``session``, is drawn as one story: see
    ``plot.story``). ``axis`` is
    ``"order"`` (event seq, the default: crash closers reuse the last timestamp, so a time
    axis squeezes the crashed turn), ``"time"`` or ``"auto"`` (time when every event has one).
    """
    if session is None and len(ledger) == 2:
        pair = fork_pair(ledger.recovery(policy).frames)
        if pair is not None:  # a parent and its fork child: one story
            parent, child, boundary = pair
            recovery = ledger.recovery(policy)
            return timeline_figure(fork_story(recovery.frames, parent, child, boundary),
                                   session=f"{parent} + fork {child}", policy=policy,
                                   fork_points=recovery.analyses[parent].fork_points,
                                   axis=axis, detail_limit=detail_limit)
    view = _one_session(ledger, session)
    key = view.keys[0]
    recovery = view.recovery(policy)
    return timeline_figure(recovery.frames, session=key, policy=policy,
                           fork_points=recovery.analyses[key].fork_points, axis=axis,
                           detail_limit=detail_limit)
