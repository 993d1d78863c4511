"""What each tool call returned: the recorded result text of a call, read from its result event."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ledgerviz.frames.messages import message_text
from ledgerviz.recovery.analysis import Analysis, CallFacts
from ledgerviz.recovery.events import message_of, result_content

NO_RESULT = "no result recorded"


def result_texts(analysis: Analysis, seqs: Iterable[int | None] | None = None
                 ) -> dict[int, str]:
    """Return the visible text of every tool/result event of ``analysis`` (``seqs``: of those
    with these seqs only), by seq (first wins; recovery's synthetic results are included, as
    the model reads them)."""
    positions: Iterable[int] = (
        range(len(analysis.events)) if seqs is None
        else sorted(i for seq in set(seqs) if seq is not None
                    for i in _positions_of(analysis.seqs, seq)))
    texts: dict[int, str] = {}
    for i in positions:
        seq, event = analysis.seqs[i], analysis.events[i]
        if seq is None or seq in texts or event.get("type") != "tool/result":
            continue
        message = message_of(event)
        texts[seq] = message_text(result_content(message)) if message is not None else ""
    return texts


def _positions_of(seqs: list[int | None], seq: int) -> Iterator[int]:
    """Yield every position of ``seq`` in ``seqs``, in order."""
    start = 0
    while True:
        try:
            start = seqs.index(seq, start) + 1
        except ValueError:
            return
        yield start - 1


def call_result(call: CallFacts, texts: dict[int, str]) -> str:
    """Return the result text of ``call`` from :func:`result_texts`, or :data:`NO_RESULT`."""
    if call.result_seq is None or call.result_seq not in texts:
        return NO_RESULT
    return texts[call.result_seq]
