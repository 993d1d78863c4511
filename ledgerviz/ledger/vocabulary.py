"""What the dsh session format allows: versions, header keys, event types, surface types."""

from __future__ import annotations

KNOWN_VERSIONS: frozenset[int] = frozenset({0, 1, 2, 3, 4})

HEADER_KEYS: frozenset[str] = frozenset(
    {
        "type",
        "version",
        "id",
        "createdAt",
        "cwd",
        "parentSession",
        "isSeeded",
        "seedLength",
        "origin",
        "delegationDepth",
        "agentPreset",
    }
)

KNOWN_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "assistant/attempt",
        "assistant/chunk",
        "assistant/message",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "deliverables/presented",
        "developer/message",
        "feedback/message-delete",
        "feedback/message-put",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "image/offload",
        "llm/retry",
        "llm/retry-started",
        "model/selection",
        "permission/preset",
        "plan/mode",
        "request/context",
        "request/header",
        "sandbox/mode",
        "schedule/change",
        "session-log-deepseek/delivery-accepted",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "slots/dispatch",
        "step/end",
        "step/start",
        "subagent/catalog",
        "subagent/descriptor",
        "subagent/model-selection-policy",
        "surface/restore",
        "surface/rewind",
        "system/message",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/call",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "tool/ptc-dispatch",
        "tool/ptc-dispatch-start",
        "tool/result",
        "turn/end",
        "turn/start",
        "user/message",
        "web/deepseek-search-llm-request",
        "workspace/changes",
    }
)

CHUNK_EVENT = "assistant/chunk"
"""The event type of v0/v1 only (v2 moved streams into ``assistant/message``)."""

PACKED_CHUNK_ROWS: dict[str, str] = {
    "text-chunks": "text-delta",
    "reasoning-chunks": "reasoning-delta",
    "tool-call-chunks": "tool-call-delta",
}
"""Physical rows standing for runs of ``assistant/chunk`` events, by chunk type (v0/v1
writers; the runtime expands them in every version)."""

_SURFACE_V0 = frozenset({"user/message", "assistant/message", "tool/result"})
_SURFACE_V3 = _SURFACE_V0 | {"system/message"}
_SURFACE_V4 = _SURFACE_V3 | {"developer/message"}


def surface_types(version: int | None) -> frozenset[str]:
    """Return the event types that carry ``surfaceOp`` in this format version."""
    if version is None or version < 3:
        return _SURFACE_V0
    return _SURFACE_V3 if version == 3 else _SURFACE_V4
