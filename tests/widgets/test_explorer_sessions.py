"""The explorer's session filter over a thousand sessions: a text and a status narrow the
session picker, whose counts are known from the files written (250 copies of each of four
example sessions, each copy with its own id)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.examples import example_path
from ledgerviz.widgets import Explorer
from ledgerviz.widgets.session_filter import LISTED

COPIES = 250
# What each example holds, read from its file: crash-mid-dispatch dispatched a call that has
# no result (so it has a fork point); crash-before-dispatch requested calls it never
# dispatched (not started: no fork point, not clean); tool-error has one result with
# "isError": true and every call answered; clean has every call answered without error.
EXAMPLES = ("clean", "crash-mid-dispatch", "crash-before-dispatch", "tool-error")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fleet")
    for name in EXAMPLES:
        header, *events = example_path(name).read_text(encoding="utf-8").splitlines()
        for i in range(COPIES):
            first = json.loads(header) | {"id": f"{name}-{i}"}
            (folder / f"{name}-{i:03}.jsonl").write_text(
                "\n".join([json.dumps(first), *events]) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def explorer(fleet: Path) -> Explorer:
    return Explorer(ledgerviz.load(fleet))


def listed(explorer: Explorer) -> list[str]:
    return [value for _label, value in explorer.session.options]


def test_without_a_filter_the_first_sessions_are_listed_and_all_counted(
        explorer: Explorer) -> None:
    assert explorer.sessions_shown.value == (f"1,000 of 1,000 sessions match · the first "
                                             f"{LISTED} listed")
    assert len(listed(explorer)) == LISTED


@pytest.mark.parametrize(("status", "prefix"), [("outcome_unknown", "crash-mid-dispatch-"),
                                                ("fork", "crash-mid-dispatch-"),
                                                ("error", "tool-error-"),
                                                ("clean", "clean-")])
def test_a_status_lists_exactly_the_sessions_that_have_it(
        explorer: Explorer, status: str, prefix: str) -> None:
    current = explorer.session.value
    explorer.session_status.value = status
    try:
        shown = listed(explorer)
        assert explorer.sessions_shown.value.startswith(f"{COPIES} of 1,000 sessions match")
        matches = [key for key in shown if key != current or key.startswith(prefix)]
        assert len(matches) == LISTED
        assert all(key.startswith(prefix) for key in matches), matches
        assert explorer.session.value == current  # filtering never switches the session
    finally:
        explorer.session_status.value = ""


def test_text_and_status_combine_and_picking_a_match_opens_it(explorer: Explorer) -> None:
    explorer.session_find.value = "TOOL-ERROR-17"  # tool-error-17 and -170 to -179
    explorer.session_status.value = "error"
    try:
        assert explorer.sessions_shown.value == "11 of 1,000 sessions match"
        assert sorted(listed(explorer)[1:]) == sorted(
            ["tool-error-17"] + [f"tool-error-{n}" for n in range(170, 180)])
        explorer.session.value = "tool-error-175"
        assert explorer.summary.value.startswith("whole ledger")
        assert explorer.analysis.events[0]["seq"] == json.loads(
            example_path("tool-error").read_text().splitlines()[1])["seq"]
        assert listed(explorer)[0] == "tool-error-17"  # the current one matches: no prefix
        explorer.session_status.value = "clean"
        assert explorer.sessions_shown.value == "0 of 1,000 sessions match"
        assert listed(explorer) == ["tool-error-175"]
        assert explorer.session.value == "tool-error-175"
    finally:
        explorer.session_find.value = ""
        explorer.session_status.value = ""


def test_one_session_shows_no_filter() -> None:
    explorer = Explorer(ledgerviz.load(example_path("clean")))
    assert explorer.session_find.layout.display == "none"
    assert explorer.session_status.layout.display == "none"
