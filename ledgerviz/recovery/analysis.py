"""The result of running the recovery engine over one session: what each policy does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ledgerviz.recovery.vocab import POLICIES, Branch, CallStatus, Policy

__all__ = ["DEFAULT_POLICY", "POLICIES", "Analysis", "Branch", "CallFacts", "CallStatus", "Policy"]

DEFAULT_POLICY: Policy = "synthesize"
"""The policy every entry point (timeline, explorer, report, repair) uses unless told: what the
runtime does on resume today."""


class CallFacts(NamedTuple):
    """Everything the ledger (and the policy) says about one requested tool call.

    An immutable named tuple (cheap to build: analyze makes one per call).
    """

    call_id: str
    name: str | None
    arguments: str | None
    turn: int | None
    step: int | None
    requested_seq: int
    dispatched_seq: int | None
    result_seq: int | None
    status: CallStatus
    error_code: str | None
    is_error: bool
    branch: Branch
    settled: bool


@dataclass(slots=True)
class Analysis:
    """One session under one policy.

    ``events`` are the recorded events followed by the events the policy
    appends (with the results it puts into closed steps between them): a sequence that
    reads the caller's events in place (``recovery.runs.EventRuns``), not a copy; every
    list in the annotation block is parallel to ``events``.
    """

    policy: Policy
    generation: str
    events: Sequence[dict[str, Any]]
    seqs: list[int | None]
    branch: list[Branch]
    synthetic: list[bool]
    recorded: list[bool]
    recovery_code: list[str | None]
    calls: list[CallFacts]
    closers: list[dict[str, Any]] = field(default_factory=list)
    fork_points: list[int] = field(default_factory=list)
    abandoned_seqs: list[int] = field(default_factory=list)
    unanswered_in_closed_steps: list[str] = field(default_factory=list)
    surface: list[int] = field(default_factory=list)
    """Indices into ``events`` of the projected next model context, in surface order."""

    def __repr__(self) -> str:
        """Return a one-line summary (the events themselves are in ``events``)."""
        statuses: dict[str, int] = {}
        for call in self.calls:
            statuses[call.status] = statuses.get(call.status, 0) + 1
        calls = ", ".join(f"{n} {s}" for s, n in statuses.items()) or "none"
        forks = ", ".join(str(seq) for seq in self.fork_points[:5]) or "none"
        return (f"<Analysis policy={self.policy}: {len(self.events)} events, "
                f"{len(self.closers)} appended, fork points {forks}, "
                f"{len(self.abandoned_seqs)} abandoned; calls: {calls}>")
