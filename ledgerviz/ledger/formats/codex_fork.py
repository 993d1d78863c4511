"""Where a forked Codex rollout's copied prefix ends (FOREIGN_FORMATS.md §5).

A fork re-persists the parent's items, unmarked, after the child's own ``session_meta``,
starting with the parent's ``session_meta``. Only the parent's file shows how far the copy
goes: the prefix is the run of lines that repeat the parent's, line for line, apart from
the time each was written. The parent is looked for where Codex keeps rollouts
(``sessions/YYYY/MM/DD/rollout-*-<id>.jsonl[.zst]`` and ``archived_sessions``).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from ledgerviz.ledger.compressed import ZSTD_SUFFIX
from ledgerviz.ledger.diagnostics import DiagnosticLog
from ledgerviz.ledger.formats.foreign import Records
from ledgerviz.ledger.numbers import json_text
from ledgerviz.ledger.sources import iter_source_chunks


def fingerprint(record: dict[str, Any]) -> int:
    """Return what a copied line keeps of the original: everything but its write time."""
    kept = {key: value for key, value in record.items() if key != "timestamp"}
    return hash(json_text(kept, sort_keys=True))


def parent_file(child: str, parent_id: str) -> Path | None:
    """Return the rollout of thread ``parent_id`` near the rollout file ``child``: anywhere
    under the ``sessions`` (or ``archived_sessions``) folder of a dated layout, else in the
    child's own folder. None when there is none, or ``child`` is no file (a stream)."""
    path = Path(child)
    if not path.is_file():
        return None
    if len(path.parents) > 3 and all(p.name.isdigit() for p in list(path.parents)[:3]):
        sessions = path.parents[3]
        searches = [sessions.rglob, (sessions.parent / "archived_sessions").rglob]
    else:
        searches = [path.parent.glob]
    for search in searches:
        for suffix in (".jsonl", ZSTD_SUFFIX):
            found = sorted(search(f"rollout-*{parent_id}{suffix}"))
            if found:
                return found[0]
    return None


def copied_length(parent: Path, copied: list[int]) -> int:
    """Return how many of the fingerprints ``copied`` (of the child's lines from the
    parent's ``session_meta`` on) repeat the parent's lines from its first."""
    matched = 0
    for theirs, ours in zip(_fingerprints(parent), copied, strict=False):
        if theirs != ours:
            break
        matched += 1
    return matched


def _fingerprints(path: Path) -> Iterator[int]:
    """Yield the fingerprint of each record of a rollout (read lazily: the comparison stops
    at the first difference)."""
    records = Records(DiagnosticLog(str(path), strict=False))
    for _, chunks in islice(iter_source_chunks(str(path), 1 << 20), 1):
        data = (chunk for chunk in chunks if isinstance(chunk, bytes))
        for _, record in records.read(data):
            yield fingerprint(record)
