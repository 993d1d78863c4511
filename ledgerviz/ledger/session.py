"""One ledger file as read: header, events exactly as decoded, diagnostics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledgerviz.ledger.diagnostics import Diagnostic
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.table import EventTable
from ledgerviz.wording import counted


@dataclass(frozen=True, slots=True)
class SessionLog:
    """One session file.

    ``events`` are the dicts ``orjson`` decoded (only v0/v1 packed chunk rows are
    expanded into new ``assistant/chunk`` dicts): for a dsh ledger, a
    ``lazy_events.LazyEvents`` that decodes them from the file's bytes when asked for (for
    the other formats a ``formats.sealed.SealedEvents``, decoded from the reader's encoded
    windows when asked for); ``lines`` gives the 1-based file line of each event;
    ``lines_skipped`` counts lines that yielded no event; ``fields`` holds the events'
    envelope columns once extracted (see ``event_fields``); ``table`` their typed
    columns, which every format's reader fills (see ``event_table``).
    """

    path: str
    key: str
    header: dict[str, Any]
    version: int | None
    events: Sequence[dict[str, Any]]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    lines_skipped: int = 0
    lines: Sequence[int] = ()
    fields: EventFields | None = None
    format: str = "dsh"
    """The name of the format the file was read from (``ledgerviz.ledger.formats``)."""
    call_reasons: Mapping[str, str] = field(default_factory=dict)
    """Why a call has the status it has, by call id, where the format's reader knows more
    than the events show (an interrupt recorded as a rejection, a rolled-back turn)."""
    children: tuple[SessionLog, ...] = ()
    """Further sessions the same file holds inline (a Claude Code main transcript's
    sidechains), each naming this one as its ``parentSession``; ``read.read_sessions``
    and ``read.file_sessions`` list them after it."""

    table: EventTable | None = None
    """The events as one typed, columnar table (``ledger.table``), when the reader made it;
    ``event_table`` makes it on first use otherwise."""

    def event_table(self) -> EventTable:
        """Return the typed columns of ``events`` (made from the dicts, and kept, the first
        time when the reader did not make them)."""
        if self.table is None:
            object.__setattr__(self, "table", EventTable.of(self.events, self.lines or None))
        assert self.table is not None
        return self.table

    def event_fields(self) -> EventFields:
        """Return the envelope columns of ``events`` (extracted, and kept, the first time
        when the reader did not extract them)."""
        if self.fields is None:
            object.__setattr__(self, "fields", EventFields.of(self.events))
        assert self.fields is not None
        return self.fields

    @property
    def has_errors(self) -> bool:
        """Return True when any diagnostic of this file is an error."""
        return any(d.severity == "error" for d in self.diagnostics)

    def __repr__(self) -> str:
        """Return a one-line summary (the events themselves are in ``events``)."""
        severities: dict[str, int] = {}
        for diagnostic in self.diagnostics:
            severities[diagnostic.severity] = severities.get(diagnostic.severity, 0) + 1
        found = ", ".join(counted(n, s) for s, n in severities.items()) or "none"
        return (f"<SessionLog {self.key!r} from {self.path!r}: version {self.version}, "
                f"{counted(len(self.events), 'event')}; diagnostics: {found}>")
