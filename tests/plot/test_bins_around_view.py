"""A range drawn item by item shows no bin across it: the items outside it are binned apart on
each side, so a grouped bar never runs behind the markers in view."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ledgerviz
from ledgerviz.plot import detail
from ledgerviz.plot.timeline import ledger_timeline_spec
from ledgerviz.simulate import write_scenario

EVENT_LANE = ("event the model sees", "log-only event")


@pytest.fixture(scope="module")
def long_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bins") / "long.jsonl"
    write_scenario("crash-mid-dispatch", path, turns=300)  # about 4,200 events: bins of ~10
    return path


def file_seqs(path: Path) -> np.ndarray:
    """The seqs of the file's events, read without ledgerviz."""
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return np.array([json.loads(line)["seq"] for line in lines if line.strip()])


@pytest.mark.parametrize("low", [101, 1_003, 2_017, 3_331])
def test_a_narrow_view_is_drawn_item_by_item_with_no_bin_across_it(long_path: Path,
                                                                    low: int) -> None:
    view = (low - 0.5, low + 2.5)  # seqs low .. low + 2
    spec = ledger_timeline_spec(ledgerviz.load(long_path), "synthesize", x_range=view,
                                detail_limit=50)
    drawn, crossing = [], []
    for trace in spec["data"]:
        x = np.asarray(trace["x"], dtype=float)
        if trace["name"].endswith("(grouped)"):
            segments = x.reshape(-1, 3)
            crossing += [trace["name"] for start, end, _gap in segments
                         if end >= view[0] and start <= view[1]]
        elif trace["name"] in EVENT_LANE:
            drawn += x[(x > view[0]) & (x < view[1])].tolist()
    assert crossing == []
    assert sorted(drawn) == [low, low + 1, low + 2]
    seqs = file_seqs(long_path)
    assert len(seqs) > 8 * detail.BINS and low + 2 < seqs.max()  # bins wider than the view


def test_items_outside_the_view_are_binned_on_their_own_side() -> None:
    # 1,000 items at x 0..999; the view holds item 501 alone. Binned over their extent in
    # 400 slices of 2.4975, items 500 and 502 would share slice 200 and its bar would span
    # the view; binned per side, the last bar before it ends at 500, the first after starts
    # at 502.
    xs = np.arange(1_000, dtype=float)
    codes = np.zeros(1_000, dtype=np.int64)
    sides = detail.view_sides(xs, xs, codes, [(500.5, 501.5)])
    assert sides is not None
    assert np.flatnonzero(sides == 0).tolist() == [501]
    assert (sides[:501] == -1).all() and (sides[502:] == 1).all()
    single = sides == 0
    names = np.array(["grep"] * 1_000, dtype=object)
    one, grouped = detail.levels(np.arange(1_000), single, sides, xs, xs, names, xs, names,
                                 what="events", note="n")
    assert one.starts.tolist() == [501.0]
    before = grouped.ends[grouped.ends < 501]
    after = grouped.starts[grouped.starts > 501]
    assert before.max() == 500 and after.min() == 502
    assert len(before) + len(after) == len(grouped.starts)
