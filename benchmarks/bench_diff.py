"""Diff benchmark: ``ledgerviz.diff`` of two large sessions that differ in 1% of their steps,
against ``difflib.SequenceMatcher`` over the same event signatures.

Run: python benchmarks/bench_diff.py [--events N ...] [--rounds R]

For each size, session A is ``bench_load``'s realistic v4 ledger and session B is A with 1%
of its steps (chosen with a fixed seed) edited in turn: a tool result's text changed, the
step removed, a new step inserted before it, the answer's text changed; B's seqs are then
renumbered. Each route runs in a fresh Python process, once per round:

- ``ledgerviz``: both files loaded (timed apart), then ``lv.diff(a, b)`` and its first
  divergence and counts (the alignment, signatures included; wall and CPU time), then the
  call status changes (the recovery analysis of both sessions, timed apart);
- ``difflib``: the same signatures, interned to ints (not timed), through
  ``SequenceMatcher(None, a, b).get_opcodes()`` (its default autojunk on), with a time limit.

Peak memory is ``ru_maxrss`` at the end minus the resident set size just before the timed
work (the loaded ledgers excluded), in MiB.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from bench_load import _rss_mib, load_average, repository_environment, write_ledger

EDITED_SHARE = 0.01
EDITS = ("result", "remove", "insert", "answer")
BASELINE_LIMIT_S = 300


class Edited(NamedTuple):
    """What :func:`write_edited` did: steps per edit, the removed events' seqs in A, the
    number of events inserted into B."""

    steps: dict[str, int]
    removed: list[int]
    inserted: int


def write_edited(source: Path, target: Path, seed: int = 7) -> Edited:
    """Write ``source`` with 1% of its steps edited (see the module) to ``target``."""
    header, *events = (orjson.loads(line) for line in source.read_bytes().splitlines())
    starts = [n for n, event in enumerate(events) if event["type"] == "step/start"]
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(starts)), round(len(starts) * EDITED_SHARE)))
    edit_of = {starts[step]: EDITS[n % len(EDITS)] for n, step in enumerate(chosen)}
    done = dict.fromkeys(EDITS, 0)
    removed: list[int] = []
    inserted = 0
    out: list[dict[str, Any]] = []
    n = 0
    while n < len(events):
        edit = edit_of.get(n)
        stop = next(k for k in range(n, len(events)) if events[k]["type"] == "step/end") + 1 \
            if edit else n + 1
        step = events[n:stop]
        if edit == "remove":
            removed += [event["seq"] for event in step]
            step = []
        elif edit == "insert":
            inserted += len(step)
            step = [_inserted(event) for event in step] + step
        elif edit in ("result", "answer"):
            kind = "tool/result" if edit == "result" else "assistant/message"
            edited = next((e for e in step if e["type"] == kind), None) or next(
                e for e in step if e["type"] == "assistant/message")  # an answer step
            edited["data"]["message"]["content"] = [{"type": "text", "text": f"edited {n}"}]
        if edit:
            done[edit] += 1
        out += step
        n = stop
    with target.open("wb") as file:
        file.write(orjson.dumps(header) + b"\n")
        for seq, event in enumerate(out):
            file.write(orjson.dumps({**event, "seq": seq}) + b"\n")
    return Edited(done, removed, inserted)


def _inserted(event: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``event`` for an inserted step: other ids, other texts."""
    text = orjson.dumps(event).decode().replace('"call-', '"new-call-')
    copy = orjson.loads(text)
    message = copy.get("data", {}).get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        message["content"] = [*message["content"], {"type": "text", "text": "inserted"}]
    return copy


