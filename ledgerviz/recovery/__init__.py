"""The recovery engine: closers, fork policy, model-context projection (stdlib only).

Works on plain event dicts as decoded from JSON, never modifies them, and returns
new events, so an agent runtime can import it as it is.
"""

from __future__ import annotations

from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, Analysis, CallFacts
from ledgerviz.recovery.analyze import analyze, fork_closers
from ledgerviz.recovery.closers import crash_closers, failed_step_closers
from ledgerviz.recovery.context import ContextMessage, project_context
from ledgerviz.recovery.events import (
    generation_for,
    result_call_id,
    result_error_code,
    seq_of,
    source_seqs,
    tool_call_blocks,
)
from ledgerviz.recovery.providers import (
    PROVIDERS,
    Problem,
    ProviderRequest,
    export,
    pairing_problems,
)
from ledgerviz.recovery.tracker import PendingCall, PendingCalls

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "PROVIDERS",
    "Analysis",
    "CallFacts",
    "ContextMessage",
    "PendingCall",
    "PendingCalls",
    "Problem",
    "ProviderRequest",
    "analyze",
    "crash_closers",
    "export",
    "failed_step_closers",
    "fork_closers",
    "generation_for",
    "pairing_problems",
    "project_context",
    "result_call_id",
    "result_error_code",
    "seq_of",
    "source_seqs",
    "tool_call_blocks",
]
