"""Writing dsh ledger lines: compact JSON, one object per line, and ``sourceEventSeqs`` range
encoded the way the runtime stores them (format §3). The simulator and the fork writer both
write through here."""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def encode_line(obj: dict[str, Any]) -> str:
    """Return one compact JSONL line (with its newline) for ``obj``."""
    return _ENCODER.encode(obj) + "\n"


def encode_source_seqs(seqs: Iterable[int]) -> list[int | list[int]]:
    """Return ``seqs`` range encoded the way the runtime writes them.

    Only a strictly increasing list is encoded, and only runs of three or more
    consecutive seqs become ``[first, last]`` pairs; anything else is kept verbatim.
    """
    values = list(seqs)
    if any(b <= a for a, b in pairwise(values)):
        return list(values)
    encoded: list[int | list[int]] = []
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and values[end + 1] == values[end] + 1:
            end += 1
        if end - start >= 2:
            encoded.append([values[start], values[end]])
        else:
            encoded.extend(values[start : end + 1])
        start = end + 1
    return encoded
