"""Probe for issue 13's load targets: a typed decoder of only the facts the frames read.

Run: python benchmarks/probe_typed_facts.py --path LEDGER [--rounds R]

Not a measure of ledgerviz, which has no such reader: the probe of a design. ledgerviz
decodes every line to dicts (the floor here, ``floor_gc_paused_chunked`` of
``bench_load``) and its frames then walk the payloads again in Python. ``typed`` decodes
the same lines with msgspec into small structs that hold only the envelope and the
payload fields the frames and the recovery engine read (every other field skipped in C;
``Any`` fields, so nothing is validated: the reader's checks would still run on them);
``typed_columns`` then reads from those structs the envelope columns and the messages
frame's role, kind and visible text. Each route runs in a fresh process (see
``bench_load.run_route``); the report gives median times, peak memory and the ratio of
each route to the floor.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
from pathlib import Path
from typing import Any

import msgspec
from bench_load import (
    Built,
    chunk_lines,
    floor_gc_paused_chunked,
    in_fresh_process,
    load_average,
    run_route,
)
from msgspec import UNSET, Struct


def _loose(name: str, fields: str, **nested: Any) -> Any:
    """Return a struct whose fields all default to None: ``fields`` (names, space-separated)
    of any type, ``nested`` of the struct types given."""
    specs = [(field, Any, None) for field in fields.split()]
    specs += [(field, kind | None, None) for field, kind in nested.items()]
    return msgspec.defstruct(name, specs, gc=False)


_Source = _loose("Source", "kind provider model callId")
_Block = _loose("Block", "type text id name arguments toolCallId isError content")
_Message = _loose("Message", "id role toolCallId isError", source=_Source, content=list[_Block])
_Data = _loose(  # role, source, content: a user/message's data is its message
    "Data",
    "turn step callId name arguments reason error role",
    message=_Message,
    usage=_loose("Usage", "inputTokens outputTokens cacheReadTokens reasoningTokens"),
    header=_loose("Header", "", config=_loose("Config", "provider model")),
    source=_Source,
    content=list[_Block],
)


class _Event(Struct, gc=False):
    type: Any = None
    seq: Any = UNSET
    time: Any = None
    data: _Data | None = None
    surfaceOp: Any = None


_CARRIED = frozenset({"assistant/message", "tool/result", "system/message", "developer/message"})


def typed(path: Path) -> Built:
    """Decode every line into the structs, a chunk at a time as the reader reads, GC paused."""
    decode = msgspec.json.Decoder(_Event).decode
    events: list[_Event] = []
    gc.disable()
    try:
        for lines in chunk_lines(path):
            events += map(decode, lines)
        return len(events), events
    finally:
        gc.freeze()
        gc.enable()


def _text(content: list[Any] | None) -> str:
    """Return the visible text of content blocks (their text blocks, joined)."""
    if content and len(content) == 1 and content[0].type == "text":
        return content[0].text or ""
    return "\n".join(block.text for block in content or () if block.type == "text" and block.text)


def typed_columns(path: Path) -> Built:
    """``typed``, then the envelope columns and the messages' role, kind and text."""
    _, events = typed(path)
    types = [event.type for event in events]
    datas = [event.data for event in events]
    columns: dict[str, list[Any]] = {
        "seq": [event.seq for event in events],
        "time": [event.time for event in events],
        "turn": [data.turn if data is not None else None for data in datas],
        "step": [data.step if data is not None else None for data in datas],
        "role": [], "kind": [], "text": [],
    }
    for kind, data in zip(types, datas, strict=True):
        if data is None:
            continue
        message: Any = data if kind == "user/message" else None
        if kind in _CARRIED:
            message = data.message
        if message is not None:
            columns["role"].append(message.role)
            columns["kind"].append(message.source.kind if message.source else None)
            columns["text"].append(_text(message.content))
    return len(types), (events, columns)


ROUTES = {"floor_gc_paused_chunked": floor_gc_paused_chunked, "typed": typed,
          "typed_columns": typed_columns}


def main() -> None:
    """Run every route once per round, each in a fresh process; print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, required=True, help="the ledger to decode")
    parser.add_argument("--rounds", type=int, default=3, help="fresh-process runs per route")
    parser.add_argument("--route", choices=ROUTES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route:
        print(json.dumps(run_route(ROUTES[args.route], args.path)))
        return
    rounds = [{route: in_fresh_process(__file__, route, args.path) for route in ROUTES}
              for _ in range(args.rounds)]
    runs = {route: [measured[route] for measured in rounds] for route in ROUTES}
    size = args.path.stat().st_size / 2**20
    print(f"{args.path} ({size:.0f} MiB), median of {args.rounds} fresh processes "
          f"({load_average()} at the end):")
    floor = statistics.median(run["seconds"] for run in runs["floor_gc_paused_chunked"])
    for route, measured in runs.items():
        seconds = statistics.median(run["seconds"] for run in measured)
        peak = statistics.median(run["peak_mib"] for run in measured)
        print(f"  {route:>23}: {seconds:6.2f} s ({seconds / floor:4.2f}x the floor)"
              f"   peak +{peak:5.0f} MiB ({peak / size:3.1f}x the file)")


if __name__ == "__main__":
    main()
