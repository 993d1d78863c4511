"""Export a projected context in provider request shapes and check tool-call pairing.

OpenAI chat completions: ``system`` / ``developer`` / ``user`` / ``assistant`` (with
``tool_calls``) / ``tool`` messages. Anthropic messages: a ``system`` string plus
alternating user/assistant turns with ``tool_use`` / ``tool_result`` blocks.
Reasoning blocks are dropped for both (they cannot be replayed without the
provider's own signatures); attachments become ``[image]``-style placeholders.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.events import (
    message_call_id,
    message_is_error,
    message_tool_call_blocks,
    result_content,
)

Provider = Literal["openai", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")
Seqs = tuple[int | None, ...]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """A request payload and, parallel to ``payload["messages"]``, the seqs each came from."""

    provider: Provider
    payload: dict[str, Any]
    seqs: list[Seqs]


@dataclass(frozen=True, slots=True)
class Problem:
    """A tool-call pairing rule the request breaks."""

    provider: Provider
    kind: Literal["missing_result", "orphan_result", "duplicate_result"]
    call_id: str | None
    message: int
    """Index in ``payload["messages"]`` of the offending (or unanswered) message."""
    seqs: Seqs
    detail: str


def block_text(blocks: Any) -> str:
    """Return the model-visible text of content blocks (reasoning dropped, nesting flattened)."""
    parts: list[str] = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool-result":
            parts.append(block_text(block.get("content")))
        elif kind in ("tool-addition", "tool-removal"):
            parts.append(f"[{kind}: {block.get('toolName')}]")
        elif kind not in ("reasoning", "tool-call"):
            parts.append(f"[{kind}]")
    return "\n".join(part for part in parts if part)


def _parsed_arguments(raw: Any) -> dict[str, Any]:
    """Anthropic wants an object: parsed JSON, or the raw text kept under ``_raw_arguments``."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"_raw_arguments": raw}


def _openai_entry(item: ContextMessage, full: bool = True) -> dict[str, Any]:
    """Return the OpenAI chat message of one context message (without ``full``: no text)."""
    message = item.message
    role = message.get("role")
    if item.is_tool_result:
        return {
            "role": "tool",
            "tool_call_id": message_call_id(message),
            "content": block_text(result_content(message)) if full else None,
        }
    if role != "assistant":
        return {
            "role": role if role in ("system", "developer") else "user",
            "content": block_text(message.get("content")) if full else None,
        }
    entry: dict[str, Any] = {
        "role": "assistant",
        "content": (block_text(message.get("content")) or None) if full else None,
    }
    calls = message_tool_call_blocks(message)
    if calls:
        entry["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {"name": c.get("name"), "arguments": c.get("arguments")},
            }
            for c in calls
        ]
    return entry


ExportMemo = dict[int, tuple[dict[str, Any], str, Any]]
"""What one provider's conversion made of each message (with the type of the event it came
from), by the message's ``id``; each entry keeps its message alive, so an id is never reused
while it is held."""


def _converted(convert: Callable[[ContextMessage], T], memo: ExportMemo | None
               ) -> Callable[[ContextMessage], T]:
    """Return ``convert``, remembering its result per message in ``memo`` when one is given."""
    if memo is None:
        return convert
    held_for = memo.get

    def remembered(item: ContextMessage) -> T:
        message = item.message
        held = held_for(id(message))
        if held is None or held[0] is not message or held[1] != item.event_type:
            held = memo[id(message)] = (message, item.event_type, convert(item))
        return held[2]

    return remembered


def to_openai(messages: Sequence[ContextMessage], memo: ExportMemo | None = None,
              full: bool = True) -> ProviderRequest:
    """Return the context as an OpenAI chat-completions request (``memo``, ``full``: see
    ``export``)."""
    entry = _converted(_openai_entry if full else _openai_shape, memo)
    out = [entry(item) for item in messages]
    seqs: list[Seqs] = [(item.seq,) for item in messages]
    return ProviderRequest("openai", {"messages": out}, seqs)


def _openai_shape(item: ContextMessage) -> dict[str, Any]:
    """Return the OpenAI chat message of one context message without its texts."""
    return _openai_entry(item, full=False)


def _anthropic_blocks(item: ContextMessage, full: bool = True
                      ) -> tuple[str, list[dict[str, Any]]]:
    """Return the Anthropic role and content blocks of one context message (without
    ``full``: no result texts, tool arguments as recorded; text blocks are still there
    when the message has text, since that decides which messages the request keeps)."""
    message = item.message
    if item.is_tool_result:
        return "user", [
            {
                "type": "tool_result",
                "tool_use_id": message_call_id(message),
                "content": block_text(result_content(message)) if full else "",
                "is_error": message_is_error(message),
            }
        ]
    text = block_text(message.get("content"))
    blocks = [{"type": "text", "text": text}] if text else []
    if message.get("role") != "assistant":
        return "user", blocks
    blocks += [
        {
            "type": "tool_use",
            "id": c.get("id"),
            "name": c.get("name"),
            "input": _parsed_arguments(c.get("arguments")) if full else c.get("arguments"),
        }
        for c in message_tool_call_blocks(message)
    ]
    return "assistant", blocks


