"""The columns of a session's events that the recovery scan reads, and the one adapter that
makes them from event dicts.

The scan (``recovery.analyze``) reads a session as columns, one row per event: a reader's
typed table (``ledger.table.EventTable`` has every column here, by shape) or, for a caller
holding dicts (a runtime, a stream, a fork seed), :func:`columns_of`. A column need only
answer for the rows of the types it applies to (the adapter keeps those rows alone, in a
dict). Where a column cannot hold what the event says (``MISSING`` in an integer column,
None for a call id, a surface op that is an object), the scan reads that one event from
the dicts the caller passes alongside (``events[row]``): rare rows, so a reader that
decodes its events lazily decodes only those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import eq, methodcaller
from typing import Any, Protocol

from ledgerviz.recovery.events import Event
from ledgerviz.recovery.payload import (
    payload_end_reason_kind,
    payload_result_facts,
    payload_tool_call_blocks,
    surface_op_code,
)


class Column(Protocol):
    """One fact per row: a list, an ``array``, a ``range`` (seqs that count up by one), or a
    dict holding the rows it applies to."""

    def __getitem__(self, row: int, /) -> Any: ...


class RequestColumns(Protocol):
    """One row per ``tool-call`` block of an ``assistant/message``, in log order."""

    @property
    def row(self) -> Sequence[int]:
        """The row of the assistant message (ascending)."""

    @property
    def call_id(self) -> Sequence[Any]:
        """The block's ``id`` (None: absent or null, the scan reads the event)."""

    @property
    def name(self) -> Sequence[Any]: ...

    @property
    def arguments(self) -> Sequence[Any]: ...


class EngineColumns(Protocol):
    """The facts of a session's events the recovery scan reads (``ledger.table`` documents
    each column; the scan reads the event where a column holds ``MISSING`` or a None id)."""

    @property
    def type_names(self) -> Sequence[Any]:
        """The event type of each ``type_code``."""

    @property
    def type_code(self) -> Sequence[int]: ...

    @property
    def seq(self) -> Column:
        """``seq``, or the event's position in its session when it has none."""

    @property
    def time(self) -> Column:
        """``time`` (read at step/end, turn/start and turn/end rows)."""

    @property
    def turn(self) -> Column:
        """``data.turn`` (read at assistant/message and turn/start rows)."""

    @property
    def step(self) -> Column:
        """``data.step`` (read at assistant/message rows)."""

    @property
    def surface_op(self) -> Column:
        """``surfaceOp`` as a ``SURFACE_OPS`` code."""

    @property
    def call_id(self) -> Column:
        """The ``callId`` of a tool/call, the call id a tool/result answers."""

    @property
    def is_error(self) -> Column:
        """A tool/result's ``isError``: 1 or 0."""

    @property
    def error_code(self) -> Column:
        """A tool/result's ``error.code``."""

    @property
    def synthetic(self) -> Column:
        """Whether a tool/result is one recovery wrote (``payload_result_facts``): 1 or 0."""

    @property
    def source_kind(self) -> Column:
        """A user/message's ``source.kind``."""

    @property
    def end_reason(self) -> Column:
        """A turn/end's ``reason.kind``."""

    @property
    def requests(self) -> RequestColumns: ...

    def __len__(self) -> int: ...


@dataclass(frozen=True, slots=True)
class DictRequests:
    """The requested calls of :class:`DictColumns` (see ``RequestColumns``)."""

    row: list[int]
    call_id: list[Any]
    name: list[Any]
    arguments: list[Any]


@dataclass(frozen=True, slots=True)
class DictColumns:
    """:class:`EngineColumns` of event dicts (:func:`columns_of`): the envelope and the
    requested calls read into lists, every other fact read from its event's dict when the
    scan asks for it (the scan asks at few rows, most once: reading them all beforehand
    would cost a second pass over the dicts)."""

    type_names: list[Any]
    type_code: list[int]
    seq: list[Any]
    surface_op: list[int]
    time: Column
    turn: Column
    step: Column
    call_id: Column
    is_error: Column
    error_code: Column
    synthetic: Column
    source_kind: Column
    end_reason: Column
    requests: DictRequests

    def __len__(self) -> int:
        return len(self.type_code)


class _Read:
    """A column of ``read(items[row])``, read when asked."""

    __slots__ = ("_items", "_read")

    def __init__(self, items: Sequence[Any], read: Callable[[Any], Any]) -> None:
        self._items, self._read = items, read

    def __getitem__(self, row: int) -> Any:
        return self._read(self._items[row])


