"""Starting a session and restarting one after a crash, under a recovery policy."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Literal

from ledgerviz.recovery import crash_closers, fork_closers
from ledgerviz.simulate.clock import SimClock
from ledgerviz.simulate.loop import AgentLoop, SessionIdentity, Spawner, read_committed
from ledgerviz.simulate.writer import CrashPoint, LedgerWriter

ResumePolicy = Literal["synthesize", "fork"]
RESTART_GAP_MS = (20_000, 120_000)


def start_session(
    path: Path,
    identity: SessionIdentity,
    rng: random.Random,
    *,
    crash_point: CrashPoint | None = None,
    tear_after_crash: bool = False,
    spawner: Spawner | None = None,
) -> AgentLoop:
    """Return a loop writing a new ledger at ``path`` (header written, clock at ``createdAt``)."""
    clock = SimClock(identity.created_at, rng)
    writer = LedgerWriter.create(
        path, identity.header(), clock, crash_point=crash_point, tear_after_crash=tear_after_crash
    )
    return AgentLoop(writer, identity, rng, spawner=spawner)


def resume_session(
    path: Path, identity: SessionIdentity, rng: random.Random, crashed_at: int, policy: ResumePolicy
) -> AgentLoop:
    """Return a loop continuing the crashed ledger at ``path`` after startup repair.

    The restarted runtime reads the committed events, appends the recovery
    engine's closers for ``policy`` (crash closers for synthesize, fork closers
    for fork), then ``session/end-seed {}``; its first request header has
    reason ``resume``.
    """
    events = read_committed(path)
    closers = _closers_for(policy, events)
    clock = SimClock(crashed_at, rng)
    writer = LedgerWriter.reopen(path, events[-1]["seq"] + 1, clock)
    loop = AgentLoop(
        writer,
        identity,
        rng,
        last_turn=_last_turn(events),
        header_reason="resume",
        starts_series=policy == "fork",
    )
    loop.restore(events)
    clock.advance(*RESTART_GAP_MS)
    for event in closers:
        writer.commit(event)
    writer.append("session/end-seed", {})
    return loop


def _closers_for(policy: ResumePolicy, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if policy == "synthesize":
        return crash_closers(events, generation="v4")
    return fork_closers(events, generation="v4")


def _last_turn(events: list[dict[str, Any]]) -> int:
    return max((e["data"]["turn"] for e in events if e["type"] == "turn/start"), default=0)
