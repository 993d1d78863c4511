"""Timelines open on the first incident of a long session, drawn item by item there, with the
whole session as an overview strip."""

from __future__ import annotations

import numpy as np
import pytest

import ledgerviz
from ledgerviz.plot import incident, style
from ledgerviz.simulate import write_scenario


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> ledgerviz.Ledger:
    # 40 ordinary turns, then the turn that dies after the first of four results
    path = tmp_path_factory.mktemp("incident") / "crashed.jsonl"
    write_scenario("crash-mid-dispatch", path, turns=40)
    return ledgerviz.load(path)


def test_incident_view_is_a_window_inside_the_session() -> None:
    assert incident.incident_view(500, 0, 1000) == (349.5, 550.5)  # 150 before, 50 after
    assert incident.incident_view(990, 0, 1000) == (799.5, 1000.5)  # kept inside the session
    assert incident.incident_view(5, 0, 1000) == (-0.5, 200.5)
    assert incident.incident_view(5, 0, 150) is None  # short: the whole session


def test_timeline_opens_on_the_fork_point_with_every_event_in_view(
        crashed: ledgerviz.Ledger) -> None:
    key = crashed.keys[0]
    (fork,) = crashed.recovery("fork").analyses[key].fork_points
    calls = crashed.frames.calls
    unresolved = sorted(calls.loc[calls["status"] != "ok", "requested_seq"].unique().tolist())
    figure = ledgerviz.timeline(crashed, policy="fork", detail_limit=50)
    low, high = figure.layout.xaxis.range
    assert low < fork < high and high - low == incident.WINDOW + 1
    assert figure.layout.xaxis.rangeslider.visible  # the whole session, as an overview
    assert list(figure.layout.meta["incidents"]) == sorted({fork, *unresolved})
    # 584 events: the log-only events outnumber the limit of 250, those in view do not
    figure = ledgerviz.timeline(crashed, policy="fork", detail_limit=250)
    events = crashed.recovery("fork").frames.events
    log_only = events.loc[events["branch"] == "log", "seq"].astype(float)
    assert len(log_only) > 250
    seen = log_only[(log_only > low) & (log_only < high)]
    (single,) = [t for t in figure.data if t.name == style.LEGEND_LOG_EVENT]
    (grouped,) = [t for t in figure.data if t.name == f"{style.LEGEND_LOG_EVENT} (grouped)"]
    assert sorted(np.asarray(single.x, dtype=float).tolist()) == sorted(seen.tolist())
    counts = [int(h.split("<b>")[1].split(" ")[0]) for h in grouped.hovertext if h]
    assert sum(counts) == len(log_only) - len(seen)
    assert all(h.endswith("<i>grouped at this scale</i>") for h in grouped.hovertext if h)
    whole = ledgerviz.timeline(crashed, policy="fork", x_range="all")
    assert whole.layout.xaxis.range is None and not whole.layout.xaxis.rangeslider.visible
