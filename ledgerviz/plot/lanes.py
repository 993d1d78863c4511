"""The timeline's lanes for many sessions at once: each frame's positions, hover labels and lane
parts are computed in one pass over all its rows; a session then only slices them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ledgerviz.plot import detail, hover, style
from ledgerviz.plot.axis import PairIndex, Positions, seq_keys
from ledgerviz.plot.groups import Groups
from ledgerviz.plot.traces import bars, markers

PARALLEL_ROWS = 3
ROW_OFFSET = 0.24

TURN_PARTS = ((style.LEGEND_TURN_DONE, style.TURN_COLOR),
              (style.LEGEND_TURN_OPEN, style.TURN_UNFINISHED_COLOR))
EVENT_PARTS = (  # legend name, colour, symbol, size, lane
    (style.LEGEND_EVENT, style.EVENT_COLOR, "circle", 7, style.LANE_EVENTS),
    (style.LEGEND_LOG_EVENT, style.LOG_EVENT_COLOR, "circle", 7, style.LANE_EVENTS),
    (style.LEGEND_SYNTHETIC, style.SYNTHETIC_COLOR, "diamond", 10, style.LANE_EVENTS),
    (style.LEGEND_ABANDONED, style.ABANDONED_COLOR, "square", 10, style.LANE_ABANDONED_EVENTS),
)
CALL_PARTS = tuple((status, abandoned, ran) for status in style.STATUS_ORDER
                   for abandoned in (False, True) for ran in (True, False))
"""Call lane parts in drawing order: by status, active before abandoned, bars (dispatched)
before markers (never dispatched)."""


class Detail(NamedTuple):
    """How finely lanes are drawn: up to ``limit`` items of a lane part one by one, counted
    within each session's x range in ``views`` (None: its whole extent); ``note`` ends the
    label of a bin (what zooming does). Without ``outside_labels`` the bins of items outside
    a view carry no label: they show only in the overview strip until the host redraws the
    range they come into."""

    limit: int
    views: Sequence[tuple[float, float] | None]
    note: str
    outside_labels: bool = True


class Codes(NamedTuple):
    """Each frame row's session index among the sessions drawn (-1: not drawn)."""

    events: np.ndarray
    turns: np.ndarray
    steps: np.ndarray
    calls: np.ndarray


def floats(values: pd.Series) -> np.ndarray:
    """Return a nullable integer column as floats, NaN where missing."""
    if isinstance(values.array, pd.arrays.IntegerArray):  # (no copy on the way)
        return values.array.to_numpy(dtype=float, na_value=np.nan)
    return pd.array(values, dtype="Int64").to_numpy(dtype=float, na_value=np.nan)


def flags(values: pd.Series, missing: bool = False) -> np.ndarray:
    """Return a nullable boolean column as bools, ``missing`` where missing."""
    if isinstance(values.array, pd.arrays.BooleanArray):  # (no copy on the way)
        return values.array.to_numpy(dtype=bool, na_value=missing)
    return values.fillna(missing).astype(bool).to_numpy()


