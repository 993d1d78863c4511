"""The explorer in a real JupyterLab and Notebook 7, driven through the page.

For each frontend the test starts its server on 127.0.0.1 (a free port, a token, its own
temporary root, config, runtime, settings and workspace folders; stopped by the test, even when
it fails, and by Linux when pytest itself is killed), opens a notebook that calls
``lv.explore`` on a bundled example, runs it in headless Chromium, and checks what a person
sees: the timeline draws its points, fills the output's
width and follows it when the output narrows, its legend is neither cut nor overlapping, its
title does not repeat the session picker; toggling the policy and moving the crash-point
slider change the plot and the panes to what the new cut holds; nothing is logged as a console
error from the moment the cell runs.

The page gives anywidget's start-up deadline (2 s, past which anywidget drops every message to
a model; see ``ledgerviz/widgets/live_figure.py``) as :data:`DEADLINE_MS`: plotly's 5 MB widget
bundle takes longer than that to load here on every run, so a figure that needs its bundle
within the deadline would show empty axes every time, not now and then.

It saves screenshots of the explorer under the test's tmp_path; with
``LEDGERVIZ_README_SCREENSHOT=1`` the JupyterLab run also refreshes the README's
``docs/images/explorer.png``.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from chromium import watched_errors
from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ledgerviz.examples import example_path

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
README_SCREENSHOT = ROOT / "docs" / "images" / "explorer.png"
README_PANES_PX = 260  # how much of the panes below the plot the README's picture shows
EXAMPLE = example_path("crash-mid-dispatch")
SESSION = json.loads(EXAMPLE.read_text().splitlines()[0])["id"]
EVENTS = sum(1 for line in EXAMPLE.read_text().splitlines()[1:] if line.strip())
CUT = 12  # in turn 1's second step: both its calls were answered, so fork has no fork point
SOURCE = ("import ledgerviz as lv\n"
          f"explorer = lv.explore(lv.load({str(EXAMPLE)!r}))\n"
          "explorer")
# Both frontends ask on first start whether to fetch news; the toast would cover the output.
PAGE_CONFIG = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
START_S = 120
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent thread exits
VIEWPORT = {"width": 1500, "height": 1500}
STEP_MS = 120_000  # a slow, loaded CI machine: every wait is on page state, with this bound
DEADLINE_MS = 1_000
# anywidget's Runtime arms ``AbortSignal.timeout(2000)`` when a model is created; the page
# gives its models DEADLINE_MS instead and counts how many deadlines it shortened.
SHORTER_DEADLINE = """(() => {
    const timeout = AbortSignal.timeout.bind(AbortSignal);
    window.__lvDeadlines = 0;
    AbortSignal.timeout = ms => {
        if (ms === 2000 && String(new Error().stack).includes('anywidget')) {
            window.__lvDeadlines += 1;
            return timeout(DEADLINE_MS);
        }
        return timeout(ms);
    };
})();""".replace("DEADLINE_MS", str(DEADLINE_MS))

OUTPUT = ".jp-Cell .jp-OutputArea-output:has(.lv-explorer)"
# What the explorer's output shows, read from the page. ``drawn``: traces with points whose
# SVG holds a non-empty path (a marker or a line), against ``withPoints`` traces with points.
STATE = """() => {
    const out = document.querySelector('OUTPUT');
    const gd = out && out.querySelector('.js-plotly-plot');
    const svg = gd && gd.querySelector('.main-svg');
    if (!svg || !gd.data || !gd.layout) return null;
    const text = selector => { const node = out.querySelector(selector);
                               return node ? node.innerText : null; };
    const box = node => { if (!node) return null; const r = node.getBoundingClientRect();
                          return [r.left, r.top, r.right, r.bottom]; };
    const withPoints = gd.data.filter(t => (t.x || []).some(x => x !== null)).length;
    const drawn = [...gd.querySelectorAll('.scatterlayer .trace')].filter(t =>
        [...t.querySelectorAll('path')].some(p => (p.getAttribute('d') || '').length > 2)).length;
    return {
        title: gd.layout.title && gd.layout.title.text ? gd.layout.title.text : '',
        traces: gd.data.map(t => [t.name, (t.x || []).filter(x => x !== null).length]),
        withPoints, drawn,
        outputWidth: out.clientWidth, plotWidth: Number(svg.getAttribute('width')),
        svg: box(svg),
        legend: [...gd.querySelectorAll('.legend .traces')].map(box),
        legendLabels: [...gd.querySelectorAll('.legend .legendtext')].map(t => t.textContent),
        plotArea: box(gd.querySelector('.draglayer .xy .nsewdrag')),
        xtitle: box(gd.querySelector('.xtitle')),
        summary: text('.lv-summary') || '', details: text('.lv-details'),
        context: text('.lv-context'),
        xrange: gd._fullLayout.xaxis.range.map(Number),
    };
}""".replace("OUTPUT", OUTPUT)
# The notebook is open, its cell editable and its kernel started and idle.
KERNEL_IDLE = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const session = panel && panel.sessionContext && panel.sessionContext.session;
    return session && session.kernel && session.kernel.status === 'idle' &&
        document.querySelector('.jp-Notebook .jp-Cell .jp-InputArea-editor') !== null;
}"""
# Every trace that has points is drawn: no view is left with empty axes or half an update.
WHOLE = "s.withPoints > 0 && s.drawn === s.withPoints"
FITS = "Math.abs(s.plotWidth - s.outputWidth) <= 30"


