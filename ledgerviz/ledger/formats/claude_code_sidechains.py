"""Inline sidechains of a Claude Code main transcript (older builds wrote a subagent's
records into the main file with ``isSidechain: true``): each read as a child session of
the main one, and anchored at the ``Task``/``Agent`` call that started it when the file
proves which (stdlib).

A sidechain is the records sharing one ``agentId`` (key ``agent-<agentId>``, as the
subagent file of newer builds is named), or without one, a ``parentUuid`` chain from a
root whose parent is no sidechain record (key ``<session>/sidechain-<n>``, n counting
such roots from 1 in file order). Anchors: a result whose ``toolUseResult`` names the
``agentId`` (``claude_code_events``); for a sidechain without one, its first prompt's
text equal to the ``prompt`` input of exactly one ``Task``/``Agent`` call of the main
session, and to no other sidechain's first prompt. Nothing else is taken as proof (a
root's ``parentUuid`` is null in these builds).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from ledgerviz.ledger.formats.claude_code_entries import Entry, RecordSource
from ledgerviz.ledger.formats.claude_code_records import block_text, content_blocks


def _key_pattern(key: str) -> bytes:
    """Return a regular expression matching ``key`` as a JSON string, each of its ASCII
    letters written as itself or as a ``\\u`` escape (hex digits in either case)."""
    parts = []
    for char in key:
        high, low = f"{ord(char):02x}"
        parts.append(rf"(?:{re.escape(char)}|\\u00{high}[{low}{low.upper()}])")
    return ('"' + "".join(parts) + '"').encode()


_SIDECHAIN_FLAG = re.compile(_key_pattern("isSidechain") + rb"[ \t\r\n]*:[ \t\r\n]*true")


def may_hold_sidechains(content: bytes) -> bool:
    """Return whether a transcript's bytes may hold a record with ``isSidechain: true``
    (False proves it holds none: the key, however escaped, never precedes ``true``)."""
    return _SIDECHAIN_FLAG.search(content) is not None


class Sidechain(NamedTuple):
    """One inline sidechain: its session key, its records in file order, and whether
    they name their ``agentId``."""

    key: str
    records: list[Entry]
    named: bool


def split_sidechains(records: Sequence[Entry], session: str
                     ) -> tuple[list[Entry], list[Sidechain]]:
    """Return the records of main session ``session`` (those not ``isSidechain``) and its
    inline sidechains, every record in exactly one of them."""
    own: list[Entry] = []
    groups: dict[str, Sidechain] = {}
    group_of: dict[str, str] = {}  # a sidechain record's uuid -> its sidechain's key
    for record in records:
        if not record.sidechain:
            own.append(record)
            continue
        if record.agent is not None:
            key = f"agent-{record.agent}"
        elif record.parent is not None and record.parent in group_of:
            key = group_of[record.parent]
        else:
            key = f"{session}/sidechain-{sum(not g.named for g in groups.values()) + 1}"
        group = groups.setdefault(key, Sidechain(key, [], key.startswith("agent-")))
        group.records.append(record)
        if record.uuid is not None:
            group_of.setdefault(record.uuid, key)
    return own, list(groups.values())


def prompt_anchors(own: Sequence[Entry], sidechains: Sequence[Sidechain],
                   source: RecordSource) -> dict[str, str]:
    """Return, by call id, the key of each unnamed sidechain whose first prompt's text is
    the ``prompt`` of exactly one ``Task``/``Agent`` call in ``own`` and of no other
    sidechain (the records decoded again from ``source``)."""
    if all(s.named for s in sidechains):  # no sidechain to anchor by its prompt (most files)
        return {}
    calls: dict[str, list[str]] = {}
    for entry in own:
        if entry.kind != "assistant":
            continue
        for block in content_blocks(source.full(entry).message):
            if not isinstance(block, dict) or block.get("type") != "tool_use" \
                    or not isinstance(block.get("id"), str):
                continue
            given = block.get("input")
            prompt = given.get("prompt") if isinstance(given, dict) else None
            if isinstance(prompt, str) and block.get("name") in ("Task", "Agent"):
                calls.setdefault(prompt, []).append(block["id"])
    prompts = {s.key: _first_prompt(s.records, source) for s in sidechains}
    shared = Counter(prompts.values())
    return {calls[text][0]: s.key for s in sidechains
            if not s.named and (text := prompts[s.key]) is not None and shared[text] == 1
            and len(calls.get(text, ())) == 1}


def _first_prompt(records: Sequence[Entry], source: RecordSource) -> str | None:
    """Return the text of the first typed prompt among ``records`` (None if none)."""
    for entry in records:
        if entry.prompt:
            return "".join(block_text(b) for b in content_blocks(source.full(entry).message)
                           if isinstance(b, dict) and b.get("type") == "text")
    return None
