"""The turn timeline: turns, steps, events and tool calls of one session under one policy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

import numpy as np
import pandas as pd

from ledgerviz.compare.session_diff import SessionDiff
from ledgerviz.html import plotly_text
from ledgerviz.plot import lanes, style
from ledgerviz.plot.axis import Axis, Positions, time_axes
from ledgerviz.plot.detail import Level
from ledgerviz.plot.diff_timeline import diff_timeline
from ledgerviz.plot.groups import Groups
from ledgerviz.plot.hover import GROUPED_REDRAWN, GROUPED_STATIC
from ledgerviz.plot.incident import incident_view, incidents_by_session
from ledgerviz.plot.lanes import Codes
from ledgerviz.plot.static import StaticFallbackFigure
from ledgerviz.plot.story import fork_pair, fork_story
from ledgerviz.plot.traces import bars, interleave
from ledgerviz.recovery.analysis import DEFAULT_POLICY, Policy
from ledgerviz.wording import counted

if TYPE_CHECKING:
    from ledgerviz.api import Ledger

DETAIL_LIMIT = 10_000
TURN_BANDS_LIMIT = 150
LANE_HEIGHT = 70
TEMPLATE = "plotly_white"
OVERVIEW_THICKNESS = 0.08
"""Height of the overview strip (a range slider) under a zoomed timeline, as a plot fraction."""

XRange = tuple[float, float] | Literal["incident", "all"]
"""What a timeline shows first: an x range, the first incident's (:mod:`plot.incident`) or
the whole session."""


class SessionFrames(Protocol):
    """The frames of one session that the timeline draws (columns as in docs/architecture.md)."""

    events: pd.DataFrame
    turns: pd.DataFrame
    steps: pd.DataFrame
    calls: pd.DataFrame


def _lanes(abandoned_events: bool, abandoned_calls: bool) -> dict[str, int]:
    names = [style.LANE_TURNS, style.LANE_STEPS, style.LANE_EVENTS, style.LANE_CALLS]
    if abandoned_events:
        names.append(style.LANE_ABANDONED_EVENTS)
    if abandoned_calls:
        names.append(style.LANE_ABANDONED_CALLS)
    return {name: len(names) - i for i, name in enumerate(names)}


def _fork_trace(xs: np.ndarray, fork_points: Sequence[int], top: int) -> dict[str, Any]:
    labels = [f"<b>fork point</b> · seq {seq}<br>the model's context ends before this event;"
              "<br>everything from here on is abandoned" for seq in fork_points]
    trace = bars(style.LEGEND_FORK, xs, xs, 0, labels, style.FORK_COLOR, width=2)
    trace["y"] = interleave(np.full(len(xs), 0.4), np.full(len(xs), top + 0.6))
    trace["line"]["dash"] = "dash"
    return trace


def _abandoned_spans(starts: np.ndarray, positions: np.ndarray) -> list[tuple[float, float]]:
    """Return, per fork point (``starts``: their sorted x positions), the x span from it to
    the last abandoned item (``positions``) before the next fork point."""
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


def _turn_bands(starts: np.ndarray, ends: np.ndarray) -> list[dict[str, Any]]:
    """Return a background band behind every other turn (none beyond TURN_BANDS_LIMIT turns)."""
    if len(starts) > TURN_BANDS_LIMIT:
        return []
    return [_band(x0, x1, style.BAND_FILL)
            for i, (x0, x1) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True))
            if i % 2 == 0 and not (np.isnan(x0) or np.isnan(x1))]


class _Counts(NamedTuple):
    """Per session: what the title's facts line counts."""

    turns: np.ndarray
    events: np.ndarray
    added: np.ndarray
    calls: np.ndarray
    by_status: dict[str, np.ndarray]


