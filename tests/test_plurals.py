"""Counts in the text people read are in the singular for exactly one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import ledgerviz
from ledgerviz.cli import main
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


def test_check_and_diff_say_one_event_turn_and_warning_in_the_singular(tmp_path: Path,
                                                                         capsys) -> None:
    """A hand-made ledger of one turn/start holding a 24-digit number: 1 event, 1 turn, one
    big_integer warning (it said "1 events · 1 turns" and "1 warnings")."""
    path = tmp_path / "one.jsonl"
    path.write_text('{"type":"session","version":4,"id":"one","createdAt":1,"cwd":"/w"}\n'
                    '{"type":"turn/start","seq":0,"time":1,'
                    '"data":{"turn":1,"x":123456789012345678901234}}\n', encoding="utf-8")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "  version 4 · 1 event · 1 turn · calls: none"
    assert out[-1] == "checked 1 session, 0 with errors, 0 errors, 1 warning: ok"
    assert main(["diff", str(path), str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [f"a: one ({path}), 1 event",
                                                        f"b: one ({path}), 1 event"]
