"""The frames of several sessions joined from each session's own frames (no rebuild)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames import Frames
from ledgerviz.frames.calls import CALL_SCHEMA
from ledgerviz.frames.columns import assemble, category_column, joined, joined_inferred, typed
from ledgerviz.frames.events import EVENT_SCHEMA
from ledgerviz.frames.lineage import CATALOG, LINEAGE_SCHEMA
from ledgerviz.frames.turns import STEP_SCHEMA, TURN_SCHEMA
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.gcpause import paused_gc


class JoinedFrames(Frames):
    """The frames of the sessions of ``parts`` (frames of one session each), one after
    another: equal to the frames built over all of them at once."""

    def __init__(self, parts: Sequence[Frames]) -> None:
        super().__init__([triple for part in parts for triple in part._sessions])
        self._parts = list(parts)

    @cached_property
    def _view(self) -> SessionsView:
        with paused_gc():
            return SessionsView.joined([part.view for part in self._parts]) or super()._view

    def _joined(self, name: str, schema: dict[str, Any]) -> pd.DataFrame:
        keys = [key for part in self._parts for key, _, _ in part._sessions]
        return joined_frame(keys, [getattr(part, name) for part in self._parts], schema)

    @cached_property
    def events(self) -> pd.DataFrame:
        """Return one row per event (see :attr:`Frames.events`)."""
        return self._joined("events", EVENT_SCHEMA)

    @cached_property
    def turns(self) -> pd.DataFrame:
        """Return one row per turn (see :attr:`Frames.turns`)."""
        return self._joined("turns", TURN_SCHEMA)

    @cached_property
    def steps(self) -> pd.DataFrame:
        """Return one row per (turn, step) (see :attr:`Frames.steps`)."""
        return self._joined("steps", STEP_SCHEMA)

    @cached_property
    def calls(self) -> pd.DataFrame:
        """Return one row per requested tool call (see :attr:`Frames.calls`)."""
        return self._joined("calls", CALL_SCHEMA)

    @cached_property
    def lineage(self) -> pd.DataFrame:
        """Return one row per session (see :attr:`Frames.lineage`): each part's own, unless a
        session catalogues subagents (a catalog may name a session of another part)."""
        if any(part.view.holds(CATALOG) for part in self._parts):
            return super().lineage
        return self._joined("lineage", LINEAGE_SCHEMA)


def joined_frame(keys: Sequence[str], frames: Sequence[pd.DataFrame],
                 schema: dict[str, Any]) -> pd.DataFrame:
    """Return the rows of ``frames`` (frames of one session each, ``keys[i]`` that of
    ``frames[i]``, typed by ``schema``) one after another, as one frame of their sessions."""
    with paused_gc():
        columns: dict[str, Any] = {"session": np.repeat(
            np.arange(len(frames)), [len(frame) for frame in frames])}
        for column, convert in schema.items():
            columns[column] = _joined_column([frame[column] for frame in frames], convert)
        return assemble(keys, columns, schema)


def _joined_column(columns: list[pd.Series], convert: Any) -> Any:
    """Return the values of ``columns`` one after another, typed as ``convert`` types them."""
    parts = [typed(column) for column in columns]
    result = parts[0]
    for part in parts[1:]:
        if isinstance(result, pd.Categorical) and not result.categories.equals(part.categories):
            result = joined_inferred(result, part) if convert is category_column else None
            if result is None:  # convert the values (missing ones as None)
                return convert([None if _missing(value) else value
                                for column in columns for value in column.astype(object)])
        else:
            result = joined(result, part)
    return result


def _missing(value: Any) -> bool:
    """Whether a value read back from a typed column stands for a missing one."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)