def _anthropic_shape(item: ContextMessage) -> tuple[str, list[dict[str, Any]]]:
    """Return :func:`_anthropic_blocks` without texts and parsed arguments."""
    return _anthropic_blocks(item, full=False)


def to_anthropic(messages: Sequence[ContextMessage], memo: ExportMemo | None = None,
                 full: bool = True) -> ProviderRequest:
    """Return the context as an Anthropic messages request (``memo``, ``full``: see
    ``export``).

    Leading system messages form ``system``; later system/developer messages become
    user text. Consecutive messages of one role merge into one turn (so consecutive
    tool results share a user turn); messages left without blocks are dropped.
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    sources: list[list[int | None]] = []  # lists while turns grow (a long turn stays linear)
    blocks_of = _converted(_anthropic_blocks if full else _anthropic_shape, memo)
    for item in messages:
        if not turns and item.message.get("role") == "system" and not item.is_tool_result:
            system.append(block_text(item.message.get("content")) if full else "")
            continue
        role, blocks = blocks_of(item)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
            sources[-1].append(item.seq)
        else:
            turns.append({"role": role, "content": list(blocks)})
            sources.append([item.seq])
    payload: dict[str, Any] = {"messages": turns}
    if system:
        payload["system"] = "\n\n".join(system)
    return ProviderRequest("anthropic", payload, [tuple(seqs) for seqs in sources])


def export(messages: Sequence[ContextMessage], provider: Provider,
           memo: ExportMemo | None = None, *, full: bool = True) -> ProviderRequest:
    """Return the context in ``provider``'s request shape.

    ``memo`` (one per provider and ``full``, kept by the caller) remembers what each
    message became, so exporting many overlapping contexts converts each message once;
    the payload then shares those parts with the memo and with other payloads: do not
    modify it. ``full`` False gives the request's shape only, all ``pairing_problems``
    reads (same messages, roles, ids and blocks): texts are left out and tool arguments
    stay as recorded.
    """
    if provider == "openai":
        return to_openai(messages, memo, full)
    if provider == "anthropic":
        return to_anthropic(messages, memo, full)
    raise ValueError(f"unknown provider {provider!r}; expected one of {PROVIDERS}")


def _openai_problems(request: ProviderRequest) -> list[Problem]:
    """Return the pairing problems of an OpenAI request: every assistant ``tool_calls`` id
    answered by a ``tool`` message before the next non-tool message, no stray answers."""
    problems: list[Problem] = []
    open_calls: dict[str, int] = {}
    answered: set[str] = set()

    def report_missing() -> None:
        for call_id, index in open_calls.items():
            problems.append(
                Problem(
                    "openai",
                    "missing_result",
                    call_id,
                    index,
                    request.seqs[index],
                    f"tool call {call_id!r} has no tool message after it",
                )
            )
        open_calls.clear()

    for index, message in enumerate(request.payload["messages"]):
        if message["role"] == "tool":
            call_id = message.get("tool_call_id")
            if call_id in open_calls:
                del open_calls[call_id]
                answered.add(call_id)
                continue
            kind = "duplicate_result" if call_id in answered else "orphan_result"
            problems.append(
                Problem(
                    "openai",
                    kind,
                    call_id,
                    index,
                    request.seqs[index],
                    f"tool message for {call_id!r} answers no open call",
                )
            )
            continue
        report_missing()
        for call in message.get("tool_calls") or ():
            open_calls[call["id"]] = index
    report_missing()
    return problems


def _anthropic_problems(request: ProviderRequest) -> list[Problem]:
    """Return the pairing problems of an Anthropic request: every ``tool_use`` answered once
    in the next user turn, no ``tool_result`` without a ``tool_use`` just before."""
    problems: list[Problem] = []
    turns = request.payload["messages"]
    requested: dict[str, int] = {}
    for index, turn in enumerate(turns):
        if turn["role"] == "assistant":
            requested = {b["id"]: index for b in turn["content"] if b["type"] == "tool_use"}
            following = turns[index + 1] if index + 1 < len(turns) else None
            answers = (
                {b["tool_use_id"] for b in following["content"] if b["type"] == "tool_result"}
                if following and following["role"] == "user"
                else set()
            )
            for call_id in requested:
                if call_id not in answers:
                    problems.append(
                        Problem(
                            "anthropic",
                            "missing_result",
                            call_id,
                            index,
                            request.seqs[index],
                            f"tool_use {call_id!r} has no tool_result in the next user turn",
                        )
                    )
            continue
        seen: set[str] = set()
        for block in turn["content"]:
            if block["type"] != "tool_result":
                continue
            call_id = block["tool_use_id"]
            if call_id in seen:
                kind, detail = "duplicate_result", f"tool_result {call_id!r} appears twice"
            elif call_id not in requested:
                kind, detail = "orphan_result", f"tool_result {call_id!r} follows no tool_use"
            else:
                seen.add(call_id)
                continue
            problems.append(
                Problem(
                    "anthropic",
                    kind,
                    call_id,
                    index,  # type: ignore[arg-type]
                    request.seqs[index],
                    detail,
                )
            )
        requested = {}
    return problems


def pairing_problems(request: ProviderRequest) -> list[Problem]:
    """Return every tool-call pairing problem of a provider request ([] when valid)."""
    if request.provider == "openai":
        return _openai_problems(request)
    return _anthropic_problems(request)