def is_value(values: pd.Series, value: str) -> np.ndarray:
    """Return where a text or categorical column equals ``value`` (False where missing); a
    categorical's codes are compared (one pass, no Series made)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = values.cat.categories
        if value not in categories:
            return np.zeros(len(values), dtype=bool)
        return values.cat.codes.to_numpy() == categories.get_loc(value)
    return (values == value).fillna(False).to_numpy(dtype=bool)


@dataclass(frozen=True)
class LaneColumns:
    """One frame's lane parts for every session: item positions, labels, and what bins need."""

    groups: Groups
    starts: np.ndarray
    ends: np.ndarray
    labels: np.ndarray
    seqs: np.ndarray
    names: np.ndarray | pd.Categorical
    """Each item's name (a categorical where the frame's column is one)."""
    what: str
    single: np.ndarray
    """Whether each row is drawn one by one (see ``Groups.one_by_one``)."""
    sides: np.ndarray | None
    """Where each row lies against its session's view (``detail.view_sides``; None: no
    session has one)."""
    note: str
    outside_labels: bool

    @classmethod
    def of(cls, frame: pd.DataFrame, groups: Groups, codes: np.ndarray, starts: np.ndarray,
           ends: np.ndarray, *, label: Callable[[pd.DataFrame], np.ndarray], seq_column: str,
           name_column: str, what: str, fine: Detail) -> LaneColumns:
        """Return the columns of ``frame``, labelling only the rows drawn one by one."""
        names = frame[name_column]
        sides = detail.view_sides(starts, ends, codes, fine.views)
        single = groups.one_by_one(fine.limit, None if sides is None else sides == 0)
        return cls(groups, starts, ends, groups.labels(frame, label, single),
                   floats(frame[seq_column]),
                   names.array if isinstance(names.dtype, pd.CategoricalDtype)
                   else names.astype(object).to_numpy(), what, single, sides, fine.note,
                   fine.outside_labels)

    def items(self, level: detail.Level) -> dict[str, Any] | None:
        """Return the items a binned ``level`` holds, packed for a page to redraw
        (:func:`detail.packed_items`); None for a level drawn item by item."""
        if level.rows is None:
            return None
        rows = level.rows
        return detail.packed_items(self.starts[rows], self.ends[rows], self.seqs[rows],
                                   self.names[rows])

    def levels(self, session: int, part: int) -> list[detail.Level]:
        """Return what one session's part draws (:func:`detail.levels`)."""
        return detail.levels(self.groups.rows(session, part), self.single, self.sides,
                             self.starts, self.ends, self.labels, self.seqs, self.names,
                             what=self.what, note=self.note,
                             outside_labels=self.outside_labels)


def trace(name: str, level: detail.Level, lane: float, color: str, *, width: float,
          offsets: np.ndarray | float = 0.0, marker: dict[str, Any] | None = None,
          end_markers: bool = False, items: dict[str, Any] | None = None,
          **common: Any) -> dict[str, Any]:
    """Return the trace of one lane part: a marker (``marker`` options) or bar per item, or
    one bar per bin of items (``offsets`` then do not apply). A bin trace given the packed
    ``items`` it holds carries them as ``lvItems``, with how a page draws each one."""
    if level.binned:
        binned = bars(f"{name} (grouped)", level.starts, level.ends, lane, level.labels, color,
                      width=width, **common)
        if items is not None:
            binned["lvItems"] = {**items, "trace": name, "lane": lane, "marker": marker,
                                 "end_markers": end_markers}
        return binned
    if marker is not None:
        return markers(name, level.starts, lane + offsets, level.labels, color, **marker,
                       **common)
    return bars(name, level.starts, level.ends, lane + offsets, level.labels, color,
                width=width, end_markers=end_markers, **common)


def turn_columns(turns: pd.DataFrame, codes: np.ndarray, at: Positions, sessions: int,
                 fine: Detail) -> LaneColumns:
    """Return the turn lane: completed turns (part 0), then the others (part 1)."""
    parts = np.where(is_value(turns["end_reason"], "completed"), 0, 1)
    return LaneColumns.of(turns, Groups(codes, parts, sessions, len(TURN_PARTS)), codes,
                          at.at(codes, turns["start_seq"]), at.at_or_end(codes, turns["end_seq"]),
                          label=hover.turn_hover, seq_column="start_seq",
                          name_column="end_reason", what="turns", fine=fine)


def step_columns(steps: pd.DataFrame, codes: np.ndarray, at: Positions, sessions: int,
                 fine: Detail) -> LaneColumns:
    """Return the step lane (one part)."""
    groups = Groups(codes, np.zeros(len(steps), dtype=np.int64), sessions, 1)
    return LaneColumns.of(steps, groups, codes, at.at(codes, steps["start_seq"]),
                          at.at_or_end(codes, steps["end_seq"]),
                          label=hover.step_hover, seq_column="start_seq", name_column="model",
                          what="steps", fine=fine)


