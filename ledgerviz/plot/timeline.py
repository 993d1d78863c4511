"""The turn timeline: turns, steps, events and tool calls of one session under one policy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from ledgerviz.html import plotly_text
from ledgerviz.plot import detail, hover, style
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
TEMPLATE = "plotly_white"


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


def _draw(name: str, rows: pd.DataFrame, starts: np.ndarray, ends: np.ndarray, lane: float,
          label: Callable[[pd.DataFrame], Sequence[str]], color: str, *, what: str,
          seq_column: str, name_column: str, limit: int, width: float,
          offsets: np.ndarray | float = 0.0, marker: dict[str, Any] | None = None,
          end_markers: bool = False, **common: Any) -> dict[str, Any]:
    """Return the trace of one lane's items at the level :func:`detail.pick` chooses: a
    marker (``marker`` options) or bar per item, or one bar per bin of items."""
    level = detail.pick(starts, ends, rows, label, seq_column=seq_column,
                        name_column=name_column, what=what, limit=limit)
    if level.binned:
        return bars(f"{name} (grouped)", level.starts, level.ends, lane, level.labels, color,
                    width=width, **common)
    if marker is not None:
        return markers(name, level.starts, lane + offsets, level.labels, color, **marker,
                       **common)
    return bars(name, level.starts, level.ends, lane + offsets, level.labels, color,
                width=width, end_markers=end_markers, **common)


def _part(frame: pd.DataFrame, mask: pd.Series, limit: int, *columns: str) -> pd.DataFrame:
    """Return the rows of ``frame`` under ``mask``: every column when they are few enough to be
    drawn one by one (their hover labels need them), else only ``columns`` (what bins need)."""
    if int(mask.sum()) <= limit:
        return frame[mask]
    return frame.loc[mask, list(columns)]


def _turn_traces(turns: pd.DataFrame, at: Locator, y: int, limit: int) -> list[dict[str, Any]]:
    finished = turns["end_reason"].astype("string").fillna("") == "completed"
    traces = []
    for mask, name, color in (
        (finished, style.LEGEND_TURN_DONE, style.TURN_COLOR),
        (~finished, style.LEGEND_TURN_OPEN, style.TURN_UNFINISHED_COLOR),
    ):
        part = turns[mask]
        if len(part):
            traces.append(_draw(name, part, at.at(part["start_seq"]),
                                at.at_or_end(part["end_seq"]), y, hover.turn_hover, color,
                                what="turns", seq_column="start_seq", name_column="end_reason",
                                limit=limit, width=22))
    return traces


def _step_trace(steps: pd.DataFrame, at: Locator, y: int, limit: int) -> dict[str, Any]:
    return _draw("step", steps, at.at(steps["start_seq"]), at.at_or_end(steps["end_seq"]), y,
                 hover.step_hover, style.STEP_COLOR, what="steps", seq_column="start_seq",
                 name_column="model", limit=limit, width=14, showlegend=False)


def _event_traces(events: pd.DataFrame, at: Locator, lanes: dict[str, int],
                  limit: int) -> list[dict[str, Any]]:
    abandoned = events["branch"] == "abandoned"
    synthetic = events["synthetic"].fillna(False).astype(bool) & ~abandoned
    active = events["branch"] == "active"
    traces = []
    for mask, name, color, symbol, size, lane in (
        (active & ~synthetic, style.LEGEND_EVENT, style.EVENT_COLOR, "circle", 7,
         style.LANE_EVENTS),
        (~active & ~abandoned & ~synthetic, style.LEGEND_LOG_EVENT, style.LOG_EVENT_COLOR,
         "circle", 7, style.LANE_EVENTS),
        (synthetic, style.LEGEND_SYNTHETIC, style.SYNTHETIC_COLOR, "diamond", 10,
         style.LANE_EVENTS),
        (abandoned, style.LEGEND_ABANDONED, style.ABANDONED_COLOR, "square", 10,
         style.LANE_ABANDONED_EVENTS),
    ):
        part = _part(events, mask, limit, "seq", "type")
        if len(part):
            xs = at.at(part["seq"])
            traces.append(_draw(name, part, xs, xs, lanes[lane], hover.event_hover, color,
                                what="events", seq_column="seq", name_column="type",
                                limit=limit, width=size, marker={"symbol": symbol,
                                                                 "size": size}))
    return traces


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


def _call_traces(calls: pd.DataFrame, ends: np.ndarray, at: Locator, lanes: dict[str, int],
                 limit: int) -> list[dict[str, Any]]:
    """Return the call lanes' traces; ``ends`` holds each call's bar end position."""
    traces = []
    shown_in_legend: set[str] = set()
    calls = calls.assign(_offset=_rows_within_step(calls), _end=ends,
                         _abandoned=calls["branch"] == "abandoned",
                         _ran=calls["dispatched_seq"].notna())
    groups = calls.groupby(["status", "_abandoned", "_ran"], sort=False, observed=True)
    parts = {key: part for key, part in groups}
    for status in style.STATUS_ORDER:
        for abandoned, lane, opacity in ((False, style.LANE_CALLS, 1.0),
                                         (True, style.LANE_ABANDONED_CALLS, 0.8)):
            for ran in (True, False):
                part = parts.get((status, abandoned, ran))
                if part is None:
                    continue
                if ran:
                    starts = at.at(part["dispatched_seq"])
                    stops = part["_end"].to_numpy()
                    shape: dict[str, Any] = {"end_markers": True}
                else:
                    starts = stops = at.at(part["requested_seq"])
                    shape = {"marker": {"symbol": "x", "size": 12}}
                traces.append(_draw(
                    style.STATUS_LEGEND[status], part, starts, stops, lanes[lane],
                    hover.call_hover, style.STATUS_COLOR[status], what="calls",
                    seq_column="requested_seq", name_column="tool", limit=limit, width=9,
                    offsets=part["_offset"].to_numpy(), legendgroup=status, opacity=opacity,
                    showlegend=status not in shown_in_legend, **shape))
                shown_in_legend.add(status)
    return traces


def _fork_trace(fork_points: Sequence[int], at: Locator, top: int) -> dict[str, Any]:
    xs = at.at(pd.Series(list(fork_points), dtype="Int64"))
    labels = [f"<b>fork point</b> · seq {seq}<br>the model's context ends before this event;"
              "<br>everything from here on is abandoned" for seq in fork_points]
    trace = bars(style.LEGEND_FORK, xs, xs, 0, labels, style.FORK_COLOR, width=2)
    trace["y"] = interleave(np.full(len(xs), 0.4), np.full(len(xs), top + 0.6))
    trace["line"]["dash"] = "dash"
    return trace


def _abandoned_spans(frames: SessionFrames, fork_points: Sequence[int], at: Locator,
                     call_ends: np.ndarray) -> list[tuple[float, float]]:
    """Return, per fork point, the x span from it to the last abandoned item it starts."""
    if not fork_points:
        return []
    events, calls = frames.events, frames.calls
    positions = np.concatenate([
        at.at(events.loc[events["branch"] == "abandoned", "seq"]),
        call_ends[(calls["branch"] == "abandoned").to_numpy()],
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


def _shapes(frames: SessionFrames, fork_points: Sequence[int], at: Locator,
            call_ends: np.ndarray) -> list[dict]:
    """Return the background bands: every other turn, and each fork's abandoned span."""
    turns = frames.turns
    shapes = []
    if len(turns) <= TURN_BANDS_LIMIT:
        starts, ends = at.at(turns["start_seq"]), at.at_or_end(turns["end_seq"])
        for i, (x0, x1) in enumerate(zip(starts, ends, strict=True)):
            if i % 2 == 0 and not (np.isnan(x0) or np.isnan(x1)):
                shapes.append(_band(x0, x1, style.BAND_FILL))
    shapes += [_band(x0, x1, style.ABANDONED_FILL)
               for x0, x1 in _abandoned_spans(frames, fork_points, at, call_ends)]
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


