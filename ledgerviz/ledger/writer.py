"""Writing dsh ledger lines: compact JSON, one object per line, and ``sourceEventSeqs`` range
encoded the way the runtime stores them (format §3). The simulator and the fork writer both
write through here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import pairwise
from typing import Any

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def encode_line(obj: dict[str, Any]) -> str:
    """Return one compact JSONL line (with its newline) for ``obj``, nested at any depth."""
    try:
        return _ENCODER.encode(obj) + "\n"
    except RecursionError:  # the C encoder recurses once per level: walk it instead
        return "".join(_encoded_pieces(obj)) + "\n"


_END: Any = object()


def _encoded_pieces(value: Any) -> list[str]:
    """Return the compact JSON text of ``value`` in pieces, its arrays and objects walked
    with an explicit stack (each scalar, and each key with its colon, as ``_ENCODER`` writes
    it, so the text is the one ``_ENCODER`` gives)."""
    pieces: list[str] = []
    open_containers: list[tuple[Iterator[Any], bool]] = []  # (items, is an object)
    pending = [value]
    while pending or open_containers:
        if pending:
            item = pending.pop()
            if item.__class__ is dict:
                pieces.append("{")
                open_containers.append((iter(item.items()), True))
            elif item.__class__ is list:
                pieces.append("[")
                open_containers.append((iter(item), False))
            else:
                pieces.append(_ENCODER.encode(item))
            continue
        items, is_object = open_containers[-1]
        item = next(items, _END)
        if item is _END:
            open_containers.pop()
            pieces.append("}" if is_object else "]")
            continue
        if pieces[-1] not in ("{", "["):
            pieces.append(",")
        if is_object:
            pieces.append(_ENCODER.encode({item[0]: 0})[1:-2])  # the key and its colon
            item = item[1]
        pending.append(item)
    return pieces


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
