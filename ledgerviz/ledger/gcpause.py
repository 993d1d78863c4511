"""Pause Python's cyclic garbage collector while building large acyclic structures."""

from __future__ import annotations

import gc
from types import TracebackType


class paused_gc:  # named as the function it replaces: ``with paused_gc():``
    """A context in which the cyclic GC does not run (restored on exit).

    Decoded JSON holds no reference cycles, yet millions of new dicts trigger
    repeated collections that cost more than the decoding itself. On exit the
    objects made inside are promoted straight to the oldest generation (see
    ``_promote_survivors``) instead of being traversed by the next young
    collection. Nested pauses leave the work to the outermost one. A class, not a
    generator: a load of many small files enters several per file.
    """

    __slots__ = ("_was_enabled",)

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._was_enabled:
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
