"""Pause Python's cyclic garbage collector while building large acyclic structures."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Return a context in which the cyclic GC does not run (restored on exit).

    Decoded JSON holds no reference cycles, yet millions of new dicts trigger
    repeated collections that cost more than the decoding itself. On exit the
    objects made inside are promoted straight to the oldest generation (see
    ``_promote_survivors``) instead of being traversed by the next young
    collection. Nested pauses leave the work to the outermost one.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _promote_survivors()
            gc.enable()


def _promote_survivors() -> None:
    """Move every tracked object into the oldest generation without a collection.

    ``gc.freeze`` then ``gc.unfreeze`` splices the generation lists in constant
    time; the objects stay collectable (a full collection still visits them), they
    only skip the young and middle collections. Skipped when the caller has frozen
    objects of its own, since unfreezing would release those too.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
