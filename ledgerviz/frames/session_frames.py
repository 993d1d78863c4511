"""The frames of one whole session under one policy, and what slicing its prefixes needs
(see ``frames.prefix``)."""

from __future__ import annotations

from collections.abc import Callable
from copy import copy
from dataclasses import fields
from functools import cached_property, partial
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames import Frames
from ledgerviz.frames.events import (
    TOOL_EVENTS,
)
from ledgerviz.frames.rows import Rows
from ledgerviz.frames.turns import (
    STEP_SCHEMA,
    TURN_SCHEMA,
    step_arrays,
    step_columns,
    turn_arrays,
    turn_columns,
)
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.table import MISSING
from ledgerviz.recovery.analysis import Analysis


class SessionFrames:
    """The frames of one whole session under one policy, and what slicing prefixes needs."""

    def __init__(self, key: str, log: SessionLog, analysis: Analysis) -> None:
        self.analysis = analysis
        self.frames = _WholeFrames([(key, log, analysis)], self)
        self._recorded_before = np.cumsum(np.frombuffer(analysis.marks.recorded, np.int8),
                                          dtype=np.int64)
        self._call_rows: dict[object, np.ndarray | None] = {}

    def serving(self, analysis: Analysis) -> SessionFrames | None:
        """Return these frames for ``analysis``, another policy's analysis of the same
        session, when it differs from this one in its policy alone (so every frame is the
        same: a session that ends with every call answered), else None."""
        if not _alike(self.analysis, analysis):
            return None
        twin = copy(self)
        twin.analysis = analysis
        return twin

    def shared(self, recorded: int) -> int:
        """Return how many first events of the analysis hold its first ``recorded`` recorded
        events (and the results recovery put between them)."""
        if recorded <= 0:
            return 0
        return int(np.searchsorted(self._recorded_before, recorded)) + 1

    def shared_with(self, analysis: Analysis, recorded: int) -> int | None:
        """Return how many first events ``analysis`` (of a prefix of the session, resumed
        from the same scan) shares with the whole session's: those holding its first
        ``recorded`` recorded events; None when its events there are not the same."""
        shared, whole = self.shared(recorded), self.analysis.events
        if shared > min(len(whole), len(analysis.events)) or (
                shared and analysis.events[shared - 1] is not whole[shared - 1]):
            return None
        return shared

    @cached_property
    def turn_rows(self) -> Rows:
        """Return the whole session's turn rows."""
        return Rows(turn_arrays(self.frames.view))

    @cached_property
    def step_rows(self) -> Rows:
        """Return the whole session's step rows."""
        return Rows(step_arrays(self.frames.view))

    def call_rows(self, key: object, rows: Rows, fields: tuple[str, ...],
                  keys: Callable[[], list[Any]]) -> np.ndarray | None:
        """Return the row of ``rows`` each call of the whole session is counted in (see
        :meth:`Rows.rows_of`; made once per ``key``, a frame's): found by numpy where every
        key (the calls' ``fields``) is an int (pair), else from ``keys()``, each call's key."""
        if key not in self._call_rows:
            found = int_call_rows(self.frames.view, rows, fields)
            self._call_rows[key] = rows.rows_of(keys()) if found is None else found
        return self._call_rows[key]

    @cached_property
    def tool_positions(self) -> ToolPositions | None:
        """Return the positions of the tool events by seq (see :class:`ToolPositions`)."""
        return ToolPositions.of(self.frames.view)


PAIR_BITS = 31
"""A (turn, step) pair of ints from 0 to 2**31 - 1 is one int64 key."""


def int_call_rows(view: SessionsView, rows: Rows, fields: tuple[str, ...]) -> np.ndarray | None:
    """Return :meth:`Rows.rows_of` the key (``fields``: the turn, or the turn and step) of
    every call of a one-session ``view``, found by sorting the rows' keys and searching
    them; None (look them up one by one) unless every key is an int (a turn and a step from
    0 to 2**31 - 1) and no two rows share one."""
    row_keys, call_keys = np.zeros(len(rows.reach), dtype=np.int64), np.zeros(
        len(view.calls), dtype=np.int64)
    for name in fields:
        (values, missing), held = view.call_ints(name), rows.arrays[name]
        absent = held == MISSING
        if missing.any() or absent.any() or not len(held):
            return None
        if len(fields) > 1:
            if (min(values.min(initial=0), held.min()) < 0
                    or max(values.max(initial=0), held.max()) >> PAIR_BITS):
                return None
            row_keys, call_keys = row_keys << PAIR_BITS, call_keys << PAIR_BITS
        row_keys, call_keys = row_keys | held, call_keys | values
    order = np.argsort(row_keys, kind="stable")
    ordered = row_keys[order]
    if (ordered[1:] == ordered[:-1]).any():
        return None
    at = np.minimum(np.searchsorted(ordered, call_keys), len(ordered) - 1)
    return np.where(ordered[at] == call_keys, order[at], -1)


class ToolPositions:
    """The position of each tool event of a session by its seq: a sorted array, searched."""

    def __init__(self, seqs: np.ndarray, positions: np.ndarray) -> None:
        order = np.argsort(seqs, kind="stable")
        self._seqs, self._positions = seqs[order], positions[order]

    @classmethod
    def of(cls, view: SessionsView) -> ToolPositions | None:
        """Return the tool events of ``view``, or None when there are none, or one's seq is
        not an int, or two share a seq."""
        positions = view.positions_of(TOOL_EVENTS)
        seqs = view.seq_array[positions]
        if not len(positions) or seqs.isna().any():
            return None
        found = cls(seqs.to_numpy(dtype=np.int64), positions)
        return None if (found._seqs[1:] == found._seqs[:-1]).any() else found

    def get(self, seq: int, default: int) -> int:
        """Return the position of the tool event with ``seq``, else ``default``."""
        i = int(np.searchsorted(self._seqs, seq))
        found = i < len(self._seqs) and self._seqs[i] == seq
        return int(self._positions[i]) if found else default


_LIST_FORMS = frozenset({"policy", "branch", "synthetic", "recorded", "recovery_code", "calls"})
_FACTS = sorted((f.name for f in fields(Analysis)
                 if f.name not in _LIST_FORMS and not f.name.startswith("_")),
                key=lambda name: name not in ("closers", "fork_points", "abandoned_seqs"))
"""What an analysis says besides its policy, the short lists first (they differ soonest);
the annotations and calls in their column forms (``marks``, ``call_columns``) alone."""


def _alike(one: Analysis, other: Analysis) -> bool:
    """Return whether two analyses say the same of every event, call and message."""
    return all(getattr(one, name) == getattr(other, name) for name in _FACTS)


class _WholeFrames(Frames):
    """The frames of a whole session, its turns and steps built from the rows its
    :class:`SessionFrames` keeps (made once for both)."""

    def __init__(self, sessions: list[tuple[str, SessionLog, Analysis]],
                 whole: SessionFrames) -> None:
        super().__init__(sessions)
        self._whole = whole

    @cached_property
    def turns(self) -> pd.DataFrame:
        """Return one row per turn (see :attr:`Frames.turns`)."""
        return self._build(partial(turn_columns, arrays=self._whole.turn_rows.arrays), TURN_SCHEMA)

    @cached_property
    def steps(self) -> pd.DataFrame:
        """Return one row per (turn, step) (see :attr:`Frames.steps`)."""
        return self._build(partial(step_columns, arrays=self._whole.step_rows.arrays), STEP_SCHEMA)
