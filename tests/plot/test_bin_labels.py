"""Bins outside the range shown: labelled where nothing redraws the figure, left unlabelled
(drawn only for the overview strip) where the host redraws every range it is moved to."""

from __future__ import annotations

import numpy as np

import ledgerviz
from ledgerviz.examples import example_path
from ledgerviz.plot.timeline import timeline_spec

VIEW = (10.5, 20.5)  # seqs 11-20 of the clean example (its events are seqs 0-30)


def bin_labels(redrawn: bool) -> tuple[list[str], list[str]]:
    """Return the labels of the event lane's bins inside and outside :data:`VIEW`."""
    ledger = ledgerviz.load(example_path("clean"))
    recovery = ledger.recovery("synthesize")
    spec = timeline_spec(recovery.frames, session=ledger.keys[0], policy="synthesize",
                         detail_limit=1, x_range=VIEW, redrawn=redrawn)
    inside, outside = [], []
    for trace in spec["data"]:
        if not trace["name"].startswith(("event the model sees (", "log-only event (")):
            continue
        starts, ends = np.asarray(trace["x"][0::3]), np.asarray(trace["x"][1::3])
        for start, end, label in zip(starts, ends, trace["hovertext"][0::3], strict=True):
            overlaps = max(start, end) >= VIEW[0] and start <= VIEW[1]
            (inside if overlaps else outside).append(label)
    return inside, outside


def test_a_static_figure_labels_every_bin() -> None:
    inside, outside = bin_labels(redrawn=False)
    assert inside and outside
    assert all(label.endswith("<i>grouped at this scale</i>") for label in inside + outside)


def test_a_redrawn_figure_labels_only_the_bins_in_view() -> None:
    inside, outside = bin_labels(redrawn=True)
    assert inside and outside
    assert all(label.endswith("<i>grouped: zoom in to see each</i>") for label in inside)
    assert outside == [""] * len(outside)
