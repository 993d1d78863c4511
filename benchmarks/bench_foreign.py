"""Foreign-format benchmark: Claude Code, Codex and Gemini transcripts beside a dsh ledger
of the same size.

Run: python benchmarks/bench_foreign.py [--mib 64] [--rounds 1] [--keep DIR]
         [--formats claude_code codex gemini]

Generates a Claude Code-shaped transcript, a Codex-shaped rollout, a Gemini CLI-shaped chat
and a dsh v4 ledger (``bench_load``'s) of about ``--mib`` MiB each (1024 for the issue's
~1 GB), then, in a
fresh Python process per route and format (peak memory is the process's own), times
``ledgerviz.load`` alone and ``ledgerviz.load`` + every frame. Figures are per MiB of file,
and each foreign format / dsh ratio, so that the files need not be exactly the same size.

Beside time and peak, each run reports the size of what the load returns, measured after
the timed part in the same process (so neither figure includes the measuring): ``table``,
the bytes of the sessions' ``EventTable``s (``SessionLog.table``, as the frames reach
them): every column's buffer and every distinct object the columns and the requests hold,
each counted once by ``id`` (``sys.getsizeof``, containers walked), in MiB and per file
byte; ``rows/MiB`` and ``B/row``, the tables' rows per MiB of file and bytes per row; and
``peak - table``, what the reader held at its peak beyond its output. A table's bytes per
file byte over dsh's peak per file byte is the least peak ratio any reader of that format
can reach with this table: the ``table alone`` ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, is_dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from bench_load import Built, in_fresh_process, load_average, run_route, write_ledger

ROUTES = ("load", "frames")
FORMATS = ("claude_code", "codex", "gemini", "dsh")
DSH_BYTES_PER_EVENT = 237
"""About what ``bench_load.write_ledger`` writes per event (226 MiB for 1M events)."""
START = datetime(2026, 1, 5, 10, tzinfo=UTC)


def _turn_records(turn: int, parent: str | None) -> Iterator[dict[str, Any]]:
    """Yield one realistic Claude Code turn: a prompt; an API message split over three
    assistant records (thinking, two tool_use) with the same usage; two results with their
    ``toolUseResult`` copies and a progress record; a final answer."""
    session = "b3c1f0de-5a8e-4c1e-9f7e-0d2f1a9b7c31"
    envelope = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/repo",
                "sessionId": session, "version": "2.0.31", "gitBranch": "main"}
    clock = START + timedelta(seconds=30 * turn)
    usage = {"input_tokens": 12 + turn % 50, "output_tokens": 140,
             "cache_read_input_tokens": 18_000 + turn, "cache_creation_input_tokens": 900,
             "service_tier": "standard"}
    count = 0

    def record(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal parent, count
        count += 1
        uuid = f"{turn:08x}-0000-4000-8000-{count:012x}"
        made = {"parentUuid": parent, **envelope, "type": kind, "uuid": uuid,
                "timestamp": (clock + timedelta(milliseconds=250 * count)).isoformat(), **fields}
        parent = uuid
        return made

    yield record("user", message={"role": "user", "content": f"Please look at module {turn} "
                                  "and run its tests; fix what fails."})
    message = {"id": f"msg_{turn:024x}", "type": "message", "role": "assistant",
               "model": "claude-sonnet-4-5-20250929", "stop_reason": None, "usage": usage}
    calls = [(f"toolu_{turn:08x}read", "Read", {"file_path": f"/home/dev/repo/src/mod{turn}.py"}),
             (f"toolu_{turn:08x}bash", "Bash", {"command": f"pytest tests/test_mod{turn}.py -q",
                                                "description": "Run the module's tests"})]
    blocks = [{"type": "thinking", "thinking": "I should read the module first, then run the "
               "tests to see what fails." * 2, "signature": "EqQBCkYIBxgCKkB" * 8}]
    blocks += [{"type": "tool_use", "id": cid, "name": name, "input": inp}
               for cid, name, inp in calls]
    for block in blocks:
        yield record("assistant", message={**message, "content": [block]},
                     requestId=f"req_{turn:024x}")
    output = "def f(x):\n    return x * 2\n" * 12
    for cid, name, _ in calls:
        if name == "Bash":
            yield record("progress", toolUseID=cid, parentToolUseID=cid,
                         data={"type": "bash_progress", "output": "collected 12 items"})
        yield record("user", message={"role": "user", "content": [
            {"tool_use_id": cid, "type": "tool_result", "content": output}]},
            toolUseResult={"stdout": output, "stderr": "", "interrupted": False})
    yield record("assistant", message={**message, "id": f"msg_{turn:024x}b", "content": [
        {"type": "text", "text": f"Module {turn} reads fine and its 12 tests pass."}]},
        requestId=f"req_{turn:024x}b")


def write_transcript(path: Path, size: int) -> int:
    """Write a Claude Code transcript of at least ``size`` bytes; return its line count."""
    lines = turn = 0
    parent: str | None = None
    written = 0
    with path.open("wb") as out:
        while written < size:
            turn += 1
            chunk = []
            for made in _turn_records(turn, parent):
                chunk.append(orjson.dumps(made))
                parent = made["uuid"]
            data = b"\n".join(chunk) + b"\n"
            out.write(data)
            written += len(data)
            lines += len(chunk)
    return lines


def route_load(path: Path) -> tuple[int, Any]:
    import ledgerviz

    ledger = ledgerviz.load(path)
    return len(ledger.sessions[0].events), ledger


def route_frames(path: Path) -> tuple[int, Any]:
    import ledgerviz

    ledger = ledgerviz.load(path)
    frames = ledger.frames
    built = [frames.events, frames.turns, frames.steps, frames.calls, frames.messages,
             frames.lineage]
    return len(built[0]), (ledger, built)


def _keeping(route: Callable[[Path], Built], kept: list[Any]) -> Callable[[Path], Built]:
    """Return ``route``, also putting what it built in ``kept`` (measured once timed)."""
    def keep(path: Path) -> Built:
        rows, built = route(path)
        kept.append(built)
        return rows, built
    return keep


def _held_by(value: Any) -> Sequence[Any]:
    """Return the objects ``value`` holds: a list's or tuple's items, a dict's keys and
    values, a dataclass's fields (an ``array`` holds its numbers in its own buffer)."""
    if isinstance(value, list | tuple):
        return value
    if isinstance(value, dict):
        return [*value, *value.values()]
    if is_dataclass(value) and not isinstance(value, type):
        return [getattr(value, field.name) for field in fields(value)]
    return ()


