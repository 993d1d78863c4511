"""The rows a foreign format's typed route writes straight into its session's table
(``codex_columns.ColumnRollout``, ``claude_code_typed.ColumnWriter``): the columns every row
has, appended row by row by the route's own ``add``; the facts (``fact_groups``) staged by
row, then put in their groups: a group of one or a few event types (calls, results,
messages, turn ends) holds every row of its types, the missing value where none was staged;
the routes and usage groups hold the rows staged alone. The table is assembled from them
(``EventTable.of`` of the events the route stands in for, column for column).
``StagedTurns`` adds the rows of a route that numbers its own turns and steps (Codex,
Gemini)."""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable
from itertools import compress, repeat
from operator import eq, lt
from typing import Any

from ledgerviz.ledger.fact_groups import GROUP_KINDS, FactGroup, Requests, Usage, missing_values
from ledgerviz.ledger.formats.open_turns import OpenTurns
from ledgerviz.ledger.shapes import MAX_INTEGER
from ledgerviz.ledger.table import MESSAGE_TYPES, EventTable, Shared
from ledgerviz.recovery.vocab import MISSING

WHOLE_TYPES = {"calls": ("tool/call",), "results": ("tool/result",),
               "messages": tuple(sorted(MESSAGE_TYPES)), "ends": ("turn/end",)}
"""The event types whose every row a group holds (the other groups: the rows staged)."""


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
        self.requests = Requests()
        self.groups: dict[str, FactGroup] = {
            name: kind() for name, kind in GROUP_KINDS.items() if kind is not Requests}
        """The table's fact groups but the requests, as far as ``scatter`` filled them."""
        self.stagings: list[tuple[SparseRows, FactGroup]] = []
        """Each staging and the group it fills (see ``staging``)."""
        self.messages = self.staging("messages", "role", "source_kind", "text")
        """The message rows' values (a tool/result is a message too)."""
        self.dispatches = self.staging("calls", "call_id", "tool_name", "arguments")
        self.answers = self.staging("results", "call_id")
        """The tool/result rows' call ids."""
        self.ends = self.staging("ends", "end_reason")
        self.models = self.staging("routes", "provider", "model")
        self.usage = self.staging("usage", *Usage.names())
        """The usage counts of the assistant/message rows that have usage."""
        self.errors: dict[int, tuple[bool, bool]] = {}
        """Each tool/result row's error and synthetic flags."""
        self.filled = 0
        """How many rows the groups above are filled for (``scatter``)."""

    def staging(self, group: str, *names: str) -> SparseRows:
        """Return a new staging of the facts ``names`` of group ``group`` (``scatter``
        puts them there)."""
        rows = SparseRows(*names)
        self.stagings.append((rows, self.groups[group]))
        return rows

    def request(self, row: int, call_id: str, name: str | None, arguments: str) -> None:
        """Note a call the message of ``row`` requests."""
        requests = self.requests
        requests.row.append(row)
        requests.call_id.append(call_id)
        requests.name.append(name)
        requests.arguments.append(arguments)

    def scatter(self) -> None:
        """Add the rows written since the last call to the groups of their types, holding
        each fact's missing value, and put the values staged so far in their groups (then
        let them go: they are not held twice)."""
        first, self.filled = self.filled, len(self.codes)
        added = self.codes[first:]
        index: dict[int, dict[int, int]] = {}
        for name, kinds in WHOLE_TYPES.items():
            group = self.groups[name]
            rows: list[int] = []
            for kind in kinds:
                if kind in self.code_of:
                    rows += compress(range(first, self.filled),
                                     map(eq, added, repeat(self.code_of[kind])))
            if len(kinds) > 1:
                rows.sort()
            index[id(group)] = dict(zip(rows, range(len(group), len(group) + len(rows)),
                                        strict=True))
            group.row.extend(rows)
            for column in group.columns():
                column.extend(missing_values(column, len(rows)))
        for rows, group in self.stagings:
            rows.scatter(group, index.get(id(group), {}))
        results = self.groups["results"]
        is_error, synthetic = results.is_error, results.synthetic
        places = index.get(id(results), {})
        for row, (error, made) in self.errors.items():
            at = places.get(row)
            if at is None:
                held = len(results)
                at = results.hold(row)
                if len(results) != held:
                    places = {}  # a row added: those after it moved
            is_error[at], synthetic[at] = error, made
        self.errors = {}

    def put(self, group: str, row: int, **values: Any) -> None:
        """Set facts of a row ``scatter``ed (a value known only later)."""
        held = self.groups[group]
        at = held.hold(row)
        for name, value in values.items():
            getattr(held, name)[at] = value

    def put_table(self, row: int, facts: EventTable) -> None:
        """Set the facts of ``row``, once ``scatter``ed, to those of the one-row ``facts``."""
        for name in self.groups:
            group = getattr(facts, name)
            if len(group):
                self.put(name, row, **{key: column[0] for key, column in zip(
                    group.names(), group.columns(), strict=True)})

    def staged_table(self) -> EventTable:
        """Return the rows as the session's table (once every row's values are
        ``scatter``ed)."""
        count = len(self.codes)
        return EventTable(
            type_names=list(self.code_of), type_code=self.codes, seq=range(count),
            time=self.times, turn=self.turns, step=self.steps, surface_op=self.ops,
            line=self.lines, start=None, stop=None, requests=self.requests, **self.groups)


def usage_count(value: Any) -> int:
    """Return a usage count's column value (``table._count``)."""
    return value if value.__class__ is int and 0 <= value <= MAX_INTEGER else MISSING


class SparseRows:
    """The values some rows hold in some columns of a fact group, staged row by row."""

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

    def scatter(self, group: FactGroup, index: dict[int, int]) -> None:
        """Set the values in ``group`` and let them go. ``index``: where the rows just added
        to the group are; a row not there is found (or added) by bisection, and ``index``
        is then emptied (the rows it names may have moved)."""
        rows, values, width = self.rows, self.values, len(self.names)
        columns = [getattr(group, name) for name in self.names]
        places = list(map(index.get, rows))
        if None not in places:
            for offset, column in enumerate(columns):
                deque(map(column.__setitem__, places, values[offset::width]), 0)
        elif not index and group.names() == self.names and _after(group.row, rows):
            group.row.extend(rows)  # (the routes and usage: rows staged in order)
            for offset, column in enumerate(columns):
                column.extend(values[offset::width])
        else:
            index.clear()
            for number, row in enumerate(rows):
                at = group.hold(row)
                for column, value in zip(columns, values[number * width:(number + 1) * width],
                                         strict=True):
                    column[at] = value
        del values[:], rows[:]


def _after(held: array, rows: array) -> bool:
    """Return whether ``rows`` ascend, all after every row ``held``."""
    return (not held or not rows or rows[0] > held[-1]) and all(map(lt, rows, rows[1:]))


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
