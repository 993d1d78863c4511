"""The recovery engine: closers, fork policy, model-context projection (stdlib only).

Works on plain event dicts as decoded from JSON, never modifies them, and returns
new events, so an agent runtime can import it as it is.
"""

from __future__ import annotations

from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, Analysis, CallFacts
from ledgerviz.recovery.analyze import analyze, first_fork_point
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
from ledgerviz.recovery.fork import FORK_VERSION, ForkRefused, fork_boundary, fork_header, fork_seed
from ledgerviz.recovery.pairing import Problem, pairing_problems
from ledgerviz.recovery.prefixes import PrefixAnalyses
from ledgerviz.recovery.providers import PROVIDERS, ProviderRequest, export
from ledgerviz.recovery.tracker import PendingCall, PendingCalls

__all__ = [
    "DEFAULT_POLICY",
    "FORK_VERSION",
    "POLICIES",
    "PROVIDERS",
    "Analysis",
    "CallFacts",
    "ContextMessage",
    "ForkRefused",
    "PendingCall",
    "PendingCalls",
    "PrefixAnalyses",
    "Problem",
    "ProviderRequest",
    "analyze",
    "crash_closers",
    "export",
    "failed_step_closers",
    "first_fork_point",
    "fork_boundary",
    "fork_header",
    "fork_seed",
    "generation_for",
    "pairing_problems",
    "project_context",
    "result_call_id",
    "result_error_code",
    "seq_of",
    "source_seqs",
    "tool_call_blocks",
]
