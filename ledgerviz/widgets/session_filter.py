"""The explorer's session filter: which sessions of a ledger a text and a status match, so that
the session picker lists a few of thousands."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ledgerviz.recovery.analysis import Analysis

STATUSES = {
    "": "any status",
    "outcome_unknown": "has a call of unknown outcome",
    "fork": "has a fork point",
    "error": "has a tool error",
    "clean": "clean",
}
"""The status filter's choices: the flag a session must carry, and what the picker says."""
LISTED = 200
"""Sessions the picker lists at most; the count says how many match in all."""


def session_flags(analysis: Analysis) -> frozenset[str]:
    """Return the :data:`STATUSES` flags of a session's fork-policy ``analysis``: a call of
    unknown outcome, a fork point, a tool error; ``clean`` when it has no fork point and every
    call's result is recorded and not an error."""
    statuses = {call.status for call in analysis.calls}
    flags = {flag for flag in ("outcome_unknown", "error") if flag in statuses}
    if analysis.fork_points:
        flags.add("fork")
    if not analysis.fork_points and statuses <= {"ok"}:
        flags.add("clean")
    return frozenset(flags)


def matching(keys: Sequence[str], texts: Sequence[str], query: str, status: str,
             flags_of: Callable[[str], frozenset[str]]) -> list[str]:
    """Return the ``keys`` whose text (``texts``: each key's, e.g. key and file) holds
    ``query`` (case-insensitive) and, unless ``status`` is empty, whose ``flags_of`` hold
    ``status``; in ``keys`` order."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {list(STATUSES)!r}, got {status!r}")
    needle = query.strip().casefold()
    found = [key for key, text in zip(keys, texts, strict=True)
             if needle in text.casefold()]
    return [key for key in found if status in flags_of(key)] if status else found
