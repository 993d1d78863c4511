"""The items a bin trace carries for a page to redraw: positions and seqs as differences,
lengths, and codes into the escaped names (hand-worked values)."""

from __future__ import annotations

import numpy as np

import ledgerviz
from ledgerviz.examples import example_path
from ledgerviz.plot.detail import packed_items
from ledgerviz.plot.timeline import session_timeline_specs


def test_items_pack_as_differences_with_codes_into_escaped_names() -> None:
    nan = np.nan
    packed = packed_items(np.array([5.0, 3.0, nan, 10.0]), np.array([7.0, 3.0, nan, 12.0]),
                          np.array([5.0, nan, 8.0, 10.0]),
                          np.array(["b", "<a>", "c", None], dtype=object))
    assert packed is not None
    assert packed["x0"].tolist() == [5, -2, 7]  # 5, 3, 10; the unplaced item is left out
    assert packed["span"].tolist() == [2, 0, 2]
    assert packed["seq"].tolist() == [5, -6, 11]  # 5, -1 (none), 10
    assert packed["names"] == ["&lt;a&gt;", "b"]
    assert packed["name"].tolist() == [1, 0, -1]


def test_fractional_positions_are_not_packed() -> None:
    assert packed_items(np.array([1.5]), np.array([2.0]), np.array([1.0]),
                        np.array(["x"], dtype=object)) is None


def test_only_a_packed_report_spec_carries_the_items_of_its_bins() -> None:
    ledger = ledgerviz.load(example_path("clean"))
    recovery = ledger.recovery("synthesize")
    events = len(ledger.sessions[0].events)  # every event recorded: all binned at limit 1
    specs = {packed: session_timeline_specs(recovery.frames, ledger.keys, policy="synthesize",
                                            fork_points={}, detail_limit=1, packed=packed)[0]
             for packed in (False, True)}
    assert not any("lvItems" in t for t in specs[False]["data"])
    events_lane = [t["lvItems"] for t in specs[True]["data"]
                   if t["name"].startswith(("event the model sees", "log-only event"))]
    assert sum(len(items["x0"]) for items in events_lane) == events
