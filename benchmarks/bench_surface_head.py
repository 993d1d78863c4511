"""Time ``recovery.analyze`` on replace ops at the head of a long surface (run on demand).

    PYTHONPATH=. python benchmarks/bench_surface_head.py [MESSAGES]

Builds a v4 ledger of MESSAGES appended user messages (default 40,000), then MESSAGES / 2
replace ops, each over the first two nodes of the surface (the shape of a compaction of
the oldest messages, repeated), and beside it, as the baseline of the same run, the same
ledger whose replace ops cover the *last* two nodes. Both do the same work per op; a
head op costs what a tail op costs when a replacement is linear in the nodes it removes,
and the whole surface when it is not (issue 38: 17 MB of them took 158 s in ``check``).
Prints the best of three runs of each and their ratio.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from ledgerviz.recovery.analyze import analyze


def message(seq: int, op: Any, sources: list[int] | None = None) -> dict[str, Any]:
    """Return one user/message event with surface op ``op``."""
    event = {"type": "user/message", "seq": seq, "time": 1_000 + seq, "surfaceOp": op,
             "data": {"id": f"u{seq}", "role": "user", "source": {"kind": "user"},
                      "content": [{"type": "text", "text": "hi"}]}}
    if sources is not None:
        event["sourceEventSeqs"] = sources
    return event


def build_ledger(messages: int, at_head: bool) -> list[dict[str, Any]]:
    """Return ``messages`` appends, then ``messages // 2`` replace ops over two nodes, at
    the head of the surface or at its tail."""
    events = [message(seq, "append") for seq in range(messages)]
    surface = list(range(messages))  # the seqs on the surface, folded as the ops are made
    for _ in range(messages // 2):
        seq = len(events)
        first = 0 if at_head else len(surface) - 2
        start, end = surface[first], surface[first + 1]
        events.append(message(seq, {"op": "replace", "startSeq": start, "endSeq": end},
                              [start, end]))
        surface[first : first + 2] = [seq]
    return events


def best_of_three(events: list[dict[str, Any]]) -> float:
    """Return the best wall-clock seconds of three analyses of ``events``."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        analyze(events, policy="recorded")
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    messages = int(sys.argv[1]) if len(sys.argv) > 1 else 40_000
    head = best_of_three(build_ledger(messages, at_head=True))
    tail = best_of_three(build_ledger(messages, at_head=False))
    print(f"{messages:,} appends + {messages // 2:,} replace ops over two nodes")
    print(f"  at the tail (baseline): {tail:.3f} s")
    print(f"  at the head:            {head:.3f} s  ({head / tail:.1f}x the baseline)")


if __name__ == "__main__":
    main()
