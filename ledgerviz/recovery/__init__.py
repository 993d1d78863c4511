"""The recovery engine: closers, fork policy, model-context projection (stdlib only)."""

from __future__ import annotations

from ledgerviz.recovery.closers import crash_closers, failed_step_closers
from ledgerviz.recovery.events import (
    generation_for,
    result_call_id,
    result_error_code,
    seq_of,
    source_seqs,
    tool_call_blocks,
)
from ledgerviz.recovery.tracker import PendingCall, PendingCalls

__all__ = [
    "PendingCall",
    "PendingCalls",
    "crash_closers",
    "failed_step_closers",
    "generation_for",
    "result_call_id",
    "result_error_code",
    "seq_of",
    "source_seqs",
    "tool_call_blocks",
]
