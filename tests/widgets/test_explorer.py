"""The explorer driven programmatically: session, policy, crash point and event selection change
the figure and the panes the way the ledger files say they should."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from widget_ledgers import HOSTILE, HOSTILE_RAW, PLAIN_TURN, SEMANTIC, events_of, seq_at

import ledgerviz
from ledgerviz.html import escape
from ledgerviz.plot import style
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.widgets import Explorer, explore
from ledgerviz.widgets import explorer as explorer_module
from ledgerviz.wording import counted

SEMANTIC_EVENTS = events_of(SEMANTIC)


def first_index(events: list[dict[str, Any]], kind: str, start: int = 0) -> int:
    return next(i for i in range(start, len(events)) if events[i]["type"] == kind)


# The semantic-checkpoint file holds the runtime's own crash repair: the first events are a
# turn that died after dispatching one call, then the closers the runtime appended before the
# next lifecycle's session/end-seed marker.
CRASH = next(i for i, e in enumerate(SEMANTIC_EVENTS) if e["type"] == "tool/result"
             and e["data"].get("error", {}).get("code") == "TOOL_OUTCOME_UNKNOWN")
RECORDED_CLOSERS = [seq_at(SEMANTIC_EVENTS, i)
                    for i in range(CRASH, first_index(SEMANTIC_EVENTS, "session/end-seed"))]
DISPATCH = first_index(SEMANTIC_EVENTS, "tool/call")
CALL_ID = SEMANTIC_EVENTS[DISPATCH]["data"]["callId"]
REQUEST = next(i for i, e in enumerate(SEMANTIC_EVENTS) if e["type"] == "assistant/message"
               and any(b.get("id") == CALL_ID for b in e["data"]["message"]["content"]))


def lane_positions(figure: go.Figure, lane: str, *, name_prefix: str = "") -> list[float]:
    """Start positions of the items drawn in ``lane`` (bars: every third x; markers: every x).

    A trace belongs to the lane nearest its y values (bars may be offset within a lane).
    """
    axis = figure.layout.yaxis
    values = np.asarray(axis.tickvals, dtype=float)
    found: list[float] = []
    for trace in figure.data:
        y = np.asarray(trace.y, dtype=float)
        nearest = axis.ticktext[int(np.argmin(np.abs(values - np.nanmin(y))))]
        if not trace.name.startswith(name_prefix) or nearest != lane or trace.name.startswith(
                "fork point"):
            continue
        x = np.asarray(trace.x, dtype=float)
        found.extend((x if trace.mode == "markers" else x[0::3]).tolist())
    return sorted(found)


def synthetic_positions(figure: go.Figure) -> list[float]:
    return lane_positions(figure, style.LANE_EVENTS, name_prefix="added by recovery")


def fork_positions(figure: go.Figure) -> list[float]:
    return sorted(x for t in figure.data if t.name.startswith("fork point")
                  for x in np.asarray(t.x, dtype=float)[0::3].tolist())


@pytest.fixture
def semantic() -> Explorer:
    return explore(ledgerviz.load(SEMANTIC))


def test_controls_open_on_the_whole_first_session() -> None:
    ledger = ledgerviz.load([SEMANTIC, PLAIN_TURN])
    explorer = ledgerviz.explore(ledger)
    assert isinstance(explorer, Explorer)
    assert explorer.session.options == tuple((key, key) for key in ledger.keys)
    assert explorer.session.value == ledger.keys[0]
    assert explorer.policy.options == POLICIES and explorer.policy.value == "synthesize"
    (policy_row,) = [box for row in explorer.children if isinstance(row, widgets.HBox)
                     for box in row.children if explorer.policy in getattr(box, "children", ())]
    assert [c.value for c in policy_row.children[:1]] == ["Policy"]  # beside its buttons
    assert explorer.policy.style.button_width == "auto"  # each as wide as its label
    assert (explorer.crash_point.min, explorer.crash_point.max) == (1, len(SEMANTIC_EVENTS))
    assert explorer.crash_point.value == len(SEMANTIC_EVENTS)
    assert explorer.summary.value.startswith(f"whole ledger ({len(SEMANTIC_EVENTS)} events)")
    assert explorer.figure in explorer.children


def test_the_figure_builds_only_the_template_the_timeline_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []
    templates = type(pio.templates)
    template = templates.__getitem__

    def recorded(self: Any, name: str) -> Any:
        looked_up.append(name)
        return template(self, name)

    monkeypatch.setattr(templates, "__getitem__", recorded)
    explorer = explore(ledgerviz.load(SEMANTIC))
    assert set(looked_up) == {"plotly_white"}
    assert explorer.figure.layout.template == go.layout.Template(pio.templates["plotly_white"])


def test_crash_slider_cuts_the_ledger_and_synthesize_closes_it(semantic: Explorer) -> None:
    assert synthetic_positions(semantic.figure) == RECORDED_CLOSERS  # closers in the file
    semantic.crash_point.value = CRASH
    # The cut ends at the dispatched call; synthesize computes the closers the runtime wrote.
    assert synthetic_positions(semantic.figure) == RECORDED_CLOSERS
    computed = semantic.analysis.events[CRASH:]
    recorded = SEMANTIC_EVENTS[CRASH:CRASH + len(RECORDED_CLOSERS)]
    assert [e["type"] for e in computed] == [e["type"] for e in recorded]
    assert computed[0]["data"]["message"]["id"] == recorded[0]["data"]["message"]["id"]
    assert lane_positions(semantic.figure, style.LANE_CALLS) == [DISPATCH]
    assert semantic.summary.value == (
        f"process died after event {CRASH} of {len(SEMANTIC_EVENTS)} · synthesize: "
        f"{len(RECORDED_CLOSERS)} closers · fork points: none · 0 abandoned events"
    )


def test_fork_policy_moves_the_suffix_into_the_abandoned_lanes(semantic: Explorer) -> None:
    semantic.crash_point.value = CRASH
    before = semantic.figure
    lanes_before = lane_positions(before, style.LANE_CALLS)
    semantic.policy.value = "fork"
    assert semantic.figure is before  # updated in place, never replaced
    assert lanes_before == [DISPATCH]
    abandoned_surface = [seq_at(SEMANTIC_EVENTS, i) for i in range(REQUEST, CRASH)
                         if "surfaceOp" in SEMANTIC_EVENTS[i]]
    assert fork_positions(semantic.figure) == [REQUEST]
    assert lane_positions(semantic.figure, style.LANE_ABANDONED_EVENTS) == abandoned_surface
    assert lane_positions(semantic.figure, style.LANE_ABANDONED_CALLS) == [DISPATCH]
    assert lane_positions(semantic.figure, style.LANE_CALLS) == []
    assert f"fork points: seq {REQUEST}" in semantic.summary.value
    assert f"{counted(len(abandoned_surface), 'abandoned event')}" in semantic.summary.value

    semantic.policy.value = "recorded"
    assert synthetic_positions(semantic.figure) == []
    assert fork_positions(semantic.figure) == []
    assert lane_positions(semantic.figure, style.LANE_CALLS) == [DISPATCH]
    assert "recorded: 0 closers · fork points: none · 0 abandoned events" in semantic.summary.value


def test_selecting_an_event_shows_its_seq_and_escaped_json(semantic: Explorer) -> None:
    assert semantic.select_seq(DISPATCH)
    assert semantic.event.value == DISPATCH
    details = semantic.details.value
    assert f"<b>seq {DISPATCH}</b>" in details
    assert f"&quot;callId&quot;: &quot;{escape(CALL_ID)}&quot;" in details
    arguments = SEMANTIC_EVENTS[DISPATCH]["data"]["arguments"]
    assert escape(arguments.replace('"', '\\"')) in details
    semantic.event.value = REQUEST
    assert f"<b>seq {REQUEST}</b>" in semantic.details.value
    assert "assistant/message" in semantic.details.value


def test_clicking_a_point_in_the_figure_selects_that_event(semantic: Explorer) -> None:
    semantic.crash_point.value = CRASH
    semantic.event.value = 0
    figure = semantic.figure
    index = next(i for i, t in enumerate(figure.data) if t.legendgroup == "outcome_unknown")
    figure._js2py_pointsCallback = {
        "event_type": "plotly_click",
        "points": {"trace_indexes": [index], "point_indexes": [0],
                   "xs": [float(DISPATCH)], "ys": [1.0]},
        "device_state": {"ctrl": False, "alt": False, "shift": False, "meta": False,
                         "button": 0, "buttons": 1},
    }
    assert semantic.analysis.seqs[semantic.event.value] == DISPATCH
    assert f"<b>seq {DISPATCH}</b>" in semantic.details.value


def test_selection_follows_policy_and_crash_point(semantic: Explorer) -> None:
    semantic.select_seq(REQUEST)
    semantic.policy.value = "fork"
    assert semantic.analysis.seqs[semantic.event.value] == REQUEST
    assert "branch abandoned" in semantic.details.value
    semantic.crash_point.value = REQUEST  # the selected event is cut away
    assert semantic.analysis.seqs[semantic.event.value] == REQUEST - 1  # the crash-point event


def test_provider_badges_follow_policy_and_crash_point(semantic: Explorer) -> None:
    semantic.crash_point.value = CRASH
    semantic.policy.value = "recorded"
    for provider in ("openai", "anthropic"):  # one call dispatched, never answered
        assert f"{provider} invalid · 1 problem<" in semantic.context.value
        assert f"<b>{provider}</b> · missing_result · seqs {REQUEST}:" in semantic.context.value
    assert f"id {escape(CALL_ID)} <b style='color:#d64545'>→ no result</b>" in (
        semantic.context.value)
    semantic.policy.value = "synthesize"
    assert "openai valid" in semantic.context.value
    assert "anthropic valid" in semantic.context.value
    assert f"id {escape(CALL_ID)} → result at seq {CRASH}" in semantic.context.value
    semantic.policy.value = "fork"
    assert "invalid" not in semantic.context.value
    assert CALL_ID not in semantic.context.value  # the request is abandoned with its call
    semantic.policy.value = "recorded"
    semantic.crash_point.value = semantic.crash_point.max  # the file holds the runtime's closers
    assert "invalid" not in semantic.context.value



def test_a_long_cut_shows_its_next_request_once_asked_then_at_every_view(
        monkeypatch: pytest.MonkeyPatch) -> None:
    eager = explore(ledgerviz.load(SEMANTIC))
    eager.crash_point.value = CRASH
    panes = {"synthesize": eager.context.value}
    eager.policy.value = "fork"
    panes["fork"] = eager.context.value
    monkeypatch.setattr(explorer_module, "CONTEXT_AT_ONCE", CRASH - 1)
    lazy = explore(ledgerviz.load(SEMANTIC))
    assert "built when asked for" in lazy.context.value
    assert lazy.show_context.layout.display is None
    lazy.crash_point.value = CRASH  # still longer than CONTEXT_AT_ONCE: still waits
    assert "built when asked for" in lazy.context.value
    lazy.show_context.click()
    assert lazy.context.value == panes["synthesize"]
    assert f"id {escape(CALL_ID)} → result at seq {CRASH}" in lazy.context.value
    assert lazy.show_context.layout.display == "none"
    lazy.policy.value = "fork"  # asked once, it follows every view
    assert lazy.context.value == panes["fork"] and "invalid" not in lazy.context.value
    lazy.crash_point.value = CRASH - 1  # short enough anyway
    assert "Next model request" in lazy.context.value

def test_session_picker_switches_slider_range_and_figure() -> None:
    ledger = ledgerviz.load([SEMANTIC, PLAIN_TURN])
    explorer = explore(ledger, policy="synthesize")
    explorer.crash_point.value = CRASH
    explorer.select_seq(0)  # turn/start in both files: the selection must still not carry over
    plain = events_of(PLAIN_TURN)
    explorer.session.value = ledger.keys[1]
    # it opens on its one incident: the turn left open, closed by the synthetic turn/end
    assert explorer.incidents == [len(plain) + 1]
    assert explorer.analysis.seqs[explorer.event.value] == len(plain) + 1
    assert explorer.incident.value == f"incident 1 of 1 · seq {len(plain) + 1}"
    assert (explorer.crash_point.max, explorer.crash_point.value) == (len(plain), len(plain))
    # the session picker names the session, so the title states the drawn session's counts
    title = explorer.figure.layout.title.text
    assert ledger.keys[1] not in title
    assert f"{len(plain) + 2} events (2 added by recovery)" in title
    # plain-turn ends inside an open step with no call: closers are step/end and turn/end
    assert synthetic_positions(explorer.figure) == [len(plain), len(plain) + 1]
    assert [e["type"] for e in explorer.analysis.events[len(plain):]] == ["step/end", "turn/end"]
    assert [label for label, _ in explorer.event.options][-1].endswith("added by recovery")


def test_bad_arguments_are_refused() -> None:
    ledger = ledgerviz.load(SEMANTIC)
    with pytest.raises(ValueError, match="unknown session"):
        explore(ledger, session="nope")
    with pytest.raises(ValueError, match="policy must be one of"):
        explore(ledger, policy="retry")  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", POLICIES)
def test_hostile_ledger_content_is_escaped_in_every_pane(policy: str) -> None:
    explorer = explore(ledgerviz.load(HOSTILE), policy=policy)
    panes = [explorer.summary.value, explorer.context.value]
    for index in range(len(explorer.analysis.events)):
        explorer.event.value = index
        panes.append(explorer.details.value)
    joined = "\n".join(panes).lower()
    for raw in HOSTILE_RAW:
        assert raw not in joined
    assert "&lt;script&gt;window.__pwned=1;alert(1)&lt;/script&gt;" in joined
    assert "javascript:window.__pwned=1" in joined  # kept, as inert text
    assert "&lt;img src=x onerror=" in joined


def test_explorer_display_carries_a_static_snapshot_of_its_view() -> None:
    explorer = ledgerviz.explore(ledgerviz.load(HOSTILE), policy="fork")
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    snapshot = bundle["text/html"]
    assert "A snapshot of the explorer" in snapshot and "<svg" in snapshot
    assert "<script" not in snapshot and "Plotly" not in snapshot
    assert explorer.context.value in snapshot and escape(explorer.summary.value) in snapshot
    for raw in HOSTILE_RAW:
        assert raw not in snapshot