class _Results:
    """The facts of a tool/result row (``payload_result_facts``), the last row's kept: the
    scan asks for several facts of one result in a row."""

    __slots__ = ("_datas", "facts", "row")

    def __init__(self, datas: Sequence[dict[str, Any]]) -> None:
        self._datas, self.row, self.facts = datas, -1, (None, None, False, False)

    def at(self, row: int) -> tuple[Any, Any, bool, bool]:
        """Return the facts of the result at ``row``."""
        if row != self.row:
            self.row, self.facts = row, payload_result_facts(self._datas[row])
        return self.facts


class _ResultFact:
    """One fact of the tool/result rows (an index into ``payload_result_facts``)."""

    __slots__ = ("_index", "_results")

    def __init__(self, results: _Results, index: int) -> None:
        self._results, self._index = results, index

    def __getitem__(self, row: int) -> Any:
        return self._results.at(row)[self._index]


class _CallIds:
    """The ``callId`` of a tool/call row, the call id a tool/result row answers."""

    __slots__ = ("_datas", "_kinds", "_results")

    def __init__(self, kinds: Sequence[Any], datas: Sequence[dict[str, Any]],
                 results: _Results) -> None:
        self._kinds, self._datas, self._results = kinds, datas, results

    def __getitem__(self, row: int) -> Any:
        if self._kinds[row] == "tool/call":
            return self._datas[row].get("callId")
        return self._results.at(row)[0]


def _source_kind(data: dict[str, Any]) -> Any:
    """Return a user/message payload's ``source.kind``."""
    source = data.get("source")
    return source.get("kind") if source.__class__ is dict else None


class Envelope(Protocol):
    """A reader's envelope columns parallel to the events (``ledger.fields.EventFields``):
    each event's ``type``, seq (its position when it has none), ``data`` ({} when it is no
    object) and raw ``surfaceOp`` (None when absent)."""

    @property
    def types(self) -> Sequence[Any]: ...

    @property
    def seqs(self) -> Sequence[Any]: ...

    @property
    def datas(self) -> Sequence[dict[str, Any]]: ...

    @property
    def surface_ops(self) -> Sequence[Any]: ...


_OP_CODES = {None: 0, "append": 1}
"""The ``SURFACE_OPS`` code of each hashable ``surfaceOp`` value but those (3)."""


def columns_of(events: Sequence[Event], start: int = 0, envelope: Envelope | None = None
               ) -> DictColumns:
    """Return the columns the scan reads of ``events`` (``start``: the position of
    ``events[0]`` in its session, the seq of an event without one; ``envelope``: the
    events' envelope columns when a reader extracted them, not read again)."""
    if envelope is None:
        kinds = list(map(dict.get, events, repeat("type")))
        seqs = list(map(dict.get, events, repeat("seq"), range(start, start + len(events))))
        ops: Sequence[Any] = list(map(dict.get, events, repeat("surfaceOp")))
        datas: Sequence[dict[str, Any]] = [
            data if data.__class__ is dict else {} for data in map(dict.get, events,
                                                                   repeat("data"))]
    else:
        kinds, seqs, ops = list(envelope.types), list(envelope.seqs), envelope.surface_ops
        datas = envelope.datas
    names = list(dict.fromkeys(kinds))
    code_of = {name: code for code, name in enumerate(names)}
    try:
        op_codes = list(map(_OP_CODES.get, ops, repeat(3)))
    except TypeError:  # an object (a replace op) is no key
        op_codes = list(map(surface_op_code, ops))
    results = _Results(datas)
    return DictColumns(
        names, list(map(code_of.__getitem__, kinds)), seqs, op_codes,
        time=_Read(events, _TIME), turn=_Read(datas, _TURN), step=_Read(datas, _STEP),
        call_id=_CallIds(kinds, datas, results), is_error=_ResultFact(results, 2),
        error_code=_ResultFact(results, 1), synthetic=_ResultFact(results, 3),
        source_kind=_Read(datas, _source_kind), end_reason=_Read(datas, payload_end_reason_kind),
        requests=_requests(kinds, datas),
    )


_TIME, _TURN, _STEP = (methodcaller("get", key) for key in ("time", "turn", "step"))


def _requests(kinds: Sequence[Any], datas: Sequence[dict[str, Any]]) -> DictRequests:
    """Return the calls the assistant messages request, in order."""
    requests = DictRequests([], [], [], [])
    for row in compress(count(), map(eq, kinds, repeat("assistant/message"))):
        for block in payload_tool_call_blocks(datas[row]):
            requests.row.append(row)
            requests.call_id.append(block.get("id"))
            requests.name.append(block.get("name"))
            requests.arguments.append(block.get("arguments"))
    return requests
