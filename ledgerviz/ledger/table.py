"""The columnar event table: one typed row per event of a session.

The schema is explicit and comes from the format (``LEDGER_FORMAT.md``), not from the
data: §3 (envelope), §4.1 (boundaries), §4.2 (messages), §4.3 (assistant output,
usage), §4.4 (tools), §5 (request bookkeeping). The envelope is a column of one value per
event; a fact that applies to some event types only is held for those rows alone, in a
fact group (``fact_groups``: the calls, results, messages, turn ends, routes, usage and
requests), and made a column of every row on call (``EventTable.column``).

Integer columns are ``array.array("q")`` (int64, ``MISSING`` where absent or not an
integer the column can hold), flags ``array.array("b")``; ``np.frombuffer(column,
np.int64)`` reads one without a copy. Text columns are lists of ``str`` (None where
absent); equal short labels (types, roles, kinds, codes, models) share one object.
Every column is readable by the standard library alone: the table is the recovery engine's
input (``recovery.columns.EngineColumns``, by shape), and it imports nothing else.

Two envelope columns are held only where they say something: ``seq`` is a ``range`` when
the seqs count up by one from the first row's (every foreign table, most dsh ledgers: no
memory per row), and ``start``/``stop`` are None when no row's byte range is known (a table
not read from a file's lines).

The table is built in one way, from the events as decoded (``EventTable.of``), whatever
the format that produced them, so every reader gets the same table. The facts are read
with the recovery engine's own accessors (``recovery.events``), so the table and the
engine read a payload alike.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from operator import itemgetter
from typing import Any, NamedTuple

from ledgerviz.ledger.fact_groups import (
    GROUP_KINDS,
    Calls,
    Ends,
    FactGroup,
    Messages,
    Requests,
    Results,
    Routes,
    RowFacts,
    Usage,
)
from ledgerviz.ledger.shapes import MAX_INTEGER
from ledgerviz.recovery.nesting import visible_text
from ledgerviz.recovery.payload import (
    payload_end_reason_kind,
    payload_result_facts,
    payload_tool_call_blocks,
    surface_op_code,
)
from ledgerviz.recovery.vocab import MISSING

MESSAGE_TYPES = frozenset(
    {"user/message", "system/message", "developer/message", "assistant/message", "tool/result"}
)
"""The message-producing types (§7): the ones with ``role``, ``source_kind`` and ``text``."""

USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens")
"""The ``assistant/message`` ``usage`` counts the table holds (§4.3), in column order."""

_INT_MIN, _INT_MAX = MISSING + 1, (1 << 63) - 1

Seqs = array | range
"""A ``seq`` column: an int64 array, or the range of seqs that count up by one."""


def _int(value: Any) -> int:
    """Return an integer column's value: ``value`` when it is an int64, else ``MISSING``
    (a bool is not an integer here, as in the frames)."""
    return value if value.__class__ is int and _INT_MIN <= value <= _INT_MAX else MISSING


def _count(value: Any) -> int:
    """Return a usage count: an int from 0 to 2**53 - 1, else ``MISSING`` (as the frames
    count it)."""
    return value if value.__class__ is int and 0 <= value <= MAX_INTEGER else MISSING


def route_of(kind: str, data: dict[str, Any]) -> tuple[Any, Any] | None:
    """Return ``(provider, model)`` named by a request/header or request/context payload
    (§5), or None when it names no model."""
    if kind == "request/context":
        config = data
    else:
        header = data.get("header")
        config = header.get("config") if isinstance(header, dict) else None
    if isinstance(config, dict) and config.get("model") is not None:
        return config.get("provider"), config.get("model")
    return None


def _by_row(name: str) -> property:
    """Return a property reading fact ``name`` by row (``EventTable.by_row``)."""
    return property(lambda table: table.by_row(name), doc=f"``{name}`` read by row.")


@dataclass(frozen=True, slots=True)
class EventTable:
    """The events of one session as columns (see the module docstring for the types)."""

    type_names: list[str]
    """The event type of each ``type_code``, in order of first appearance."""
    type_code: array
    """Each event's ``type`` as an index into ``type_names`` (uint16)."""
    seq: Seqs
    """``seq``; an event without one: its position in the session (as the engine reads it).
    A ``range`` when the seqs count up by one from the first (``seq_column``)."""
    time: array
    """``time`` (epoch ms)."""
    turn: array
    """``data.turn``."""
    step: array
    """``data.step``."""
    surface_op: array
    """``surfaceOp`` as a ``recovery.columns.SURFACE_OPS`` code (int8)."""
    line: array
    """The 1-based file line the event was read from."""
    start: array | None
    """The offset in the file of the line's first byte (``MISSING``: not read from lines;
    None: no row was, ``byte_ranges``)."""
    stop: array | None
    """The offset of the byte after the line's last one (its newline's offset)."""
    calls: Calls
    """The ``tool/call`` rows' call ids, names and arguments."""
    results: Results
    """The ``tool/result`` rows' call ids, error codes and flags."""
    messages: Messages
    """The message rows' roles, source kinds and texts."""
    ends: Ends
    """The ``turn/end`` rows' reasons."""
    routes: Routes
    """The provider and model of the rows naming a model."""
    usage: Usage
    """The usage counts of the ``assistant/message`` rows that have usage."""
    requests: Requests
    """The tool calls the assistant messages request."""

    def __len__(self) -> int:
        return len(self.type_code)

    @property
    def types(self) -> list[str]:
        """Return each event's type string (one shared object per type)."""
        names = self.type_names
        return [names[code] for code in self.type_code]

    def byte_ranges(self) -> tuple[array, array]:
        """Return the ``start`` and ``stop`` columns of a table read from a file's lines."""
        if self.start is None or self.stop is None:
            raise ValueError("the table's rows were not read from a file's lines")
        return self.start, self.stop

    def groups(self) -> list[FactGroup]:
        """Return the fact groups, in the order of ``GROUPS``."""
        return [getattr(self, name) for name in GROUPS]

    def column(self, name: str) -> list[Any] | array:
        """Return column ``name`` with a value for every row: an envelope column itself, a
        fact (see ``FACTS``) made now from its groups (the missing value at the rows they do
        not hold: None, ``MISSING``, or -1 for a flag)."""
        if name not in FACTS:
            return getattr(self, name)
        made = None
        for group in FACTS[name]:
            made = getattr(self, group).dense(name, len(self), made)
        return made

    def by_row(self, name: str) -> RowFacts:
        """Return fact ``name`` read by row (see ``RowFacts``)."""
        return RowFacts([getattr(self, group) for group in FACTS[name]], name)

    # the facts the recovery scan reads by row (``recovery.columns.EngineColumns``)
    call_id = _by_row("call_id")
    is_error = _by_row("is_error")
    error_code = _by_row("error_code")
    synthetic = _by_row("synthetic")
    source_kind = _by_row("source_kind")
    end_reason = _by_row("end_reason")

    @classmethod
    def of(cls, events: Sequence[dict[str, Any]], lines: Sequence[int] | None = None,
           first_position: int = 0) -> EventTable:
        """Return the table of a session's checked events (``lines``: their file lines;
        None: not known, ``MISSING``; ``first_position``: the position of ``events[0]`` in
        its session, the ``seq`` of an event without one). Their byte ranges are not known."""
        return _columns_of(events, lines, first_position)

    @classmethod
    def joined(cls, parts: Sequence[EventTable]) -> EventTable:
        """Return the rows of ``parts`` one after another (the part itself when one; none:
        an empty table; see ``extend``)."""
        if len(parts) == 1:
            return parts[0]
        joined = _columns_of([], None)
        for part in parts:
            joined.extend(part)
        return joined

    def extend(self, part: EventTable) -> None:
        """Append the rows of ``part``: its type codes renumbered (the types new here
        named in order of first appearance), its groups' rows shifted."""
        offset = len(self)
        code_of = {name: code for code, name in enumerate(self.type_names)}
        for name in part.type_names:
            if name not in code_of:
                code_of[name] = len(self.type_names)
                self.type_names.append(name)
        codes = [code_of[name] for name in part.type_names]
        self.type_code.extend(map(codes.__getitem__, part.type_code)
                              if codes != list(range(len(codes))) else part.type_code)
        for name in _ROW_COLUMNS:
            getattr(self, name).extend(getattr(part, name))
        # the envelope columns that need not be one array: set anew, not grown in place
        object.__setattr__(self, "seq", _joined_seqs(self.seq, part.seq))
        for name in _RANGE_COLUMNS:
            object.__setattr__(self, name, _joined_ranges(getattr(self, name), offset,
                                                          getattr(part, name), len(part)))
        for group, added in zip(self.groups(), part.groups(), strict=True):
            group.extend(added, offset)

    def rows(self, start: int, stop: int) -> EventTable:
        """Return the table of rows ``start`` to ``stop`` (0 <= start <= stop <= len)."""
        return self.split([start, stop])[0]

    def split(self, bounds: Sequence[int]) -> list[EventTable]:
        """Return the table of rows ``bounds[i]`` to ``bounds[i + 1]`` for each ``i``
        (``bounds`` ascending, within ``0`` and ``len``): each part's types renumbered in
        order of first appearance, its groups' rows counted from its first row (see
        ``FactGroup.split``)."""
        groups = [group.split(bounds) for group in self.groups()]
        columns = [getattr(self, name) for name in _ROW_COLUMNS]
        names, all_codes = self.type_names, self.type_code
        parts = []
        for index, (start, stop) in enumerate(pairwise(bounds)):
            codes = all_codes[start:stop]
            present = list(dict.fromkeys(codes))  # in order of first appearance
            if present != list(range(len(present))):
                renumber = dict(zip(present, range(len(present)), strict=True))
                codes = array("H", map(renumber.__getitem__, codes))
            parts.append(EventTable(
                type_names=[names[code] for code in present], type_code=codes,
                **{name: parts_of[index] for name, parts_of in zip(GROUPS, groups, strict=True)},
                **self._envelope_rows(start, stop),
                **dict(zip(_ROW_COLUMNS, [column[start:stop] for column in columns],
                           strict=True))))
        return parts

    def _envelope_rows(self, start: int, stop: int) -> dict[str, Any]:
        """Return the ``seq``, ``start`` and ``stop`` of rows ``start`` to ``stop``, each as
        the column holds it (a range's slice is a range; an array's may count by one)."""
        seqs = self.seq[start:stop]
        return {"seq": seqs if isinstance(seqs, range) else seq_column(seqs),
                **{name: None if (column := getattr(self, name)) is None else column[start:stop]
                   for name in _RANGE_COLUMNS}}


