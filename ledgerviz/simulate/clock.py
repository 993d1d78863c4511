"""A simulated millisecond clock: event times come from here, never from the wall clock."""

from __future__ import annotations

import random


class SimClock:
    """Epoch-millisecond time that only moves when the simulation moves it."""

    def __init__(self, start_ms: int, rng: random.Random) -> None:
        self.now = start_ms
        self._rng = rng

    def advance(self, low_ms: int, high_ms: int | None = None) -> int:
        """Move forward ``low_ms`` (or a seeded amount up to ``high_ms``); return the new time."""
        step = low_ms if high_ms is None else self._rng.randint(low_ms, high_ms)
        self.now += step
        return self.now

    def advance_to(self, time_ms: int) -> int:
        """Move forward to ``time_ms`` (never backwards); return the new time."""
        self.now = max(self.now, time_ms)
        return self.now
