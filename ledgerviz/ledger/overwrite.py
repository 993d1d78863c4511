"""Never write over a ledger: what an existing file holds, asked before a writer (a
command's ``-o``, ``write_report``, ``to_otlp``) replaces it."""

from __future__ import annotations

import errno
import os

from ledgerviz.ledger.formats import SNIFF_BYTES, claiming_format
from ledgerviz.ledger.sources import open_input

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
"""The first bytes of a Zstandard frame."""


def ledger_held(path: str | os.PathLike[str]) -> str | None:
    """Return what ledger the file at ``path`` holds: "a ledger ledgerviz reads (<name>
    format)" when a format's test claims its first bytes, or Zstandard data (as a
    compressed Codex rollout is); None when it holds neither, or is missing, empty, not a
    regular file or unreadable (writing it then says why)."""
    try:
        with open_input(os.fspath(path)) as file:
            head = file.read(SNIFF_BYTES)
    except OSError:
        return None
    if head.startswith(ZSTD_MAGIC):
        return "Zstandard-compressed data (a compressed transcript?)"
    found = claiming_format(head)
    return None if found is None else f"a ledger ledgerviz reads ({found.name} format)"


def refusal(path: str | os.PathLike[str], held: str) -> str:
    """Return the one line that refuses to write over ``path``, which holds ``held``."""
    return f"{os.fspath(path)} holds {held}; refusing to overwrite it: choose another path"


def refuse_ledger(path: str | os.PathLike[str]) -> None:
    """Raise ``FileExistsError`` if the file at ``path`` holds a ledger (``ledger_held``)."""
    held = ledger_held(path)
    if held is not None:
        raise FileExistsError(errno.EEXIST, refusal(path, held), os.fspath(path))
