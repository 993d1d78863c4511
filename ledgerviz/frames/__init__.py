"""pandas DataFrames of sessions under one recovery policy: events, turns, steps, calls, ..."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

import pandas as pd

from ledgerviz.frames.calls import CALL_SCHEMA, call_columns
from ledgerviz.frames.columns import assemble
from ledgerviz.frames.events import EVENT_SCHEMA, event_columns
from ledgerviz.frames.lineage import LINEAGE_SCHEMA, lineage_columns
from ledgerviz.frames.messages import MESSAGE_SCHEMA, message_columns
from ledgerviz.frames.turns import STEP_SCHEMA, TURN_SCHEMA, step_columns, turn_columns
from ledgerviz.frames.unchecked import unchecked_event, unreadable_seq
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.recovery.analysis import Analysis
from ledgerviz.wording import counted

FRAME_NAMES = ("events", "turns", "steps", "calls", "messages", "lineage")
FRAME_SCHEMAS = {"events": EVENT_SCHEMA, "turns": TURN_SCHEMA, "steps": STEP_SCHEMA,
                 "calls": CALL_SCHEMA, "messages": MESSAGE_SCHEMA, "lineage": LINEAGE_SCHEMA}


class Frames:
    """The DataFrames of a set of sessions; each frame is built on first access, then cached."""

    def __init__(self, sessions: Iterable[tuple[str, SessionLog, Analysis]], *,
                 as_read: bool = False) -> None:
        self._sessions = list(sessions)
        self._as_read = as_read
        """Whether the frames promise events as a ledger reader checked them (a ``Ledger``'s
        frames): then a recorded event whose seq no frame holds is refused, not shown as
        missing (a seq the reader would refuse, or read as another value)."""

    @cached_property
    def _view(self) -> SessionsView:
        """Return the columns of every session that every frame is built from (made once)."""
        with paused_gc():
            return SessionsView.of(self._sessions)

    @property
    def view(self) -> SessionsView:
        """Return the columns every frame is built from (see ``SessionsView``)."""
        return self._view

    def _build(
        self, columns_of: Callable[[SessionsView], dict[str, Any]], schema: dict[str, Any]
    ) -> pd.DataFrame:
        """Return one frame: the columns of all sessions at once, typed by ``schema``.

        Hand-made sessions no reader checked may hold an event of a wrong shape: the
        ``TypeError`` raised then names it, as it does, ``as_read``, for a recorded event
        whose seq no frame holds (no integer of 64 bits, which a frame shows as missing)."""
        try:
            view = self._view
            with paused_gc():
                frame = assemble(view.keys, columns_of(view), schema)
        except (TypeError, AttributeError) as error:
            said = unchecked_event((log for _, log, _ in self._sessions), error)
            if said is None:
                raise
            raise TypeError(said) from error
        if self._as_read and (view.seq_array.isna() & view.recorded).any():
            raise TypeError(unreadable_seq(view.logs))
        return frame

    @cached_property
    def events(self) -> pd.DataFrame:
        """Return one row per event (recorded, then the policy's synthetic ones)."""
        return self._build(event_columns, EVENT_SCHEMA)

    @cached_property
    def turns(self) -> pd.DataFrame:
        """Return one row per turn."""
        return self._build(turn_columns, TURN_SCHEMA)

    @cached_property
    def steps(self) -> pd.DataFrame:
        """Return one row per (turn, step)."""
        return self._build(step_columns, STEP_SCHEMA)

    @cached_property
    def calls(self) -> pd.DataFrame:
        """Return one row per requested tool call, with its status under the record."""
        return self._build(call_columns, CALL_SCHEMA)

    @cached_property
    def messages(self) -> pd.DataFrame:
        """Return one row per message-producing event."""
        return self._build(message_columns, MESSAGE_SCHEMA)

    @cached_property
    def lineage(self) -> pd.DataFrame:
        """Return one row per session: parent, relation, inherited prefix."""
        return self._build(lineage_columns, LINEAGE_SCHEMA)

    @property
    def session_count(self) -> int:
        """Return how many sessions these frames describe."""
        return len(self._sessions)

    @property
    def event_count(self) -> int:
        """Return how many events the sessions' files hold."""
        return sum(len(log.events) for _key, log, _analysis in self._sessions)

    def schemas(self) -> dict[str, list[str]]:
        """Return each frame's columns after ``session`` (known without building the frame)."""
        return {name: list(FRAME_SCHEMAS[name]) for name in FRAME_NAMES}

    def built(self, name: str) -> pd.DataFrame | None:
        """Return frame ``name`` if it was built already, else None (never builds it)."""
        if name not in FRAME_NAMES:
            raise KeyError(f"no frame {name!r}; frames are {FRAME_NAMES}")
        return self.__dict__.get(name)

    def __repr__(self) -> str:
        built = [name for name in FRAME_NAMES if name in self.__dict__]
        return (f"<Frames: {counted(self.session_count, 'session')}, "
                f"{counted(self.event_count, 'event', ',')}; "
                f"built: {', '.join(built) or 'none yet'}>")

    def all(self) -> dict[str, pd.DataFrame]:
        """Return every frame by name (building the ones not built yet)."""
        return {name: getattr(self, name) for name in FRAME_NAMES}


def build_frames(sessions: Iterable[tuple[str, SessionLog, Analysis]], *,
                 as_read: bool = False) -> Frames:
    """Return the lazily built ``Frames`` of ``(session key, SessionLog, Analysis)`` triples
    (``as_read``: see ``Frames``)."""
    return Frames(sessions, as_read=as_read)


__all__ = ["FRAME_NAMES", "Frames", "build_frames"]
