"""Counts in the text people read are in the singular for exactly one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import ledgerviz
from ledgerviz.widgets.summary import crash_summary

EXAMPLES = Path(ledgerviz.__file__).parent / "examples"


def test_one_session_one_closer_and_one_abandoned_event_are_singular() -> None:
    ledger = ledgerviz.load(EXAMPLES / "clean.jsonl")
    assert repr(ledger.frames).startswith("<Frames: 1 session, ")
    assert repr(ledger.recovery("fork")).startswith("<RecoveryView: policy fork, 1 session, ")
    analysis = ledger.recovery("fork").analyses[ledger.keys[0]]
    one = replace(analysis, closers=analysis.events[:1], fork_points=[7], abandoned_seqs=[7])
    assert crash_summary(one, 3, 4) == ("process died after event 3 of 4 · fork: 1 closer · "
                                        "fork points: seq 7 · 1 abandoned event")
