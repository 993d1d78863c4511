"""The explorer under the fork policy draws the cut parent with the child ``fork`` would write.

Expected values worked out by hand from ``examples/crash-mid-dispatch.jsonl``: seq 5 is the
assistant message that dispatches two calls (seqs 6 and 7), so a cut keeping 8 events has fork
boundary seq 4 and the child's own events are session/end-seed (5), step/end (6) and
turn/end (7); the parent's assistant message (5) moves to the abandoned lane. A cut keeping
5 events has no dispatched call, so nothing is forked. At the whole file (22 events) the
boundary is seq 17, so the child's seed marker is seq 18.
"""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go

import ledgerviz
from ledgerviz.widgets import explore

EXAMPLE = Path(ledgerviz.__file__).parent / "examples" / "crash-mid-dispatch.jsonl"


def hovers(figure: go.FigureWidget) -> list[str]:
    """Return every non-empty hover text of the figure."""
    return [str(h) for trace in figure.data if trace.hovertext is not None
            for h in trace.hovertext if h]


def seed_markers(figure: go.FigureWidget) -> list[str]:
    return [h for h in hovers(figure) if h.startswith("<b>session/end-seed</b>")]


def test_a_cut_with_a_boundary_shows_the_child_fork_would_write() -> None:
    explorer = explore(ledgerviz.load(EXAMPLE), policy="fork")
    explorer.crash_point.value = 8
    figure = explorer.figure
    assert [h.split("<br>")[0] for h in seed_markers(figure)] == [
        "<b>session/end-seed</b> · seq 5"]
    assert "abandoned events" in figure.layout.yaxis.ticktext
    abandoned = next(t for t in figure.data if t.name == "abandoned event")
    assert list(abandoned.x) == [5.0]
    assert str(abandoned.hovertext[0]).startswith("<b>assistant/message</b> · seq 5")


def test_the_whole_file_forks_at_its_last_boundary() -> None:
    explorer = explore(ledgerviz.load(EXAMPLE), policy="fork")
    assert explorer.crash_point.value == 22
    assert [h.split("<br>")[0] for h in seed_markers(explorer.figure)] == [
        "<b>session/end-seed</b> · seq 18"]


def test_a_cut_without_a_boundary_or_another_policy_shows_the_parent_alone() -> None:
    explorer = explore(ledgerviz.load(EXAMPLE), policy="fork")
    explorer.crash_point.value = 5
    assert seed_markers(explorer.figure) == []
    assert tuple(explorer.figure.layout.yaxis.ticktext) == (
        "turns", "steps", "events", "tool calls")
    explorer.crash_point.value = 8
    explorer.policy.value = "synthesize"
    assert seed_markers(explorer.figure) == []
    assert "abandoned events" not in explorer.figure.layout.yaxis.ticktext


def test_the_story_of_a_cut_is_built_once() -> None:
    explorer = explore(ledgerviz.load(EXAMPLE), policy="fork")
    explorer.crash_point.value = 8
    story = explorer._story(explorer._view())
    explorer.crash_point.value = 5
    explorer.crash_point.value = 8
    assert explorer._story(explorer._view()) is story
    assert story is not None and story.keys == [
        "sim-crash-mid-dispatch-7", "sim-crash-mid-dispatch-7-fork-4"]
