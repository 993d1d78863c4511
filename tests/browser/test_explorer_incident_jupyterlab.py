"""The explorer on a crashed 1M-event session in a real JupyterLab: it opens on the fork
point, a box zoom draws individual markers, a call-id search selects the call, and a session
switch never shows the new summary beside panes of the old session.

The server, notebook and browser are those of ``test_explorer_jupyterlab`` (JupyterLab only);
the 1M-event timings are measured by ``benchmarks/bench_explorer.py``. Screenshots are saved
under the test's tmp_path; with ``LEDGERVIZ_README_SCREENSHOT=1`` the opening view refreshes
the README's ``docs/images/explorer-incident.png``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from chromium import drag_across, watched_errors
from playwright.sync_api import Browser, Page
from test_explorer_jupyterlab import (
    FRONTENDS,
    KERNEL_IDLE,
    OUTPUT,
    ROOT,
    SHORTER_DEADLINE,
    STEP_MS,
    VIEWPORT,
    Lab,
    lab,  # noqa: F401  (a fixture)
    run_the_cell,
    save_readme_picture,
    wait_for,
)

from ledgerviz.examples import example_path
from ledgerviz.simulate import write_scenario

pytestmark = pytest.mark.browser

TURNS = int(os.environ.get("LEDGERVIZ_INCIDENT_TURNS", "72000"))
"""crash-mid-dispatch with this many ordinary turns: 72,000 are about 1M events, as the
README's picture shows (about 100 s more than 100k events); ``LEDGERVIZ_INCIDENT_TURNS=7200``
runs about 100k, for a quicker look."""
README_SCREENSHOT = ROOT / "docs" / "images" / "explorer-incident.png"
CLEAN = example_path("clean")
# Every trace with points is drawn (the overview strip under the plot draws them once more).
WHOLE = "s.withPoints > 0 && s.drawn >= s.withPoints"
# The plot's x range and, per trace, its name and x values (nulls dropped).
PLOT = f"""() => {{
    const gd = document.querySelector('{OUTPUT} .js-plotly-plot');
    return {{range: gd.layout.xaxis.range.map(Number),
             traces: gd.data.map(t => [t.name, [...(t.x || [])].filter(x => x !== null)
                                                                .map(Number)])}};
}}"""
# Records, each time the summary changes, the title and panes the page shows at that moment.
WATCH_SUMMARY = f"""() => {{
    const out = document.querySelector('{OUTPUT}');
    const summary = out.querySelector('.lv-summary');
    window.__lvSeen = [];
    new MutationObserver(() => {{
        const gd = out.querySelector('.js-plotly-plot');
        window.__lvSeen.push({{summary: summary.innerText,
            title: gd.layout.title.text, details: out.querySelector('.lv-details').innerText,
            busy: out.querySelector('.lv-explorer').classList.contains('lv-busy')}});
    }}).observe(summary, {{childList: true, characterData: true, subtree: true}});
}}"""


def box_zoom(page: Page, low: float, high: float) -> None:
    """Drag a box over the plot from x ``low`` to ``high``, as a person zooms."""
    area = page.locator(f"{OUTPUT} .draglayer .xy .nsewdrag").first.bounding_box()
    assert area
    to_px = f"""v => {{ const gd = document.querySelector('{OUTPUT} .js-plotly-plot');
        return gd._fullLayout.xaxis.l2p(v) - gd._fullLayout.xaxis.l2p(
            gd._fullLayout.xaxis.range[0]); }}"""
    left, right = (area["x"] + page.evaluate(f"({to_px})({v})") for v in (low, high))
    drag_across(page, area, left, right)


def crashed(folder: Path) -> tuple[Path, int, str, int]:
    """Write the crashed session; return it, its events, the id of its call dispatched without
    a result and that call's dispatch seq (read from the file: only the lines naming a tool
    event are decoded: at 1M events 6 s of CPU, against 17 s for every line)."""
    path = folder / "crashed.jsonl"
    write_scenario("crash-mid-dispatch", path, turns=TURNS)
    lines = [line for line in path.read_bytes().splitlines()[1:] if line.strip()]
    tools = [json.loads(line) for line in lines if b'"tool/' in line]
    answered = {e["data"]["message"]["toolCallId"] for e in tools if e["type"] == "tool/result"}
    (call,) = [e for e in tools if e["type"] == "tool/call"
               and e["data"]["callId"] not in answered]
    return path, len(lines), call["data"]["callId"], call["seq"]


@pytest.mark.parametrize("lab", FRONTENDS[:1], indirect=True, ids=["jupyterlab"])
def test_the_explorer_opens_on_the_incident_at_1m_events(
        lab: Lab, browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    path, events, call_id, dispatched = crashed(tmp_path)
    clean_events = sum(1 for line in CLEAN.read_text().splitlines()[1:] if line.strip())
    notebook = Path(re.sub(r"\?.*", "", lab.url)).name
    source = ("import ledgerviz as lv\n"
              f"explorer = lv.explore(lv.load([{str(path)!r}, {str(CLEAN)!r}]), "
              "policy='fork')\nexplorer")
    root = Path(lab.log).parent / "root"
    document = json.loads((root / notebook).read_text())
    document["cells"][0]["source"] = source
    (root / "incident.ipynb").write_text(json.dumps(document), encoding="utf-8")
    page = browser.new_page(viewport=VIEWPORT)
    page.add_init_script(SHORTER_DEADLINE)
    errors = watched_errors(page)
    page.goto(lab.url.replace(notebook, "incident.ipynb"), timeout=STEP_MS)
    page.wait_for_function(KERNEL_IDLE, timeout=STEP_MS)
    errors.clear()
    run_the_cell(page)

    # 1. opened on the fork point: the x range holds it and spans < 1% of the session
    first = wait_for(page, f"s => {WHOLE} && s.summary.startsWith('whole ledger') "
                     "&& s.title.startsWith('policy: fork')", None,
                     "the explorer opened on the crashed session")
    fork = int(re.search(r"fork points: seq (\d+)", first["summary"]).group(1))
    plot = page.evaluate(PLOT)
    low, high = plot["range"]
    assert low < fork < high and (high - low) < events / 100, (plot["range"], events)
    assert f"seq {fork}" in first["details"]  # the event picker starts there too
    page.locator(OUTPUT).first.screenshot(path=str(tmp_path / "opened.png"))
    if os.environ.get("LEDGERVIZ_README_SCREENSHOT") == "1":
        save_readme_picture(page, README_SCREENSHOT)

    # 2. far from the incident the session is drawn in bins; a box zoom to 200 events
    # there draws every event as its own marker
    area = page.locator(f"{OUTPUT} .draglayer .xy .nsewdrag").first.bounding_box()
    page.mouse.dblclick(area["x"] + area["width"] / 2, area["y"] + area["height"] / 2)
    page.wait_for_function(f"() => {{ const [lo, hi] = ({PLOT})().range; "
                           f"return hi - lo > {events * 0.9}; }}", timeout=STEP_MS)
    middle = events // 2
    box_zoom(page, middle - 5000, middle + 5000)
    page.wait_for_function(f"""() => {{ const p = ({PLOT})(); const [lo, hi] = p.range;
        return hi - lo < 20000 && p.traces.some(([n, x]) =>
            n.endsWith('(grouped)') && x.some(v => v > lo && v < hi)); }}""",
                           timeout=STEP_MS)
    page.locator(OUTPUT).first.screenshot(path=str(tmp_path / "middle.png"))
    box_zoom(page, middle, middle + 200)
    page.wait_for_function(f"""() => {{ const p = ({PLOT})();
        const [lo, hi] = p.range;
        const seen = p.traces.filter(([n]) => !n.endsWith('(grouped)') &&
            ['event the model sees', 'log-only event', 'added by recovery',
             'abandoned event'].includes(n))
            .flatMap(([, x]) => x).filter(v => v >= lo && v <= hi);
        return hi - lo < 400 && seen.length > 0 &&
            seen.length === Math.floor(hi) - Math.ceil(lo) + 1; }}""",
                           timeout=STEP_MS)
    zoomed = page.evaluate(PLOT)
    assert 100 < zoomed["range"][1] - zoomed["range"][0] < 400, zoomed["range"]
    page.locator(OUTPUT).first.screenshot(path=str(tmp_path / "zoomed.png"))

    # 3. a call id typed into Find selects that call's dispatch
    find = page.locator(f"{OUTPUT} .lv-find input").first
    find.fill(call_id)
    find.press("Enter")
    found = wait_for(page, "(s, [id, seq]) => s.details && s.details.includes(id) && "
                     "s.details.includes('seq ' + seq)", [call_id, dispatched],
                     "the call found by its id")
    assert "outcome unknown" in found["details"], found
    # and the timeline moves from the zoomed range to the call
    page.wait_for_function(f"() => {{ const [lo, hi] = ({PLOT})().range; "
                           f"return lo <= {dispatched} && {dispatched} <= hi; }}",
                           timeout=STEP_MS)
    page.locator(OUTPUT).first.screenshot(path=str(tmp_path / "found.png"))

    # 4. a session switch: busy meanwhile, and once the summary names the new session
    # the plot and the panes show it too
    page.evaluate(WATCH_SUMMARY)
    page.locator(f"{OUTPUT} select").first.select_option(index=1)
    switched = wait_for(page, f"s => {WHOLE} && s.summary.startsWith("
                        f"'whole ledger ({clean_events} events)')", None,
                        "the clean session")
    seen = page.evaluate("() => window.__lvSeen")
    assert seen[0]["busy"] and seen[0]["summary"].startswith("computing"), seen
    for moment in seen:
        if moment["summary"].startswith(f"whole ledger ({clean_events} events)"):
            assert f"{clean_events} events" in moment["title"], moment
            assert not moment["busy"] or moment is seen[-1], moment
            seq = int(re.search(r"seq (\d+)", moment["details"]).group(1))
            assert seq < clean_events + 5, moment  # an event of the clean session
    assert f"{clean_events} events" in switched["title"]
    low, high = page.evaluate(  # no incident: the whole session, autoranged
        f"() => document.querySelector('{OUTPUT} .js-plotly-plot')._fullLayout.xaxis.range"
        ".map(Number)")
    assert low <= 0 and high >= clean_events - 1, (low, high)
    page.locator(OUTPUT).first.screenshot(path=str(tmp_path / "switched.png"))
    assert errors == [], errors
