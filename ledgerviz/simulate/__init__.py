"""A deterministic reference agent loop with fault injection that writes real dsh ledgers.

It imports only the standard library and :mod:`ledgerviz.recovery`, which it
uses exactly as a runtime would: a tracker observes every committed event, a
failed step is closed with the live-recovery closers, and a restart appends
the crash or fork closers.
"""

from __future__ import annotations

from ledgerviz.simulate.scenarios import (
    SCENARIOS,
    Scenario,
    UnknownScenario,
    get_scenario,
    write_scenario,
)

__all__ = ["SCENARIOS", "Scenario", "UnknownScenario", "get_scenario", "write_scenario"]
