"""Claude Code session records: each decoded line checked into a ``Record`` (stdlib).

Claude Code has no published record spec; the kinds and fields read here are the ones
``/work/shared/FOREIGN_FORMATS.md`` §1 lists. A field of the wrong shape is a diagnostic
and reads as absent, never an exception.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from ledgerviz.ledger.diagnostics import DiagnosticSink
from ledgerviz.ledger.formats.foreign import not_an_object, string_field

CONVERSATION_KINDS = frozenset({"user", "assistant", "system"})
"""Record kinds that may carry model-visible messages."""
BOOKKEEPING_KINDS = frozenset({
    "summary", "progress", "attachment", "queue-operation", "file-history-snapshot",
    "custom-title", "agent-name", "ai-title", "tag", "pr-link", "agent-setting", "last-prompt",
})
"""Known kinds that never reach the model: kept as log-only events, not diagnosed."""
_KNOWN_KINDS = CONVERSATION_KINDS | BOOKKEEPING_KINDS
UNKNOWN = "unknown"
"""The kind of a record whose ``type`` is missing or not a string."""
FOREIGN = "foreign"
"""The kind of a line in another transcript format (dsh, Codex, Gemini)."""

REJECTION_PREFIXES = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action right now",
)
"""How Claude Code's fixed texts for a refused (or cancelled) tool call begin."""
INTERRUPT_PREFIX = "[Request interrupted by user"
INTERRUPT_FOR_TOOL = "[Request interrupted by user for tool use]"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAIVE_EPOCH = datetime(1970, 1, 1)
_MS = timedelta(milliseconds=1)
_CODEX_KINDS = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                          "compacted"})


class Record(NamedTuple):
    """One Claude Code line as the reader uses it."""

    line: int
    kind: str
    """``type`` (``user``, ``assistant``, ``system``, a bookkeeping kind, any other string),
    ``UNKNOWN`` or ``FOREIGN``."""
    raw: dict[str, Any]
    uuid: str | None
    parent: str | None
    """``parentUuid``; for a ``compact_boundary`` with none, its ``logicalParentUuid``."""
    time: int | None
    """``timestamp`` as epoch milliseconds."""
    session: str | None
    sidechain: bool
    message: dict[str, Any] | None
    """The ``message`` object of a user or assistant record."""
    prompt: bool
    """Whether the record starts a turn: a user record with typed text (no ``tool_result``),
    neither ``isMeta`` nor ``isCompactSummary`` nor an interrupt note."""


new_record = tuple.__new__
"""Builds a ``Record`` from its fields' tuple in one C call (the class's own ``__new__`` is
a Python function: a frame per record on the fast path)."""


def record_of(value: Any, line: int, log: DiagnosticSink) -> Record | None:
    """Return the ``Record`` of one decoded line (None, with an error, if not an object)."""
    if value.__class__ is dict:
        plain = _plain_record(value, line)
        if plain is not None:
            return plain
    return _checked_record(value, line, log)


def _plain_record(value: dict[str, Any], line: int) -> Record | None:
    """Return the ``Record`` of a line of a known kind whose fields all have their expected
    shapes (nothing to diagnose), or None for any other line (``_checked_record`` reads
    it, with its diagnostics): the fast path, one call per record."""
    kind = value.get("type")
    if kind.__class__ is not str or kind not in _KNOWN_KINDS or "projectHash" in value \
            or "$rewindTo" in value or "$set" in value:
        return None
    uuid, parent, session = value.get("uuid"), value.get("parentUuid"), value.get("sessionId")
    if not ((uuid is None or uuid.__class__ is str) and (session is None
            or session.__class__ is str) and parent.__class__ is str):
        return None  # a missing parentUuid may have a logicalParentUuid to check
    message = value.get("message")
    is_message = message.__class__ is dict
    if not is_message and (kind == "user" or kind == "assistant"):
        return None
    stamp = value.get("timestamp")
    if stamp is None:
        time = None
    elif stamp.__class__ is str:
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            return None
        time = (moment - (_EPOCH if moment.tzinfo is not None else _NAIVE_EPOCH)) // _MS
    else:
        return None
    return new_record(Record, (line, kind, value, uuid, parent, time, session,
                                value.get("isSidechain") is True,
                                message if is_message else None,
                                kind == "user" and is_message and _is_prompt(value, message)))


