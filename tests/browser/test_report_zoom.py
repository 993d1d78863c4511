"""A report's timeline of a large session redraws the range a reader box-zooms to: from the
items its bin traces carry in the page, every event in range becomes its own marker (as many
as the ledger file holds there), and the bins' hover text says zooming shows each."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from chromium import drag_across, watched_errors
from playwright.sync_api import Browser, Page

import ledgerviz
from ledgerviz.report import write_report
from ledgerviz.simulate import write_scenario

pytestmark = pytest.mark.browser

TURNS = 1_500  # the simulator's "large" scenario: about 21k events, over the detail limit
EVENT_LANE = ("event the model sees", "log-only event", "added by recovery", "abandoned event")
PLOT = "section.session div.lv-plot"
# The plot's x range and, per trace, its name, x values (nulls dropped) and hover texts.
SHOWN = f"""() => {{
    const gd = document.querySelector('{PLOT}');
    return {{range: gd._fullLayout.xaxis.range.map(Number), redraws: gd.dataset.redraws || '0',
             traces: gd.data.map(t => ({{name: t.name,
                 x: [...t.x].filter(v => v !== null).map(Number),
                 text: [...t.hovertext].filter(v => v)}}))}};
}}"""


def box_zoom(page: Page, low: float, high: float) -> None:
    """Drag a box over the plot from x ``low`` to ``high``, as a person zooms."""
    area = page.locator(f"{PLOT} .draglayer .xy .nsewdrag").first.bounding_box()
    assert area
    left, right = (area["x"] + page.evaluate(
        f"v => {{ const a = document.querySelector('{PLOT}')._fullLayout.xaxis; "
        "return a.l2p(v); }", v) for v in (low, high))
    drag_across(page, area, left, right)


def test_a_box_zoom_to_200_events_draws_each_event_of_the_file_there(
        browser: Browser, tmp_path: Path) -> None:
    path, *_ = write_scenario("large", tmp_path / "large.jsonl", turns=TURNS)
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    seqs = sorted(json.loads(line)["seq"] for line in lines if line.strip())
    report = write_report(ledgerviz.load(path), tmp_path / "report.html")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = watched_errors(page)
    page.goto(report.as_uri())
    page.locator(PLOT).first.scroll_into_view_if_needed()
    page.wait_for_function(f"() => document.querySelector('{PLOT}').dataset.state === 'drawn'",
                           timeout=60_000)
    opened = page.evaluate(SHOWN)
    grouped = [t for t in opened["traces"] if t["name"].endswith("(grouped)")]
    assert grouped, [t["name"] for t in opened["traces"]]  # the session is drawn in bins
    assert all(text.endswith("<i>grouped: zoom in to see each</i>")
               for t in grouped for text in t["text"]), grouped[0]["text"][:2]

    middle = seqs[len(seqs) // 2]
    box_zoom(page, middle, middle + 200)
    page.wait_for_function(f"() => ({SHOWN})().redraws !== '0'", timeout=60_000)
    shown = page.evaluate(SHOWN)
    low, high = shown["range"]
    assert 150 < high - low < 250, shown["range"]
    in_file = [s for s in seqs if math.ceil(low) <= s <= math.floor(high)]
    drawn = sorted(x for t in shown["traces"] if t["name"] in EVENT_LANE
                   for x in t["x"] if low <= x <= high)
    assert drawn == in_file  # one marker per event the file holds in range, none missing
    binned = [x for t in shown["traces"] if t["name"].endswith("(grouped)")
              for x in t["x"] if low <= x <= high]
    assert binned == []  # no bin is left in range: every item there is drawn as itself
    types = {json.loads(line)["seq"]: json.loads(line)["type"] for line in lines if line}
    redrawn = next(t for t in shown["traces"] if t["name"] == "log-only event"
                   and any(low <= x <= high for x in t["x"]))
    first = min(range(len(redrawn["x"])), key=lambda i: redrawn["x"][i])
    seq = int(redrawn["x"][first])
    assert redrawn["text"][first] == f"<b>{types[seq]}</b><br>log-only event · seq {seq}"
    page.screenshot(path=str(tmp_path / "zoomed.png"))
    assert errors == [], errors
    page.close()
