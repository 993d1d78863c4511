"""The turn and step a foreign reader has open, shared by the event writer
(``foreign.EventWriter``) and the typed routes' rows (``staged.StagedTurns``).

Opening a step opens a turn first when none is open; opening a turn ends the open one
(with the reason given); ending a turn ends its open step first. How each boundary is
written is the subclass's (``boundary``).
"""

from __future__ import annotations

from typing import Any


class OpenTurns:
    """Numbers and opens turns and steps; a subclass writes their boundaries."""

    unmarked: Any
    """The reason a turn ends when the next one opens without a reason given."""

    def __init__(self) -> None:
        self.turn = self.step = 0
        self.turn_open = self.step_open = False

    def boundary(self, kind: str, line: int, reason: Any = None) -> None:
        """Write a ``turn/start``, ``turn/end`` (with ``reason``), ``step/start`` or
        ``step/end`` of the current turn and step, read on line ``line``."""
        raise NotImplementedError

    def open_turn(self, line: int, previous: Any = None) -> None:
        """Start the next turn, ending an open one first with the reason ``previous``
        (``unmarked`` when None)."""
        if self.turn_open:
            self.close_turn(self.unmarked if previous is None else previous, line)
        self.turn += 1
        self.step = 0
        self.turn_open = True
        self.boundary("turn/start", line)

    def close_turn(self, reason: Any, line: int) -> None:
        """End the open turn (and its open step) with ``reason``; none open: nothing."""
        if not self.turn_open:
            return
        self.close_step(line)
        self.turn_open = False
        self.boundary("turn/end", line, reason)

    def open_step(self, line: int) -> None:
        """Start the next step of the open turn (a turn first when none is open)."""
        if not self.turn_open:
            self.open_turn(line)
        self.close_step(line)
        self.step += 1
        self.step_open = True
        self.boundary("step/start", line)

    def close_step(self, line: int) -> None:
        """End the open step; none open: nothing."""
        if self.step_open:
            self.step_open = False
            self.boundary("step/end", line)
