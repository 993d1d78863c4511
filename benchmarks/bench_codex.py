"""Codex benchmark: a generated Codex CLI rollout loaded beside a dsh ledger of the same size.

Run: python benchmarks/bench_codex.py [--mib SIZE] [--rounds R] [--frames]

Both files are generated to about ``--mib`` MiB (1024 for a 1 GiB rollout) in one
temporary folder; each route runs in a fresh Python process, once per round, so its peak
memory is its own (``ru_maxrss`` at the end minus the resident set size just before the
work, in MiB; imports excluded). ``load`` is ``ledgerviz.load`` (read, decode, and for
Codex the mapping into dsh events); ``--frames`` adds routes that also build every frame.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from bench_load import Built, in_fresh_process, load_average, run_route, write_ledger

import ledgerviz

T0 = "2026-01-05T10:00:00.000Z"


def _codex_turn(turn: int) -> Iterator[dict[str, Any]]:
    """Yield the lines of one realistic Codex turn: a prompt and its echo, reasoning and two
    shell calls, token counts, the outputs, an answer and its echo."""
    yield {"type": "event_msg", "payload": {"type": "task_started", "turn_id": f"t{turn}"}}
    yield {"type": "turn_context", "payload": {"turn_id": f"t{turn}", "model": "gpt-5-codex",
                                               "cwd": "/work/repo"}}
    prompt = f"Please inspect module {turn} and run its tests."
    yield {"type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}}
    yield {"type": "event_msg", "payload": {"type": "user_message", "message": prompt}}
    yield {"type": "response_item", "payload": {
        "type": "reasoning", "summary": [{"type": "summary_text",
                                          "text": "I should read the file, then run the tests."}],
        "encrypted_content": "gAAAA" + "x" * 200}}
    calls = [f"call-{turn}-{i}" for i in range(2)]
    for call_id, command in zip(calls, (["cat", f"src/mod{turn}.py"], ["pytest", "-q"]),
                                strict=True):
        yield {"type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": call_id,
            "arguments": json.dumps({"command": command, "workdir": "/work/repo"})}}
    usage = {"input_tokens": 1200 + turn % 500, "cached_input_tokens": 900,
             "output_tokens": 80, "reasoning_output_tokens": 20, "total_tokens": 1280}
    yield {"type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": usage, "total_token_usage": usage}}}
    for call_id in calls:
        yield {"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": call_id,
            "output": "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"
                      + "def f(x):\n    return x * 2\n" * 4}}
    answer = "All tests pass; the module doubles its input."
    yield {"type": "response_item", "payload": {
        "type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": answer}]}}
    yield {"type": "event_msg", "payload": {"type": "agent_message", "message": answer}}
    yield {"type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": usage, "total_token_usage": usage}}}
    yield {"type": "event_msg", "payload": {"type": "task_complete", "turn_id": f"t{turn}"}}


def write_rollout(path: Path, size: int) -> int:
    """Write a Codex rollout of at least ``size`` bytes to ``path``; return its line count."""
    meta = {"timestamp": T0, "type": "session_meta", "payload": {
        "id": "bench-codex", "timestamp": T0, "cwd": "/work/repo", "cli_version": "0.60.0",
        "source": "cli", "instructions": "You are Codex." * 200}}
    written, lines, turn = 0, 1, 1
    with path.open("wb") as out:
        written += out.write(orjson.dumps(meta) + b"\n")
        while written < size:
            block = [orjson.dumps({"timestamp": T0, **line}) for line in _codex_turn(turn)]
            written += out.write(b"\n".join(block) + b"\n")
            lines += len(block)
            turn += 1
    return lines


def write_dsh(path: Path, size: int) -> int:
    """Write a dsh ledger of about ``size`` bytes (events sized on a small sample)."""
    sample = path.with_suffix(".sample")
    per_event = 1 / write_ledger(sample, 10_000) * sample.stat().st_size
    sample.unlink()
    return write_ledger(path, int(size / per_event))


def load(path: Path) -> Built:
    """``ledgerviz.load``: read, decode and (for Codex) map into dsh events."""
    ledger = ledgerviz.load(path)
    return len(ledger.sessions[0].events), ledger


def load_and_frames(path: Path) -> Built:
    """``ledgerviz.load`` and every frame (with the recovery analysis behind them)."""
    ledger = ledgerviz.load(path)
    frames = ledger.frames
    built = [frames.events, frames.turns, frames.steps, frames.calls, frames.messages,
             frames.lineage]
    return len(built[0]), (ledger, built)


ROUTES: dict[str, Callable[[Path], Built]] = {"load": load, "frames": load_and_frames}


def main() -> None:
    """Generate both files, run the routes on each, print time, memory and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256, help="size of each file (MiB)")
    parser.add_argument("--rounds", type=int, default=3, help="fresh-process runs per route")
    parser.add_argument("--frames", action="store_true", help="also build every frame")
    parser.add_argument("--route", choices=ROUTES, help=argparse.SUPPRESS)
    parser.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route:
        print(json.dumps(run_route(ROUTES[args.route], args.path)))
        return
    routes = ["load", "frames"] if args.frames else ["load"]
    with tempfile.TemporaryDirectory() as folder:
        files = {"codex": Path(folder) / "rollout.jsonl", "dsh": Path(folder) / "session.jsonl"}
        started = time.perf_counter()
        lines = write_rollout(files["codex"], args.mib << 20)
        events = write_dsh(files["dsh"], files["codex"].stat().st_size)
        print(f"generated a rollout of {lines:,} lines and a dsh ledger of {events:,} events "
              f"({files['codex'].stat().st_size / 2**20:.0f} and "
              f"{files['dsh'].stat().st_size / 2**20:.0f} MiB) in "
              f"{time.perf_counter() - started:.0f} s")
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for number in range(1, args.rounds + 1):
            print(f"round {number}/{args.rounds} ({load_average()} at its start)")
            for route in routes:
                for name, path in files.items():
                    measured = in_fresh_process(__file__, route, path)
                    results.setdefault((route, name), []).append(measured)
                    print(f"  {route:>6} {name:>5}: {measured['seconds']:7.2f} s   peak "
                          f"+{measured['peak_mib']:6.0f} MiB   ({measured['rows']:,} rows)")
        print(f"median of {args.rounds} rounds ({load_average()} at the end):")
        for route in routes:
            median = {name: (statistics.median(r["seconds"] for r in results[route, name]),
                             statistics.median(r["peak_mib"] for r in results[route, name]))
                      for name in files}
            for name, (seconds, peak) in median.items():
                print(f"  {route:>6} {name:>5}: {seconds:7.2f} s   peak +{peak:6.0f} MiB")
            print(f"  {route:>6} codex / dsh: {median['codex'][0] / median['dsh'][0]:.2f}x "
                  f"time, {median['codex'][1] / median['dsh'][1]:.2f}x memory")


if __name__ == "__main__":
    main()
