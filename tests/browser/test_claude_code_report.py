"""``ledgerviz report`` of foreign transcripts, opened in headless Chromium: the Claude Code
session with a rewind (in a ``~/.claude/projects`` folder, and in a folder holding one file of
every format) draws its abandoned branch in its own lanes, beside the active one, and so do a
Codex rollback and a Gemini rewind. With LEDGERVIZ_README_SCREENSHOT=1 it refreshes
docs/images/claude-code-rewind.png."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from chromium import watched_errors
from playwright.sync_api import Browser, Page

from ledgerviz.cli import main

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "claude_code"
EXAMPLES = ROOT / "ledgerviz" / "examples"
SCREENSHOT = ROOT / "docs" / "images" / "claude-code-rewind.png"
REWIND_ID = "3f1c2a9e-rewind"

DRAWN = """div => {
    const lanes = div._fullLayout.yaxis.ticktext || [];
    const traces = Object.fromEntries((div.data || []).map(t =>
        [t.name, (t.x || []).filter(x => x !== null).length]));
    return {lanes, traces, svg: div.querySelectorAll('.scatterlayer .trace').length};
}"""

BROKEN = """els => els.filter(el => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return range.getClientRects().length > 1;
}).map(el => el.textContent)"""



def test_the_abandoned_branch_of_a_rewind_is_drawn(browser: Browser, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(DATA / "projects", projects)
    shutil.copy(DATA / "rewind.jsonl", projects / "-home-dev-repo" / f"{REWIND_ID}.jsonl")
    report = tmp_path / "report.html"
    assert main(["report", str(projects), "-o", str(report)]) == 0
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = watched_errors(page)
    page.goto(report.as_uri())
    section = page.locator("section.session", has_text=f"Session {REWIND_ID}")
    section.scroll_into_view_if_needed()
    plot = section.locator("div.lv-plot")
    page.wait_for_function("div => div.dataset.state === 'drawn'", arg=plot.element_handle(),
                           timeout=30_000)
    shown = plot.evaluate(DRAWN)
    assert "abandoned events" in shown["lanes"] and "abandoned calls" in shown["lanes"]
    # the four messages of the rewound prompt's branch (seqs 7, 9, 11, 14), its one call
    assert shown["traces"]["abandoned event"] == 4
    assert shown["traces"]["event the model sees"] == 4
    assert shown["svg"] == len(shown["traces"])
    # a column header or a diagnostic's kind is never broken across lines (the long
    # line_counts message squeezed "line" into "lin / e" and "line_counts" in two)
    assert section.locator("th, code.kind").evaluate_all(BROKEN) == []
    assert errors == []
    page.mouse.move(1, 1)
    shot = tmp_path / "rewind.png"
    section.screenshot(path=str(shot))
    assert shot.stat().st_size > 20_000
    if os.environ.get("LEDGERVIZ_README_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, SCREENSHOT)
    page.close()


# (file in tests/data, its session key, events in the abandoned lane), counted by hand:
ABANDONED = [
    ("claude_code/rewind.jsonl", "cc", 4),  # the rewound prompt's branch: seqs 7, 9, 11, 14
    ("codex/rollback.jsonl", "thread-rollback", 8),  # 2 rolled-back turns x 4 messages each
    ("gemini/rewind.jsonl", "gem-rewind", 9),  # u2..g3 and "two again" / its reply
]


def _drawn(page: Page, key: str) -> dict[str, Any]:
    """Return the lanes and trace sizes of session ``key``'s timeline once it is drawn."""
    section = page.locator("section.session", has_text=f"Session {key}").first
    section.scroll_into_view_if_needed()
    plot = section.locator("div.lv-plot").first
    page.wait_for_function("div => div.dataset.state === 'drawn'", arg=plot.element_handle(),
                           timeout=30_000)
    return plot.evaluate(DRAWN)


def test_a_folder_of_every_format_draws_each_abandoned_branch(
        browser: Browser, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name, key, _ in ABANDONED:
        shutil.copy(ROOT / "tests" / "data" / name, folder / f"{key}.jsonl")
    shutil.copy(EXAMPLES / "clean.jsonl", folder / "dsh.jsonl")
    report = tmp_path / "report.html"
    assert main(["report", str(folder), "-o", str(report)]) == 0
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = watched_errors(page)
    page.goto(report.as_uri())
    for _, key, abandoned in ABANDONED:
        shown = _drawn(page, key)
        assert "abandoned events" in shown["lanes"], key
        assert shown["traces"]["abandoned event"] == abandoned, key
    assert "abandoned event" not in _drawn(page, "sim-clean-7")["traces"]
    assert errors == []
    page.close()
