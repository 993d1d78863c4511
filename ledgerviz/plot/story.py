"""One story of a parent and its fork child: the frames the timeline draws for the pair."""

from __future__ import annotations

from ledgerviz.frames import Frames
from ledgerviz.frames.fork_frames import ForkFrames
from ledgerviz.frames.story import StoryFrames, joined_story


def fork_story(frames: Frames, parent: str, child: str, boundary: int) -> StoryFrames:
    """Return the parent's rows followed by the child's own rows on one seq axis (the two
    parts stacked, each column joined when read: ``.joined()`` gives DataFrames).

    The inherited prefix is drawn once (the parent's copy); the parent's abandoned suffix
    keeps its branch, so it gets its own lane, and the child's branch continues from
    ``boundary + 1`` next to it, aligned at the fork point. A turn the child closed
    (``forked``) replaces the parent's open copy of it.
    """
    if isinstance(frames, ForkFrames) and frames.pair == (parent, child, boundary):
        story = frames.story()
        if story is not None:
            return story
    of = {name: getattr(frames, name) for name in ("events", "turns", "steps", "calls")}
    theirs = StoryFrames(*(frame[frame["session"] == parent] for frame in of.values()))
    mine = {name: frame[frame["session"] == child] for name, frame in of.items()}
    events, calls = mine["events"], mine["calls"]
    ends_later = {name: mine[name][mine[name]["end_seq"].isna()
                                   | (mine[name]["end_seq"] > boundary)]
                  for name in ("turns", "steps")}
    return joined_story(parent, theirs, child, StoryFrames(
        events[~events["inherited"]], ends_later["turns"], ends_later["steps"],
        calls[calls["requested_seq"] > boundary]))


def fork_pair(frames: Frames) -> tuple[str, str, int] | None:
    """Return ``(parent, child, boundary seq)`` when the frames hold exactly a parent and
    its fork child, else None (``ForkFrames`` know their pair; other frames' lineage
    tells it)."""
    if isinstance(frames, ForkFrames):
        return frames.pair
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
