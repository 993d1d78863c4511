"""Starting a session and restarting one after a crash, under a recovery policy."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from ledgerviz.recovery import crash_closers, fork_boundary, fork_seed
from ledgerviz.simulate.clock import SimClock
from ledgerviz.simulate.loop import (
    FORMAT_VERSION,
    AgentLoop,
    SessionIdentity,
    Spawner,
    read_committed,
)
from ledgerviz.simulate.writer import CrashPoint, LedgerWriter

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
    path: Path, identity: SessionIdentity, rng: random.Random, crashed_at: int
) -> AgentLoop:
    """Return a loop continuing the crashed ledger at ``path`` after startup repair.

    The restarted runtime reads the committed events, appends the recovery
    engine's crash closers, then ``session/end-seed {}``; its first request header
    has reason ``resume``.
    """
    events = read_committed(path)
    closers = crash_closers(events, generation="v4")
    clock = SimClock(crashed_at, rng)
    writer = LedgerWriter.reopen(path, events[-1]["seq"] + 1, clock)
    loop = AgentLoop(writer, identity, rng, last_turn=_last_turn(events), header_reason="resume")
    loop.restore(events)
    clock.advance(*RESTART_GAP_MS)
    for event in closers:
        writer.commit(event)
    writer.append("session/end-seed", {})
    return loop


def fork_session(
    parent_path: Path,
    child_path: Path,
    identity: SessionIdentity,
    rng: random.Random,
    crashed_at: int,
) -> AgentLoop:
    """Return a loop continuing a crashed ledger under the fork policy, in a new child file.

    The restarted runtime leaves the parent untouched and writes the recovery
    engine's fork seed over its boundary (the prefix before the first unresolved
    call, ``session/end-seed {"inherited": true}``, the ``forked`` closers) as the
    child ``<parent id>-fork``, created at the restart; the child's first request
    header has reason ``resume``. Raises ValueError when the parent has nothing to
    fork at (a runtime would crash-repair it instead).
    """
    events = read_committed(parent_path)
    boundary = fork_boundary(events, version=FORMAT_VERSION)
    if boundary is None:
        raise ValueError(f"{parent_path} has no unresolved call to fork at")
    clock = SimClock(crashed_at, rng)
    clock.advance(*RESTART_GAP_MS)
    child = replace(
        identity, id=f"{identity.id}-fork", created_at=clock.now, parent_session=identity.id
    )
    header, seed = fork_seed(
        identity.header(), events, boundary, session_id=child.id, created_at=child.created_at
    )
    writer = LedgerWriter.create(child_path, header, clock)
    for event in seed:
        writer.commit(event)
    loop = AgentLoop(writer, child, rng, last_turn=_last_turn(seed), header_reason="resume")
    loop.restore(seed)
    return loop


def _last_turn(events: list[dict[str, Any]]) -> int:
    return max((e["data"]["turn"] for e in events if e["type"] == "turn/start"), default=0)
