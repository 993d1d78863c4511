"""HTML report budgets in headless Chromium, each against an eager baseline in the same run.

Run on demand: ``python benchmarks/bench_report.py [--sessions 1000] [--turns 73000]``.

1. The bundled examples: seconds from opening the report until every timeline has drawn
   (scrolling through it, a walk run inside the page; the same walk driven command by command
   from Playwright, over the drawn page, is timed apart: that is the driver's cost, not the
   page's), budget 3 s. Baseline: the same figures as plotly's own
   ``to_html`` per figure, all traces WebGL as in ledgerviz 0.1 (it counts the plots whose
   WebGL context was lost).
2. ``--sessions`` small simulated sessions (``bench_fleet.py``'s fleet, every single-session
   scenario in turn; ``--folder`` keeps it): seconds until the report shows its overview with
   the page script ready, budget 5 s; then seconds from clicking the last session in the
   overview until its timeline drew; the report's build time is printed too. Baseline:
   plotly's ``to_html`` per figure, eager, until its first timeline shows (capped).
3. A ``--turns`` session of the simulator's ``large`` scenario (1M events at 73,000 turns):
   report size, budget 25 MB. Baseline: ``to_html`` of the same timeline at full detail.
4. Every report is built twice: the two must be byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_fleet import write_fleet
from playwright.sync_api import Page, sync_playwright

import ledgerviz
from ledgerviz.examples import example_paths
from ledgerviz.plot import timeline, traces
from ledgerviz.report import render_report, write_report
from ledgerviz.simulate import write_scenario

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
BASELINE_CAP_S = 60.0
LIVE_CONTEXT = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(gd => {
    const c = gd.querySelector('canvas.gl-canvas-context');
    if (!c) return true;
    const gl = c.getContext('webgl');
    return gl !== null && !gl.isContextLost();
}).length"""


