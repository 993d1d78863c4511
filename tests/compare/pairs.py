"""Hand-built session pairs: a ledger's lines and edits whose diff is known by construction."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson

from ledgerviz.simulate.examples import bundled_examples_dir

Event = dict[str, Any]


def example(name: str) -> tuple[dict[str, Any], list[Event]]:
    """Return the header and events of a bundled example ledger."""
    lines = (bundled_examples_dir() / name).read_bytes().splitlines()
    header, *events = (orjson.loads(line) for line in lines if line.strip())
    return header, events


def write(path: Path, header: dict[str, Any], events: list[Event]) -> Path:
    """Write a ledger file and return its path."""
    path.write_bytes(b"".join(orjson.dumps(item) + b"\n" for item in [header, *events]))
    return path


def renumbered(events: list[Event]) -> list[Event]:
    """Return the events with seqs 0, 1, 2... and turns numbered from 1 in order."""
    out, turn = [], 0
    for seq, event in enumerate(copy.deepcopy(events)):
        event["seq"] = seq
        data = event.get("data")
        if event["type"] == "turn/start":
            turn += 1
        if isinstance(data, dict) and "turn" in data:
            data["turn"] = turn
        out.append(event)
    return out


def disguised(events: list[Event]) -> list[Event]:
    """Return a copy run later under other ids: every time shifted, every message id and
    call id renamed (consistently, so results still answer their calls)."""
    text = orjson.dumps(events).decode()
    for old in {value for event in events for value in ids(event)}:
        text = text.replace(old, old + "-again")
    out = orjson.loads(text)
    for event in out:
        event["time"] += 3_600_000
    return out


def ids(value: Any) -> list[str]:
    """Return every message id and call id in ``value``."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("id", "callId", "toolCallId") and isinstance(item, str):
                found.append(item)
            else:
                found += ids(item)
    elif isinstance(value, list):
        for item in value:
            found += ids(item)
    return found
