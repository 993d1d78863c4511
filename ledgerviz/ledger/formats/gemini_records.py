"""What one Gemini CLI chat record's fields are in the dsh event model (``FOREIGN_FORMATS.md``
§3, §4): a message's content blocks, its calls, what each call's status proves, its usage.
The dict route (``gemini.py``), the typed route (``gemini_columns.py``) and the derived
events (``gemini_events.py``) map a record with these alike."""

from __future__ import annotations

import re
from typing import Any

from ledgerviz.ledger.formats.foreign import (
    DENIED_BY_POLICY,
    INTERRUPTED,
    REJECTED,
    as_dict,
    as_list,
    as_text,
    text_block,
)
from ledgerviz.recovery.nesting import visible_text
from ledgerviz.recovery.vocab import NOT_STARTED_CODE, UNKNOWN_CODE, StatusReason

LOG_ONLY_TYPES = frozenset({"info", "warning", "error"})
NOT_RUN_STATUSES = frozenset({"validating", "scheduled", "awaiting_approval"})
"""Call statuses that prove the tool had not started when the record was written."""
WITHOUT_RESULT = NOT_RUN_STATUSES | {"executing"}
"""The call statuses gemini-cli writes that give a call no result."""
DENIED = re.compile(r"denied by policy|policy (?:denied|blocked)|user (?:denied|rejected|did "
                    r"not allow)|not allowed by (?:the )?policy", re.IGNORECASE)


def ran(call: dict[str, Any]) -> bool:
    """Whether a call may have started: not waiting to run, nor cancelled by a denial."""
    status = call.get("status")
    return may_have_run(status, result_of(status, result_text(call))
                        if status == "cancelled" else None)


def may_have_run(status: Any, result: Result | None) -> bool:
    """Whether a call of ``status`` may have started, given what that status proves of its
    result (``result_of``): it is not waiting to run, nor shown never to have started."""
    return status not in NOT_RUN_STATUSES and (result is None or result[1] != NOT_STARTED_CODE)


def reply_blocks(thoughts: Any, content: Any) -> list[dict[str, Any]]:
    """Return the content blocks of a ``gemini`` message before its calls: each of its
    ``thoughts`` as reasoning, then its ``content``'s blocks."""
    blocks = []
    for thought in as_list(thoughts):
        thought = as_dict(thought)
        text = ": ".join(as_text(thought.get(k)) for k in ("subject", "description")
                         if thought.get(k))
        blocks.append({"type": "reasoning", "text": text})
    blocks.extend(content_blocks(content))
    return blocks


def requested_calls(tool_calls: Any, message_id: str) -> list[tuple[dict[str, Any], str]]:
    """Return each call of a message's ``toolCalls`` (one of another shape: empty) and its
    id (one made of the message's where it has none)."""
    calls = [as_dict(call) for call in as_list(tool_calls)]
    return [(call, call["id"] if isinstance(call.get("id"), str)
             else f"{message_id}-call-{number}") for number, call in enumerate(calls)]


Result = tuple[bool, str | None, StatusReason | None]
"""What a call's status proves of its result: whether it is an error, its code, the reason
of the call's status."""


def outcome_of(call: dict[str, Any]) -> tuple[str, Result | None, bool]:
    """Return a call's result text, what its status proves of its result (None: it has
    none, ``result_of``) and whether that status is one gemini-cli does not write."""
    status = call.get("status")
    text = result_text(call)
    result = result_of(status, text)
    return text, result, result is None and status not in WITHOUT_RESULT


def result_of(status: Any, text: str) -> Result | None:
    """Return what a call's ``status`` (its result's ``text`` beside it) proves of its
    result (FOREIGN_FORMATS §4): whether it is an error, its code and the reason of its
    status; None: the call has no result."""
    if status == "success":
        return False, None, None
    if status == "error":
        return True, None, DENIED_BY_POLICY if DENIED.search(text) else None
    if status == "cancelled":
        if DENIED.search(text):
            return False, NOT_STARTED_CODE, REJECTED
        return False, UNKNOWN_CODE, INTERRUPTED
    return None


def content_text(content: Any) -> str:
    """Return the visible text of a Gemini ``PartListUnion`` (``content_blocks``'), a string
    read directly."""
    if content.__class__ is str:
        return content
    return visible_text(content_blocks(content))


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """Return dsh content blocks of a Gemini ``PartListUnion`` (text parts as text, other
    parts as their first key, e.g. ``inlineData``)."""
    if isinstance(content, str):
        return [text_block(content)] if content else []
    parts = content if isinstance(content, list) else [content]
    blocks = []
    for part in parts:
        if isinstance(part, str):
            blocks.append(text_block(part))
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and not part.get("thought"):
                blocks.append(text_block(part["text"]))
            elif part and "text" not in part:
                blocks.append({"type": f"plugin:gemini-{as_text(next(iter(part)))}"})
    return blocks


def result_text(call: dict[str, Any]) -> str:
    """Return a call's result as text (``parts_text`` of its ``result``)."""
    return parts_text(call.get("result"), call.get("resultDisplay"))


def parts_text(result: Any, display: Any) -> str:
    """Return a call's ``result`` as text: its ``functionResponse`` outputs, else its
    ``resultDisplay``."""
    texts = []
    for part in result if isinstance(result, list) else [result]:
        part = as_dict(part)
        response = as_dict(as_dict(part.get("functionResponse")).get("response"))
        if response:
            texts.append(as_text(response.get("output", response.get("error", response))))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts) or as_text(display)


def usage_of(tokens: dict[str, Any]) -> dict[str, int]:
    """Return dsh usage of a Gemini ``tokens`` record (its ``input`` includes ``cached``)."""
    counts = token_counts(tokens)
    if counts is None:
        return {}
    inputs, outputs, cached, thoughts, total = counts
    usage = {"inputTokens": inputs, "outputTokens": outputs, "cacheReadTokens": cached,
             "reasoningTokens": thoughts}
    if total is not None:
        usage["totalTokens"] = total
    return usage


TokenCounts = tuple[int, int, int, int, int | None]
"""A ``tokens`` record's input less cached, output, cached, thoughts and total counts."""


def token_counts(tokens: dict[str, Any]) -> TokenCounts | None:
    """Return the counts of a Gemini ``tokens`` record (``TokenCounts``; an absent count is
    0, an absent total None), or None when it holds no integer count."""
    counts = {key: value for key, value in tokens.items() if type(value) is int}
    if not counts:
        return None
    cached = counts.get("cached", 0)
    return (counts.get("input", 0) - cached, counts.get("output", 0), cached,
            counts.get("thoughts", 0), counts.get("total"))
