"""The rows a foreign format's typed route writes straight into its session's table
(``codex_columns.ColumnRollout``, ``claude_code_typed.ColumnWriter``): the columns every row
has, appended row by row by the route's own ``add``; the sparse ones (object columns, usage
counts, error flags), grown to every row with their missing values; the table assembled
from them (``EventTable.of`` of the events the route stands in for, column for column)."""

from __future__ import annotations

from array import array
from typing import Any

from ledgerviz.ledger.table import OBJECT_COLUMNS, USAGE_COLUMNS, EventTable, Requests, Shared
from ledgerviz.recovery.vocab import MISSING


class TypeCodes(dict[str, int]):
    """The code of each event type, numbered in order of first appearance (a type met
    the first time is given the next code)."""

    def __missing__(self, kind: str) -> int:
        code = self[kind] = len(self)
        return code


class StagedRows:
    """One session's rows as a typed route writes them (see the module docstring)."""

    def __init__(self) -> None:
        self.share = Shared().one
        """The one object of each equal label string."""
        self.code_of = TypeCodes()
        self.codes = array("H")
        """Each row's event type code, then its time, turn, step, surface op and line."""
        self.times = array("q")
        self.turns = array("q")
        self.steps = array("q")
        self.ops = array("b")
        self.lines = array("q")
        self.requests = Requests(array("q"), [], [], [])
        self.columns: dict[str, list[Any]] = {name: [] for name in OBJECT_COLUMNS}
        self.counts = {name: array("q") for name in USAGE_COLUMNS}
        self.is_error, self.synthetic = array("b"), array("b")
        self.filled = 0
        """How many rows the sparse columns above hold (``fill``)."""

    def fill(self) -> None:
        """Grow the sparse columns to every row written, the new rows holding each
        column's missing value (the route then sets the values it staged)."""
        new = len(self.codes) - self.filled
        for column in self.columns.values():
            column.extend([None] * new)
        for counts in self.counts.values():
            counts.extend(array("q", [MISSING]) * new)
        self.is_error.extend(array("b", [-1]) * new)
        self.synthetic.extend(array("b", [-1]) * new)
        self.filled += new

    def staged_table(self) -> EventTable:
        """Return the rows as the session's table (every row ``fill``ed and its values
        set)."""
        count = len(self.codes)
        return EventTable(
            type_names=list(self.code_of), type_code=self.codes, seq=array("q", range(count)),
            time=self.times, turn=self.turns, step=self.steps, surface_op=self.ops,
            line=self.lines, start=array("q", [MISSING]) * count,
            stop=array("q", [MISSING]) * count, is_error=self.is_error,
            synthetic=self.synthetic, requests=self.requests, **self.columns, **self.counts)