def _footprint(objects: Sequence[Any], seen: set[int]) -> int:
    """Return the bytes (``sys.getsizeof``) of ``objects`` and of all they hold, each object
    counted once: not when its ``id`` is in ``seen``, which gains the ids counted."""
    by_id = dict(zip(map(id, objects), objects, strict=True))
    new = by_id.keys() - seen
    seen.update(new)
    total = 0
    for key in new:
        value = by_id[key]
        total += sys.getsizeof(value)
        held = _held_by(value)
        if held:
            total += _footprint(held, seen)
    return total


def _table_sizes(ledger: Any) -> dict[str, float]:
    """Return the MiB and rows of the event tables of ``ledger``'s sessions (what the frames
    read; see the module docstring), and how many sessions the load left without one."""
    tables = [log.table for log in ledger.sessions]
    made = [table for table in tables if table is not None]
    return {"table_mib": _footprint(made, set()) / 2**20, "table_rows": sum(map(len, made)),
            "untabled": len(tables) - len(made)}


CODEX_T0 = "2026-01-05T10:00:00.000Z"


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


def _codex_time(line: int) -> str:
    """Return the write time of a rollout's line as Codex writes it (UTC, milliseconds): the
    lines of a turn a few hundred ms apart, so no two lines of a second-long stretch share one
    (a reader may not lean on repeated stamps)."""
    moment = START + timedelta(milliseconds=337 * line)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def write_rollout(path: Path, size: int) -> int:
    """Write a Codex rollout of at least ``size`` bytes to ``path``; return its line count."""
    meta = {"timestamp": CODEX_T0, "type": "session_meta", "payload": {
        "id": "bench-codex", "timestamp": CODEX_T0, "cwd": "/work/repo", "cli_version": "0.60.0",
        "source": "cli", "instructions": "You are Codex." * 200}}
    written, lines, turn = 0, 1, 1
    with path.open("wb") as out:
        written += out.write(orjson.dumps(meta) + b"\n")
        while written < size:
            block = [orjson.dumps({"timestamp": _codex_time(lines + i), **line})
                     for i, line in enumerate(_codex_turn(turn))]
            written += out.write(b"\n".join(block) + b"\n")
            lines += len(block)
            turn += 1
    return lines


