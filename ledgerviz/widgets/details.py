"""The explorer's event picker choices and the details pane for one event of an Analysis."""

from __future__ import annotations

import json

from ledgerviz.html import escape, seq_text, short_text
from ledgerviz.recovery.analysis import Analysis

TYPE_LABEL_LIMIT = 60


def event_label(analysis: Analysis, index: int) -> str:
    """Return the picker label of event ``index``: its seq, type and how recovery marked it."""
    seq = analysis.seqs[index]
    kind = short_text(analysis.events[index].get("type"), TYPE_LABEL_LIMIT)
    label = f"{'—' if seq is None else seq} · {kind}"
    if not analysis.recorded[index]:
        label += " · added by recovery"
    elif analysis.synthetic[index]:
        label += " · recovery event in the file"
    if analysis.branch[index] == "abandoned":
        label += " · abandoned"
    return label


def event_choices(analysis: Analysis) -> list[tuple[str, int]]:
    """Return ``(label, index)`` pairs for every event of ``analysis``, in analysis order."""
    return [(event_label(analysis, i), i) for i in range(len(analysis.events))]


def index_of_seq(analysis: Analysis, seq: int) -> int | None:
    """Return the analysis index of the first event with ``seq``, or None when there is none."""
    try:
        return analysis.seqs.index(seq)
    except ValueError:
        return None


def event_details_html(analysis: Analysis, index: int) -> str:
    """Return escaped HTML for event ``index``: a fact line and its pretty-printed JSON."""
    facts = [
        f"<b>seq {seq_text(analysis.seqs[index])}</b>",
        escape(analysis.events[index].get("type")),
        f"branch {escape(analysis.branch[index])}",
        "in the file" if analysis.recorded[index]
        else f"added by the {escape(analysis.policy)} policy",
    ]
    if analysis.synthetic[index]:
        facts.append("synthetic")
    if analysis.recovery_code[index]:
        facts.append(f"code {escape(analysis.recovery_code[index])}")
    pretty = json.dumps(analysis.events[index], indent=2, ensure_ascii=False)
    return (
        f"<div class='lv-details'><div>{' · '.join(facts)}</div>"
        "<pre style='max-height:24em;overflow:auto;white-space:pre-wrap;margin:4px 0'>"
        f"{escape(pretty)}</pre></div>"
    )
