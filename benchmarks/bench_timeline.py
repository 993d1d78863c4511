"""Timeline figure build time on a 10,000-turn ledger, against a naive plotly.express baseline.

Run on demand: ``python benchmarks/bench_timeline.py [--turns N] [--synthetic] [--browser]``.
The ledger comes from the simulator's ``large`` scenario when it is available (then the
frames are built from a real loaded ledger); ``--synthetic`` builds frames directly instead.
``--browser`` also times first render and a zoom of both figures in headless Chromium.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import plotly.express as px

from ledgerviz.plot import timeline_figure

STATUSES = ("ok", "ok", "ok", "ok", "ok", "ok", "error", "outcome_unknown", "not_started")
T0 = pd.Timestamp("2026-03-02T09:00:00Z")


def synthetic_frames(turns: int, seed: int = 7) -> SimpleNamespace:
    """Return events/turns/steps/calls frames of one synthetic session with ``turns`` turns."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    turn_rows: list[dict[str, Any]] = []
    step_rows: list[dict[str, Any]] = []
    call_rows: list[dict[str, Any]] = []
    clock = 0

    def emit(kind: str, turn: int, step: int | None = None, call_id: str | None = None,
             branch: str = "log") -> int:
        nonlocal clock
        clock += rng.randint(5, 400)
        events.append({"session": "synthetic", "seq": len(events), "time": clock, "type": kind,
                       "turn": turn, "step": step, "call_id": call_id, "surface_op": None,
                       "synthetic": False, "recorded": True, "branch": branch,
                       "recovery_code": None})
        return len(events) - 1

    for turn in range(1, turns + 1):
        start = emit("turn/start", turn)
        emit("user/message", turn, branch="active")
        steps = rng.randint(1, 3)
        for step in range(1, steps + 1):
            step_start = emit("step/start", turn, step)
            asked = emit("assistant/message", turn, step, branch="active")
            n_calls = rng.randint(0, 3) if step < steps else 0
            for k in range(n_calls):
                call_id = f"c{turn}-{step}-{k}"
                status = rng.choice(STATUSES)
                dispatched = None if status == "not_started" else emit("tool/call", turn, step,
                                                                       call_id)
                result = emit("tool/result", turn, step, call_id, "active") if status in (
                    "ok", "error") else None
                call_rows.append({
                    "session": "synthetic", "call_id": call_id, "tool": rng.choice(
                        ("read_file", "grep", "run_tests", "write_file")),
                    "turn": turn, "step": step, "requested_seq": asked,
                    "dispatched_seq": dispatched, "result_seq": result, "status": status,
                    "error_code": "ENOENT" if status == "error" else None,
                    "is_error": status == "error", "arguments": '{"path": "src/module.py"}',
                    "branch": "active", "settled": status in ("ok", "error", "not_started")})
            step_rows.append({"session": "synthetic", "turn": turn, "step": step,
                              "start_seq": step_start, "end_seq": emit("step/end", turn, step),
                              "provider": "openai", "model": "gpt", "input_tokens": 1000,
                              "output_tokens": 200, "calls": n_calls})
        end = emit("turn/end", turn)
        turn_rows.append({"session": "synthetic", "turn": turn, "start_seq": start,
                          "end_seq": end, "end_reason": "completed", "steps": steps,
                          "outcome_unknown": 0, "not_started": 0})

    ev = pd.DataFrame(events)
    ev["time"] = T0 + pd.to_timedelta(ev["time"], unit="ms")
    times = ev.set_index("seq")["time"]
    calls = pd.DataFrame(call_rows)
    for col in ("dispatched_seq", "result_seq"):
        calls[col] = calls[col].astype("Int64")
    calls["dispatch_time"] = calls["dispatched_seq"].map(times)
    calls["result_time"] = calls["result_seq"].map(times)
    calls["duration"] = calls["result_time"] - calls["dispatch_time"]
    turns_df = pd.DataFrame(turn_rows)
    turns_df["duration"] = (turns_df["end_seq"].map(times) - turns_df["start_seq"].map(times))
    counts = calls.groupby("turn")["status"].value_counts().unstack(fill_value=0)
    turns_df["calls"] = turns_df["turn"].map(counts.sum(axis=1)).fillna(0).astype(int)
    return SimpleNamespace(events=ev, turns=turns_df, steps=pd.DataFrame(step_rows), calls=calls)