def route_ledgerviz(a: Path, b: Path) -> dict[str, Any]:
    """Load both, diff them, then compare call statuses; return times, counts and memory."""
    import ledgerviz as lv

    start = time.perf_counter()
    left, right = lv.load(a), lv.load(b)
    loaded = time.perf_counter() - start
    rss = _rss_mib()
    start, start_cpu = time.perf_counter(), time.process_time()
    diff = lv.diff(left, right)
    first, counts = diff.first_divergence, diff.counts()
    aligned, aligned_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss
    start = time.perf_counter()
    changes = len(diff.status_changes)
    statuses = time.perf_counter() - start
    return {"load_s": loaded, "diff_s": aligned, "diff_cpu_s": aligned_cpu,
            "diff_peak_mib": peak, "status_s": statuses,
            "counts": counts, "first": list(first or ()), "status_changes": changes,
            "a_only": diff.a_only,
            "events": [len(diff.a.seqs), len(diff.b.seqs)]}


def route_difflib(a: Path, b: Path) -> dict[str, Any]:
    """Time ``difflib.SequenceMatcher`` over the interned signatures of both sessions."""
    import difflib

    import ledgerviz as lv
    from ledgerviz.compare.signatures import session_keys

    interned: dict[Any, int] = {}
    ids = [[interned.setdefault(s, len(interned)) for s in
            session_keys(lv.load(path).sessions[0].events).signatures] for path in (a, b)]
    rss = _rss_mib()
    start, start_cpu = time.perf_counter(), time.process_time()
    opcodes = difflib.SequenceMatcher(None, ids[0], ids[1]).get_opcodes()
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss
    equal = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "equal")
    return {"diff_s": seconds, "diff_cpu_s": cpu, "diff_peak_mib": peak, "equal": equal}


ROUTES = {"ledgerviz": route_ledgerviz, "difflib": route_difflib}


def fresh(route: str, a: Path, b: Path) -> dict[str, Any]:
    """Run one route in a new interpreter; return its JSON (or the time limit it hit)."""
    try:
        result = subprocess.run(
            [sys.executable, __file__, "--route", route, "--a", str(a), "--b", str(b)],
            check=True, capture_output=True, text=True, env=repository_environment(),
            timeout=BASELINE_LIMIT_S if route == "difflib" else None)
    except subprocess.TimeoutExpired:
        return {"diff_s": float("inf"), "diff_cpu_s": float("inf"),
                "timed_out": BASELINE_LIMIT_S}
    return json.loads(result.stdout)


def _median(values: list[float]) -> str:
    """Return the median of ``values`` and the values themselves, as text."""
    runs = ", ".join(f"{value:.2f}" for value in values)
    return f"median {statistics.median(values):.2f} (runs: {runs})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--route", choices=ROUTES)
    parser.add_argument("--a", type=Path)
    parser.add_argument("--b", type=Path)
    args = parser.parse_args()
    if args.route:
        print(json.dumps(ROUTES[args.route](args.a, args.b)))
        return
    with tempfile.TemporaryDirectory() as folder:
        for events in args.events:
            a, b = Path(folder) / f"a-{events}.jsonl", Path(folder) / f"b-{events}.jsonl"
            write_ledger(a, events)
            edited = write_edited(a, b)
            print(f"{events:,} events; B's edits: {edited.steps} ({len(edited.removed)} events "
                  f"removed, {edited.inserted} inserted)")
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in ROUTES}
            for number in range(args.rounds):
                print(f"  round {number + 1}/{args.rounds} ({load_average()})")
                for name in ROUTES:
                    runs[name].append(fresh(name, a, b))
            mine = runs["ledgerviz"]
            print(f"  ledgerviz: events {mine[0]['events']}, counts {mine[0]['counts']}, "
                  f"first divergence {mine[0]['first']}, status changes "
                  f"{mine[0]['status_changes']}; only in A = the removed events: "
                  f"{mine[0]['a_only'] == edited.removed}")
            for key in ("load_s", "diff_s", "diff_cpu_s", "diff_peak_mib", "status_s"):
                print(f"  ledgerviz {key}: {_median([r[key] for r in mine])}")
            peer = runs["difflib"]
            for key in ("diff_s", "diff_cpu_s"):
                print(f"  difflib {key}: {_median([r[key] for r in peer])}")
            print(f"  difflib: equal events {peer[0].get('equal')}, peak MiB "
                  f"{peer[0].get('diff_peak_mib')}")


if __name__ == "__main__":
    main()
