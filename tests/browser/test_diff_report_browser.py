"""Open ``ledgerviz report A B --diff`` in headless Chromium: the aligned timeline draws
offline, nothing errors, hostile ledger text stays inert. Saves a screenshot; with
LEDGERVIZ_README_SCREENSHOT=1 it refreshes the README's docs/images/diff.png."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from ledgerviz.cli import main
from ledgerviz.simulate.examples import bundled_examples_dir
from tests.compare.pairs import example, write

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
README_SCREENSHOT = ROOT / "docs" / "images" / "diff.png"
FORK = bundled_examples_dir() / "resume-fork"
HOSTILE = '<img src=x onerror="window.__pwned=1;alert(1)">'



def _opened(browser: Browser, a: Path, b: Path, out: Path) -> tuple[Page, list[str]]:
    """Write the diff report of ``a`` and ``b``, open it offline and wait for its timeline;
    return the page and every page error, console error and dialog."""
    assert main(["report", "--diff", str(a), str(b), "-o", str(out)]) == 0
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    trouble: list[str] = []
    page.on("pageerror", lambda error: trouble.append(str(error)))
    page.on("console", lambda m: trouble.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda dialog: (trouble.append(dialog.message), dialog.dismiss()))
    page.route("**/*", lambda route: route.abort() if not route.request.url.startswith(
        "file:") else route.continue_())  # offline: anything fetched from a network fails
    page.goto(out.as_uri())
    page.wait_for_function("() => document.querySelector('div.lv-plot')?.dataset.state "
                           "=== 'drawn'", timeout=30_000)
    return page, trouble


def test_the_fork_diff_draws_and_is_saved(browser: Browser, tmp_path: Path) -> None:
    page, trouble = _opened(browser, FORK / "parent.jsonl", FORK / "child.jsonl",
                            tmp_path / "diff.html")
    assert trouble == []
    assert "First divergence at a seq 18, b seq 18" in page.inner_text("header")
    drawn = page.evaluate("""() => {
        const div = document.querySelector('div.lv-plot');
        return {traces: div.data.length, legend: div.querySelectorAll('.legendtext').length,
                line: div.querySelectorAll('.shapelayer path').length};
    }""")
    assert drawn["traces"] == 4  # equal bars on both lanes, only in a, only in b
    assert drawn["legend"] == 3
    assert drawn["line"] >= 2  # the divergence line and the differing stretch
    rows = page.locator("section.diff table").nth(1).locator("tbody tr")
    # the parent's 4 events from the fork point, the child's seed marker, 2 closers, turn 3
    assert rows.count() == 25
    shot = tmp_path / "diff.png"
    page.mouse.move(1, 1)
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    if os.environ.get("LEDGERVIZ_README_SCREENSHOT") == "1":
        README_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.locator("section.diff").screenshot(path=str(README_SCREENSHOT))


def test_hostile_text_stays_inert(browser: Browser, tmp_path: Path) -> None:
    header, events = example("tool-error.jsonl")
    other = [dict(event) for event in events]
    other[4] = {**other[4], "type": HOSTILE}
    page, trouble = _opened(browser, write(tmp_path / "a.jsonl", header, events),
                            write(tmp_path / "b.jsonl", {**header, "id": HOSTILE}, other),
                            tmp_path / "diff.html")
    assert trouble == []
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("img").count() == 0
    assert HOSTILE in page.inner_text("section.diff")
    box = page.locator("div.lv-plot .scatterlayer .trace path.point").last.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    label = page.locator("div.lv-plot .hoverlayer .hovertext")
    label.wait_for(timeout=10_000)
    assert "<img src=x" in (label.text_content() or "")  # shown as text
    assert page.evaluate("() => window.__pwned") is None
