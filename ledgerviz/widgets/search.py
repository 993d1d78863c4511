"""What the explorer's find box finds: events by seq, call id, tool name or message text."""

from __future__ import annotations

import pandas as pd

from ledgerviz.html import short_text
from ledgerviz.recovery.analysis import Analysis, CallFacts

MATCHES_LISTED = 200
"""Matches a search lists; the count says how many there are in all."""
LABEL_LIMIT = 80


def _call_seq(call: CallFacts) -> int:
    """Return the seq that shows a call best: its dispatch, else its request."""
    return call.requested_seq if call.dispatched_seq is None else call.dispatched_seq


def find_events(analysis: Analysis, messages: pd.DataFrame, query: str
                ) -> tuple[list[tuple[str, int]], int]:
    """Return up to :data:`MATCHES_LISTED` ``(label, seq)`` matches of ``query`` in
    ``analysis`` and how many there are in all: a seq (digits), else calls whose id contains
    it or whose tool it names (case-insensitive), then messages (``messages``: the
    analysis' messages frame) whose text contains it. Labels are plain text (a picker's)."""
    text = query.strip()
    if not text:
        return [], 0
    if text.lstrip("-").isdigit():
        seq = int(text)
        return ([(f"seq {seq}", seq)], 1) if seq in analysis.seqs else ([], 0)
    folded = text.casefold()
    found = [(f"call {call.call_id} · {call.name} · {call.status.replace('_', ' ')}",
              _call_seq(call))
             for call in analysis.calls
             if folded in call.call_id.casefold() or folded == (call.name or "").casefold()]
    hits = messages[messages["text"].str.contains(text, case=False, regex=False, na=False)]
    found += [(f"seq {seq} · {role} · {_around(body, folded)}", int(seq))
              for seq, role, body in zip(hits["seq"].head(MATCHES_LISTED).tolist(),
                                         hits["role"].head(MATCHES_LISTED).tolist(),
                                         hits["text"].head(MATCHES_LISTED).tolist(), strict=True)
              if seq is not pd.NA]
    total = len(found) - min(len(hits), MATCHES_LISTED) + len(hits)
    return [(short_text(label, LABEL_LIMIT), seq) for label, seq in found[:MATCHES_LISTED]], total


def _around(body: str, folded: str) -> str:
    """Return the part of ``body`` around the first place ``folded`` occurs in it."""
    at = max(0, body.casefold().find(folded) - 20)
    return ("…" if at else "") + body[at:at + LABEL_LIMIT]
