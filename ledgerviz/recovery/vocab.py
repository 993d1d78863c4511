"""The engine's vocabulary, written once: policies, branches and call statuses as ``Literal``
types and the tuples of their values (in display order), for every layer to import."""

from __future__ import annotations

from typing import Final, Literal, get_args

Policy = Literal["recorded", "synthesize", "fork"]
Branch = Literal["active", "abandoned", "log"]
CallStatus = Literal["ok", "error", "outcome_unknown", "not_started"]

POLICIES: Final[tuple[Policy, ...]] = get_args(Policy)
BRANCHES: Final[tuple[Branch, ...]] = get_args(Branch)
CALL_STATUSES: Final[tuple[CallStatus, ...]] = get_args(CallStatus)
OPEN_STATUSES: Final[tuple[CallStatus, ...]] = ("outcome_unknown", "not_started")
"""The statuses of calls whose outcome no recorded result settles."""
