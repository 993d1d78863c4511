"""The explorer's one-line summary of what a policy does at the chosen crash point."""

from __future__ import annotations

from ledgerviz.recovery.analysis import Analysis
from ledgerviz.wording import counted


def crash_summary(analysis: Analysis, crash_point: int, total: int) -> str:
    """Return one line of plain text: the crash point and the policy's closers, fork points and
    abandoned events."""
    where = (
        f"whole ledger ({counted(total, 'event')})"
        if crash_point == total
        else f"process died after event {crash_point} of {total}"
    )
    forks = ", ".join(f"seq {seq}" for seq in analysis.fork_points) or "none"
    return (
        f"{where} · {analysis.policy}: {counted(len(analysis.closers), 'closer')} · "
        f"fork points: {forks} · {counted(len(analysis.abandoned_seqs), 'abandoned event')}"
    )