def _chat_turn(turn: int) -> Iterator[dict[str, Any]]:
    """Yield the records of one realistic Gemini CLI turn: a prompt; a reply written first
    with its thoughts, then again (same id) with its usage and two finished shell calls;
    a final answer."""
    def stamp(second: int) -> str:
        moment = START + timedelta(seconds=30 * turn + second)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    yield {"id": f"u{turn}", "timestamp": stamp(0), "type": "user",
           "content": [{"text": f"Please inspect module {turn} and run its tests."}]}
    thoughts = [{"subject": "Planning", "description": "I should read the file, then run the "
                 "tests to see what fails.", "timestamp": stamp(1)}]
    reply = {"id": f"g{turn}", "timestamp": stamp(2), "type": "gemini", "content": "",
             "model": "gemini-2.5-pro", "thoughts": thoughts}
    yield reply
    output = "def f(x):\n    return x * 2\n" * 4
    calls = [{"id": f"c{turn}-{n}", "name": "run_shell_command", "args": {"command": command},
              "result": [{"functionResponse": {"id": f"c{turn}-{n}", "name": "run_shell_command",
                                               "response": {"output": output}}}],
              "status": "success", "timestamp": stamp(3 + n)}
             for n, command in enumerate((f"cat src/mod{turn}.py", "pytest -q"))]
    yield {**reply, "timestamp": stamp(5), "toolCalls": calls, "tokens": {
        "input": 1200 + turn % 500, "output": 80, "cached": 900, "thoughts": 20, "tool": 0,
        "total": 1300}}
    yield {"id": f"g{turn}b", "timestamp": stamp(6), "type": "gemini", "model": "gemini-2.5-pro",
           "content": "All tests pass; the module doubles its input.",
           "tokens": {"input": 1500, "output": 12, "cached": 900, "thoughts": 0, "tool": 0,
                      "total": 1512}}


def write_chat(path: Path, size: int) -> int:
    """Write a Gemini CLI chat of at least ``size`` bytes to ``path``; return its line
    count."""
    head = {"sessionId": "bench-gemini", "projectHash": "9f2c", "startTime": CODEX_T0,
            "lastUpdated": CODEX_T0}
    written, lines, turn = 0, 1, 1
    with path.open("wb") as out:
        written += out.write(orjson.dumps(head) + b"\n")
        while written < size:
            block = [orjson.dumps(record) for record in _chat_turn(turn)]
            written += out.write(b"\n".join(block) + b"\n")
            lines += len(block)
            turn += 1
    return lines