@dataclass(frozen=True)
class Frontend:
    """How to start a Jupyter frontend and where it opens a notebook."""

    module: str  # run as ``python -m MODULE``
    app: str  # the application class whose ``expose_app_in_browser`` sets window.jupyterapp
    path: str  # the notebook's page, below the server's root


FRONTENDS = [Frontend("jupyterlab", "LabApp", "lab/tree/explore.ipynb"),
             Frontend("notebook", "JupyterNotebookApp", "notebooks/explore.ipynb")]


@dataclass
class Lab:
    """A running frontend: which one, the notebook's URL and the server's log."""

    frontend: Frontend
    url: str
    log: Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_notebook(path: Path) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": "explore",
                   "metadata": {}, "outputs": [], "source": SOURCE}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")


def stop_with_this_process() -> None:
    """In the server's child process: ask Linux for SIGTERM when pytest dies.

    A pytest killed by a signal runs no fixture teardown; without this its server (and the
    server's kernels) would keep running.
    """
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def wait_until_serving(server: subprocess.Popen, port: int, token: str, log: Path) -> None:
    deadline = time.monotonic() + START_S
    while True:
        try:
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5):
                return
        except OSError:
            assert server.poll() is None, f"the server exited while starting:\n{log.read_text()}"
            assert time.monotonic() < deadline, (
                f"the server did not answer within {START_S} s:\n{log.read_text()}")
            time.sleep(0.5)


