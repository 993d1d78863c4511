"""The turn and step a file has open while it is checked: a turn started inside an open
turn, or a step inside an open step, is a warning (format §4.1: the runtime's validator
refuses both; crash repair would then close calls of different steps together)."""

from __future__ import annotations

from typing import Any

TURN_START, TURN_END, STEP_START, STEP_END = "turn/start", "turn/end", "step/start", "step/end"
BOUNDARY_TYPES = frozenset({TURN_START, TURN_END, STEP_START, STEP_END})
TURN_BOUNDARIES = frozenset({TURN_START, TURN_END})


class OpenBoundaries:
    """The open turn and step, each with the file line that opened it (None: none open)."""

    __slots__ = ("step", "turn")

    def __init__(self) -> None:
        self.turn: tuple[Any, int] | None = None
        self.step: tuple[Any, Any, int] | None = None

    def copy(self) -> OpenBoundaries:
        """Return an independent copy (to try a block on)."""
        copied = OpenBoundaries()
        copied.turn, copied.step = self.turn, self.step
        return copied

    def see(self, kind: str, turn: Any, step: Any, line: int) -> tuple[str, str] | None:
        """Take one boundary event of ``kind`` on ``line``; return the ``(kind, message)``
        of its warning when it opens a turn or step inside an open one, else None."""
        warning = None
        if kind == TURN_START:
            if self.turn is not None:
                warning = ("nested_turn", f"turn/start of turn {turn} while turn "
                           f"{self.turn[0]} (started on line {self.turn[1]}) is still open")
            self.turn, self.step = (turn, line), None
        elif kind == STEP_START:
            if self.step is not None:
                open_turn, open_step, opened = self.step
                warning = ("nested_step", f"step/start of step {step} (turn {turn}) while "
                           f"step {open_step} of turn {open_turn} (started on line {opened}) "
                           "is still open")
            self.step = (turn, step, line)
        elif kind == STEP_END:
            self.step = None
        else:
            self.turn = self.step = None
        return warning
