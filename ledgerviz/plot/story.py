"""One story of a parent and its fork child: the frames the timeline draws for the pair."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from ledgerviz.frames import Frames


class StoryFrames(NamedTuple):
    """The rows of a parent and its fork child as one session's frames (see SessionFrames)."""

    events: pd.DataFrame
    turns: pd.DataFrame
    steps: pd.DataFrame
    calls: pd.DataFrame


def fork_story(frames: Frames, parent: str, child: str, boundary: int) -> StoryFrames:
    """Return the parent's rows followed by the child's own rows on one seq axis.

    The inherited prefix is drawn once (the parent's copy); the parent's abandoned suffix
    keeps its branch, so it gets its own lane, and the child's branch continues from
    ``boundary + 1`` next to it, aligned at the fork point. A turn the child closed
    (``forked``) replaces the parent's open copy of it.
    """
    events = frames.events
    own_events = events[(events["session"] == child) & ~events["inherited"]]
    parts = {}
    for name in ("turns", "steps", "calls"):
        frame = getattr(frames, name)
        mine = frame[frame["session"] == child]
        if name == "calls":
            mine = mine[mine["requested_seq"] > boundary]
            theirs = frame[frame["session"] == parent]
        else:
            mine = mine[mine["end_seq"].isna() | (mine["end_seq"] > boundary)]
            keys = ["turn"] if name == "turns" else ["turn", "step"]
            theirs = frame[frame["session"] == parent]
            replaced = theirs.set_index(keys).index.isin(mine.set_index(keys).index)
            theirs = theirs[~replaced]
        parts[name] = pd.concat([theirs, mine], ignore_index=True)
    story_events = pd.concat([events[events["session"] == parent], own_events], ignore_index=True)
    return StoryFrames(story_events, parts["turns"], parts["steps"], parts["calls"])


def fork_pair(frames: Frames) -> tuple[str, str, int] | None:
    """Return ``(parent, child, boundary seq)`` when the frames hold exactly a parent and
    its fork child, else None."""
    lineage = frames.lineage
    if len(lineage) != 2:
        return None
    forks = lineage[(lineage["relation"] == "fork") & lineage["boundary_seq"].notna()]
    if len(forks) != 1:
        return None
    child = forks.iloc[0]
    keys = set(lineage["session"].astype(str))
    parent = str(child["parent_session"])
    if parent not in keys or parent == str(child["session"]):
        return None
    return parent, str(child["session"]), int(child["boundary_seq"])
