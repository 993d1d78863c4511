"""The frames of several sessions joined from each session's own frames (no rebuild)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames import Frames
from ledgerviz.frames.calls import CALL_SCHEMA
from ledgerviz.frames.columns import (
    assemble,
    category_column,
    joined,
    joined_inferred,
    session_column,
    typed,
)
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


class StackedRows:
    """The rows of frames of one session each (``keys[i]`` that of ``parts[i]``, typed by
    ``schema``), one after another, read as one frame without joining them: a column is joined
    when first read (then kept), a selection of rows makes a frame of those rows alone, and
    :meth:`frame` joins every column (:func:`joined_frame`). ``rows[i]`` (None: all) picks the
    positions of ``parts[i]`` taken."""

    def __init__(self, keys: Sequence[str], parts: Sequence[pd.DataFrame],
                 schema: dict[str, Any], rows: Sequence[np.ndarray | None] | None = None) -> None:
        self._keys = list(keys)
        self._parts = list(parts)
        self._rows = list(rows) if rows is not None else [None] * len(self._parts)
        self._schema = schema
        self._lengths = [len(part) if taken is None else len(taken)
                         for part, taken in zip(self._parts, self._rows, strict=True)]
        self._columns: dict[str, pd.Series] = {}

    def __len__(self) -> int:
        return sum(self._lengths)

    @property
    def index(self) -> pd.RangeIndex:
        """Return the row labels the joined frame has (0, 1, ...)."""
        return pd.RangeIndex(len(self))

    def __getitem__(self, key: str | np.ndarray) -> Any:
        """Return column ``key`` (a Series, as the joined frame's), or the frame of the rows a
        boolean array selects (a frame of those rows alone, numbered 0, 1, ... as
        :func:`joined_frame` numbers them)."""
        if isinstance(key, str):
            if key not in self._columns:
                self._columns[key] = self._column(key)
            return self._columns[key]
        chosen = np.asarray(key, dtype=bool)
        bounds = np.cumsum([0, *self._lengths])
        return joined_frame(self._keys, [
            self._part(i).iloc[np.flatnonzero(chosen[bounds[i]:bounds[i + 1]])]
            for i in range(len(self._parts))], self._schema)

    def frame(self) -> pd.DataFrame:
        """Return every row as one frame (:func:`joined_frame`)."""
        return joined_frame(self._keys, [self._part(i) for i in range(len(self._parts))],
                            self._schema)

    def _part(self, i: int) -> pd.DataFrame:
        taken = self._rows[i]
        return self._parts[i] if taken is None else self._parts[i].iloc[taken]

    def _column(self, name: str) -> pd.Series:
        if name == "session":
            values: Any = session_column(self._keys, np.repeat(np.arange(len(self._parts)),
                                                               self._lengths))
        else:
            values = _joined_column([
                part[name] if taken is None else part[name].iloc[taken]
                for part, taken in zip(self._parts, self._rows, strict=True)],
                self._schema[name])
        return pd.Series(values, name=name)


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