def _counts(frames: SessionFrames, codes: Codes, sessions: int) -> _Counts:
    def per_session(row_codes: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
        chosen = row_codes >= 0 if where is None else (row_codes >= 0) & where
        if sessions == 1:  # (codes 0 and -1: counted without a copy of the rows)
            return np.array([np.count_nonzero(chosen)])
        return np.bincount(row_codes[chosen], minlength=sessions)

    status = frames.calls["status"]
    return _Counts(
        per_session(codes.turns), per_session(codes.events),
        per_session(codes.events, ~lanes.flags(frames.events["recorded"], missing=True)),
        per_session(codes.calls),
        {s: per_session(codes.calls, lanes.is_value(status, s)) for s in style.STATUS_ORDER})


def _subtitle(counts: _Counts, s: int) -> str:
    """Return the facts line of session ``s``: counts, saying how many events recovery added."""
    parts = ", ".join(f"{int(counts.by_status[k][s])} {k.replace('_', ' ')}"
                      for k in style.STATUS_ORDER if counts.by_status[k][s])
    added = int(counts.added[s])
    events = counted(int(counts.events[s]), "event") + (
        f" ({added} added by recovery)" if added else "")
    calls = counted(int(counts.calls[s]), "tool call") + (f" ({parts})" if parts else "")
    return f"{counted(int(counts.turns[s]), 'turn')} · {events} · {calls}"


def _layout(title: str, lanes_of: dict[str, int], shapes: list[dict[str, Any]],
            on_time: bool, view: tuple[float, float] | None,
            incidents: Sequence[int]) -> dict[str, Any]:
    top = max(lanes_of.values())
    xaxis: dict[str, Any] = {"title": {"text": "time (UTC)" if on_time else "event seq"},
                             "type": "date" if on_time else "linear", "showgrid": True,
                             "gridcolor": "#eef1f4"}
    if view is not None:
        xaxis |= {"range": list(view), "rangeslider": {"visible": True,
                                                        "thickness": OVERVIEW_THICKNESS}}
    return {
        "title": {"text": title, "x": 0.01},
        "height": 170 + LANE_HEIGHT * len(lanes_of),
        "autosize": True,
        "margin": {"l": 130, "r": 20, "t": 80, "b": 40},
        "template": TEMPLATE,
        "font": {"family": style.FONT, "size": 12},
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "legend": {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0,
                   "x": 0, "font": {"size": 11}},
        "shapes": shapes,
        "yaxis": {"tickvals": list(lanes_of.values()), "ticktext": list(lanes_of),
                  "range": [0.4, top + 0.6], "showgrid": False, "zeroline": False,
                  "fixedrange": True},
        "xaxis": xaxis,
        "meta": {"incidents": list(incidents)},
    }


def _session_codes(frames: SessionFrames, sessions: Sequence[str] | None) -> Codes:
    """Return each row's index in ``sessions`` by its ``session`` column (every row is
    session 0 when ``sessions`` is None)."""
    def of(frame: pd.DataFrame) -> np.ndarray:
        if sessions is None:
            return np.zeros(len(frame), dtype=np.int64)
        codes = pd.Categorical(frame["session"].astype(object), categories=list(sessions))
        return codes.codes.astype(np.int64)

    return Codes(of(frames.events), of(frames.turns), of(frames.steps), of(frames.calls))


def _views(frames: SessionFrames, codes: Codes, on_time: np.ndarray,
           incidents: Sequence[Sequence[int]], x_range: XRange) -> list[tuple[float, float] | None]:
    """Return the x range each session opens on (None: its whole extent): ``x_range`` itself,
    or on the event-order axis the window around the session's first incident."""
    n = len(on_time)
    if x_range == "all":
        return [None] * n
    if x_range != "incident":
        return [(float(x_range[0]), float(x_range[1]))] * n
    extents = _seq_extents(lanes.floats(frames.events["seq"]), codes.events, n)
    views: list[tuple[float, float] | None] = [None] * n
    for s in range(n):
        if incidents[s] and not on_time[s] and extents[s] is not None:
            views[s] = incident_view(incidents[s][0], *extents[s])
    return views


def _seq_extents(seqs: np.ndarray, codes: np.ndarray, n: int) -> list[tuple[float, float] | None]:
    """Return the lowest and highest seq of each of ``n`` sessions (``codes``: each row's;
    NaN for a session whose rows have none), None for a session without rows."""
    if n == 1 and (codes == 0).all():  # one session: no grouping (fmin/fmax skip NaN)
        low, high = np.fmin.reduce(seqs, initial=np.inf), np.fmax.reduce(seqs, initial=-np.inf)
        return [(float(low), float(high)) if low <= high
                else (np.nan, np.nan)] if len(codes) else [None]
    rows = np.bincount(codes[codes >= 0], minlength=n)
    found = pd.Series(seqs).groupby(codes).agg(["min", "max"])
    return [tuple(found.loc[s].tolist()) if rows[s] else None for s in range(n)]


def _specs(frames: SessionFrames, codes: Codes, names: Sequence[str], titles: Sequence[str],
           policy: str, fork_points: Sequence[Sequence[int]], axis: Axis,
           limit: int, x_range: XRange = "incident",
           redrawn: bool = False, packed: bool = False) -> list[dict[str, Any]]:
    """Return the timeline spec of every session ``names[i]`` (rows coded ``i``), built from
    columns computed once over all of them; with ``packed``, each bin trace carries the items
    it holds (``lvItems``: see ``lanes.trace``)."""
    n = len(names)
    events, calls = frames.events, frames.calls
    on_time = time_axes(events, codes.events, names, axis)
    at = Positions(events, codes.events, on_time)
    incidents = incidents_by_session(calls, codes.calls, frames.turns, codes.turns, fork_points)
    views = _views(frames, codes, on_time, incidents, x_range)
    # a host that redraws every range change (the explorer; not a packed page, which
    # redraws only few items) labels the bins it shows when they come into view
    fine = lanes.Detail(limit, views, GROUPED_REDRAWN if redrawn else GROUPED_STATIC,
                        outside_labels=packed or not redrawn)
    abandoned_events = lanes.is_value(events["branch"], "abandoned") & (codes.events >= 0)
    abandoned_calls = lanes.is_value(calls["branch"], "abandoned") & (codes.calls >= 0)
    has_abandoned = (np.bincount(codes.events[abandoned_events], minlength=n) > 0,
                     np.bincount(codes.calls[abandoned_calls], minlength=n) > 0)
    ends = at.at_or_end(codes.calls, lanes.call_end_seqs(calls, frames.turns, codes))
    turns = lanes.turn_columns(frames.turns, codes.turns, at, n, fine)
    steps = lanes.step_columns(frames.steps, codes.steps, at, n, fine)
    marks = lanes.event_columns(events, codes.events, at, n, fine)
    bars_ = lanes.call_columns(calls, codes.calls, at, ends, n, fine)
    offsets = lanes.rows_within_step(calls, codes.calls)
    bands = Groups(codes.turns, np.zeros(len(codes.turns), dtype=np.int64), n, 1)
    counts = _counts(frames, codes, n)
    specs = []
    for s in range(n):
        lanes_of = _lanes(bool(has_abandoned[0][s]), bool(has_abandoned[1][s]))
        def items(columns: lanes.LaneColumns, level: Level) -> dict[str, Any] | None:
            return columns.items(level) if packed else None

        traces = [lanes.trace(name, level, lanes_of[style.LANE_TURNS], color, width=22,
                              items=items(turns, level))
                  for part, (name, color) in enumerate(lanes.TURN_PARTS)
                  for level in turns.levels(s, part)]
        traces += [lanes.trace("step", level, lanes_of[style.LANE_STEPS], style.STEP_COLOR,
                               width=14, showlegend=False, items=items(steps, level))
                   for level in steps.levels(s, 0)]
        traces += [lanes.trace(name, level, lanes_of[lane], color, items=items(marks, level),
                               width=size, marker={"symbol": symbol, "size": size})
                   for part, (name, color, symbol, size, lane) in enumerate(lanes.EVENT_PARTS)
                   for level in marks.levels(s, part)]
        shown_in_legend: set[str] = set()
        for part, (status, abandoned, ran) in enumerate(lanes.CALL_PARTS):
            rows = bars_.groups.rows(s, part)
            if not len(rows):
                continue
            shape: dict[str, Any] = ({"end_markers": True} if ran
                                     else {"marker": {"symbol": "x", "size": 12}})
            for level in bars_.levels(s, part):
                traces.append(lanes.trace(
                    style.STATUS_LEGEND[status], level,
                    lanes_of[style.LANE_ABANDONED_CALLS if abandoned else style.LANE_CALLS],
                    style.STATUS_COLOR[status], width=9,
                    offsets=offsets[rows[bars_.single[rows]]], legendgroup=status,
                    opacity=0.8 if abandoned else 1.0, showlegend=status not in shown_in_legend,
                    items=items(bars_, level), **shape))
                shown_in_legend.add(status)
        points = list(fork_points[s])
        top = max(lanes_of.values())
        shapes = _turn_bands(turns.starts[bands.rows(s, 0)], turns.ends[bands.rows(s, 0)])
        if points:
            xs = at.at(np.full(len(points), s), pd.Series(points, dtype="Int64"))
            traces.append(_fork_trace(xs, points, top))
            starts = at.at(np.full(len(points), s), pd.Series(sorted(points), dtype="Int64"))
            positions = np.concatenate([marks.starts[abandoned_events & (codes.events == s)],
                                        ends[abandoned_calls & (codes.calls == s)]])
            shapes += [_band(x0, x1, style.ABANDONED_FILL)
                       for x0, x1 in _abandoned_spans(starts, positions)]
        head = f"Session {plotly_text(titles[s], 120)} · " if titles[s] is not None else ""
        title = f"{head}policy: {plotly_text(policy)}<br><sup>{_subtitle(counts, s)}</sup>"
        specs.append({"data": traces, "layout": _layout(title, lanes_of, shapes,
                                                         bool(on_time[s]), views[s],
                                                         incidents[s])})
    return specs


def timeline_spec(
    frames: SessionFrames,
    *,
    session: str,
    policy: str,
    fork_points: Sequence[int] = (),
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
    name_session: bool = True,
    x_range: XRange = "incident",
    redrawn: bool = False,
) -> dict[str, Any]:
    """Return the timeline of one session's frames as a plotly figure dict (``data``, ``layout``).

    Lanes from top to bottom: turns, steps, events, tool calls, and (when present) the
    abandoned events and calls. Call bars run from dispatch to result, coloured by status.
    A lane part (one kind of item) with more than ``detail_limit`` items is drawn in bins of
    the x extent (:mod:`ledgerviz.plot.detail`), so the whole session shows at any size.

    ``x_range`` is what the figure shows first: by default, on the event-order axis, the
    :data:`~ledgerviz.plot.incident.WINDOW` seqs around the session's first incident (fork
    point, call without a result, turn not completed) when the session is longer, with the
    whole session as an overview strip (a range slider) below; ``"all"``, the whole
    session; or an x range. The items in that range are counted apart: at most
    ``detail_limit`` of a lane part in it are drawn one by one, the rest in bins.
    ``layout.meta.incidents`` lists the incidents' seqs. ``redrawn`` says the host redraws
    the range the reader zooms to (the bins' labels then invite zooming, and the bins of items
    outside the range shown, drawn for the overview strip, carry no label until redrawn).
    The title names the session unless ``name_session`` is False (a page that already names
    it). The layout names its template (``plotly_white``) instead of spelling it out.
    """
    return _specs(frames, _session_codes(frames, None), [session],
                  [session if name_session else None], policy, [fork_points], axis,
                  detail_limit, x_range, redrawn)[0]


def session_timeline_specs(
    frames: SessionFrames,
    sessions: Sequence[str],
    *,
    policy: str,
    fork_points: Mapping[str, Sequence[int]],
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
    name_session: bool = True,
    packed: bool = False,
) -> list[dict[str, Any]]:
    """Return :func:`timeline_spec` of each of ``sessions`` (values of the frames' ``session``
    column; ``fork_points`` by session), built in one pass over frames holding all of them,
    each opened on its first incident. With ``packed``, each bin trace carries the items it
    holds (``lvItems``), which a page redraws one by one when few are in view (the bins'
    labels then invite zooming)."""
    titles = [key if name_session else None for key in sessions]
    return _specs(frames, _session_codes(frames, sessions), list(sessions), titles, policy,
                  [fork_points.get(key, ()) for key in sessions], axis, detail_limit,
                  "incident", packed, packed)


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
    x_range: XRange = "incident",
) -> dict[str, Any]:
    """Return :func:`timeline` as a plotly figure dict (see :func:`timeline_spec`)."""
    view = _one_session(ledger, session)
    key = view.keys[0]
    recovery = view.recovery(policy)
    return timeline_spec(recovery.frames, session=key, policy=policy,
                         fork_points=recovery.analyses[key].fork_points, axis=axis,
                         detail_limit=detail_limit, name_session=name_session, x_range=x_range)


