"""The crash-point grid of crash-mid-dispatch: facts at cuts worked out from the ledger format's
crash-repair rules (LEDGER_FORMAT.md §7) and the provider pairing rule."""

from __future__ import annotations

import ledgerviz
from ledgerviz.examples import example_path
from ledgerviz.plot import crash_grid
from ledgerviz.plot.crash_grid import crash_cuts


def test_cuts_state_what_each_policy_appends_and_who_accepts() -> None:
    ledger = ledgerviz.load(example_path("crash-mid-dispatch"))
    cuts = {(c.kept, c.policy): c for c in crash_cuts(ledger)}
    assert len(cuts) == 22 * 3  # 22 events, three policies
    # kept 15: the file ends on turn/end, nothing is open, nothing is appended
    assert {cuts[15, p].appended for p in ("recorded", "synthesize", "fork")} == {"—"}
    # whole file: the grep call was dispatched (seq 20) and never answered, two calls were
    # asked for and never dispatched; synthesize answers all three, then closes step and turn
    whole = cuts[22, "synthesize"]
    assert whole.appended == "UNKNOWN 2×NOT_STARTED step/end turn/end"
    assert whole.verdict == "all"
    assert cuts[22, "fork"].appended == "—"  # the fork policy appends nothing to the parent
    assert cuts[22, "recorded"].verdict == "none" and cuts[22, "recorded"].accepted_by == ()
    assert cuts[22, "recorded"].last_event == "tool/result (seq 21)"


def test_grid_draws_one_cell_per_cut_and_policy() -> None:
    figure = crash_grid(ledgerviz.load(example_path("crash-mid-dispatch")))
    (heatmap,) = figure.data
    assert list(heatmap.x) == ["recorded", "synthesize", "fork"]
    assert len(heatmap.y) == 22 and heatmap.y[0].startswith("1 · turn/start")
    assert heatmap.text[21][1] == "UNKNOWN 2×NOT_STARTED step/end turn/end"
