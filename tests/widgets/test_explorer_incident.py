"""The explorer opens on the incident, walks the incidents, redraws the range zoomed to, finds
calls and text, and never shows a new summary before the panes it sums up."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ledgerviz
from ledgerviz.plot import incident, style
from ledgerviz.simulate import write_scenario
from ledgerviz.widgets import Explorer, explore
from ledgerviz.widgets import explorer as explorer_module


@pytest.fixture(scope="module")
def crashed_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 40 ordinary turns (594 events in all), then a turn that dies after the first of four
    # results: one call dispatched without a result, two never dispatched
    path = tmp_path_factory.mktemp("explorer") / "crashed.jsonl"
    write_scenario("crash-mid-dispatch", path, turns=40)
    return path


@pytest.fixture
def crashed(crashed_path: Path, monkeypatch: pytest.MonkeyPatch) -> Explorer:
    monkeypatch.setattr(explorer_module, "DETAIL_LIMIT", 100)
    return explore(ledgerviz.load(crashed_path), policy="fork")


def shown(explorer: Explorer, name: str) -> list[float]:
    return sorted(x for t in explorer.figure.data if t.name == name
                  for x in np.asarray(t.x, dtype=float).tolist())


def test_it_opens_on_the_fork_point_and_walks_the_incidents(crashed: Explorer) -> None:
    (fork,) = crashed.analysis.fork_points
    calls = [c for c in crashed.analysis.calls if c.status != "ok"]
    assert crashed.incidents == sorted({fork, *(c.requested_seq for c in calls)})
    low, high = crashed.figure.layout.xaxis.range
    assert low < fork < high and high - low == incident.WINDOW + 1
    assert crashed.analysis.seqs[crashed.event.value] == crashed.incidents[0] == fork
    assert crashed.incident.value == f"incident 1 of {len(crashed.incidents)} · seq {fork}"
    assert crashed.previous_incident.disabled and crashed.next_incident.disabled  # the one
    crashed.policy.value = "synthesize"  # which closes the turn: "interrupted" is one more
    (interrupted,) = [i for i, e in enumerate(crashed.analysis.events)
                      if e["type"] == "turn/end" and not crashed.analysis.recorded[i]]
    end = crashed.analysis.seqs[interrupted]
    assert crashed.incidents == [fork, end]
    assert crashed.analysis.seqs[crashed.event.value] == fork  # the selection stays
    crashed.next_incident.click()
    assert crashed.analysis.seqs[crashed.event.value] == end
    assert crashed.incident.value == f"incident 2 of 2 · seq {end}"
    assert crashed.next_incident.disabled and not crashed.previous_incident.disabled
    crashed.previous_incident.click()
    assert crashed.analysis.seqs[crashed.event.value] == fork


def test_a_zoom_redraws_the_range_item_by_item(crashed: Explorer) -> None:
    events = crashed.ledger.recovery("fork").frames.events
    log_only = events.loc[events["branch"] == "log", "seq"].astype(float)
    low, high = crashed.figure.layout.xaxis.range
    assert len(log_only[(log_only > low) & (log_only < high)]) > 100  # grouped in view
    assert shown(crashed, style.LEGEND_LOG_EVENT) == []
    crashed.figure.layout.xaxis.range = (300.5, 360.5)  # what a box zoom sends
    wanted = log_only[(log_only > 300.5) & (log_only < 360.5)].tolist()
    assert 0 < len(wanted) <= 100
    assert shown(crashed, style.LEGEND_LOG_EVENT) == sorted(wanted)
    grouped = next(t for t in crashed.figure.data
                   if t.name == f"{style.LEGEND_LOG_EVENT} (grouped)")
    assert all(h.endswith("<i>grouped: zoom in to see each</i>") for h in grouped.hovertext if h)
    assert tuple(crashed.figure.layout.xaxis.range) == (300.5, 360.5)



class Page:
    """Stands for the browser's plot: the x range it shows, moved by the reader's zooms
    (each a relayout for the kernel) and by what the kernel sends, as plotly's view applies
    it (a relayout is not applied again by the view it came from)."""

    VIEW = "the page's view"

    def __init__(self, explorer: Explorer, monkeypatch: pytest.MonkeyPatch) -> None:
        self.figure = explorer.figure
        self.range = list(self.figure.layout.xaxis.range)
        self.inbox: list[tuple[dict[str, Any], str | None]] = []
        relayout, update = self.figure._send_relayout_msg, self.figure._send_update_msg

        def sent_relayout(data: dict[str, Any], source_view_id: str | None = None) -> None:
            self.inbox.append((copy.deepcopy(data), source_view_id))
            relayout(data, source_view_id=source_view_id)

        def sent_update(restyle_data: Any, relayout_data: dict[str, Any],
                        trace_indexes: Any = None, source_view_id: str | None = None) -> None:
            self.inbox.append((copy.deepcopy(relayout_data), source_view_id))
            update(restyle_data, relayout_data, trace_indexes, source_view_id)

        monkeypatch.setattr(self.figure, "_send_relayout_msg", sent_relayout)
        monkeypatch.setattr(self.figure, "_send_update_msg", sent_update)

    def relayout(self, data: dict[str, Any]) -> None:
        """The kernel receives a relayout the reader made (it answers before the next)."""
        self.figure._handler_js2py_relayout(
            {"new": {"relayout_data": data, "source_view_id": self.VIEW}})

    def receive(self) -> None:
        """The page applies what the kernel sent, in order."""
        for data, source in self.inbox:
            if source == self.VIEW:
                continue
            for path, value in data.items():
                if path == "xaxis.range":
                    self.range = list(value)
                elif path == "xaxis" and "range" in value:
                    self.range = list(value["range"])
        self.inbox.clear()


def test_a_zoom_made_while_the_kernel_draws_the_one_before_ends_drawn(
        crashed: Explorer, monkeypatch: pytest.MonkeyPatch) -> None:
    page = Page(crashed, monkeypatch)
    page.relayout({"xaxis.autorange": True, "yaxis.autorange": True})  # a double click
    page.range = [-0.5, 593.5]  # the page autoscales itself: seqs 0..593
    # the reader zooms twice before the first zoom's redraw reaches the page
    page.relayout({"xaxis.range[0]": 100.5, "xaxis.range[1]": 400.5})
    page.range = [300.5, 360.5]
    page.relayout({"xaxis.range[0]": 300.5, "xaxis.range[1]": 360.5})
    page.receive()
    assert page.range == [300.5, 360.5]
    events = crashed.ledger.recovery("fork").frames.events
    log_only = events.loc[events["branch"] == "log", "seq"].astype(float)
    assert shown(crashed, style.LEGEND_LOG_EVENT) == sorted(
        log_only[(log_only > 300.5) & (log_only < 360.5)].tolist())


def test_find_selects_a_call_by_id_a_tool_or_text(crashed: Explorer) -> None:
    call = next(c for c in crashed.analysis.calls if c.status == "outcome_unknown")
    crashed.find.value = call.call_id
    assert crashed.matches.description == "1 match"
    assert crashed.analysis.seqs[crashed.event.value] == call.dispatched_seq
    assert call.call_id in crashed.details.value
    first = crashed.analysis.calls[0]
    crashed.find.value = first.call_id[:-2] + "zz"  # no such call, no such text
    assert crashed.matches.description == "0 matches" and crashed.matches.options == ()
    crashed.find.value = first.name.upper()  # a tool name, any case
    named = [c.call_id for c in crashed.analysis.calls if c.name == first.name]
    listed = [label.split(" ")[1] for label, _ in crashed.matches.options
              if label.startswith("call ")]  # then the messages whose text names the tool
    assert listed == named and len(named) > 1
    crashed.find.value = str(first.requested_seq)
    assert crashed.analysis.seqs[crashed.event.value] == first.requested_seq
    low, high = crashed.figure.layout.xaxis.range
    assert low < first.requested_seq < high  # the view moved to it


def test_a_session_switch_marks_busy_and_changes_the_summary_last(crashed_path: Path) -> None:
    other = Path(ledgerviz.__file__).parent / "examples" / "clean.jsonl"
    explorer = explore(ledgerviz.load([crashed_path, other]))
    changes: list[str] = []
    for name in ("summary", "details", "context", "event"):
        getattr(explorer, name).observe(lambda _c, name=name: changes.append(name), "value")
    explorer.observe(lambda c: changes.append(
        "busy" if explorer_module.BUSY_CLASS in c["new"] else "idle"), "_dom_classes")
    show = explorer._updater.show
    explorer._updater.show = lambda spec: (changes.append("figure"), show(spec))
    explorer.find.value = "read"
    assert explorer.matches.options
    changes.clear()
    explorer.session.value = explorer.ledger.keys[1]
    assert explorer.find.value == "" and explorer.matches.options == ()  # no old matches
    changes.remove("event")  # the old session's matches, cleared with the find box
    assert changes[:2] == ["busy", "summary"]  # "computing …" first
    assert changes[-2:] == ["summary", "idle"]
    assert {"figure", "details", "context"} <= set(changes[2:-2])
    assert explorer.summary.value.startswith("whole ledger (")


def test_a_session_without_incidents_switched_to_shows_whole(crashed_path: Path) -> None:
    # the crashed session opens on its fork point with an overview strip; the clean one has
    # no incident: the browser must autorange and drop the strip (a range merely unset there
    # shows plotly.js's default [-1, 6], and an emptied range slider stays visible)
    other = Path(ledgerviz.__file__).parent / "examples" / "clean.jsonl"
    explorer = explore(ledgerviz.load([crashed_path, other]), policy="fork")
    xaxis = explorer.figure.layout.xaxis
    assert xaxis.range[1] - xaxis.range[0] < 300 and xaxis.rangeslider.visible
    explorer.session.value = explorer.ledger.keys[1]
    assert explorer.incidents == []
    assert xaxis.range == (-1, 32) and xaxis.rangeslider.visible is False  # seqs 0 to 31
    explorer.session.value = explorer.ledger.keys[0]
    assert xaxis.range[1] - xaxis.range[0] < 300 and xaxis.rangeslider.visible
