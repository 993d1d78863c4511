"""Read session ledgers (JSONL) into plain-dict events with diagnostics (stdlib + orjson):
dsh ledgers, and other agents' transcripts through the formats in ``ledger.formats``."""

from __future__ import annotations

from ledgerviz.ledger.diagnostics import Diagnostic, LedgerError, UnreadableSourceError
from ledgerviz.ledger.read import read_file, read_session, read_sessions
from ledgerviz.ledger.session import SessionLog

__all__ = [
    "Diagnostic",
    "LedgerError",
    "SessionLog",
    "UnreadableSourceError",
    "read_file",
    "read_session",
    "read_sessions",
]
