"""Explorer response times and bytes sent per change, against a naive rebuild in the same run.

Run on demand: ``python benchmarks/bench_explorer.py [--turns 7200] [--moves 6] [--stages]``
(7,200 turns of the simulator's ``large`` scenario are about 100k events; 73,000 about 1M).
``--scenario crash-mid-dispatch`` simulates a crashed session instead (about 13.9 events per
turn: 72,000 turns are about 1M events, the last turn dies mid-dispatch) and also times, end to
end, the load plus the first display (the view opened on the fork point) and the first toggle
to the fork policy and two box zooms under it (200 seqs each, mid-session), before the slider
moves.

The explorer is driven as the tests drive it: setting the crash-point slider and the policy
toggle from Python, which runs the same observers a browser change runs. Bytes are counted
where ipywidgets sends state to the frontend (``Widget._send``: JSON plus binary buffers).
The naive baseline does per change what the 0.1 explorer did: cut, recover, build a new
FigureWidget from the full-detail figure, re-render the context pane over every message and
offer every event in the picker. Budgets at 100k events: slider and toggle <= 200 ms median,
first display <= 2 s, <= 500 KB per move; at 1M events <= 1 s per move. The last line is
JSON: the medians, and the slowest change and largest message of the run (a budget per move
holds for every move, not only the median).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets
import plotly.graph_objects as go

import ledgerviz
from ledgerviz.plot import timeline_figure
from ledgerviz.simulate import write_scenario
from ledgerviz.widgets import explore
from ledgerviz.widgets.context_pane import context_html
from ledgerviz.widgets.details import event_choices
from ledgerviz.widgets.explorer import Explorer
from ledgerviz.widgets.figure_update import FigureUpdater

timeline_module = importlib.import_module("ledgerviz.plot.timeline")  # the package's
# ``timeline`` attribute is the function
SENT = {"bytes": 0}
CPU_MS: list[float] = []
"""The process CPU time of each timed change (the machine is shared: wall time includes
waiting for a core)."""
STAGES = {"timeline": (Explorer, "_spec"), "of which story frames": (timeline_module, "fork_story"),
          "figure update": (FigureUpdater, "show"), "event pane": (Explorer, "_show_events"),
          "context pane": (Explorer, "_context_html")}
"""With ``--stages``: the explorer's steps timed within each change (the timeline includes
the cut's frames and, under fork, the story's frames, also shown apart; the rest is the cut's
analysis and summary)."""
STAGE_MS: dict[str, float] = {}
STAGES_OF: list[dict[str, float]] = []
"""The milliseconds of each stage, per timed change."""


def _timing(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def stage(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            STAGE_MS[name] = STAGE_MS.get(name, 0.0) + (time.perf_counter() - started) * 1000
    return stage


def time_stages() -> None:
    """Time the explorer's steps within each change (see :data:`STAGES`)."""
    for name, (owner, attribute) in STAGES.items():
        setattr(owner, attribute, _timing(name, getattr(owner, attribute)))


def _counting_send(original: Callable[..., Any]) -> Callable[..., Any]:
    def send(self: ipywidgets.Widget, msg: dict[str, Any], buffers: Any = None) -> Any:
        SENT["bytes"] += len(json.dumps(msg, default=str)) + sum(
            memoryview(b).nbytes for b in buffers or ())
        return original(self, msg, buffers)
    return send


def timed(work: Callable[[], Any]) -> tuple[float, int]:
    """Return milliseconds and bytes sent while running ``work``."""
    SENT["bytes"] = 0
    STAGE_MS.clear()
    started, cpu = time.perf_counter(), time.process_time()
    work()
    CPU_MS.append((time.process_time() - cpu) * 1000)
    STAGES_OF.append(dict(STAGE_MS))
    return (time.perf_counter() - started) * 1000, SENT["bytes"]


def naive_change(ledger: ledgerviz.Ledger, cut: int, policy: str) -> int:
    """Do what the 0.1 explorer did on a change; return the bytes its figure and panes hold."""
    key = ledger.keys[0]
    view = ledger.cut(cut, session=key)
    recovery = view.recovery(policy)
    analysis = recovery.analyses[key]
    figure = go.FigureWidget(timeline_figure(recovery.frames, session=key, policy=policy,
                                             fork_points=analysis.fork_points, axis="order"))
    pane = context_html(view.context(policy, session=key))
    choices = event_choices(analysis)
    return (len(figure.to_json()) + len(pane)
            + sum(len(label) + 8 for label, _ in choices))