def seq_column(values: Sequence[Any]) -> Seqs:
    """Return the ``seq`` column of ``values`` (int64 or not, see ``int_array``): the range
    of them when they count up by one from the first, else their array."""
    if isinstance(values, range):
        return values
    seqs = values if isinstance(values, array) else int_array(
        values if isinstance(values, list) else list(values))
    count = len(seqs)
    if not count:
        return range(0)
    first = seqs[0]
    if seqs[-1] - first != count - 1:
        return seqs
    for at in range(0, count, _COMPARED):  # a slice at a time: no second column held
        upto = min(at + _COMPARED, count)
        if seqs[at:upto] != array("q", range(first + at, first + upto)):
            return seqs
    return range(first, first + count)


_COMPARED = 1 << 16
"""How many seqs ``seq_column`` compares with their range at once."""


def _joined_seqs(head: Seqs, tail: Seqs) -> Seqs:
    """Return the ``seq`` column of ``head``'s rows then ``tail``'s (``head``'s array
    grown in place, when it is one)."""
    if not head:
        return tail if isinstance(tail, range) else array("q", tail)
    if isinstance(head, range) and isinstance(tail, range) and (
            not tail or tail.start == head.stop):
        return range(head.start, head.stop + len(tail))
    seqs = array("q", head) if isinstance(head, range) else head
    seqs.extend(tail)
    return seqs


