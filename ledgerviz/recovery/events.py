"""Accessors for plain ledger event dicts: an event's envelope, and its payload's facts read
with ``recovery.payload``, the one place that knows where each fact lives."""

from __future__ import annotations

from typing import Any, Literal

from ledgerviz.recovery.payload import (
    message_in,
    payload_end_reason_kind,
    payload_result_call_id,
    payload_result_facts,
    payload_tool_call_blocks,
)

Event = dict[str, Any]
Generation = Literal["v0-v3", "v4"]


def seq_of(event: Event, index: int) -> int:
    """Return the event's seq; a normalised snapshot has none, so it is the event's index."""
    return event.get("seq", index)


SOURCE_SEQS_LIMIT = 1_000_000
"""The most seqs ``source_seqs`` expands for an event without an integer seq."""


def source_seqs(event: Event) -> list[int]:
    """Return the decoded ``sourceEventSeqs`` (``[a, b]`` pairs expand to a..b); [] if absent.

    What a hostile list can cost is bounded: an event cites only earlier seqs, each
    once, so it expands to at most ``seq`` entries (``SOURCE_SEQS_LIMIT`` when the
    event has no seq). Raises ``ValueError`` (only) for a list that is not made of
    integers and ``[first, last]`` pairs, a pair that runs backwards, or one that would
    expand beyond that bound.
    """
    stored = event.get("sourceEventSeqs")
    if stored is None:
        return []
    if stored.__class__ is not list:
        raise ValueError(f"sourceEventSeqs must be a list, not {type(stored).__name__}")
    seq = event.get("seq")
    bound = seq if seq.__class__ is int and seq >= 0 else SOURCE_SEQS_LIMIT
    decoded: list[int] = []
    for entry in stored:
        if entry.__class__ is int:
            decoded.append(entry)
            continue
        if not (entry.__class__ is list and len(entry) == 2
                and all(value.__class__ is int for value in entry)):
            raise ValueError(f"sourceEventSeqs entry {entry!r:.60} is not a seq or a [first, last]"
                             " pair of seqs")
        first, last = entry
        if last < first:
            raise ValueError(f"sourceEventSeqs range {entry} runs backwards")
        if len(decoded) + (last - first + 1) > bound:
            raise ValueError(f"sourceEventSeqs range {entry} expands beyond the {bound} seqs "
                             f"an event at seq {seq} can cite")
        decoded.extend(range(first, last + 1))
    if len(decoded) > bound:
        raise ValueError(f"sourceEventSeqs lists {len(decoded)} seqs, more than the {bound} "
                         f"an event at seq {seq} can cite")
    return decoded


def generation_for(version: int | None) -> Generation:
    """Return the closer generation of a header version: 4 and up -> "v4", else "v0-v3"."""
    return "v4" if version is not None and version >= 4 else "v0-v3"


def data_of(event: Event) -> dict[str, Any]:
    """Return the event's ``data`` payload ({} when absent or not an object)."""
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def message_of(event: Event) -> dict[str, Any] | None:
    """Return the model message an event carries (user/message: its data), or None."""
    return message_in(event.get("type"), data_of(event))


def tool_call_blocks(event: Event) -> list[dict[str, Any]]:
    """Return the ``tool-call`` content blocks of an assistant/message event, in order."""
    return payload_tool_call_blocks(data_of(event))


def result_call_id(event: Event) -> str | None:
    """Return the call id a tool/result answers (v0-v3 wrapper or v4 tool-role form)."""
    return payload_result_call_id(data_of(event))


def result_error_code(event: Event) -> str | None:
    """Return ``data.error.code`` of a tool/result, or None."""
    error = data_of(event).get("error")
    return error.get("code") if isinstance(error, dict) else None


def result_facts(event: Event) -> tuple[str | None, str | None, bool, bool]:
    """Return (call id, error code, is_error, synthetic) of a tool/result."""
    return payload_result_facts(data_of(event))


def end_reason_kind(event: Event) -> str | None:
    """Return ``data.reason.kind`` of a turn/end, or None."""
    return payload_end_reason_kind(data_of(event))


def is_user_typed(event: Event) -> bool:
    """Return whether a user/message was typed by the human (``source.kind == "user"``)."""
    source = data_of(event).get("source")
    return isinstance(source, dict) and source.get("kind") == "user"