def main() -> None:
    """Print medians for the explorer and the naive baseline, then one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=7_200)
    parser.add_argument("--scenario", default="large", choices=("large", "crash-mid-dispatch"))
    parser.add_argument("--moves", type=int, default=6)
    parser.add_argument("--baseline-moves", type=int, default=2)
    parser.add_argument("--ledger", type=Path, help="an existing ledger (skips simulating)")
    parser.add_argument("--stages", action="store_true",
                        help="print where each change's time goes")
    args = parser.parse_args()
    if args.stages:
        time_stages()
    path = args.ledger or write_scenario(
        args.scenario, Path(tempfile.mkdtemp(prefix="ledgerviz-bench-")) / "ledger.jsonl",
        turns=args.turns)[0]
    loaded, load_cpu = time.perf_counter(), time.process_time()
    ledger = ledgerviz.load(path)
    load_ms = (time.perf_counter() - loaded) * 1000
    load_cpu_ms = (time.process_time() - load_cpu) * 1000
    events = len(ledger.sessions[0].events)
    ipywidgets.Widget._send = _counting_send(ipywidgets.Widget._send)

    holder: dict[str, Any] = {}
    first_ms, first_bytes = timed(lambda: holder.setdefault("e", explore(ledger)))
    explorer = holder["e"]
    opened_on = explorer.figure.layout.xaxis.range
    snapshot_started = time.perf_counter()
    snapshot_bytes = len(explorer._repr_mimebundle_()["text/html"].encode())
    snapshot_ms = (time.perf_counter() - snapshot_started) * 1000
    fork_ms, fork_bytes = timed(lambda: setattr(explorer.policy, "value", "fork"))
    first_fork_cpu = CPU_MS.pop()
    first_stages = [STAGES_OF[0], STAGES_OF.pop()]
    middle = events // 2  # a box zoom under fork to the 200 seqs mid-session, then another
    zooms = [timed(lambda low=low: setattr(explorer.figure.layout.xaxis, "range",
                                           (low + 0.5, low + 200.5)))[0]
             for low in (middle, middle + 1_000)]
    del CPU_MS[-2:], STAGES_OF[-2:]
    explorer.policy.value = "synthesize"
    cuts = [events * (k + 1) // (args.moves + 1) for k in range(args.moves)]
    slider, toggle, sent, changes = [], [], [], []
    for cut in cuts:
        ms, size = timed(lambda c=cut: setattr(explorer.crash_point, "value", c))
        slider.append(ms)
        sent.append(size)
        changes.append((f"slider to {cut} under {explorer.policy.value}", ms))
        other = "fork" if explorer.policy.value == "synthesize" else "synthesize"
        ms, size = timed(lambda p=other: setattr(explorer.policy, "value", p))
        toggle.append(ms)
        sent.append(size)
        changes.append((f"toggle to {other} at {cut}", ms))
    naive_ms, naive_bytes = [], []
    for cut in cuts[:args.baseline_moves]:
        started = time.perf_counter()
        naive_bytes.append(naive_change(ledger, cut, "fork"))
        naive_ms.append((time.perf_counter() - started) * 1000)

    result = {"events": events, "slider_ms": statistics.median(slider),
              "toggle_ms": statistics.median(toggle), "first_ms": first_ms,
              "bytes_per_move": statistics.median(sent),
              "slowest_change_ms": max(slider + toggle), "most_bytes": max(sent),
              "load_ms": load_ms, "end_to_end_first_ms": load_ms + first_ms,
              "first_fork_toggle_ms": fork_ms, "first_bytes": first_bytes,
              "fork_zoom_ms": zooms, "snapshot_bytes": snapshot_bytes}
    print(f"ledger: {events} events · load average {os.getloadavg()}")
    print(f"end to end: load {load_ms:.0f} ms ({load_cpu_ms:.0f} ms CPU) + first display "
          f"{first_ms:.0f} ms ({CPU_MS[0]:.0f} ms CPU) = {load_ms + first_ms:.0f} ms, opened "
          f"on x {opened_on}; first toggle to fork {fork_ms:.0f} ms ({first_fork_cpu:.0f} ms "
          f"CPU, {fork_bytes / 1e3:.0f} KB); box zooms under fork {[round(m) for m in zooms]} "
          "ms")
    print(f"explorer: first display {first_ms:.0f} ms ({first_bytes / 1e3:.0f} KB, of which "
          f"plotly's compressed bundle {len(explorer.figure._bundle) / 1e3:.0f} KB); slider "
          f"{[round(m) for m in slider]} ms; toggle {[round(m) for m in toggle]} ms; sent per "
          f"change {[round(b / 1e3) for b in sent]} KB")
    print(f"CPU time: first display {CPU_MS[0]:.0f} ms; slider "
          f"{[round(m) for m in CPU_MS[1::2]]} ms; toggle {[round(m) for m in CPU_MS[2::2]]} ms")
    print(f"naive rebuild: {[round(m) for m in naive_ms]} ms per change; "
          f"{[round(b / 1e3) for b in naive_bytes]} KB per change")
    print(f"display message: static snapshot {snapshot_bytes / 1e3:.0f} KB in "
          f"{snapshot_ms:.0f} ms")
    if args.stages:
        named = [("first display", first_ms), ("first toggle to fork", fork_ms), *changes]
        for (change, ms), stages in zip(named, first_stages + STAGES_OF[1:], strict=True):
            parts = ", ".join(f"{name} {value:.0f}" for name, value in stages.items())
            own = sum(v for name, v in stages.items() if not name.startswith("of which"))
            print(f"{change}: {ms:.0f} ms ({parts}, rest {ms - own:.0f})")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
