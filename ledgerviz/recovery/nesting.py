"""Nested content walked without recursion: however deep a ledger nests, no ``RecursionError``.

Tool results nest content blocks inside content blocks, and tool arguments are JSON text
the model wrote, nested as deep as it likes. Both are walked here with an explicit stack.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

MAX_ARGUMENT_DEPTH = 128
"""How deeply the arrays and objects of a tool call's arguments may nest to be parsed
(the standard library's parser recurses once per level); deeper ones are kept as text."""

_END: Any = object()

_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
"""A JSON string (skipped whole: its brackets are text) or a bracket."""


def flat_blocks(blocks: Any) -> Iterator[dict[str, Any]]:
    """Yield the content blocks of ``blocks`` in order, each ``tool-result`` block replaced
    by the blocks of its ``content``, at any depth (what is no list or no object: skipped)."""
    pending = [iter(blocks if blocks.__class__ is list else ())]
    while pending:
        block = next(pending[-1], _END)
        if block is _END:
            pending.pop()
        elif block.__class__ is dict:
            if block.get("type") == "tool-result":
                content = block.get("content")
                pending.append(iter(content if content.__class__ is list else ()))
            else:
                yield block


def message_text(blocks: Any) -> str:
    """Return the visible text of content blocks: text blocks, nested tool-result text included."""
    parts = []
    for block in flat_blocks(blocks):
        if block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                parts.append(text)
    return parts[0] if len(parts) == 1 else "\n".join(parts)


def visible_text(content: Any) -> str:
    """Return ``message_text(content)``, a lone text block (the common case) read directly."""
    if content.__class__ is list and len(content) == 1:
        block = content[0]
        if block.__class__ is dict and block.get("type") == "text":
            text = block.get("text")
            return text if isinstance(text, str) else ""
    return message_text(content)


def may_nest_deeper(text: str, limit: int = MAX_ARGUMENT_DEPTH) -> bool:
    """Return False when JSON ``text`` cannot nest deeper than ``limit`` (it holds no more
    brackets than that: a test at C speed); True: it may, see :func:`nests_deeper`."""
    return len(text) > limit and text.count("[") + text.count("{") > limit


def nests_deeper(text: str, limit: int = MAX_ARGUMENT_DEPTH) -> bool:
    """Return whether the arrays and objects of JSON ``text`` nest deeper than ``limit``."""
    if not may_nest_deeper(text, limit):
        return False
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > limit:
                return True
        elif bracket in ("]", "}"):
            depth -= 1
    return False
