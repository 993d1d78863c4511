"""Every id-like string the report puts in an anchor, a data attribute, the overview's filter
or the find box, given as a 20,000-character token or as text with quotes, a newline,
``</script>`` and bidi controls: every section of the page still draws, nothing runs, and
the filter and the find box still find the session (issue 38: a 20,000-character session id
left its section undrawn)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page
from test_report_browser import Opened, draw_in_turn, open_report

import ledgerviz
from ledgerviz import examples
from ledgerviz.report import write_report

pytestmark = pytest.mark.browser

EXAMPLES = Path(examples.__file__).parent
CRASH = EXAMPLES / "crash-mid-dispatch.jsonl"
FORK_PARENT = EXAMPLES / "resume-fork" / "parent.jsonl"
FORK_CHILD = EXAMPLES / "resume-fork" / "child.jsonl"
# Each id-like string of the crash example, and the value it holds there (read from the file).
FIELDS = {
    "session": "sim-crash-mid-dispatch-7",
    "call": "call-881eae2eb154",
    "tool": "edit",
    "model": "deepseek-v4-flash",
    "provider": "deepseek-official",
    "message": "msg-7731506bf2ef",
}
SCRIPT = "</script><script>window.__pwned=1;alert(1)</script>"


def hostile(field: str, kind: str) -> str:
    """Return the hostile value of ``field``: a 20,000-character token of one letter of its
    own (so no other session's text holds it), or a quoted, multi-line, bidi-spoofed text."""
    if kind == "token":
        return field[0].upper() * 20_000
    return f"{field}\"'\n{SCRIPT}\u202egpj.exe\u2066<b>"


def replaced(value: Any, old: str, new: str) -> Any:
    """Return the decoded JSON ``value`` with every string equal to ``old`` made ``new``."""
    if isinstance(value, dict):
        return {key: replaced(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [replaced(item, old, new) for item in value]
    return new if value == old else value


def rewritten(source: Path, target: Path, changes: dict[str, str]) -> Path:
    """Write ``source``'s events to ``target`` with each string ``old`` made ``new``."""
    events = [json.loads(line) for line in source.read_text().splitlines()]
    for old, new in changes.items():
        events = [replaced(event, old, new) for event in events]
    target.write_text("".join(json.dumps(event) + "\n" for event in events))
    return target


def hostile_folder(folder: Path) -> dict[str, str]:
    """Write one copy of the crash example per (field, kind), each with its own session id,
    and a fork parent and child whose ids (and so the child's ``parentSession``) are hostile;
    return each session's key by the name of its file."""
    keys = {}
    for field, old in FIELDS.items():
        for kind in ("token", "text"):
            name = f"{field}-{kind}"
            key = hostile(field, kind) if field == "session" else name
            changes = {FIELDS["session"]: key} if field == "session" else {
                FIELDS["session"]: key, old: hostile(field, kind)}
            rewritten(CRASH, folder / f"{name}.jsonl", changes)
            keys[name] = key
    for kind in ("token", "text"):
        parent, child = hostile("parent", kind), hostile("fork", kind)
        changes = {"sim-resume-fork-7-fork": child, "sim-resume-fork-7": parent}
        rewritten(FORK_PARENT, folder / f"parent-{kind}.jsonl", changes)
        rewritten(FORK_CHILD, folder / f"fork-{kind}.jsonl", changes)
        keys[f"parent-{kind}"], keys[f"fork-{kind}"] = parent, child
    return keys


@pytest.fixture(scope="module", params=["recorded", "fork"])
def opened(request: pytest.FixtureRequest, browser: Browser,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Opened, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("hostile-ids")
    keys = hostile_folder(folder)
    ledger = ledgerviz.load(folder)
    assert sorted(ledger.keys) == sorted(keys.values())
    report = write_report(ledger, folder.parent / f"{folder.name}.html", policy=request.param)
    state = open_report(browser, report, len(keys))
    state.shown = draw_in_turn(state.page)
    yield state, keys
    state.page.close()


def test_every_section_draws_and_nothing_runs(opened: tuple[Opened, dict[str, str]]) -> None:
    state, keys = opened
    page = state.page
    # 16 sessions; under the fork policy the parent draws one story with its child
    assert page.locator("section.session").count() == len(keys) == 16
    assert len(state.shown) >= 14 and all(shown["traces"] > 0 for shown in state.shown)
    assert state.page_errors == [] and state.errors() == [] and state.dialogs == []
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.documentElement.scrollWidth") == 1280


def test_each_section_heading_is_short(opened: tuple[Opened, dict[str, str]]) -> None:
    """A 20,000-character id is cut in the heading (so the body stays near it) and kept
    whole in the heading's title."""
    page = opened[0].page
    heights = page.locator("section.session h2").evaluate_all(
        "all => all.map(h => h.getBoundingClientRect().height)")
    assert max(heights) < 200
    titles = page.locator("section.session h2").evaluate_all("all => all.map(h => h.title)")
    # bidi controls are shown as visible escapes, in the title too
    shown = [key.replace("\u202e", "\\u202e").replace("\u2066", "\\u2066")
             for key in opened[1].values()]
    assert sorted(titles) == sorted(shown)


def find(page: Page, needle: str) -> tuple[str, list[str]]:
    """Type ``needle`` into the find box; return its note and the sections it lists."""
    page.fill("form.find input", needle)
    page.press("form.find input", "Enter")
    page.wait_for_function("() => !document.querySelector('form.find .found')"
                           ".textContent.startsWith('searching')", timeout=30_000)
    note = page.locator("form.find .found").text_content() or ""
    hrefs = page.locator("form.find ol a").evaluate_all(
        "links => links.map(a => decodeURIComponent(a.hash.slice('#session-'.length)))")
    return note, hrefs


# the model, provider and message ids are drawn in the timeline's hover text only, which the
# find box leaves out with the figures' specs
@pytest.mark.parametrize("field", ["session", "call", "tool"])
def test_find_names_the_one_session_holding_a_token(
        opened: tuple[Opened, dict[str, str]], field: str) -> None:
    state, keys = opened
    note, found = find(state.page, hostile(field, "token"))
    assert (note, found) == ("1 session", [keys[f"{field}-token"]])


def test_the_filter_keeps_the_row_of_a_hostile_session_id(
        opened: tuple[Opened, dict[str, str]]) -> None:
    page = opened[0].page
    for name in ("session-token", "session-text"):
        # a text box drops line breaks, so the text's first line is typed
        needle = opened[1][name].split("\n")[0].lower()
        page.fill("section.overview div.filter input", needle)
        shown = page.locator("section.overview tbody tr:not([hidden]) a").evaluate_all(
            "links => links.map(a => decodeURIComponent(a.hash.slice('#session-'.length)))")
        assert shown == [opened[1][name]]
    page.fill("section.overview div.filter input", "")


def test_a_lone_session_with_a_token_id_draws(browser: Browser, tmp_path: Path) -> None:
    """The case found: alone in its report (no other timeline drawn first to start the
    drawing ahead), the section of a 20,000-character session id draws when scrolled to."""
    path = rewritten(CRASH, tmp_path / "alone.jsonl",
                     {FIELDS["session"]: hostile("session", "token")})
    report = write_report(ledgerviz.load(path), tmp_path / "alone.html")
    state = open_report(browser, report, 1)
    try:
        shown = draw_in_turn(state.page)
        assert len(shown) == 1 and shown[0]["traces"] > 0
        assert state.page_errors == [] and state.errors() == []
    finally:
        state.page.close()