def event_columns(events: pd.DataFrame, codes: np.ndarray, at: Positions, sessions: int,
                  fine: Detail) -> LaneColumns:
    """Return the event markers, in the parts of :data:`EVENT_PARTS`."""
    abandoned = is_value(events["branch"], "abandoned")
    synthetic = flags(events["synthetic"]) & ~abandoned
    active = is_value(events["branch"], "active")
    parts = np.ones(len(abandoned), dtype=np.int8)  # neither active nor added: log only
    parts[active] = 0
    parts[synthetic] = 2
    parts[abandoned] = 3
    xs = at.own(codes, events["seq"])
    return LaneColumns.of(events, Groups(codes, parts, sessions, len(EVENT_PARTS)), codes, xs, xs,
                          label=hover.event_hover, seq_column="seq", name_column="type",
                          what="events", fine=fine)


def call_end_seqs(calls: pd.DataFrame, turns: pd.DataFrame, codes: Codes) -> np.ndarray:
    """Return where each call's bar ends: its result, else the end of its turn (else -1,
    which the positions turn into the session's last one)."""
    turn_numbers = seq_keys(turns["turn"])
    index = PairIndex(codes.turns, turn_numbers)
    turn_ends = np.append(seq_keys(turns["end_seq"])[index.rows], -1)
    fallback = turn_ends[index.find(codes.calls, seq_keys(calls["turn"]))]
    results = seq_keys(calls["result_seq"])
    return np.where(results >= 0, results, fallback)


def rows_within_step(calls: pd.DataFrame, codes: np.ndarray) -> np.ndarray:
    """Return a y offset per call so that the calls of one step (which may run in parallel)
    each sit on a row of their own instead of hiding each other: up to
    :data:`PARALLEL_ROWS` calls :data:`ROW_OFFSET` apart from the top of the lane's band,
    more spread evenly over the same band."""
    keys = (np.asarray(codes, dtype=np.int64), seq_keys(calls["turn"]), seq_keys(calls["step"]))
    runs = _runs(*keys)
    if runs is None:  # a step's calls are not all next to each other
        turns = calls["turn"]
        grouped = pd.Series(keys[0], index=turns.index).groupby(
            [pd.Series(keys[0], index=turns.index), turns, calls["step"]], dropna=False,
            sort=False)
        group = grouped.ngroup().to_numpy()
        order, size = grouped.cumcount().to_numpy(), np.bincount(group)[group]
    else:
        order, size = runs
    band = (PARALLEL_ROWS - 1) * ROW_OFFSET
    apart = np.where(size > PARALLEL_ROWS, band / np.maximum(size - 1, 1), ROW_OFFSET)
    return ROW_OFFSET - order * apart


def _runs(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Return each row's index among the rows of equal ``keys`` (a group's ``cumcount``)
    and its group's size, when the rows are sorted by the keys so that each group is one
    run of rows; else None."""
    count = len(keys[0])
    differs = np.zeros(max(count - 1, 0), dtype=bool)  # row i + 1 from row i, so far
    for key in keys:
        before, after = key[:-1], key[1:]
        if (~differs & (after < before)).any():
            return None
        differs |= after != before
    starts = np.flatnonzero(np.r_[True, differs]) if count else np.zeros(0, dtype=np.int64)
    lengths = np.diff(np.r_[starts, count])
    return np.arange(count) - np.repeat(starts, lengths), np.repeat(lengths, lengths)


def call_columns(calls: pd.DataFrame, codes: np.ndarray, at: Positions, ends: np.ndarray,
                 sessions: int, fine: Detail) -> LaneColumns:
    """Return the call lanes in the parts of :data:`CALL_PARTS`: a bar from dispatch to
    ``ends`` per dispatched call, a marker at its request per call never dispatched."""
    status_index = np.full(len(calls), -1)
    for i, name in enumerate(style.STATUS_ORDER):
        status_index[is_value(calls["status"], name)] = i
    ran = calls["dispatched_seq"].notna().to_numpy()
    abandoned = is_value(calls["branch"], "abandoned")
    parts = np.where(status_index >= 0, status_index * 4 + abandoned * 2 + ~ran, -1)
    asked = at.at(codes, calls["requested_seq"])
    return LaneColumns.of(calls, Groups(codes, parts, sessions, len(CALL_PARTS)), codes,
                          np.where(ran, at.at(codes, calls["dispatched_seq"]), asked),
                          np.where(ran, ends, asked), label=hover.call_hover,
                          seq_column="requested_seq", name_column="tool", what="calls",
                          fine=fine)