def _measure(files: dict[str, Path], rounds: int) -> dict[tuple[str, str], list[dict]]:
    """Run every route on every file once per round, each in a fresh process."""
    results: dict[tuple[str, str], list[dict]] = {}
    for number in range(1, rounds + 1):
        print(f"round {number}/{rounds} ({load_average()} at its start)", flush=True)
        for route in ROUTES:
            for name in files:
                figures = in_fresh_process(__file__, route, files[name])
                results.setdefault((route, name), []).append(figures)
                print(f"  {route:6} {name:11} {figures['seconds']:8.2f} s "
                      f"cpu {figures['cpu']:7.2f} s "
                      f"{figures['peak_mib']:8.0f} MiB  ({figures['rows']:,} rows, table "
                      f"{figures['table_mib']:.0f} MiB)", flush=True)
    return results


def _report(files: dict[str, Path], results: dict[tuple[str, str], list[dict]]) -> None:
    """Print median wall time, CPU time and peak memory per MiB of file, the tables' size,
    and each foreign format / dsh ratio (CPU time is the steadier one on a shared machine)."""
    size = {name: path.stat().st_size / 2**20 for name, path in files.items()}
    print("files: " + ", ".join(f"{name} {mib:.0f} MiB" for name, mib in size.items()))
    for route in ROUTES:
        per: dict[str, tuple[float, float, float, float]] = {}
        for name in files:
            runs = results[(route, name)]
            seconds, cpu, peak, table, rows = (
                statistics.median(r[key] for r in runs)
                for key in ("seconds", "cpu", "peak_mib", "table_mib", "table_rows"))
            per[name] = (seconds / size[name], cpu / size[name], peak / size[name],
                         table / size[name])
            print(f"{route:6} {name:11} {seconds:8.2f} s  {size[name] / seconds:7.1f} MiB/s  "
                  f"cpu {cpu:7.2f} s  peak {peak:7.0f} MiB = {per[name][2]:.2f} x file")
            untabled = max(r["untabled"] for r in runs)
            print(f"{route:6} {name:11} table {table:7.0f} MiB = {per[name][3]:.2f} x file, "
                  f"{rows / size[name]:,.0f} rows/MiB, {table * 2**20 / max(rows, 1):.0f} B/row; "
                  f"peak - table {peak - table:7.0f} MiB"
                  + (f" ({untabled} sessions without a table)" if untabled else ""))
        for name in files:
            if name != "dsh":
                ratios = [mine / theirs for mine, theirs in zip(per[name], per["dsh"],
                                                                 strict=True)]
                print(f"{route:6} {name} / dsh per byte: time {ratios[0]:.2f}x, "
                      f"cpu {ratios[1]:.2f}x, peak memory {ratios[2]:.2f}x, table "
                      f"{ratios[3]:.2f}x; table alone {per[name][3] / per['dsh'][2]:.2f}x "
                      "dsh's peak")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=64, help="size of each file (default 64)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="write (or reuse) the files in this folder")
    parser.add_argument("--formats", nargs="+", choices=FORMATS[:-1], default=FORMATS[:-1],
                        help="the foreign formats measured beside dsh (default: all)")
    parser.add_argument("--route", choices=ROUTES, help=argparse.SUPPRESS)
    parser.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route:  # one measured route in this fresh process
        route = {"load": route_load, "frames": route_frames}[args.route]
        kept: list[Any] = []
        figures = run_route(_keeping(route, kept), args.path)
        (built,) = kept
        ledger = built[0] if args.route == "frames" else built  # frames: (ledger, frames)
        print(json.dumps(figures | _table_sizes(ledger)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        writers = {"claude_code": write_transcript, "codex": write_rollout,
                   "gemini": write_chat}
        files = {name: folder / f"{name.replace('_', '-')}-{args.mib}mib.jsonl"
                 for name in [*args.formats, "dsh"]}
        size = args.mib << 20
        for name in args.formats:
            if not files[name].exists():
                writers[name](files[name], size)
        if not files["dsh"].exists():
            write_ledger(files["dsh"], size // DSH_BYTES_PER_EVENT)
        _report(files, _measure(files, args.rounds))


if __name__ == "__main__":
    sys.exit(main())
