"""Resumed Claude Code sessions linked when each file is read alone (``ledgerviz check
FILE``, ``ledgerviz report``, which read one file at a time): the earlier sessions a
resume copies are found beside it, in its project folder, by their first record, and read
with it, so that ``claude_code_resumes.link_resumes`` seeds it as a load of the folder
would (stdlib + orjson)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ledgerviz.ledger.formats.claude_code_resumes import link_resumes, record_key
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import open_input

NAME = "claude_code"
HEAD_BYTES = 256 * 1024
"""How much of a file beside it is looked at for its first record."""


class ResumeFinder:
    """Links Claude Code sessions read one at a time to the earlier sessions in their
    folder whose records they begin with. Each folder's files are looked at once (their
    heads only), then remembered."""

    def __init__(self, read: Callable[[str], SessionLog]) -> None:
        self._read = read
        """Reads the file at a path as a session (as the caller reads files)."""
        self._folders: dict[Path, dict[str, list[Path]]] = {}

    def linked(self, log: SessionLog) -> SessionLog:
        """Return ``log`` seeded from the earlier session it resumes, if that session's
        file is beside it (unchanged otherwise, and for other formats)."""
        if (log.format != NAME or log.header.get("isSeeded")
                or log.header.get("origin") == "subagent"):
            return log
        first = next(filter(None, map(record_key, log.events)), None)
        here = Path(log.path)
        if first is None or not here.is_file():
            return log
        family = [path for path in self._firsts(here.parent).get(first, [])
                  if path != here]
        if not family:
            return log
        return link_resumes([*map(self._read, map(str, family)), log], NAME)[-1]

    def _firsts(self, folder: Path) -> dict[str, list[Path]]:
        """Return the ``.jsonl`` files of ``folder`` by the key of their first record."""
        if folder not in self._folders:
            firsts: dict[str, list[Path]] = {}
            for path in sorted(folder.glob("*.jsonl")):
                key = _first_key(path)
                if key is not None:
                    firsts.setdefault(key, []).append(path)
            self._folders[folder] = firsts
        return self._folders[folder]


def _first_key(path: Path) -> str | None:
    """Return the key (``record_key``'s) of the first keyed record in a file's head, or None
    (unreadable, no regular file, or none there)."""
    try:
        with open_input(str(path)) as file:  # never blocks on a FIFO, never reads a device
            head = file.read(HEAD_BYTES)
    except OSError:
        return None
    for line in head.split(b"\n"):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        key = _raw_key(record) if isinstance(record, dict) else None
        if key is not None:
            return key
    return None


def _raw_key(record: dict[str, Any]) -> str | None:
    """Return the key the reader's event for a raw record has (``record_key``): an
    assistant record's ``message.id`` (else its ``uuid``), any other record's ``uuid``."""
    if record.get("type") == "assistant":
        message = record.get("message")
        message_id = message.get("id") if isinstance(message, dict) else None
        if isinstance(message_id, str):
            return message_id
    uuid = record.get("uuid")
    return uuid if isinstance(uuid, str) else None
