"""The frames of a fork story: a parent's rows and the rows its fork child adds, as the frames
of one session (``plot.story`` draws them)."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from ledgerviz.frames.calls import CALL_SCHEMA
from ledgerviz.frames.events import EVENT_SCHEMA
from ledgerviz.frames.joined import joined_frame
from ledgerviz.frames.turns import STEP_SCHEMA, TURN_SCHEMA


class StoryFrames(NamedTuple):
    """The rows of a parent and its fork child as one session's frames (see
    ``plot.timeline.SessionFrames``)."""

    events: pd.DataFrame
    turns: pd.DataFrame
    steps: pd.DataFrame
    calls: pd.DataFrame


ROW_KEYS = {"turns": ["turn"], "steps": ["turn", "step"]}
"""The columns naming a turn row and a step row."""


def joined_story(parent: str, theirs: StoryFrames, child: str, mine: StoryFrames) -> StoryFrames:
    """Return the parent's rows ``theirs`` followed by the rows ``mine`` its fork child adds
    (its own events; its turns, steps and calls past the fork boundary): a turn or step of
    ``mine`` replaces the parent's row of the same turn (and step)."""
    kept = {}
    for name, keys in ROW_KEYS.items():
        frame, own = getattr(theirs, name), getattr(mine, name)
        replaced = _row_index(frame, keys).isin(_row_index(own, keys))
        kept[name] = frame[~replaced]
    return StoryFrames(
        joined_frame([parent, child], [theirs.events, mine.events], EVENT_SCHEMA),
        joined_frame([parent, child], [kept["turns"], mine.turns], TURN_SCHEMA),
        joined_frame([parent, child], [kept["steps"], mine.steps], STEP_SCHEMA),
        joined_frame([parent, child], [theirs.calls, mine.calls], CALL_SCHEMA),
    )


def _row_index(frame: pd.DataFrame, keys: list[str]) -> pd.Index:
    """Return the index ``frame.set_index(keys)`` would have, without copying the frame."""
    if len(keys) == 1:
        return pd.Index(frame[keys[0]], name=keys[0])
    return pd.MultiIndex.from_arrays([frame[key] for key in keys], names=keys)