def _checked_record(value: Any, line: int, log: DiagnosticSink) -> Record | None:
    """Return the ``Record`` of one decoded line, diagnosing every field of a wrong shape
    (None, with an error, if the line is not an object)."""
    if not isinstance(value, dict):
        not_an_object(log, line, value)
        return None
    kind = value.get("type")
    if _is_foreign(value, kind):
        log.add(line, "mixed_format", "line is in another transcript format (dsh, Codex or "
                "Gemini): kept as a log-only event", "warning")
        kind = FOREIGN
    elif not isinstance(kind, str):
        log.add(line, "wrong_shape", "record has no string 'type': kept as a log-only event",
                "warning")
        kind = UNKNOWN
    parent = string_field(value, "parentUuid", line, log)
    if parent is None and kind == "system" and value.get("subtype") == "compact_boundary":
        parent = string_field(value, "logicalParentUuid", line, log)
    message = value.get("message")
    if kind in ("user", "assistant") and not isinstance(message, dict):
        log.add(line, "wrong_shape", f"{kind} record has no 'message' object: kept as a "
                "log-only event", "warning")
        message = None
    return Record(
        line,
        kind,
        value,
        string_field(value, "uuid", line, log),
        parent,
        _time(value.get("timestamp"), line, log),
        string_field(value, "sessionId", line, log),
        value.get("isSidechain") is True,
        message if isinstance(message, dict) else None,
        kind == "user" and isinstance(message, dict) and _is_prompt(value, message),
    )


def content_blocks(message: dict[str, Any] | None) -> list[Any]:
    """Return a message's content as a list of blocks (a string is one text block)."""
    content = message.get("content") if message is not None else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def block_text(block: Any) -> str:
    """Return the text of a text block, or of a tool_result's content (else "")."""
    if not isinstance(block, dict):
        return ""
    if block.get("type") == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block_text(part) for part in content)
    return ""


def tool_results(record: Record) -> list[dict[str, Any]]:
    """Return the ``tool_result`` blocks of a user record."""
    return [b for b in content_blocks(record.message)
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def _is_prompt(raw: dict[str, Any], message: dict[str, Any]) -> bool:
    """Return whether a user record's ``raw`` fields and ``message`` start a turn."""
    if raw.get("isMeta") is True or raw.get("isCompactSummary") is True:
        return False
    content = message.get("content")
    if content.__class__ is str:  # one text block
        return not content.startswith(INTERRUPT_PREFIX)
    first: str | None = None  # the first text block's text
    for block in content_blocks(message):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_result":
            return False
        if kind == "text" and first is None:
            first = block_text(block)
    return first is not None and not first.startswith(INTERRUPT_PREFIX)


def is_rejection(block: dict[str, Any]) -> bool:
    """Return whether a tool_result is Claude Code's fixed refusal (an error whose text
    begins with one of ``REJECTION_PREFIXES``)."""
    return block.get("is_error") is True and block_text(block).startswith(REJECTION_PREFIXES)


def _is_foreign(value: dict[str, Any], kind: Any) -> bool:
    """Return whether a line is a dsh, Codex or Gemini line rather than a Claude Code one."""
    if "projectHash" in value or "$rewindTo" in value or "$set" in value:
        return True  # Gemini
    if not isinstance(kind, str):
        return False
    if kind == "session" and "version" in value:
        return True  # a dsh header
    return ("/" in kind and "data" in value) or (kind in _CODEX_KINDS and "payload" in value)


def _time(value: Any, line: int, log: DiagnosticSink) -> int | None:
    """Return an ISO 8601 ``timestamp`` as epoch milliseconds (naive: UTC); a value that is
    not one is a warning and reads as absent."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        log.add(line, "wrong_shape", "'timestamp' is not an ISO 8601 time: ignored", "warning")
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MS
