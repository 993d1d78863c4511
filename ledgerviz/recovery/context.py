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


ProjectionMemo = dict[int, tuple[dict[str, Any], int | None, "ContextMessage | None"]]
"""What each event projected to, by the event's ``id``; each entry keeps its event alive."""


def _projected(event: dict[str, Any], seq: int | None) -> ContextMessage | None:
    """Return the context message of one surface event, or None when it produces none."""
    message = message_of(event)
    if message is None:
        return None
    kind = event.get("type")
    if kind in _SKIPPED_WHEN_EMPTY and not message.get("content"):
        return None
    return ContextMessage(seq, kind, message)


def project_context(analysis: Analysis, memo: ProjectionMemo | None = None
                    ) -> list[ContextMessage]:
    """Return the messages the next model request would contain under the analysis' policy.

    Surface order (§6), active branch only; system, developer and assistant nodes with
    empty content keep their place but produce no message. ``memo`` (kept by the caller)
    remembers each event's message, so projecting many overlapping analyses (cuts of one
    session) reads each event once.
    """
    events, seqs = analysis.events, analysis.seqs
    if memo is None:
        projected = (_projected(events[key], seqs[key]) for key in analysis.surface)
        return [message for message in projected if message is not None]
    messages: list[ContextMessage] = []
    for key in analysis.surface:
        event, seq = events[key], seqs[key]
        held = memo.get(id(event))
        if held is None or held[0] is not event or held[1] != seq:
            held = memo[id(event)] = (event, seq, _projected(event, seq))
        if held[2] is not None:
            messages.append(held[2])
    return messages