def _joined_ranges(head: array | None, count: int, tail: array | None, added: int
                   ) -> array | None:
    """Return a byte range column (``start`` or ``stop``) of ``count`` rows (``head``)
    then ``added`` more (``tail``): None when neither holds one (``head``'s array grown in
    place, when it is one)."""
    if tail is None:
        if head is not None:
            head.extend(array("q", [MISSING]) * added)
        return head
    if head is None:
        head = array("q", [MISSING]) * count
    head.extend(tail)
    return head


GROUPS = tuple(GROUP_KINDS)
"""The table's fact groups, in order."""
FACTS: dict[str, tuple[str, ...]] = {
    "call_id": ("calls", "results"), "tool_name": ("calls",), "arguments": ("calls",),
    "error_code": ("results",), "is_error": ("results",), "synthetic": ("results",),
    **dict.fromkeys(Messages.names(), ("messages",)), "end_reason": ("ends",),
    **dict.fromkeys(Routes.names(), ("routes",)), **dict.fromkeys(Usage.names(), ("usage",))}
"""The groups holding each fact the table once held as a column of every row."""


_NONE = type(None)


def int_array(values: list[Any]) -> array:
    """Return an integer column of ``values`` (see ``_int``), at C speed when they are all
    ints or None."""
    kinds = set(map(type, values))
    if kinds <= {int, _NONE}:
        try:
            if _NONE in kinds:
                return array("q", [MISSING if v is None else v for v in values])
            return array("q", values)
        except OverflowError:
            pass
    return array("q", map(_int, values))


