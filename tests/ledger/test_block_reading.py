"""Reading in blocks (decode a block, check it) gives what one decode-then-check pass gives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ledger_lines import HEADER, assistant_calls, tool_result, turn_start

from ledgerviz.ledger import LedgerError, read_sessions
from ledgerviz.ledger import events as reader_events

DSH = Path(__file__).parents[1] / "data" / "dsh"
Writer = Callable[..., Path]


def _read(path: Path, block_lines: int, monkeypatch: pytest.MonkeyPatch, **options: bool):
    with monkeypatch.context() as patch:
        patch.setattr(reader_events, "BLOCK_LINES", block_lines)
        return read_sessions(path, **options)


def _mixed_problems() -> list:
    """Lines 2..13: problems of both passes spread over several blocks of three."""
    return [
        HEADER,
        turn_start(0),  # 2
        assistant_calls(1, "c1"),  # 3
        {"type": "turn/start", "seq": 5, "time": 1, "data": {"turn": 2}},  # 4: seq_gap
        b"{not json",  # 5: invalid_json
        tool_result(6, "c1"),  # 6: answers a call requested two blocks earlier
        tool_result(7, "nobody"),  # 7: orphan_result
        {"type": "mystery/event", "seq": 8, "data": {}},  # 8: unknown_required_event
        b"[1]",  # 9: invalid_event, rejected
        turn_start(9),  # 10
        b"",  # 11: blank_line
        turn_start(10),  # 12
        turn_start(11),  # 13
    ]


def test_blocks_give_the_single_pass_result(
    write_ledger: Writer, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_ledger(_mixed_problems(), tail=b'{"type": "tu')
    (whole,) = _read(path, 10**9, monkeypatch)
    for block_lines in (1, 2, 3, 5):
        assert _read(path, block_lines, monkeypatch) == [whole], block_lines
    kinds = [(d.line, d.kind) for d in whole.diagnostics]
    assert kinds == [
        (14, "torn_tail"),
        (5, "invalid_json"),
        (11, "blank_line"),
        (4, "seq_gap"),
        (7, "orphan_result"),
        (8, "unknown_required_event"),
        (9, "invalid_event"),
    ]
    assert whole.lines_skipped == 4
    assert len(whole.events) == 9 and whole.fields is not None
    assert whole.fields.seqs == [0, 1, 5, 6, 7, 8, 9, 10, 11]


def test_strict_blocks_raise_the_first_decoding_error_before_an_earlier_check_error(
    write_ledger: Writer, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_ledger(_mixed_problems())
    with pytest.raises(LedgerError, match=r":5: error \[invalid_json\]"):
        _read(path, 3, monkeypatch, strict=True)


@pytest.mark.parametrize("path", sorted(DSH.glob("*.jsonl")), ids=lambda p: p.name)
def test_fixtures_read_the_same_in_blocks_of_seven(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _read(path, 7, monkeypatch) == _read(path, 10**9, monkeypatch)
