"""The append path: numbers events, encodes them as dsh JSONL lines and streams them to disk."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TextIO

from ledgerviz.ledger.writer import encode_line, encode_source_seqs
from ledgerviz.simulate.clock import SimClock

Event = dict[str, Any]
Observer = Callable[[Event], None]
CrashPoint = Callable[[Event], bool]

_WATCHERS: ContextVar[tuple[Observer, ...]] = ContextVar("watchers", default=())


@contextmanager
def watching(observer: Observer) -> Iterator[None]:
    """Pass every event committed by the writers made inside the block to ``observer`` as
    well: how a caller follows a scenario whose writers it does not build."""
    token = _WATCHERS.set((*_WATCHERS.get(), observer))
    try:
        yield
    finally:
        _WATCHERS.reset(token)


class ProcessCrash(Exception):
    """The simulated process died; the file holds exactly what was written before."""


class LedgerWriter:
    """Appends events to one ledger file, assigning ``seq`` and ``time``.

    Every committed event is passed to the observers (e.g. a recovery tracker)
    and then to the crash point, which may kill the simulated process. With
    ``tear_after_crash`` the crash happens *during* the next append instead:
    only the first half of that line reaches the file.
    """

    def __init__(
        self,
        stream: TextIO,
        clock: SimClock,
        *,
        next_seq: int = 0,
        crash_point: CrashPoint | None = None,
        tear_after_crash: bool = False,
    ) -> None:
        self.clock = clock
        self.next_seq = next_seq
        self.observers: list[Observer] = list(_WATCHERS.get())
        self._stream = stream
        self._crash_point = crash_point
        self._tear_after_crash = tear_after_crash
        self._tear_next = False

    @classmethod
    def create(
        cls, path: Path, header: dict[str, Any], clock: SimClock, **options: Any
    ) -> LedgerWriter:
        """Return a writer on a new file at ``path`` whose first line is ``header``."""
        stream = path.open("w", encoding="utf-8", newline="\n", buffering=1 << 20)
        stream.write(encode_line(header))
        return cls(stream, clock, **options)

    @classmethod
    def reopen(cls, path: Path, next_seq: int, clock: SimClock, **options: Any) -> LedgerWriter:
        """Return a writer that appends to the existing ledger at ``path``."""
        stream = path.open("a", encoding="utf-8", newline="\n", buffering=1 << 20)
        return cls(stream, clock, next_seq=next_seq, **options)

    def close(self) -> None:
        """Flush and close the file."""
        self._stream.close()

    def __enter__(self) -> LedgerWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def append(
        self,
        event_type: str,
        data: dict[str, Any],
        *,
        surface_op: str | dict[str, Any] | None = None,
        source_seqs: list[int] | None = None,
    ) -> Event:
        """Build the next event at the current clock time, commit it and return it."""
        event: Event = {
            "type": event_type,
            "seq": self.next_seq,
            "time": self.clock.now,
            "data": data,
        }
        if surface_op is not None:
            event["surfaceOp"] = surface_op
        if source_seqs:
            event["sourceEventSeqs"] = encode_source_seqs(source_seqs)
        self.commit(event)
        return event

    def commit(self, event: Event) -> None:
        """Write a fully built event (its ``seq`` must be the next one), then notify observers."""
        if event.get("seq") != self.next_seq:
            raise ValueError(f"event seq {event.get('seq')!r} is not the next seq {self.next_seq}")
        line = encode_line(event)
        if self._tear_next:
            self._stream.write(line[: len(line) // 2])
            raise ProcessCrash(f"torn append of seq {self.next_seq}")
        self._stream.write(line)
        self.next_seq += 1
        for observe in self.observers:
            observe(event)
        if self._crash_point is not None and self._crash_point(event):
            self._crash_point = None
            if not self._tear_after_crash:
                raise ProcessCrash(f"crash after seq {event['seq']}")
            self._tear_next = True
