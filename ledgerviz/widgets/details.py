"""The explorer's event picker choices and the details pane for one event of an Analysis."""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import pandas as pd

from ledgerviz.display.fragments import expandable
from ledgerviz.display.results import call_result, result_texts
from ledgerviz.html import escape, seq_text, short_text, text_of
from ledgerviz.ledger.writer import encode_line
from ledgerviz.recovery.analysis import Analysis, CallFacts
from ledgerviz.recovery.result_columns import RECOVERY_CODE_NAMES
from ledgerviz.recovery.vocab import BRANCHES

TYPE_LABEL_LIMIT = 60
TEXT_PREVIEW = 300


class Marked(NamedTuple):
    """How recovery marked one event (``Analysis``' lists at one index)."""

    branch: str
    synthetic: bool
    recorded: bool
    recovery_code: str | None


def marks_at(analysis: Analysis, index: int) -> Marked:
    """Return the marks of event ``index``, read from the analysis' one-byte marks: the
    analysis' lists of every event's marks (a million entries at 1M events) are not made for
    the few events a pane shows."""
    marks = analysis.marks
    return Marked(BRANCHES[marks.branch[index]], bool(marks.synthetic[index]),
                  bool(marks.recorded[index]),
                  RECOVERY_CODE_NAMES[marks.recovery_code[index]])


def event_label(analysis: Analysis, index: int) -> str:
    """Return the picker label of event ``index``: its seq, type and how recovery marked it."""
    seq = analysis.seqs[index]
    kind = short_text(analysis.events[index].get("type"), TYPE_LABEL_LIMIT)
    label = f"{'—' if seq is None else seq} · {kind}"
    marks = marks_at(analysis, index)
    if not marks.recorded:
        label += " · added by recovery"
    elif marks.synthetic:
        label += " · recovery event in the file"
    if marks.branch == "abandoned":
        label += " · abandoned"
    return label


def event_choices(analysis: Analysis, indices: range | None = None) -> list[tuple[str, int]]:
    """Return ``(label, index)`` pairs for the events at ``indices`` (default: every event of
    ``analysis``), in analysis order."""
    shown = range(len(analysis.events)) if indices is None else indices
    return [(event_label(analysis, i), i) for i in shown]


def index_of_seq(analysis: Analysis, seq: int) -> int | None:
    """Return the analysis index of the first event with ``seq``, or None when there is none."""
    try:
        return analysis.seqs.index(seq)
    except ValueError:
        return None


def calls_html(analysis: Analysis, index: int, frame: pd.DataFrame | None = None) -> str:
    """Return the tool calls event ``index`` asks for, dispatches or answers: each with its
    arguments and recorded result text (escaped, cut, the whole text on demand).
    ``frame``, the analysis' ``calls`` frame (row i: its call i), is searched instead of
    the calls when given."""
    seq = analysis.seqs[index]
    if seq is None:
        return ""
    calls = _calls_at(analysis, seq, frame)
    if not calls:
        return ""
    texts = result_texts(analysis, [call.result_seq for call in calls])
    blocks = [
        f"<div style='margin:6px 0'><b>call {escape(call.name, TYPE_LABEL_LIMIT)}</b> "
        f"<code>{escape(call.call_id, TYPE_LABEL_LIMIT)}</code> · "
        f"{escape(call.status.replace('_', ' '))}<br>arguments"
        f"{expandable(text_of(call.arguments), TEXT_PREVIEW)}result"
        f"{expandable(call_result(call, texts), TEXT_PREVIEW)}</div>"
        for call in calls
    ]
    return f"<div class='lv'>{''.join(blocks)}</div>"


def _calls_at(analysis: Analysis, seq: int, frame: pd.DataFrame | None) -> list[CallFacts]:
    """Return the calls requested, dispatched or answered at ``seq``, found in the calls
    ``frame`` when it is the analysis' (one row per call, in order)."""
    if frame is None or len(frame) != len(analysis.calls):
        return [c for c in analysis.calls if seq in (c.requested_seq, c.dispatched_seq,
                                                       c.result_seq)]
    at = np.zeros(len(frame), dtype=bool)
    for column in ("requested_seq", "dispatched_seq", "result_seq"):
        at |= (frame[column] == seq).fillna(False).to_numpy(dtype=bool)
    return [analysis.calls[i] for i in np.flatnonzero(at).tolist()]


def event_details_html(analysis: Analysis, index: int,
                       calls: pd.DataFrame | None = None) -> str:
    """Return escaped HTML for event ``index``: a fact line, the tool calls it asks for,
    dispatches or answers (``calls``: the analysis' calls frame, searched for them when
    given), and its pretty-printed JSON."""
    marks = marks_at(analysis, index)
    facts = [
        f"<b>seq {seq_text(analysis.seqs[index])}</b>",
        escape(analysis.events[index].get("type")),
        f"branch {escape(marks.branch)}",
        "in the file" if marks.recorded else f"added by the {escape(analysis.policy)} policy",
    ]
    if marks.synthetic:
        facts.append("synthetic")
    if marks.recovery_code:
        facts.append(f"code {escape(marks.recovery_code)}")
    try:
        pretty = json.dumps(analysis.events[index], indent=2, ensure_ascii=False)
    except RecursionError:  # nested too deep for the indenting encoder: shown on one line
        pretty = encode_line(analysis.events[index])
    return (
        f"<div class='lv-details'><div>{' · '.join(facts)}</div>"
        f"{calls_html(analysis, index, calls)}"
        "<pre style='max-height:24em;overflow:auto;white-space:pre-wrap;margin:4px 0'>"
        f"{escape(pretty)}</pre></div>"
    )