def timeline_spec(
    frames: SessionFrames,
    *,
    session: str,
    policy: str,
    fork_points: Sequence[int] = (),
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
    name_session: bool = True,
) -> dict[str, Any]:
    """Return the timeline of one session's frames as a plotly figure dict (``data``, ``layout``).

    Lanes from top to bottom: turns, steps, events, tool calls, and (when present) the
    abandoned events and calls. Call bars run from dispatch to result, coloured by status.
    A lane part (one kind of item) with more than ``detail_limit`` items is drawn in bins of
    the x extent (:mod:`ledgerviz.plot.detail`), so the whole session shows at any size.
    The title names the session unless ``name_session`` is False (a page that already names
    it). The layout names its template (``plotly_white``) instead of spelling it out.
    """
    concrete = resolve_axis(frames.events, axis, session)
    at = Locator(frames.events, concrete)
    lanes = _lanes(frames.events, frames.calls)
    call_ends = at.at_or_end(_call_end_seqs(frames.calls, frames.turns))
    traces = [
        *_turn_traces(frames.turns, at, lanes[style.LANE_TURNS], detail_limit),
        _step_trace(frames.steps, at, lanes[style.LANE_STEPS], detail_limit),
        *_event_traces(frames.events, at, lanes, detail_limit),
        *_call_traces(frames.calls, call_ends, at, lanes, detail_limit),
    ]
    if fork_points:
        traces.append(_fork_trace(fork_points, at, max(lanes.values())))
    top = max(lanes.values())
    layout = {
        "title": {"text": _title(frames, session if name_session else None, policy),
                  "x": 0.01},
        "height": 170 + LANE_HEIGHT * len(lanes),
        "autosize": True,
        "margin": {"l": 130, "r": 20, "t": 80, "b": 40},
        "template": TEMPLATE,
        "font": {"family": style.FONT, "size": 12},
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "legend": {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0,
                   "x": 0, "font": {"size": 11}},
        "shapes": _shapes(frames, fork_points, at, call_ends),
        "yaxis": {"tickvals": list(lanes.values()), "ticktext": list(lanes),
                  "range": [0.4, top + 0.6], "showgrid": False, "zeroline": False,
                  "fixedrange": True},
        "xaxis": {"title": {"text": "time (UTC)" if concrete == "time" else "event seq"},
                  "type": "date" if concrete == "time" else "linear", "showgrid": True,
                  "gridcolor": "#eef1f4"},
    }
    return {"data": traces, "layout": layout}


