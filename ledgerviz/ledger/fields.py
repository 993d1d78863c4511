"""The envelope fields of a session's events as parallel columns, extracted once."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

_EMPTY: dict[str, Any] = {}
_COLUMNS = frozenset({"types", "seqs", "datas", "times", "turns", "steps", "surface_ops"})


def concatenated(lists: Iterable[Sequence[Any]]) -> list[Any]:
    """Return one new list of the items of ``lists``, in order.

    ``list.extend`` copies each part's items at C speed; ``itertools.chain`` hands
    them over one at a time (three to four times slower for many short parts).
    """
    items: list[Any] = []
    extend = items.extend
    for part in lists:
        extend(part)
    return items


@dataclass(frozen=True)
class EventFields:
    """Per-event columns parallel to an events list (the dicts themselves are not copied).

    ``seqs`` holds each event's ``seq``, its position in the events list when it has
    none (the recovery engine's reading, so the columns can be handed to
    ``recovery.columns_of`` as its envelope);
    ``datas`` holds each event's ``data`` object ({} when it has none); ``turns`` and
    ``steps`` are ``data.turn`` / ``data.step``; ``surface_ops`` is the raw
    ``surfaceOp`` value (None when absent). Every other column is the top-level key of
    the same name, None when absent. Equal strings in ``types`` and ``surface_ops``
    share one str object, so that hashing and comparing them later stays cheap.
    """

    types: list[Any]
    seqs: list[Any]
    datas: list[dict[str, Any]]
    times: list[Any]
    turns: list[Any]
    steps: list[Any]
    surface_ops: list[Any]

    @classmethod
    def empty(cls) -> EventFields:
        """Return columns with no rows, ready to be appended to."""
        return cls([], [], [], [], [], [], [])

    @classmethod
    def of(cls, events: Sequence[dict[str, Any]], start: int = 0) -> EventFields:
        """Return the columns of ``events`` in one pass over the dicts.

        ``start`` is the position of ``events[0]`` in its session (for ``seqs``).
        """
        columns = cls.empty()
        columns.extend(events, start)
        return columns

    def extend(self, events: Sequence[dict[str, Any]], start: int) -> None:
        """Append the rows of ``events``, ``events[0]`` being at position ``start``."""
        add_type, add_seq, add_data, add_time, add_turn, add_step, add_op = self.appenders()
        strings: dict[str, str] = {}
        shared = strings.setdefault
        for position, event in enumerate(events, start):
            data = event.get("data")
            if data.__class__ is not dict:
                data = _EMPTY
            kind = event.get("type")
            add_type(shared(kind, kind) if kind.__class__ is str else kind)
            add_seq(event.get("seq", position))
            add_data(data)
            add_time(event.get("time"))
            add_turn(data.get("turn"))
            add_step(data.get("step"))
            op = event.get("surfaceOp")
            add_op(shared(op, op) if op.__class__ is str else op)

    def appenders(self) -> tuple[Callable[[Any], None], ...]:
        """Return the ``append`` methods of the columns, in declaration order."""
        return (self.types.append, self.seqs.append, self.datas.append, self.times.append,
                self.turns.append, self.steps.append, self.surface_ops.append)

    def __len__(self) -> int:
        source = self.__dict__.get("_prefix_of")
        if source is None:
            return len(self.types)
        whole, count, then = source
        return min(count, len(whole)) + (len(then) if then is not None else 0)

    def __getattr__(self, name: str) -> Any:
        """Return a column of a :meth:`prefix` (or :meth:`prefix_then`), made from its
        sources when first read."""
        source = self.__dict__.get("_prefix_of")
        if source is None or name not in _COLUMNS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        whole, count, then = source
        column = getattr(whole, name)[:count]
        if then is not None:
            column += getattr(then, name)
        object.__setattr__(self, name, column)
        return column

    def rows(self, name: str, start: int, stop: int | None = None) -> list[Any]:
        """Return rows ``start`` to ``stop`` (default: the last) of the column ``name``; a
        :meth:`prefix` column not read yet is sliced from its sources, not made whole."""
        source = self.__dict__.get("_prefix_of")
        if source is None or name in self.__dict__:
            return getattr(self, name)[start:stop]
        whole, count, then = source
        kept = min(count, len(whole))
        stop = len(self) if stop is None else min(stop, len(self))
        rows = whole.rows(name, min(start, kept), min(stop, kept))
        if then is not None and stop > kept:
            rows += then.rows(name, max(start - kept, 0), stop - kept)
        return rows

    def prefix(self, count: int) -> EventFields:
        """Return the columns of the first ``count`` rows, each sliced when first read (a cut
        of a long session may read few of them, or none)."""
        return self._lazy(count, None)

    def prefix_then(self, count: int, other: EventFields) -> EventFields:
        """Return the columns of the first ``count`` rows followed by ``other``'s, each made
        when first read (a cut's prefix is long, what follows it short, and its readers
        may need few of them)."""
        return self._lazy(count, other)

    def _lazy(self, count: int, then: EventFields | None) -> EventFields:
        source = self.__dict__.get("_prefix_of")
        if source is not None and source[2] is None:  # a prefix: read what it came from
            return source[0]._lazy(min(count, source[1]), then)
        lazy = object.__new__(EventFields)
        object.__setattr__(lazy, "_prefix_of", (self, max(count, 0), then))
        return lazy

    def __getitem__(self, rows: slice) -> EventFields:
        """Return the columns of a slice of the events."""
        return EventFields(*(getattr(self, f.name)[rows] for f in fields(self)))

    def taken(self, positions: Sequence[int]) -> EventFields:
        """Return the columns of the rows at ``positions``, in that order."""
        return EventFields(*([column[i] for i in positions] for column in
                             (getattr(self, f.name) for f in fields(self))))

    def __add__(self, other: EventFields) -> EventFields:
        """Return these columns followed by ``other``'s."""
        return EventFields.joined([self, other])

    @classmethod
    def joined(cls, parts: Sequence[EventFields]) -> EventFields:
        """Return the columns of ``parts`` one after another (the part itself when one)."""
        if len(parts) == 1:
            return parts[0]
        return cls(*(concatenated(getattr(p, f.name) for p in parts) for f in fields(cls)))
