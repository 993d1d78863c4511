"""Counted nouns in the text people read (figure titles, report sentences)."""

from __future__ import annotations


def counted(count: int, noun: str) -> str:
    """Return ``count`` and ``noun``, in the plural unless ``count`` is exactly 1:
    ``counted(1, "turn")`` is ``"1 turn"``, ``counted(0, "tool call")`` ``"0 tool calls"``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