def browser_cpu_s() -> float:
    """Return the CPU seconds (user + system) used so far by this process's descendants that
    are alive (the browser and its renderers): a page's cost apart from the machine's load."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        parents[int(entry.name)] = int(fields[1])
        used[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return sum(seconds for pid, seconds in used.items() if descends(pid))


def eager_page(ledger: ledgerviz.Ledger, path: Path) -> Path:
    """Write the baseline page: plotly's ``to_html`` of every session's timeline, plotly.js in
    the first."""
    parts = [timeline(ledger.session(i), policy="fork").to_html(
        full_html=False, include_plotlyjs=i == 0) for i in range(len(ledger.keys))]
    path.write_text(f"<!DOCTYPE html><html><body>{''.join(parts)}</body></html>",
                    encoding="utf-8")
    return path


SECTION_DRAWN = """section => {
    const plots = section.querySelectorAll('div.lv-plot');
    return plots.length > 0 && [...plots].every(div => div.dataset.state === 'drawn');
}"""


WALK = f"""async () => {{
    const drawn = {SECTION_DRAWN};
    for (const section of document.querySelectorAll('section.session')) {{
        const box = section.getBoundingClientRect();
        if (box.bottom <= 0 || box.top >= window.innerHeight) {{
            section.scrollIntoView({{block: 'nearest'}});
        }}
        while (!drawn(section)) await new Promise(done => requestAnimationFrame(done));
    }}
}}"""


def all_drawn_lazy(page: Page, report: Path) -> float:
    """Open ``report`` and scroll each session into view in turn, as soon as the one before
    it drew (a walk run inside the page: driving it from here would add the driver's round
    trips, :func:`driver_walk_s`); return seconds until every timeline drew."""
    started = time.perf_counter()
    page.goto(report.as_uri())
    page.evaluate(WALK)
    return time.perf_counter() - started


def driver_walk_s(page: Page) -> float:
    """Return seconds the driver takes to scroll each session of the open, drawn report into
    view and see it drawn, one command at a time (what the walk costs when driven from
    here rather than inside the page)."""
    page.evaluate("() => window.scrollTo(0, 0)")
    started = time.perf_counter()
    sections = page.locator("section.session")
    for i in range(sections.count()):
        section = sections.nth(i)
        section.scroll_into_view_if_needed()
        page.wait_for_function(SECTION_DRAWN, arg=section.element_handle(), timeout=120_000,
                               polling=20)
    return time.perf_counter() - started


def all_drawn_eager(page: Page, report: Path, count: int) -> tuple[float, int]:
    """Open the eager baseline; return seconds until every plot has an SVG, and how many plots
    still hold a live WebGL context (or none at all) after drawing."""
    started = time.perf_counter()
    page.goto(report.as_uri(), timeout=int(BASELINE_CAP_S * 1000))
    page.wait_for_function(
        "n => document.querySelectorAll('.js-plotly-plot .main-svg').length >= n", arg=count,
        timeout=int(BASELINE_CAP_S * 1000))
    return time.perf_counter() - started, page.evaluate(LIVE_CONTEXT)


def first_view(page: Page, report: Path, lazy: bool) -> float:
    """Return seconds until the page is loaded and shows what it opens on (capped): for the
    report its overview, the page script ready; for the eager baseline its first timeline."""
    started = time.perf_counter()
    try:
        page.goto(report.as_uri(), timeout=int(BASELINE_CAP_S * 1000))
        check = ("() => document.body.dataset.ready === '1'" if lazy
                 else "() => document.querySelector('.js-plotly-plot .main-svg') !== null")
        page.wait_for_function(check, timeout=int(BASELINE_CAP_S * 1000), polling=20)
    except Exception:  # the baseline may not open within the cap: report the cap
        return float("inf")
    return time.perf_counter() - started


def jump_to_last(page: Page) -> float:
    """On the open report, click the overview's last session; return seconds until its
    timeline drew."""
    started = time.perf_counter()
    page.locator("section.overview tbody tr a").last.click()
    section = page.locator("section.session").last
    page.wait_for_function(SECTION_DRAWN, arg=section.element_handle(), timeout=120_000,
                           polling=20)
    return time.perf_counter() - started


def same_twice(ledger: ledgerviz.Ledger, path: Path) -> bool:
    """Return whether the report of ``ledger`` (already written to ``path``) comes out the same,
    byte for byte, when built again from a fresh load of the same files."""
    again = ledgerviz.load([log.path for log in ledger.sessions])
    return render_report(again, policy="fork").encode("utf-8") == path.read_bytes()


def main() -> None:
    """Print each budget's measurement beside its baseline, then one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=1_000)
    parser.add_argument("--turns", type=int, default=73_000)
    parser.add_argument("--folder", type=Path, help="where the fleet of small sessions is "
                        "written (reused when it holds --sessions ledgers)")
    parser.add_argument("--big", type=Path, help="an existing large ledger (skips simulating)")
    parser.add_argument("--no-big-baseline", action="store_true",
                        help="skip the full-detail to_html of the large session")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ledgerviz-bench-report-"))
    result: dict[str, Any] = {"load_average": os.getloadavg()}

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})

        examples = ledgerviz.load(example_paths())
        report = write_report(examples, folder / "examples.html", policy="fork")
        result["examples_same_bytes"] = same_twice(examples, report)
        all_drawn_lazy(page, report)  # warm the browser's caches once
        cpu = browser_cpu_s()
        result["examples_s"] = all_drawn_lazy(page, report)
        result["examples_browser_cpu_s"] = browser_cpu_s() - cpu
        result["examples_driver_walk_s"] = driver_walk_s(page)
        original = traces.WEBGL_POINTS
        traces.WEBGL_POINTS = 0  # ledgerviz 0.1: every trace WebGL
        try:
            baseline = eager_page(examples, folder / "examples-eager.html")
        finally:
            traces.WEBGL_POINTS = original
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        seconds, live = all_drawn_eager(page, baseline, len(examples.keys))
        result["examples_baseline_s"] = seconds
        result["examples_baseline_live_plots"] = f"{live} of {len(examples.keys)}"
        print(f"examples ({len(examples.keys)}): every figure drawn in {result['examples_s']:.2f}"
              f" s (budget 3 s; the browser used {result['examples_browser_cpu_s']:.2f} s CPU;"
              f" the walk driven from here, command by command, takes"
              f" {result['examples_driver_walk_s']:.2f} s even over the drawn page);"
              f" baseline eager WebGL to_html {seconds:.2f} s with {live} of "
              f"{len(examples.keys)} plots still drawn")

        fleet = args.folder or folder / "fleet"
        fleet.mkdir(parents=True, exist_ok=True)
        write_fleet(fleet, args.sessions)
        many = ledgerviz.load(sorted(fleet.glob("*.jsonl")))
        built, cpu = time.perf_counter(), time.process_time()
        report = write_report(many, folder / "many.html", policy="fork")
        result["many_build_s"] = time.perf_counter() - built
        result["many_build_cpu_s"] = time.process_time() - cpu
        result["many_same_bytes"] = same_twice(many, report)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        cpu = browser_cpu_s()
        result["many_open_s"] = first_view(page, report, lazy=True)
        result["many_open_browser_cpu_s"] = browser_cpu_s() - cpu
        result["many_last_drawn_s"] = jump_to_last(page)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        result["many_baseline_open_s"] = first_view(
            page, eager_page(many, folder / "many-eager.html"), lazy=False)
        print(f"{args.sessions} sessions: opens in {result['many_open_s']:.2f} s (budget 5 s;"
              f" the browser used {result['many_open_browser_cpu_s']:.2f} s CPU;"
              f" built in {result['many_build_s']:.1f} s, {result['many_build_cpu_s']:.1f} s CPU;"
              f" same bytes twice: {result['many_same_bytes']}; the last session drawn "
              f"{result['many_last_drawn_s']:.2f} s after clicking it); baseline eager to_html "
              f"{result['many_baseline_open_s']:.2f} s (capped at {BASELINE_CAP_S:.0f} s)")
        browser.close()

    big = args.big or write_scenario("large", folder / "big.jsonl", turns=args.turns)[0]
    ledger = ledgerviz.load(big)
    built = time.perf_counter()
    report = write_report(ledger, folder / "big.html", policy="fork")
    result["big_build_s"] = time.perf_counter() - built
    result["big_events"] = len(ledger.sessions[0].events)
    result["big_mb"] = report.stat().st_size / 1e6
    line = f"{result['big_events']} events: report {result['big_mb']:.1f} MB (budget 25 MB)"
    if not args.no_big_baseline:
        full = timeline(ledger, policy="fork", detail_limit=10**9).to_html(
            include_plotlyjs=True)
        result["big_baseline_mb"] = len(full.encode()) / 1e6
        line += f"; baseline full-detail to_html {result['big_baseline_mb']:.1f} MB"
    print(line)
    print(f"load average {result['load_average']}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