def fork_story_spec(
    ledger: Ledger,
    policy: Policy = DEFAULT_POLICY,
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
    name_session: bool = True,
    x_range: XRange = "incident",
    redrawn: bool = False,
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
                         detail_limit=detail_limit, name_session=name_session, x_range=x_range,
                         redrawn=redrawn)


def timeline(
    ledger: Ledger | SessionDiff,
    policy: Policy = DEFAULT_POLICY,
    session: str | int | None = None,
    axis: Axis = "order",
    detail_limit: int = DETAIL_LIMIT,
    x_range: XRange = "incident",
) -> StaticFallbackFigure:
    """Return the timeline figure of one session of ``ledger`` under ``policy``.

    ``session`` is a session key or index (default: the first session; a ledger of a
    parent and its fork child, without ``session``, is drawn as one story: see
    ``plot.story``). ``axis`` is
    ``"order"`` (event seq, the default: crash closers reuse the last timestamp, so a time
    axis squeezes the crashed turn), ``"time"`` or ``"auto"`` (time when every event has one).
    A long session opens on its first incident with an overview strip below; ``x_range``
    (``"all"`` or an x range, drawn item by item when few enough) says otherwise: see
    :func:`timeline_spec`.
    A :class:`~ledgerviz.compare.SessionDiff` is drawn as its two sessions in aligned lanes
    (:func:`~ledgerviz.plot.diff_timeline.diff_timeline`; the other options do not apply).
    """
    if isinstance(ledger, SessionDiff):
        return diff_timeline(ledger)
    if session is None:
        story = fork_story_spec(ledger, policy, axis, detail_limit, x_range=x_range)
        if story is not None:
            return StaticFallbackFigure(story)
    return StaticFallbackFigure(ledger_timeline_spec(ledger, policy, session, axis, detail_limit,
                                                     x_range=x_range))