class Shared:
    """One object per equal label string (or other hashable value) met so far."""

    def __init__(self) -> None:
        self._share = {}.setdefault

    def __call__(self, values: list[Any]) -> list[Any]:
        """Return ``values``, each equal one replaced by the first of them met."""
        return list(map(self._share, values, values))

    def one(self, value: Any) -> Any:
        """Return the shared object equal to ``value`` (an unhashable value as it is)."""
        return self._share(value, value) if value.__class__ is str else value


class Envelope(NamedTuple):
    """The envelope facts of a session's events, a list each (see ``EventTable``'s
    columns), as ``envelope_of`` reads them from the dicts."""

    kinds: list[Any]
    """Each event's ``type`` (equal strings: one object)."""
    datas: list[dict[str, Any]]
    """Each event's ``data`` ({} where it is no dict)."""
    seqs: list[Any]
    """Each event's ``seq`` (its position in the session where it has none)."""
    times: list[Any]
    turns: list[Any]
    """Each ``data.turn``."""
    steps: list[Any]
    """Each ``data.step``."""
    surface_ops: list[Any]
    """Each ``surfaceOp`` (None where absent)."""


def envelope_of(events: Sequence[dict[str, Any]], first_position: int = 0,
                shared: Callable[[Any], Any] | None = None) -> Envelope:
    """Return the envelope facts of ``events`` (``first_position``: see ``EventTable.of``;
    ``shared``: makes equal types one object)."""
    shared = shared or Shared().one
    datas = [event.get("data") for event in events]
    if set(map(type, datas)) != {dict}:
        datas = [data if data.__class__ is dict else {} for data in datas]
    return Envelope(
        kinds=[shared(event.get("type")) for event in events],
        datas=datas,
        seqs=[event.get("seq", position) for position, event in enumerate(events, first_position)],
        times=[event.get("time") for event in events],
        turns=[data.get("turn") for data in datas],
        steps=[data.get("step") for data in datas],
        surface_ops=[event.get("surfaceOp") for event in events],
    )


