"""The SVG sketch a display message carries instead of plotly.js: what the figure shows in its x
range, counted against the file, small at any session size, every text escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.plot.sketch import figure_svg
from ledgerviz.plot.timeline import ledger_timeline_spec
from ledgerviz.simulate import write_scenario
from ledgerviz.widgets import explore

EVENT_MARKS = ("event the model sees", "log-only event")


@pytest.fixture(scope="module")
def crashed_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sketch") / "crashed.jsonl"
    write_scenario("crash-mid-dispatch", path, turns=400)  # about 5,600 events
    return path


def file_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]
            if line.strip()]


def group(svg: str, name: str) -> str:
    found = re.search(rf'<g data-trace="{re.escape(name)}"[^>]*>(.*?)</g>', svg)
    return found.group(1) if found else ""


def test_the_sketch_draws_each_event_and_call_in_the_x_range(crashed_path: Path) -> None:
    view = (300.5, 360.5)  # 60 seqs over 940 pixels: no two markers share a pixel
    spec = ledger_timeline_spec(ledgerviz.load(crashed_path), "synthesize", x_range=view,
                                detail_limit=2_000)
    svg = figure_svg(spec)
    events = file_events(crashed_path)
    in_view = [e for e in events if view[0] < e["seq"] < view[1]]
    marks = sum(group(svg, name).count("<circle") for name in EVENT_MARKS)
    assert marks == len(in_view)
    answered = {e["data"]["message"]["toolCallId"] for e in events if e["type"] == "tool/result"}
    dispatched = [e for e in events if e["type"] == "tool/call"]
    results = {e["data"]["message"]["toolCallId"]: e["seq"] for e in events
               if e["type"] == "tool/result"}
    bars = [e for e in dispatched if e["data"]["callId"] in answered
            and e["seq"] <= view[1] and results[e["data"]["callId"]] >= view[0]]
    assert group(svg, "call ok").count("<line") == len(bars) > 0
    assert "(grouped)" not in "".join(re.findall(r'data-trace="([^"]*)"', svg))


def test_the_explorer_snapshot_stays_small_at_thousands_of_events(crashed_path: Path) -> None:
    explorer = explore(ledgerviz.load(crashed_path))
    snapshot = explorer._repr_mimebundle_()["text/html"]
    assert "<svg" in snapshot and "<script" not in snapshot
    assert len(snapshot.encode()) < 150_000


def test_texts_in_the_sketch_are_escaped() -> None:
    spec = {"data": [{"type": "scatter", "name": "<img src=x onerror=alert(1)>",
                      "x": [1, 2], "y": [1, 1], "mode": "markers",
                      "marker": {"color": 'red"><script>', "size": 8}}],
            "layout": {"xaxis": {"range": [0, 3]},
                       "yaxis": {"range": [0.4, 1.6], "tickvals": [1],
                                 "ticktext": ["<script>alert(1)</script>"]}}}
    svg = figure_svg(spec)
    assert "<img" not in svg and "<script" not in svg
    assert svg.count("<circle") == 2 and "&lt;script&gt;" in svg
