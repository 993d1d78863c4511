"""What each tool call returned: the recorded result text of a call, read from its result event."""

from __future__ import annotations

from collections.abc import Iterable

from ledgerviz.recovery.analysis import Analysis, CallFacts
from ledgerviz.recovery.events import message_of, result_content
from ledgerviz.recovery.nesting import message_text

NO_RESULT = "no result recorded"


def result_texts(analysis: Analysis, seqs: Iterable[int | None] | None = None
                 ) -> dict[int, str]:
    """Return the visible text of every tool/result event of ``analysis`` (``seqs``: of those
    with these seqs only), by seq (first wins; recovery's synthetic results are included, as
    the model reads them). One pass over the seqs, whatever ``seqs`` holds."""
    wanted = None if seqs is None else set(seqs)
    texts: dict[int, str] = {}
    for seq, event in zip(analysis.seqs, analysis.events, strict=True):
        if (seq is None or seq in texts or (wanted is not None and seq not in wanted)
                or event.get("type") != "tool/result"):
            continue
        message = message_of(event)
        texts[seq] = message_text(result_content(message)) if message is not None else ""
    return texts


def call_result(call: CallFacts, texts: dict[int, str]) -> str:
    """Return the result text of ``call`` from :func:`result_texts`, or :data:`NO_RESULT`."""
    if call.result_seq is None or call.result_seq not in texts:
        return NO_RESULT
    return texts[call.result_seq]
