"""Escaping for every ledger-derived string that reaches HTML (hover text, titles, reports)."""

from __future__ import annotations

import html
import re
from typing import Any

ELLIPSIS = "…"

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""The Unicode bidirectional controls (a regex class): ALM, LRM, RLM, the embeddings and
overrides LRE..RLO, the isolates LRI..PDI. In an id or a name they reorder the text
around them, so a report would show ``abc`` RLO ``gpj.exe`` as ``abcexe.jpg``."""

_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def text_of(value: Any) -> str:
    """Return ``value`` as plain text: ``""`` for None or a missing (NaN/NA) value, else ``str``."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, float) and value != value:
        return ""
    if type(value).__name__ in {"NAType", "NaTType"}:
        return ""
    return str(value)


def truncate(text: str, limit: int) -> str:
    """Return ``text`` cut to at most ``limit`` characters, ending in an ellipsis when cut."""
    if limit < 1:
        raise ValueError(f"limit must be positive, got {limit}")
    if len(text) <= limit:
        return text
    return text[: limit - 1] + ELLIPSIS


def short_text(value: Any, limit: int | None = None) -> str:
    """Return ``value`` as plain text (:func:`text_of`), cut to ``limit`` characters if
    given, with its bidirectional controls shown (:func:`visible_bidi`)."""
    text = text_of(value)
    return visible_bidi(text if limit is None else truncate(text, limit))


def visible_bidi(text: str) -> str:
    """Return ``text`` with each bidirectional control written as a visible ``\\uXXXX``
    escape (the form the terminal output uses), so it reorders nothing and is seen."""
    return _BIDI.sub(_bidi_escape, text) if _BIDI.search(text) else text


def _bidi_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape(value: Any, limit: int | None = None) -> str:
    """Return ``value`` as HTML-escaped text (quotes included), optionally truncated first.

    Truncation happens before escaping, so an entity is never cut in half.
    """
    return html.escape(short_text(value, limit), quote=True)


def seq_text(seq: int | None) -> str:
    """Return an event seq as escaped text, or ``not logged`` for an event without one."""
    return "not logged" if seq is None else escape(seq)


def plotly_text(value: Any, limit: int | None = None) -> str:
    """Return ``value`` escaped for plotly text (hover labels, titles), optionally truncated.

    Plotly parses a small HTML subset in its labels and decodes only a few entities
    (``&amp;``, ``&lt;``, ``&gt;``, not ``&quot;``): escaping ``&``, ``<`` and ``>`` leaves no
    tag to form, and quotes stay readable.
    """
    return html.escape(short_text(value, limit), quote=False)


def plotly_lines(value: Any, limit: int | None = None) -> str:
    """Return :func:`plotly_text` with the line breaks of ``value`` as ``<br>``."""
    return plotly_text(value, limit).replace("\r\n", "\n").replace("\n", "<br>")
