"""Read dsh session ledgers (JSONL) into plain-dict events with diagnostics (stdlib + orjson)."""

from __future__ import annotations

from ledgerviz.ledger.diagnostics import Diagnostic, LedgerError, UnreadableSourceError
from ledgerviz.ledger.reader import read_session, read_sessions
from ledgerviz.ledger.session import SessionLog

__all__ = [
    "Diagnostic",
    "LedgerError",
    "SessionLog",
    "UnreadableSourceError",
    "read_session",
    "read_sessions",
]
