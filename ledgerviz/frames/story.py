"""The frames of a fork story: a parent's rows and the rows its fork child adds, as the frames
of one session (``plot.story`` draws them), kept as the two parts they are made of."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ledgerviz.frames.calls import CALL_SCHEMA
from ledgerviz.frames.events import EVENT_SCHEMA
from ledgerviz.frames.joined import StackedRows
from ledgerviz.frames.turns import STEP_SCHEMA, TURN_SCHEMA


class StoryFrames(NamedTuple):
    """The rows of a parent and its fork child as one session's frames (see
    ``plot.timeline.SessionFrames``): frames, or (from :func:`joined_story`) the two parts'
    rows stacked, each column joined when first read."""

    events: pd.DataFrame | StackedRows
    turns: pd.DataFrame | StackedRows
    steps: pd.DataFrame | StackedRows
    calls: pd.DataFrame | StackedRows

    def joined(self) -> StoryFrames:
        """Return the same rows with each frame joined whole (a DataFrame each)."""
        return StoryFrames(*(rows.frame() if isinstance(rows, StackedRows) else rows
                             for rows in self))


ROW_KEYS = {"turns": ["turn"], "steps": ["turn", "step"]}
"""The columns naming a turn row and a step row."""


def joined_story(parent: str, theirs: StoryFrames, child: str, mine: StoryFrames) -> StoryFrames:
    """Return the parent's rows ``theirs`` followed by the rows ``mine`` its fork child adds
    (its own events; its turns, steps and calls past the fork boundary): a turn or step of
    ``mine`` replaces the parent's row of the same turn (and step). Each frame is the two
    parts' rows stacked (:class:`StackedRows`): no column is joined before it is read."""
    kept: dict[str, np.ndarray | None] = {}
    for name, keys in ROW_KEYS.items():
        frame, own = getattr(theirs, name), getattr(mine, name)
        replaced = _row_index(frame, keys).isin(_row_index(own, keys))
        kept[name] = np.flatnonzero(~replaced) if replaced.any() else None
    sessions = [parent, child]
    return StoryFrames(
        StackedRows(sessions, [theirs.events, mine.events], EVENT_SCHEMA),
        StackedRows(sessions, [theirs.turns, mine.turns], TURN_SCHEMA, [kept["turns"], None]),
        StackedRows(sessions, [theirs.steps, mine.steps], STEP_SCHEMA, [kept["steps"], None]),
        StackedRows(sessions, [theirs.calls, mine.calls], CALL_SCHEMA),
    )


def _row_index(frame: pd.DataFrame, keys: list[str]) -> pd.Index:
    """Return the index ``frame.set_index(keys)`` would have, without copying the frame."""
    if len(keys) == 1:
        return pd.Index(frame[keys[0]], name=keys[0])
    return pd.MultiIndex.from_arrays([frame[key] for key in keys], names=keys)
