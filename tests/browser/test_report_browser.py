"""Open a generated report in headless Chromium: plots render, nothing errors, hostile ledger
content stays inert text. Saves a screenshot of one session; with LEDGERVIZ_README_SCREENSHOT=1
it refreshes the README's docs/images/report.png."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

import ledgerviz
from ledgerviz.examples import example_paths
from ledgerviz.report import write_report

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parent / "data" / "hostile.v4.jsonl"
README_SCREENSHOT = ROOT / "docs" / "images" / "report.png"
CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
SCRIPT = "<script>window.__pwned=1;alert(1)</script>"
IMG = '<img src=x onerror="window.__pwned=1;alert(1)">'


@dataclass
class Opened:
    """A report open in the browser and everything the page reported while loading it."""

    page: Page
    sessions: int
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Opened]:
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: install Debian's chromium (see .ci/run)"
    ledger = ledgerviz.load([*example_paths(), HOSTILE])
    report = write_report(ledger, tmp_path_factory.mktemp("report") / "report.html")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        state = Opened(page, len(ledger.keys))
        page.on("console", lambda m: state.console_errors.append(m.text)
                if m.type == "error" else None)
        page.on("pageerror", lambda error: state.page_errors.append(str(error)))
        page.on("dialog", lambda dialog: (state.dialogs.append(dialog.message),
                                          dialog.dismiss()))
        page.goto(report.as_uri())
        page.wait_for_function(
            "n => document.querySelectorAll('.js-plotly-plot .main-svg').length >= n",
            arg=state.sessions, timeout=30_000)
        yield state
        browser.close()


def test_every_session_timeline_rendered(opened: Opened) -> None:
    page = opened.page
    assert page.locator("section.session").count() == opened.sessions
    assert page.locator(".js-plotly-plot").count() == opened.sessions
    drawn = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".map(g => [g.data.length, g.querySelectorAll('.legendtext').length,"
        " g.querySelectorAll('canvas').length])")
    for traces, legend_entries, canvases in drawn:
        assert traces >= 3 and legend_entries >= 3 and canvases >= 1


def test_no_console_error_and_no_page_error(opened: Opened) -> None:
    assert opened.console_errors == []
    assert opened.page_errors == []


def test_hostile_content_did_not_execute(opened: Opened) -> None:
    page = opened.page
    assert page.evaluate("() => window.__pwned") is None
    assert opened.dialogs == []
    assert page.locator("img").count() == 0
    assert page.locator('a[href^="javascript:"]').count() == 0
    hostile = page.locator("section.session").last
    assert hostile.get_by_text(f"Session hostile{IMG}", exact=True).count() == 1
    assert SCRIPT in hostile.inner_text()


def test_hover_label_shows_hostile_text_as_text(opened: Opened) -> None:
    page = opened.page
    plot = page.locator(".js-plotly-plot").last
    plot.scroll_into_view_if_needed()
    x, y = page.evaluate(
        """() => {
            const gd = [...document.querySelectorAll('.js-plotly-plot')].pop();
            const trace = gd._fullData.find(t => t.legendgroup === 'ok' && t.mode !== 'markers');
            const layout = gd._fullLayout, box = gd.getBoundingClientRect();
            return [box.left + layout._size.l + layout.xaxis.l2p(trace.x[0]),
                    box.top + layout._size.t + layout.yaxis.l2p(trace.y[0])];
        }""")
    page.mouse.move(x, y)
    page.wait_for_selector(".hoverlayer .hovertext", timeout=5_000)
    hover = page.locator(".hoverlayer").last
    text = hover.text_content() or ""
    assert "read_file" + SCRIPT in text
    assert 'arguments: {"path": "' + IMG.replace('"', '\\"') in text
    assert hover.locator("img, a, script").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert opened.dialogs == []
    page.mouse.move(1, 1)


def test_screenshot_for_the_readme(opened: Opened, tmp_path: Path) -> None:
    refresh = os.environ.get("LEDGERVIZ_README_SCREENSHOT") == "1"
    screenshot = README_SCREENSHOT if refresh else tmp_path / "report.png"
    page = opened.page
    page.mouse.move(1, 1)
    section = page.locator("section.session", has_text="Session sim-crash-mid-dispatch")
    assert section.count() == 1
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 20_000
