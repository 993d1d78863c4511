"""Counted nouns in the text people read (figure titles, report sentences)."""

from __future__ import annotations


def counted(count: int, noun: str, spec: str = "") -> str:
    """Return ``count`` (formatted by ``spec``) and ``noun``, in the plural unless ``count`` is
    exactly 1: ``counted(1, "turn")`` is ``"1 turn"``, ``counted(0, "tool call")`` ``"0 tool
    calls"``, ``counted(1500, "event", ",")`` ``"1,500 events"``."""
    return f"{count:{spec}} {noun}" if count == 1 else f"{count:{spec}} {noun}s"
