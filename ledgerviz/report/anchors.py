"""Stable anchors of the report: a session's section by its id, and each part of it by name."""

from __future__ import annotations

from urllib.parse import quote

PARTS = {
    "timeline": "Timeline",
    "unanswered": "Unanswered tool calls",
    "results": "What the tools returned",
    "fork-points": "Fork points",
    "providers": "Provider validity of the next request",
    "diagnostics": "Diagnostics",
}
"""Each part of a session's section: its anchor suffix and its heading."""


def session_anchor(key: str) -> str:
    """Return the element id of session ``key``'s section: ``session-`` and the key,
    percent-encoded (so the id and a link's fragment are the same text and never need
    escaping): ``session_anchor("a/b c")`` is ``"session-a%2Fb%20c"``."""
    return "session-" + quote(key, safe="-._~")


def part_anchor(key: str, part: str) -> str:
    """Return the element id of one part (a key of :data:`PARTS`) of session ``key``'s
    section, e.g. ``session-run-7--fork-points``."""
    if part not in PARTS:
        raise KeyError(f"no report part {part!r}; parts are {', '.join(PARTS)}")
    return f"{session_anchor(key)}--{part}"
