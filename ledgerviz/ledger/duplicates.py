"""Duplicate keys in one JSON line: orjson (like the runtime) silently keeps the last.

Finding them costs a re-encoding of every line, so only the readers that promise a
thorough look (``ledgerviz check``, ``ledgerviz repair``) ask for it. A compact line
re-encodes to its own length unless a key was dropped (or it was written with other
spacing or escapes); only those lines are parsed again, pair by pair.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def may_repeat_keys(raw: bytes, value: Any) -> bool:
    """Return whether ``raw`` might hold a repeated key: ``value`` re-encodes to another size."""
    try:
        return len(orjson.dumps(value)) != len(raw.rstrip(b"\r"))
    except TypeError:  # an integer beyond 64 bits: look closer
        return True


def repeated_keys(raw: bytes) -> list[str]:
    """Return the keys that appear twice in one object of ``raw`` (in order, each once)."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and key not in found:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []
    return found
