"""Where two sequences part: the first index at which they hold unequal items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def first_difference(old: Sequence[Any], new: Sequence[Any]) -> int:
    """Return the first index at which ``old`` and ``new`` hold unequal items (else the
    shorter one's length). An item equals itself (the same object, as list equality has it).

    Slices are compared whole (a loop in C), halving the stretch that holds the first
    difference each time, so long lists cost about one pass of C comparisons (and slice
    copies) wherever they part.
    """
    low, high = 0, min(len(old), len(new))
    while high - low > _SCAN_BELOW:  # old[:low] equals new[:low]; any difference is before high
        middle = (low + high) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle
    return next((i for i in range(low, high) if not (old[i] is new[i] or old[i] == new[i])),
                high)


_SCAN_BELOW = 32
"""The length of the stretch :func:`first_difference` scans item by item."""