def timeline_figure(frames: SessionFrames, **options: Any) -> StaticFallbackFigure:
    """Return :func:`timeline_spec` of ``frames`` (same keyword options) as a figure that fills
    the width it is given and carries a static fallback in notebooks."""
    return StaticFallbackFigure(timeline_spec(frames, **options))


def _one_session(ledger: Ledger, session: str | int | None) -> Ledger:
    """Return ``ledger`` itself when it already is the wanted single session (so its cached
    recovery is reused), else a one-session view of ``session`` (default: the first)."""
    if len(ledger) == 1 and session in (None, 0, ledger.keys[0]):
        return ledger
    return ledger.session(0 if session is None else session)


def ledger_timeline_spec(
    ledger: Ledger,
    policy: Policy = DEFAULT_POLICY,
    session: str | int | None = None,
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
    name_session: bool = True,
) -> dict[str, Any]:
    """Return :func:`timeline` as a plotly figure dict (see :func:`timeline_spec`)."""
    view = _one_session(ledger, session)
    key = view.keys[0]
    recovery = view.recovery(policy)
    return timeline_spec(recovery.frames, session=key, policy=policy,
                         fork_points=recovery.analyses[key].fork_points, axis=axis,
                         detail_limit=detail_limit, name_session=name_session)


def fork_story_spec(
    ledger: Ledger,
    policy: Policy = DEFAULT_POLICY,
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
    name_session: bool = True,
) -> dict[str, Any] | None:
    """Return the one-story timeline spec of a ledger holding exactly a parent and its fork
    child (see ``plot.story``), or None when ``ledger`` is not such a pair."""
    if len(ledger) != 2:
        return None
    recovery = ledger.recovery(policy)
    pair = fork_pair(recovery.frames)
    if pair is None:
        return None
    parent, child, boundary = pair
    return timeline_spec(fork_story(recovery.frames, parent, child, boundary),
                         session=f"{parent} + fork {child}", policy=policy,
                         fork_points=recovery.analyses[parent].fork_points, axis=axis,
                         detail_limit=detail_limit, name_session=name_session)


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
    if session is None:
        story = fork_story_spec(ledger, policy, axis, detail_limit)
        if story is not None:
            return StaticFallbackFigure(story)
    return StaticFallbackFigure(ledger_timeline_spec(ledger, policy, session, axis, detail_limit))
