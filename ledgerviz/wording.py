"""Counted nouns in the text people read (figure titles, report sentences)."""

from __future__ import annotations


def one_or_many(count: int, one: str, many: str) -> str:
    """Return ``one`` if ``count`` is exactly 1, else ``many``: the word (a verb, an
    irregular plural) that agrees with a count."""
    return one if count == 1 else many


def counted(count: int, noun: str, spec: str = "", *, plural: str = "") -> str:
    """Return ``count`` (formatted by ``spec``) and ``noun``, in the plural (``plural``, else
    ``noun`` + "s") unless ``count`` is exactly 1: ``counted(1, "turn")`` is ``"1 turn"``,
    ``counted(0, "tool call")`` ``"0 tool calls"``, ``counted(1500, "event", ",")``
    ``"1,500 events"``, ``counted(2, "copy", plural="copies")`` ``"2 copies"``."""
    return f"{count:{spec}} {one_or_many(count, noun, plural or noun + 's')}"