def _columns_of(events: Sequence[dict[str, Any]], lines: Sequence[int] | None,
                first_position: int = 0) -> EventTable:
    """Return the table of ``events`` (see ``EventTable.of``), a column at a time: every
    event's envelope, then each type's facts at the rows of that type."""
    count = len(events)
    if lines is not None and len(lines) != count:
        raise ValueError(f"{len(lines)} line numbers for {count} events")
    shared = Shared().one
    envelope = envelope_of(events, first_position, shared)
    kinds, datas = envelope.kinds, envelope.datas
    names = list(dict.fromkeys(kinds))
    code_of = {name: code for code, name in enumerate(names)}
    rows_of: dict[Any, list[int]] = {name: [] for name in names}
    for row, kind in enumerate(kinds):
        rows_of[kind].append(row)
    calls, results, ends = Calls(), Results(), Ends()
    for row in rows_of.get("tool/call", ()):
        data = datas[row]
        calls.add(row, data.get("callId"), shared(data.get("name")), data.get("arguments"))
    for row in rows_of.get("tool/result", ()):
        call_id, code, error, made = payload_result_facts(datas[row])
        results.add(row, call_id, shared(code), int(error), int(made))
    for row in rows_of.get("turn/end", ()):
        ends.add(row, shared(payload_end_reason_kind(datas[row])))
    routes, usage, requests = Routes(), Usage(), Requests()
    named = [(row, route) for kind in ("request/header", "request/context")
             for row in rows_of.get(kind, ()) if (route := route_of(kind, datas[row]))]
    named += _assistants(rows_of.get("assistant/message", ()), datas, usage, requests, shared)
    for row, route in sorted(named, key=itemgetter(0)):
        routes.add(row, *map(shared, route))
    return EventTable(
        type_names=names,
        type_code=array("H", map(code_of.__getitem__, kinds)),
        seq=seq_column(envelope.seqs),
        time=int_array(envelope.times),
        turn=int_array(envelope.turns),
        step=int_array(envelope.steps),
        surface_op=array("b", map(surface_op_code, envelope.surface_ops)),
        line=array("q", [MISSING]) * count if lines is None else array("q", lines),
        start=None,
        stop=None,
        calls=calls, results=results, messages=_messages(kinds, datas, shared), ends=ends,
        routes=routes, usage=usage, requests=requests,
    )


def _messages(kinds: list[Any], datas: list[dict[str, Any]], shared: Callable[[Any], Any]
              ) -> Messages:
    """Return the role, source kind and visible text of the rows of every message type."""
    messages = Messages()
    for row, kind in enumerate(kinds):
        if kind in MESSAGE_TYPES:
            message = datas[row] if kind == "user/message" else datas[row].get("message")
            if message.__class__ is not dict:
                message = {}
            source = message.get("source")
            messages.add(row, shared(message.get("role")),
                         shared(source.get("kind")) if source.__class__ is dict else None,
                         visible_text(message.get("content")))
    return messages


def _assistants(rows: Sequence[int], datas: list[dict[str, Any]], usage: Usage,
                requests: Requests, shared: Callable[[Any], Any]
                ) -> list[tuple[int, tuple[Any, Any]]]:
    """Add the usage and requested calls of the ``assistant/message`` rows; return each
    row whose source names a model, with its provider and model."""
    named = []
    for row in rows:
        data = datas[row]
        message = data.get("message")
        source = message.get("source") if message.__class__ is dict else None
        if source.__class__ is dict and source.get("model") is not None:
            named.append((row, (source.get("provider"), source["model"])))
        used = data.get("usage")
        if used.__class__ is dict:
            usage.add(row, *[_count(used.get(key)) for key in USAGE_KEYS])
        for block in payload_tool_call_blocks(data):
            requests.add(row, block.get("id"), shared(block.get("name")), block.get("arguments"))
    return named


_ROW_COLUMNS = ("time", "turn", "step", "surface_op", "line")
"""The table's columns of one value per row, but for ``type_code`` and the envelope columns
held only where they say something (``seq``, ``start``, ``stop``)."""
_RANGE_COLUMNS = ("start", "stop")
"""The byte range columns (None: no row's is known)."""
