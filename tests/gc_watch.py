"""Record the garbage collections that start while a block runs (tests that a pause holds)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collections_started() -> Iterator[list[int]]:
    """Yield a list that receives the generation of every collection started in the block;
    the young count is reset first, so one comes every 700 new objects while enabled."""
    collections: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        yield collections
    finally:
        gc.callbacks.remove(record)
