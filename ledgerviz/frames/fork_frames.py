"""The frames of a parent and the fork child seeded from it, and their story's rows."""

from __future__ import annotations

from functools import cached_property

from ledgerviz.frames import Frames
from ledgerviz.frames.joined import JoinedFrames
from ledgerviz.frames.prefix import PrefixFrames
from ledgerviz.frames.story import StoryFrames, joined_story


class ForkFrames(JoinedFrames):
    """The frames of a parent and its fork child seeded at seq ``boundary`` (one session
    each), one after another. When the child's frames are sliced from its parent's whole
    session (a :class:`PrefixFrames`), :meth:`story` builds the fork story from the rows the
    child adds, without the child's whole frames."""

    def __init__(self, parent: Frames, child: Frames, boundary: int) -> None:
        super().__init__([parent, child])
        self.boundary = boundary
        self.pair = (parent._sessions[0][0], child._sessions[0][0], boundary)
        """The parent's key, the child's key and the boundary seq."""

    def story(self) -> StoryFrames | None:
        """Return the fork story's frames (``plot.story.fork_story``) built from the child's
        own rows (once: a view redrawn at each zoom draws them again), or None when they
        cannot be built so."""
        return self._story

    @cached_property
    def _story(self) -> StoryFrames | None:
        parent, child = self._parts
        own = child.own_rows(self.boundary) if isinstance(child, PrefixFrames) else None
        if own is None:
            return None
        theirs = StoryFrames(parent.events, parent.turns, parent.steps, parent.calls)
        return joined_story(self.pair[0], theirs, self.pair[1], own)
