"""Under a mutation run (docs/testing.md), each mutant's tests run fastest first.

mutmut hands pytest a mutant's tests in no set order and stops at the first failure, so
a mutant that only slows the reader down (a prefilter that always says "maybe") would run
the large-file tests before the direct test that kills it, and be cut off as a timeout.
Ordering them by the durations mutmut recorded lets the cheap, exact tests decide first,
and hypothesis does not shrink a failing example (a mutant only needs to fail, and
shrinking one can outlast mutmut's time limit). Outside a mutation run nothing changes.

It also gives the memory tests their ``traced_peak`` fixture, and the tests of reads and opens
that could block their ``no_hang`` guard.
"""

from __future__ import annotations

import json
import os
import signal
import tracemalloc
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest
from hypothesis import Phase, settings

_MUTMUT_STATS = Path("mutmut-stats.json")  # mutmut runs its children inside mutants/

settings.register_profile(
    "mutation", phases=[Phase.explicit, Phase.reuse, Phase.generate], database=None
)


def _mutation_run() -> bool:
    return "MUTANT_UNDER_TEST" in os.environ  # set by mutmut in each child


def pytest_configure(config: pytest.Config) -> None:
    if _mutation_run():
        settings.load_profile("mutation")


@cache
def _recorded_durations() -> dict[str, float]:
    """mutmut's recorded test durations, read at most once per process (a child forked after
    they were read shares them)."""
    return json.loads(_MUTMUT_STATS.read_text())["duration_by_test"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if not _mutation_run() or not _MUTMUT_STATS.is_file():
        return
    durations = _recorded_durations()
    items.sort(key=lambda item: durations.get(item.nodeid, 0.0))


@pytest.fixture
def traced_peak() -> Callable[[Callable[[], object]], int]:
    """Return a function that runs its argument and gives the peak of the allocations
    traced meanwhile (the memory tests of the streamed readers and of ``check``)."""

    def peak(run: Callable[[], object]) -> int:
        tracemalloc.start()
        try:
            run()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    return peak


@pytest.fixture
def no_hang(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail instead of hanging when a read or an open blocks (a guard, not a timing): after
    the test module's ``HANG_SECONDS`` (20 unless it says)."""
    seconds = getattr(request.module, "HANG_SECONDS", 20)

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)
