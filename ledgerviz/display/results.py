"""What each tool call returned: the recorded result text of a call, read from its result event."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledgerviz.recovery.analysis import Analysis, CallFacts
from ledgerviz.recovery.events import message_of
from ledgerviz.recovery.nesting import message_text
from ledgerviz.recovery.payload import result_content

NO_RESULT = "no result recorded"
LOOKED_UP = 8


def result_texts(analysis: Analysis, seqs: Iterable[int | None] | None = None
                 ) -> dict[int, str]:
    """Return the visible text of every tool/result event of ``analysis`` (``seqs``: of those
    with these seqs only), by seq (first wins; recovery's synthetic results are included, as
    the model reads them). Up to :data:`LOOKED_UP` seqs are looked up one by one (a search in
    C each: the explorer's details pane of one event), more in one pass over the events."""
    wanted = None if seqs is None else {seq for seq in seqs if seq is not None}
    if wanted is not None and len(wanted) <= LOOKED_UP:
        found = (_first_result(analysis, seq) for seq in wanted)
        return {seq: _text(event) for seq, event in zip(wanted, found, strict=True)
                if event is not None}
    texts: dict[int, str] = {}
    for seq, event in zip(analysis.seqs, analysis.events, strict=True):
        if (seq is None or seq in texts or (wanted is not None and seq not in wanted)
                or event.get("type") != "tool/result"):
            continue
        texts[seq] = _text(event)
    return texts


def _first_result(analysis: Analysis, seq: int) -> dict[str, Any] | None:
    """Return the first tool/result event of ``analysis`` with ``seq``, or None."""
    start = 0
    while True:
        try:
            start = analysis.seqs.index(seq, start)
        except ValueError:
            return None
        event = analysis.events[start]
        if event.get("type") == "tool/result":
            return event
        start += 1


def _text(event: dict[str, Any]) -> str:
    """Return the visible text of a tool/result event's message."""
    message = message_of(event)
    return message_text(result_content(message)) if message is not None else ""


def call_result(call: CallFacts, texts: dict[int, str]) -> str:
    """Return the result text of ``call`` from :func:`result_texts`, or :data:`NO_RESULT`."""
    if call.result_seq is None or call.result_seq not in texts:
        return NO_RESULT
    return texts[call.result_seq]
