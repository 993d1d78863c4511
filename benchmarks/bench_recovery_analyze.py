"""Time ``recovery.analyze`` on a large in-memory ledger (run on demand).

    PYTHONPATH=. python benchmarks/bench_recovery_analyze.py EVENTS PADDING PRUNE UNDO FAIL

(each argument optional, from the right: 1,000,000 events, the others 0).

Each policy is timed from the event dicts and from the events' table (made beforehand),
then with ``analysis.calls`` read too (``analyze`` makes the calls' ``CallFacts`` on that
first read, as a dict caller does; the frames read ``call_columns`` instead).

Builds a v4 ledger of about EVENTS events (turns of three steps, parallel tool
calls, plugin events between call and result, an open tail with a dispatched
call; PADDING extra log-only events per step, 0 gives one call per ~4.5 events,
the fixtures average one per ~34) and prints the best of three runs per policy (wall
clock and process CPU time).

With PRUNE > 0, a tool-result pruner also replaces each tool result, one for one,
PRUNE turns after it was recorded (format §6: a single-node replace op), and the
same ledger without the pruner is timed beside it: the replace ops should cost
about what the events they add cost, however long the surface grows.

With UNDO > 0, every UNDO-th turn is undone right after it ends (a ``surface/rewind``
listing the turn's surface seqs, as the undo plugin records it), and likewise timed
beside the ledger without them: a rewind should cost about what the nodes it hides cost.

With FAIL > 0, the first step of every FAIL-th turn fails once its calls are dispatched
(no results, the turn ends in error), so the fork policy forks there and the next
turn's typed message starts a new branch; likewise timed beside the ledger without.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery.analyze import analyze


def build_ledger(target: int, padding: int = 0, prune: int = 0, undo: int = 0, fail: int = 0
                 ) -> list[dict[str, Any]]:
    """Return about ``target`` well-formed v4 events ending in an open step (each tool
    result replaced ``prune`` turns later when ``prune`` > 0, every ``undo``-th turn undone
    when ``undo`` > 0, every ``fail``-th turn failed in its first step when ``fail`` > 0)."""
    events: list[dict[str, Any]] = []
    results: dict[int, list[int]] = {}  # turn -> the positions of its tool results

    def add(kind: str, data: dict[str, Any], **envelope: Any) -> None:
        seq = len(events)
        events.append({"type": kind, "seq": seq, "time": 1_000 + seq, "data": data, **envelope})

    turn = 0
    while len(events) < target:
        turn += 1
        first = len(events)
        add("turn/start", {"turn": turn})
        add("user/message", {"id": f"u{turn}", "role": "user", "source": {"kind": "user"},
                             "content": [{"type": "text", "text": "go"}]}, surfaceOp="append")
        failed = fail and turn % fail == 0
        for step in (1,) if failed else (1, 2, 3):
            ids = [f"c{turn}-{step}-{k}" for k in range(3)] if step < 3 else []
            add("step/start", {"turn": turn, "step": step})
            content = [{"type": "text", "text": "ok"}] + [
                {"type": "tool-call", "id": i, "name": "read", "arguments": "{}"} for i in ids
            ]
            add("assistant/message", {"turn": turn, "step": step, "stream": [], "message": {
                "id": f"a{len(events)}", "role": "assistant", "content": content,
                "source": {"kind": "model", "provider": "p", "model": "m"}}}, surfaceOp="append")
            call_seqs = {}
            for i in ids:
                call_seqs[i] = len(events)
                add("tool/call", {"turn": turn, "step": step, "callId": i, "name": "read",
                                  "arguments": "{}"})
            add("todo/write", {"todos": []})
            for _ in range(padding):
                add("request/context", {"provider": "p", "model": "m"})
            for i in () if failed else ids:
                results.setdefault(turn, []).append(len(events))
                add("tool/result", {"turn": turn, "step": step, "message": {
                    "id": f"r{len(events)}", "role": "tool", "toolCallId": i, "isError": False,
                    "source": {"kind": "tool", "callId": i},
                    "content": [{"type": "text", "text": "out"}]}},
                    surfaceOp="append", sourceEventSeqs=[call_seqs[i]])
            add("step/end", {"turn": turn, "step": step})
        add("turn/end", {"turn": turn, "reason": {"kind": "error" if failed else "completed"}})
        if undo and turn % undo == 0:
            shown = [e["seq"] for e in events[first:] if e.get("surfaceOp") == "append"]
            add("surface/rewind", {"start": shown[0], "end": shown[-1], "shadowedSeqs": shown})
        for position in results.pop(turn - prune, []) if prune else []:
            pruned = events[position]
            message = {**pruned["data"]["message"], "content": [{"type": "text", "text": "-"}]}
            seq = pruned["seq"]
            add("tool/result", {**pruned["data"], "message": message},
                surfaceOp={"op": "replace", "startSeq": seq, "endSeq": seq},
                sourceEventSeqs=[seq])
    add("turn/start", {"turn": turn + 1})
    add("step/start", {"turn": turn + 1, "step": 1})
    add("assistant/message", {"turn": turn + 1, "step": 1, "stream": [], "message": {
        "id": "tail", "role": "assistant", "source": {"kind": "model"},
        "content": [{"type": "tool-call", "id": "tail-call", "name": "rm", "arguments": "{}"}]}},
        surfaceOp="append")
    add("tool/call", {"turn": turn + 1, "step": 1, "callId": "tail-call", "name": "rm",
                      "arguments": "{}"})
    return events


def time_policies(events: list[dict[str, Any]]) -> None:
    """Print the best of three runs of ``analyze`` per policy, from the dicts (the engine's
    adapter reading them) and from the events' table (``EventTable``, made beforehand, as
    the reader makes it: the engine reads a dict only where a column cannot tell)."""
    table = EventTable.of(events)
    for policy in ("recorded", "synthesize", "fork"):
        for route, columns in (("dicts", None), ("table", table)):
            best = cpu = with_calls = float("inf")
            for _ in range(3):
                start, start_cpu = time.perf_counter(), time.process_time()
                analysis = analyze(events, policy=policy, version=4, columns=columns)
                best = min(best, time.perf_counter() - start)
                cpu = min(cpu, time.process_time() - start_cpu)
                analysis.calls  # noqa: B018 - a dict caller's first read makes the CallFacts
                with_calls = min(with_calls, time.process_time() - start_cpu)
            print(f"{policy:>10} {route:>5}: {best:.3f} s wall, {cpu:.3f} s cpu, "
                  f"{with_calls:.3f} s cpu with the calls read "
                  f"({len(analysis.calls):,} calls, {len(analysis.closers)} closers, "
                  f"{len(analysis.fork_points):,} fork points)")


def main() -> None:
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    padding = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    prune = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    undo = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    fail = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    for changed in (False, True) if prune or undo or fail else (False,):
        events = build_ledger(target, padding, prune * changed, undo * changed, fail * changed)
        surface_ops = sum(isinstance(event.get("surfaceOp"), dict) for event in events)
        rewinds = sum(event["type"] == "surface/rewind" for event in events)
        print(f"{len(events):,} events, padding {padding}, {surface_ops:,} replace ops, "
              f"{rewinds:,} rewinds")
        time_policies(events)

if __name__ == "__main__":
    main()