@pytest.fixture(scope="module", params=FRONTENDS, ids=lambda frontend: frontend.module)
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Start the frontend serving a temporary folder holding the notebook; stop it afterwards."""
    frontend: Frontend = request.param
    home = tmp_path_factory.mktemp(frontend.module)
    root, config = home / "root", home / "config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(json.dumps(PAGE_CONFIG))
    root.mkdir()
    write_notebook(root / "explore.ipynb")
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces")}
    log_path = home / f"{frontend.module}.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", frontend.module, "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
             f"--{frontend.app}.expose_app_in_browser=True", "--allow-root"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=root, env=env,
            preexec_fn=stop_with_this_process)
        try:
            wait_until_serving(server, port, token, log_path)
            yield Lab(frontend, f"http://127.0.0.1:{port}/{frontend.path}?token={token}",
                      log_path)
        finally:
            server.terminate()  # the server shuts its kernels down before it exits
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def state(page: Page) -> dict[str, Any] | None:
    return page.evaluate(STATE)


def wait_for(page: Page, condition: str, arg: Any, what: str) -> dict[str, Any]:
    """Wait until ``condition`` (a JS function of the output's state and ``arg``) holds;
    return the state. A timeout fails with the state the page was left in."""
    try:
        page.wait_for_function(f"arg => {{ const s = ({STATE})(); return s !== null && "
                               f"({condition})(s, arg); }}", arg=arg, timeout=STEP_MS)
    except PlaywrightTimeout:
        shown = state(page)
        raise AssertionError(f"timed out waiting for {what}; the page shows {shown}") from None
    return state(page)


def run_the_cell(page: Page) -> None:
    """Run the notebook's cell with Shift+Enter, pressing again while the notebook has not
    taken it (its prompt still reads ``[ ]``)."""
    prompt = page.locator(".jp-Cell .jp-InputPrompt").first
    for _ in range(5):
        page.locator(".jp-Cell .jp-InputArea-editor").first.click()
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function("p => !p.innerText.includes('[ ]')",
                                   arg=prompt.element_handle(), timeout=20_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError("the notebook cell never started running")


def toggle_left_area(page: Page) -> None:
    """Show or hide JupyterLab's left sidebar: the output changes width, the window does not."""
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")


# How each frontend makes the output narrower, then as wide as before. Notebook 7 has no
# sidebar beside a notebook (whose width it caps), so its window narrows to half.
NARROWERS = {
    "jupyterlab": (toggle_left_area, toggle_left_area),
    "notebook": (lambda page: page.set_viewport_size({"width": VIEWPORT["width"] // 2,
                                                     "height": VIEWPORT["height"]}),
                 lambda page: page.set_viewport_size(VIEWPORT)),
}


def save_readme_picture(page: Page, path: Path) -> None:
    """Save the explorer's output from its controls down to the first lines of its panes."""
    output = page.locator(OUTPUT).first.bounding_box()
    plot = page.locator(f"{OUTPUT} .js-plotly-plot").first.bounding_box()
    assert output and plot
    bottom = min(output["y"] + output["height"], plot["y"] + plot["height"] + README_PANES_PX)
    page.screenshot(path=str(path), full_page=True, clip={
        "x": output["x"], "y": output["y"], "width": output["width"],
        "height": bottom - output["y"]})


def closers(summary: str) -> int:
    """The number of closers the summary line says the shown policy adds."""
    found = re.search(r"· \w+: (\d+) closers", summary)
    assert found, summary
    return int(found.group(1))


def overlaps(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def assert_readable(shown: dict[str, Any]) -> None:
    """The plot draws every trace that has points, fills the output's width, keeps its legend
    inside the figure with no two entries overlapping and clear of the axes, and leaves the
    session (named by the picker above it) out of its title."""
    assert shown["withPoints"] > 0 and shown["drawn"] == shown["withPoints"], shown
    assert shown["plotWidth"] >= shown["outputWidth"] - 30, shown
    assert shown["plotWidth"] <= shown["outputWidth"] + 1, shown
    left, top, right, bottom = shown["svg"]
    legend = shown["legend"]
    assert legend, shown
    for entry in legend:
        assert left - 1 <= entry[0] and entry[2] <= right + 1, (entry, shown)
        assert top - 1 <= entry[1] and entry[3] <= bottom + 1, (entry, shown)
        assert not overlaps(entry, shown["plotArea"]), (entry, shown)
        assert not overlaps(entry, shown["xtitle"]), (entry, shown)
    for i, a in enumerate(legend):
        for b in legend[i + 1:]:
            assert not overlaps(a, b), (a, b, shown)
    assert SESSION not in shown["title"], shown


def test_the_explorer_draws_fills_the_width_and_responds(
        lab: Lab, browser: Browser, tmp_path: Path) -> None:
    page = browser.new_page(viewport=VIEWPORT)
    page.add_init_script(SHORTER_DEADLINE)
    errors = watched_errors(page)
    page.goto(lab.url, timeout=STEP_MS)
    page.wait_for_function(KERNEL_IDLE, timeout=STEP_MS)
    errors.clear()  # the frontend's own start-up may 404 optional resources before this
    run_the_cell(page)

    # The synthesize policy (the default) on the whole ledger: the summary's closers
    # are the points the plot's title counts beyond the ledger's own events.
    first = wait_for(page, f"s => {WHOLE} && s.summary && s.details && s.context && "
                     f"{FITS} && "
                     "s.title.startsWith('policy: synthesize')", None,
                     "the explorer, drawn whole at the output's width")
    assert first["summary"].startswith(f"whole ledger ({EVENTS} events) · synthesize:")
    added = closers(first["summary"])
    assert added > 0, first
    assert f"{EVENTS + added} events ({added} added by recovery)" in first["title"]
    assert page.evaluate("window.__lvDeadlines") >= 1, "anywidget's deadline not found"
    assert_readable(first)
    # the range the kernel sets, not plotly's autorange of the points (which cuts the edge
    # markers in half): seqs 0-21 and the closers 22-26, a seq of margin each side
    assert first["xrange"] == [-1, EVENTS + added], first
    page.screenshot(path=str(tmp_path / "synthesize.png"))

    narrow, widen = NARROWERS[lab.frontend.module]
    narrow(page)
    other = wait_for(page, f"(s, w) => Math.abs(s.outputWidth - w) > 100 && {FITS}",
                     first["outputWidth"], "the plot to follow the output's new width")
    assert_readable(other)
    widen(page)
    wait_for(page, f"(s, w) => Math.abs(s.outputWidth - w) <= 2 && {FITS}",
             first["outputWidth"], "the plot to take its first width again")

    # fork: the story of the parent, its abandoned suffix and the child's seed
    page.locator(f"{OUTPUT} .widget-toggle-button", has_text="fork").first.click()
    # The panes are sent after the plot, so each wait includes them.
    forked = wait_for(page, f"(s, before) => {WHOLE} && s.summary.includes(' · fork: ') "
                      "&& s.title.startsWith('policy: fork') && "
                      "s.traces.some(([name, n]) => name === 'abandoned event' && n > 0) "
                      "&& s.context !== before.context",
                      first, "the fork policy's plot and context")
    assert "fork points: none" not in forked["summary"], forked
    assert "fork point" in forked["legendLabels"], forked
    assert_readable(forked)
    page.locator(OUTPUT).first.screenshot(path=str(tmp_path / "fork.png"))
    save_readme_picture(page, tmp_path / "readme.png")
    if lab.frontend.module == "jupyterlab" and os.environ.get(
            "LEDGERVIZ_README_SCREENSHOT") == "1":
        README_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        save_readme_picture(page, README_SCREENSHOT)

    # the slider, through its readout: before the crash, no call lacks its result
    readout = page.locator(f"{OUTPUT} .widget-readout").first
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(str(CUT))
    page.keyboard.press("Enter")
    cut = f"process died after event {CUT} of {EVENTS}"
    moved = wait_for(page, f"(s, [cut, before]) => {WHOLE} && "
                     "s.summary.startsWith(cut) && s.title.startsWith('policy: fork') && "
                     "!s.legendLabels.includes('fork point') && "
                     "s.details !== before.details && s.context !== before.context",
                     [cut, forked], "the cut's plot and panes")
    added = closers(moved["summary"])
    assert f"{CUT + added} events ({added} added by recovery)" in moved["title"], moved
    assert "fork points: none" in moved["summary"], moved
    assert moved["xrange"] == [-1, CUT + added], moved  # seqs 0-11 and the closers
    assert "abandoned event" not in dict(moved["traces"]), moved
    assert_readable(moved)
    assert errors == [], errors
