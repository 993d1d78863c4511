"""Diagnostics: every problem found in a ledger, with file, line, kind and severity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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


class DiagnosticLog:
    """Collects the diagnostics of one file; in strict mode raises at the first error."""

    def __init__(self, path: str, *, strict: bool) -> None:
        self.path = path
        self.strict = strict
        self.items: list[Diagnostic] = []

    def add(self, line: int, kind: str, message: str, severity: Severity = "error") -> None:
        """Record one diagnostic; raise ``LedgerError`` if it is an error in strict mode."""
        diagnostic = Diagnostic(self.path, line, kind, severity, message)
        if self.strict and severity == "error":
            raise LedgerError(str(diagnostic))
        self.items.append(diagnostic)
