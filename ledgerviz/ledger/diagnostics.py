"""Diagnostics: every problem found in a ledger, with file, line, kind and severity."""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Literal, Protocol

from ledgerviz.wording import counted

Severity = Literal["error", "warning", "info"]


class LedgerError(ValueError):
    """A ledger problem that stops reading (strict mode, or a source that cannot be read)."""


class UnreadableSourceError(LedgerError):
    """A source that cannot be read at all: missing path, empty glob, I/O failure."""


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem in one file; ``line`` is 1-based."""

    path: str
    line: int
    kind: str
    severity: Severity
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity} [{self.kind}] {self.message}"


class DiagnosticSink(Protocol):
    """What records diagnostics: a ``DiagnosticLog``, or ``PendingDiagnostics`` for one later."""

    def add(self, line: int, kind: str, message: str, severity: Severity = "error") -> None: ...


PER_KIND_LIMIT = 20
"""How many diagnostics of one kind a file lists before they are only counted."""


class DiagnosticLog:
    """Collects the diagnostics of one file; in strict mode raises at the first error.

    After ``PER_KIND_LIMIT`` diagnostics of one kind the rest are counted, not listed;
    ``finish`` then adds one ``more_diagnostics`` line per kind saying how many.
    """

    def __init__(self, path: str, *, strict: bool) -> None:
        self.path = path
        self.strict = strict
        self.items: list[Diagnostic] = []
        self._counts: dict[str, int] = {}
        self._first_unlisted: dict[str, Diagnostic] = {}

    def add(self, line: int, kind: str, message: str, severity: Severity = "error") -> None:
        """Record one diagnostic; raise ``LedgerError`` if it is an error in strict mode.

        Past the limit of its kind a diagnostic is only counted: a file of a million bad
        lines makes 21 ``Diagnostic`` objects of each kind (those listed, and the first one
        counted, which the count line names).
        """
        raises = self.strict and severity == "error"
        seen = self._counts.get(kind, 0)
        if seen > PER_KIND_LIMIT and not raises:
            self._counts[kind] = seen + 1
            return
        diagnostic = Diagnostic(self.path, line, kind, severity, message)
        if raises:
            raise LedgerError(str(diagnostic))
        self._counts[kind] = seen + 1
        if seen < PER_KIND_LIMIT:
            self.items.append(diagnostic)
        else:  # the first one not listed: the count line names its line
            self._first_unlisted[kind] = diagnostic

    def count_unlisted(self, kind: str, count: int) -> None:
        """Count ``count`` more diagnostics of ``kind`` that come after more than
        ``PER_KIND_LIMIT`` of it (so none of them is listed, or named by the count line)."""
        self._counts[kind] += count

    def finish(self) -> list[Diagnostic]:
        """Return every listed diagnostic plus one count line per kind that hit the limit."""
        for kind, first in self._first_unlisted.items():
            unlisted = self._counts[kind] - PER_KIND_LIMIT
            message = (
                f"{unlisted} more [{kind}] diagnostics not listed, from line {first.line} on "
                f"({self._counts[kind]} in all)"
            )
            self.items.append(Diagnostic(self.path, first.line, "more_diagnostics",
                                         first.severity, message))
        self._first_unlisted = {}
        return self.items


class PendingDiagnostics:
    """Diagnostics recorded now and added to a ``DiagnosticLog`` later, in line order.

    Of each kind and severity the first ``PER_KIND_LIMIT + 1`` are held, and the rest
    only counted: a log lists no more of a kind, every kind is recorded in line order
    (each comes from one pass over the lines), so those held are the first of their
    kind by line. A block of a million blank lines holds 21 diagnostics, not a million.
    """

    __slots__ = ("_calls", "_counts")

    def __init__(self) -> None:
        self._calls: list[tuple[int, str, str, Severity]] = []
        self._counts: dict[tuple[str, Severity], int] = {}

    def add(self, line: int, kind: str, message: str, severity: Severity = "error") -> None:
        """Record one diagnostic, to be added by ``replay``."""
        key = (kind, severity)
        count = self._counts.get(key, 0)
        self._counts[key] = count + 1
        if count <= PER_KIND_LIMIT:
            self._calls.append((line, kind, message, severity))

    def replay(self, log: DiagnosticLog) -> None:
        """Add every recorded diagnostic to ``log`` in line order, those of one line in the
        order recorded (strict: raises at the first error so added); those only counted
        are counted in ``log`` after them."""
        calls, counts = self._calls, self._counts
        self._calls, self._counts = [], {}
        calls.sort(key=itemgetter(0))  # stable
        for call in calls:
            log.add(*call)
        for (kind, _), count in counts.items():
            if count > PER_KIND_LIMIT + 1:
                log.count_unlisted(kind, count - PER_KIND_LIMIT - 1)


def torn_tail_message(size: int, *, no_newline: bool, no_json: bool) -> str:
    """Return what a ``torn_tail`` diagnostic says, in every format, of a file's last line of
    ``size`` bytes that no newline ends (``no_newline``) or that is no JSON (``no_json``), or
    both: an interrupted append, dropped."""
    facts = [fact for fact, holds in (("has no newline", no_newline), ("is no JSON", no_json))
             if holds]
    return (f"last line {' and '.join(facts)} ({counted(size, 'byte')}): an interrupted "
            "append, dropped")
