"""Export a projected context in provider request shapes and check tool-call pairing.

OpenAI chat completions: ``system`` / ``developer`` / ``user`` / ``assistant`` (with
``tool_calls``) / ``tool`` messages. Anthropic messages: a ``system`` string plus
alternating user/assistant turns with ``tool_use`` / ``tool_result`` blocks.
Reasoning blocks are dropped for both (they cannot be replayed without the
provider's own signatures); attachments become ``[image]``-style placeholders.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.nesting import flat_blocks, nests_deeper
from ledgerviz.recovery.pairing import Seqs
from ledgerviz.recovery.payload import (
    message_call_id,
    message_is_error,
    message_tool_call_blocks,
    result_content,
)

Provider = Literal["openai", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """A request payload and, parallel to ``payload["messages"]``, the seqs each came from."""

    provider: Provider
    payload: dict[str, Any]
    seqs: list[Seqs]


def block_text(blocks: Any) -> str:
    """Return the model-visible text of content blocks (reasoning dropped, nesting flattened)."""
    return "\n".join(part for part in _text_parts(blocks) if part)


def has_text(blocks: Any) -> bool:
    """Return whether :func:`block_text` of ``blocks`` is not empty, without making it."""
    return any(_text_parts(blocks))


def _text_parts(blocks: Any) -> Iterator[str]:
    """Yield the model-visible text of each content block, in order, nested results' parts
    in their place ("" for a block that shows none)."""
    for block in flat_blocks(blocks):
        kind = block.get("type")
        if kind == "text":
            yield str(block.get("text", ""))
        elif kind in ("tool-addition", "tool-removal"):
            yield f"[{kind}: {block.get('toolName')}]"
        elif kind not in ("reasoning", "tool-call"):
            yield f"[{kind}]"


def _parsed_arguments(raw: Any) -> dict[str, Any]:
    """Anthropic wants an object: parsed JSON, or the raw text kept under ``_raw_arguments``
    (also when it nests deeper than ``nesting.MAX_ARGUMENT_DEPTH``: the reader warns)."""
    try:
        value = json.loads(raw) if isinstance(raw, str) and not nests_deeper(raw) else raw
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
    ``full``: no texts, tool arguments as recorded; an empty text block stands where the
    message has text, since that decides which messages the request keeps)."""
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
    content = message.get("content")
    if full:
        text = block_text(content)
        blocks = [{"type": "text", "text": text}] if text else []
    else:
        blocks = [{"type": "text", "text": ""}] if has_text(content) else []
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
    blocks_of = _converted(_anthropic_blocks if full else _anthropic_shape, memo)
    turns = anthropic_turns(messages, map(blocks_of, messages), system, full=full)
    payload: dict[str, Any] = {"messages": turns.turns}
    if system:
        payload["system"] = "\n\n".join(system)
    return ProviderRequest("anthropic", payload, turns.seqs())


@dataclass(slots=True)
class AnthropicTurns:
    """Anthropic turns merged from context messages, with where each began."""

    turns: list[dict[str, Any]]
    sources: list[list[int | None]]
    """The seqs of each turn's messages (lists while turns grow: a long turn stays linear)."""
    starts: list[int]
    """The index (among the messages given) of each turn's first message."""

    def seqs(self) -> list[Seqs]:
        """Return the seqs of each turn's messages."""
        return [tuple(seqs) for seqs in self.sources]


def anthropic_turns(messages: Sequence[ContextMessage], shapes: Iterable[tuple[str, list[T]]],
                    system: list[str] | None, *, full: bool = True,
                    after_turns: bool = False) -> AnthropicTurns:
    """Return the Anthropic turns of ``messages``, given the role and content blocks of each
    (``shapes``, in step with ``messages``): leading system messages go to ``system`` (their
    texts, or "" without ``full``; None: not kept) unless ``after_turns`` (the messages follow
    turns already made); consecutive messages of one role merge; messages without blocks are
    dropped."""
    merged = AnthropicTurns([], [], [])
    turns, sources = merged.turns, merged.sources
    for index, (item, (role, blocks)) in enumerate(zip(messages, shapes, strict=True)):
        if (not turns and not after_turns and item.message.get("role") == "system"
                and not item.is_tool_result):
            if system is not None:
                system.append(block_text(item.message.get("content")) if full else "")
            continue
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
            sources[-1].append(item.seq)
        else:
            turns.append({"role": role, "content": list(blocks)})
            sources.append([item.seq])
            merged.starts.append(index)
    return merged


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


