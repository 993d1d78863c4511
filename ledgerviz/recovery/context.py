"""The model context a policy projects: the messages of the next model request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgerviz.recovery.analysis import Analysis
from ledgerviz.recovery.events import message_of

_SKIPPED_WHEN_EMPTY = frozenset({"system/message", "developer/message", "assistant/message"})


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """One message of the projected context and the event it came from."""

    seq: int | None
    """Seq of the source event; None for a result recovery computed but never logged."""
    event_type: str
    message: dict[str, Any]
    """The message object exactly as recorded (not a copy: do not modify)."""

    @property
    def is_tool_result(self) -> bool:
        """Whether the message answers a tool call (either result form)."""
        return self.event_type == "tool/result"


def project_context(analysis: Analysis) -> list[ContextMessage]:
    """Return the messages the next model request would contain under the analysis' policy.

    Surface order (§6), active branch only; system, developer and assistant nodes with
    empty content keep their place but produce no message.
    """
    messages: list[ContextMessage] = []
    events, seqs = analysis.events, analysis.seqs
    for key in analysis.surface:
        event = events[key]
        message = message_of(event)
        if message is None:
            continue
        kind = event.get("type", "")
        if kind in _SKIPPED_WHEN_EMPTY and not message.get("content"):
            continue
        messages.append(ContextMessage(seqs[key], kind, message))
    return messages
