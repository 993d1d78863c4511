"""The engine's vocabulary, written once: policies, branches, call statuses and the reasons
for them as ``Literal`` types and the tuples of their values (in display order), for every
layer to import (``ledger/`` too: it is stdlib).

``StatusReason`` says why a call has the status it has. A format's reader names a reason
where its file proves more than the events show (``SessionLog.call_reasons``, read for a
call whose result the events hold); otherwise the ``calls`` frame derives one from the
analysis:

- ``answered``: a result the tool (or the agent) recorded: ``ok`` or ``error``;
- ``synthetic closer``: a recovery result a runtime wrote into the file
  (``TOOL_OUTCOME_UNKNOWN`` or ``TOOL_NOT_STARTED``);
- ``no result in a closed step``: the step, or its turn, was closed with the call unanswered;
- ``no result at end of file``: the file ends with the call unanswered (a crash, or a
  session still running); the synthesize policy's closer for it keeps this reason;
- ``rejected by user``: the user refused the call before it ran (``not_started``);
- ``interrupted mid-run``: the file records a rejection, but also shows the tool running
  (an interrupt), so it may have acted (``outcome_unknown``);
- ``aborted``: its turn was aborted (the runtime says so, e.g. a Codex ``turn_aborted``)
  with the call unanswered, so it may have been running (``outcome_unknown``);
- ``rolled back``: the turn that requested it was taken back (a Codex rollback, a Gemini
  rewind) before any result came;
- ``denied by policy``: an error result whose text shows a policy refused the call, so it
  never ran (Gemini).

The marks of what recovery wrote (the codes of its tool results, the id prefixes of its
result messages, the reasons of its turn ends) and the encodings of the columnar event table
the reader fills and the engine reads (``MISSING``, ``SURFACE_OPS``) are here too.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

Policy = Literal["recorded", "synthesize", "fork"]
Branch = Literal["active", "abandoned", "log"]
CallStatus = Literal["ok", "error", "outcome_unknown", "not_started"]
StatusReason = Literal[
    "answered",
    "synthetic closer",
    "no result in a closed step",
    "no result at end of file",
    "rejected by user",
    "interrupted mid-run",
    "aborted",
    "rolled back",
    "denied by policy",
]

POLICIES: Final[tuple[Policy, ...]] = get_args(Policy)
BRANCHES: Final[tuple[Branch, ...]] = get_args(Branch)
CALL_STATUSES: Final[tuple[CallStatus, ...]] = get_args(CallStatus)
STATUS_REASONS: Final[tuple[StatusReason, ...]] = get_args(StatusReason)
OPEN_STATUSES: Final[tuple[CallStatus, ...]] = ("outcome_unknown", "not_started")
"""The statuses of calls whose outcome no recorded result settles."""

UNKNOWN_CODE: Final = "TOOL_OUTCOME_UNKNOWN"
"""The ``error.code`` of a tool result that says the call may have run (outcome unknown)."""
NOT_STARTED_CODE: Final = "TOOL_NOT_STARTED"
"""The ``error.code`` of a tool result that says the call never ran."""

RECOVERY_CODES: Final = frozenset({UNKNOWN_CODE, NOT_STARTED_CODE})
"""The ``error.code`` values of the tool results recovery writes."""
SYNTHETIC_ID_PREFIXES: Final = ("interrupted-tool-result-", "forked-tool-result-")
"""The prefixes of the message ids of the tool results recovery writes."""
SYNTHETIC_END_KINDS: Final = frozenset({"interrupted", "forked"})
"""The ``reason.kind`` values of the ``turn/end`` events recovery writes."""

MISSING: Final = -(1 << 63)
"""What an integer column holds where the event has no integer it can hold (absent, null,
another type, beyond int64): the scan reads the event itself there."""

SURFACE_OPS: Final = ("", "append", "replace", "other")
"""The codes of a ``surface_op`` column: 0 none, 1 ``"append"``, 2 a ``{"op": "replace"}``
object, 3 anything else (the raw value is in the event)."""