def simulated_ledger(turns: int) -> list[Path] | None:
    """Return the files of the simulator's ``large`` scenario, or None if it is unavailable."""
    try:
        from ledgerviz.simulate import write_scenario
    except ImportError:
        return None
    folder = Path(tempfile.mkdtemp(prefix="ledgerviz-bench-"))
    return write_scenario("large", folder / "large.jsonl", turns=turns)


def frames_of(paths: list[Path]) -> SimpleNamespace:
    """Return the synthesize-policy frames of a loaded ledger."""
    import ledgerviz

    frames = ledgerviz.load(paths).recovery("synthesize").frames
    return SimpleNamespace(events=frames.events, turns=frames.turns, steps=frames.steps,
                           calls=frames.calls)


def end_to_end(paths: list[Path]) -> Any:
    """Load, recover, build frames and the figure, as a notebook user would."""
    import ledgerviz

    return ledgerviz.timeline(ledgerviz.load(paths), policy="synthesize")


BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]
ZOOM = """async () => {
    const gd = document.querySelector('.js-plotly-plot');
    const [lo, hi] = gd.layout.xaxis.range;
    const started = performance.now();
    await Plotly.relayout(gd, {'xaxis.range': [lo + (hi - lo) * 0.4, lo + (hi - lo) * 0.45]});
    return performance.now() - started;
}"""


def browser_timings(figures: dict[str, Any]) -> None:
    """Print, per figure, seconds to first render and to one zoom in headless Chromium."""
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="ledgerviz-bench-html-"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=BROWSER_ARGS)
        for label, figure in figures.items():
            page_file = folder / f"{label.split()[0]}.html"
            figure.write_html(page_file, include_plotlyjs=True)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            started = time.perf_counter()
            page.goto(page_file.as_uri())
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=600_000)
            loaded = time.perf_counter() - started
            zoom_ms = page.evaluate(ZOOM)
            print(f"browser {label:<28} render {loaded:6.2f} s   zoom {zoom_ms / 1000:6.2f} s")
            page.close()
        browser.close()


def best_of(runs: int, work: Callable[[], Any]) -> float:
    """Return the fastest of ``runs`` wall-clock timings of ``work()``, in seconds."""
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return min(timings)


def naive_express(frames: SimpleNamespace) -> Any:
    """The peer baseline: ``px.timeline`` of every dispatched call, one bar per call."""
    calls = frames.calls[frames.calls["dispatch_time"].notna()].copy()
    calls["result_time"] = calls["result_time"].fillna(calls["dispatch_time"])
    return px.timeline(calls, x_start="dispatch_time", x_end="result_time", y="status",
                       color="status", hover_data=["tool", "call_id", "arguments"])


def main() -> None:
    """Print build times of the ledgerviz timeline and the baseline."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--synthetic", action="store_true", help="skip the simulator")
    parser.add_argument("--browser", action="store_true", help="time rendering in Chromium")
    args = parser.parse_args()

    paths = None if args.synthetic else simulated_ledger(args.turns)
    if paths is None:
        frames, source = synthetic_frames(args.turns), "synthetic frames"
    else:
        frames, source = frames_of(paths), "simulate 'large' scenario"
    print(f"ledger: {source}: {len(frames.turns)} turns, {len(frames.events)} events, "
          f"{len(frames.calls)} calls")

    def build(axis: str) -> Any:
        return timeline_figure(frames, session="bench", policy="synthesize", axis=axis)

    figure = build("time")
    traces = len(figure.data)
    if paths is not None:
        seconds = best_of(1, lambda: end_to_end(paths))
        print(f"{'load + recovery + frames + timeline':<36} {seconds:7.3f} s")
    for label, work in (
        ("ledgerviz timeline, time axis", lambda: build("time")),
        ("ledgerviz timeline, order axis", lambda: build("order")),
        ("ledgerviz timeline + to_json", lambda: build("time").to_json()),
        ("baseline px.timeline (calls only)", lambda: naive_express(frames)),
        ("baseline px.timeline + to_json", lambda: naive_express(frames).to_json()),
    ):
        print(f"{label:<36} {best_of(args.runs, work):7.3f} s")
    baseline = naive_express(frames)
    print(f"traces: ledgerviz {traces} (WebGL), baseline {len(baseline.data)} (SVG bars); "
          f"figure JSON: ledgerviz {len(figure.to_json()) / 1e6:.1f} MB, "
          f"baseline {len(baseline.to_json()) / 1e6:.1f} MB")
    if args.browser:
        browser_timings({"ledgerviz timeline": figure, "baseline px.timeline": baseline})


if __name__ == "__main__":
    main()
