"""The rows a foreign format's typed route writes straight into its session's table
(``codex_columns.ColumnRollout``, ``claude_code_typed.ColumnWriter``): the columns every row
has, appended row by row by the route's own ``add``; the values of the sparse ones (object
columns, usage counts, error flags) staged by row, then scattered into those columns grown
to every row with their missing values; the table assembled from them (``EventTable.of`` of
the events the route stands in for, column for column). ``StagedTurns`` adds the rows of a
route that numbers its own turns and steps (Codex, Gemini)."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from ledgerviz.ledger.formats.open_turns import OpenTurns
from ledgerviz.ledger.shapes import MAX_INTEGER
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
        self.messages = SparseRows("role", "source_kind", "text")
        """The message rows' values (a tool/result is a message too)."""
        self.dispatches = SparseRows("call_id", "tool_name", "arguments")
        self.answers = SparseRows("call_id")
        """The tool/result rows' call ids."""
        self.ends = SparseRows("end_reason")
        self.models = SparseRows("provider", "model")
        self.usage = SparseRows(*USAGE_COLUMNS)
        """The usage counts of the assistant/message rows that have usage."""
        self.errors: dict[int, tuple[bool, bool]] = {}
        """Each tool/result row's error and synthetic flags."""
        self.columns: dict[str, list[Any]] = {name: [] for name in OBJECT_COLUMNS}
        self.counts = {name: array("q") for name in USAGE_COLUMNS}
        self.is_error, self.synthetic = array("b"), array("b")
        self.filled = 0
        """How many rows the sparse columns above hold (``scatter``)."""

    def request(self, row: int, call_id: str, name: str | None, arguments: str) -> None:
        """Note a call the message of ``row`` requests."""
        requests = self.requests
        requests.row.append(row)
        requests.call_id.append(call_id)
        requests.name.append(name)
        requests.arguments.append(arguments)

    def scatter(self) -> None:
        """Grow the sparse columns to every row written, the new rows holding each
        column's missing value, and set the values staged so far (then let go: they are
        not held twice)."""
        new = len(self.codes) - self.filled
        for column in self.columns.values():
            column.extend([None] * new)
        for counts in self.counts.values():
            counts.extend(array("q", [MISSING]) * new)
        self.is_error.extend(array("b", [-1]) * new)
        self.synthetic.extend(array("b", [-1]) * new)
        self.filled += new
        for rows in (self.messages, self.dispatches, self.answers, self.ends, self.models):
            rows.scatter(self.columns)
        self.usage.scatter(self.counts)
        is_error, synthetic = self.is_error, self.synthetic
        for row, (error, made) in self.errors.items():
            is_error[row], synthetic[row] = error, made
        self.errors = {}

    def staged_table(self) -> EventTable:
        """Return the rows as the session's table (once every row's values are
        ``scatter``ed)."""
        count = len(self.codes)
        return EventTable(
            type_names=list(self.code_of), type_code=self.codes, seq=range(count),
            time=self.times, turn=self.turns, step=self.steps, surface_op=self.ops,
            line=self.lines, start=None, stop=None, is_error=self.is_error,
            synthetic=self.synthetic, requests=self.requests, **self.columns, **self.counts)


def usage_count(value: Any) -> int:
    """Return a usage count's column value (``table._count``)."""
    return value if value.__class__ is int and 0 <= value <= MAX_INTEGER else MISSING


class SparseRows:
    """The values some rows hold in some of the table's columns (object columns, or int64
    ones); the other rows keep the column's missing value."""

    __slots__ = ("add", "names", "rows", "values")

    def __init__(self, *names: str) -> None:
        self.names = names
        self.rows = array("q")
        self.values: list[Any] = []
        """The staged rows' values, a row's one after another (one for each column)."""
        self.add: Callable[..., None] = _adder(self.rows.append, self.values.extend)
        """``add(row, *values)``: stage the values of ``row``, one for each column."""

    def put(self, index: int, column: int, value: Any) -> None:
        """Set the value in column ``column`` (of ``names``) of the ``index``-th row staged."""
        self.values[index * len(self.names) + column] = value

    def scatter(self, columns: dict[str, Any]) -> None:
        """Set the values in ``columns`` (each holding every row), and let them go."""
        rows, values, width = self.rows, self.values, len(self.names)
        for offset, name in enumerate(self.names):
            column = columns[name]
            for row, value in zip(rows, values[offset::width], strict=True):
                column[row] = value
        del values[:], rows[:]


def _adder(row: Callable[[int], None], values: Callable[[tuple[Any, ...]], None]
           ) -> Callable[..., None]:
    """Return a function that appends a row to ``row`` and its values to ``values``, one
    call each (a typed route calls it for most of its rows: no loop, no method lookup)."""

    def add(at: int, *staged: Any) -> None:
        row(at)
        values(staged)
    return add


class StagedTurns(StagedRows, OpenTurns):
    """The rows of a typed route that opens and closes its own turns and steps, as
    ``foreign.EventWriter`` does: each row appended with the time being read."""

    unmarked = "unmarked"

    def __init__(self) -> None:
        StagedRows.__init__(self)
        OpenTurns.__init__(self)
        self.time_cell = MISSING
        """The time of the line being read, as the time column holds it."""
        self.appends = (self.codes.append, self.times.append, self.turns.append,
                        self.steps.append, self.ops.append, self.lines.append)
        """How ``add`` appends to the columns every row has."""

    def add(self, kind: str, line: int, turn: int = MISSING, step: int = MISSING,
            op: int = 0) -> int:
        """Append one row; return it."""
        row = len(self.codes)
        code, time, turns, steps, ops, lines = self.appends
        code(self.code_of[kind])
        time(self.time_cell)
        turns(turn)
        steps(step)
        ops(op)
        lines(line)
        return row

    def boundary(self, kind: str, line: int, reason: Any = None) -> None:
        """Append a turn's or step's boundary row (a turn's end with its ``reason``)."""
        if kind == "turn/start":
            self.add(kind, line, self.turn)
        elif kind == "turn/end":
            self.end_turn(line, reason)
        else:
            self.add(kind, line, self.turn, self.step)

    def end_turn(self, line: int, reason: Any) -> None:
        """Append the open turn's end row, with its ``reason``."""
        self.ends.add(self.add("turn/end", line, self.turn), reason)
