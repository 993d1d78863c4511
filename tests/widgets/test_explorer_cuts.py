"""Every crash point the explorer's slider can take shows the closers the runtime itself
writes there (the conformance vectors), whichever cuts were shown before."""

from __future__ import annotations

import json

import pytest
from widget_ledgers import TESTS

import ledgerviz
from ledgerviz.widgets import explore

CONFORMANCE = TESTS / "data" / "conformance"
INPUTS = ["random-01-v4.jsonl"]


def runtime_closers(name: str) -> dict[int, list[dict]]:
    """Return the runtime's crash closers of input ``name`` by cut (read from the vectors)."""
    with (CONFORMANCE / "closers.jsonl").open(encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle]
    return {case["cut"]: case["closers"] for case in cases
            if case["input"] == name and case["cause"] == "interrupted"}


@pytest.mark.parametrize("name", INPUTS)
def test_each_slider_position_shows_the_runtime_closers(name: str) -> None:
    expected = runtime_closers(name)
    explorer = explore(ledgerviz.load(CONFORMANCE / "inputs" / name), policy="synthesize")
    total = explorer.crash_point.max
    assert sorted(expected) == list(range(1, total + 1))
    order = [*range(total, 0, -2), *range(1, total + 1, 2)]  # back, then forth: resumed cuts
    for cut in order:
        explorer.crash_point.value = cut
        assert explorer.analysis.closers == expected[cut]
        explorer.policy.value = "fork"  # fork closes the same, or nothing while a fork waits
        forked = explorer.analysis
        assert forked.closers == expected[cut] or (forked.closers == [] and forked.fork_points)
        explorer.policy.value = "synthesize"
