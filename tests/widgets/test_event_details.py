"""Event picker labels and the details pane, as pure functions of an Analysis."""

from __future__ import annotations

from widget_ledgers import SEMANTIC, UNRECOVERED, events_of

import ledgerviz
from ledgerviz.html import escape
from ledgerviz.widgets.details import event_choices, event_details_html, index_of_seq

SEMANTIC_EVENTS = events_of(SEMANTIC)
CLOSER = next(i for i, e in enumerate(SEMANTIC_EVENTS) if e["type"] == "tool/result")


def test_a_closer_in_the_file_is_marked_as_recorded_recovery() -> None:
    ledger = ledgerviz.load(SEMANTIC)
    analysis = ledger.recovery("recorded").analyses[ledger.keys[0]]
    details = event_details_html(analysis, CLOSER)
    assert f"<b>seq {CLOSER}</b> · tool/result · branch active · in the file" in details
    assert "synthetic · code TOOL_OUTCOME_UNKNOWN" in details
    assert escape(SEMANTIC_EVENTS[CLOSER]["data"]["message"]["id"]) in details
    label = dict((i, label) for label, i in event_choices(analysis))[CLOSER]
    assert label == f"{CLOSER} · tool/result · recovery event in the file"


def test_a_closer_computed_at_a_cut_is_marked_as_added_by_the_policy() -> None:
    ledger = ledgerviz.load(SEMANTIC).cut(CLOSER)
    analysis = ledger.recovery("synthesize").analyses[ledger.keys[0]]
    index = index_of_seq(analysis, CLOSER)
    assert index == CLOSER
    details = event_details_html(analysis, index)
    assert "added by the synthesize policy · synthetic · code TOOL_OUTCOME_UNKNOWN" in details
    assert event_choices(analysis)[index] == (f"{CLOSER} · tool/result · added by recovery",
                                              index)


def test_results_recovery_would_have_logged_have_no_seq() -> None:
    ledger = ledgerviz.load(UNRECOVERED)
    analysis = ledger.recovery("synthesize").analyses[ledger.keys[0]]
    unlogged = [i for i, seq in enumerate(analysis.seqs) if seq is None]
    assert unlogged  # live recovery results inside an already closed step
    labels = dict((i, label) for label, i in event_choices(analysis))
    for index in unlogged:
        assert labels[index] == "— · tool/result · added by recovery"
        details = event_details_html(analysis, index)
        assert details.startswith("<div class='lv-details'><div><b>seq not logged</b>")
        assert "&quot;seq&quot;" not in details  # the event dict carries no seq key
    assert analysis.events[unlogged[-1] + 1]["type"] == "step/end"


def test_labels_and_details_read_the_marks_without_listing_every_event() -> None:
    # the analysis' lists of every event's marks (made on first use: a million entries at 1M
    # events) are not made for the picker's window and the one event the pane shows
    ledger = ledgerviz.load(SEMANTIC)
    analysis = ledger.recovery("recorded").analyses[ledger.keys[0]]
    lists = ("branch", "synthetic", "recorded", "recovery_code")
    assert not [name for name in lists if _held(analysis, name)]  # the engine gave its marks
    label = dict((i, label) for label, i in event_choices(analysis, range(CLOSER, CLOSER + 1)))
    details = event_details_html(analysis, CLOSER)
    assert label == {CLOSER: f"{CLOSER} · tool/result · recovery event in the file"}
    assert "branch active · in the file · synthetic · code TOOL_OUTCOME_UNKNOWN" in details
    assert not [name for name in lists if _held(analysis, name)]


def _held(analysis: object, name: str) -> bool:
    """Whether ``analysis`` holds attribute ``name`` already (``Analysis`` makes a missing
    list of marks on first read)."""
    try:
        object.__getattribute__(analysis, name)
    except AttributeError:
        return False
    return True
