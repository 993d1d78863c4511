"""Blocks decoded and checked in runs of ``CHECK_LINES`` lines read as one check of the block.

Every expectation is worked out by hand: line N of a file holds seq N - 2 (line 1 is the
header). The problems of decoding and of the check are listed in line order, whatever
run (or block) finds them.
"""

from __future__ import annotations

import pytest
from ledger_lines import HEADER, encode, mark, tool_result

from ledgerviz.ledger import LedgerError
from ledgerviz.ledger.diagnostics import DiagnosticLog, PendingDiagnostics
from ledgerviz.ledger.read import read_session
from ledgerviz.ledger.reader import CHECK_LINES

EVENTS = 600  # lines 2..601: runs of 256 lines from line 2 (2..257, 258..513, 514..601)


def ledger(replace: dict[int, object]) -> bytes:
    """Return a header and EVENTS turn/start events, the events at the given lines replaced."""
    lines: list = [HEADER] + [mark(seq) for seq in range(EVENTS)]
    for line, value in replace.items():
        lines[line - 1] = value
    return encode(lines)


def test_the_runs_cut_a_block_into_three() -> None:
    assert CHECK_LINES == 256 and EVENTS > 2 * CHECK_LINES


def test_problems_of_decoding_and_of_the_check_are_listed_in_line_order() -> None:
    content = ledger({3: tool_result(1, "never-asked"), 400: b"{oops"})
    log = read_session("x.jsonl", content)
    assert [(d.kind, d.line) for d in log.diagnostics] == [
        ("orphan_result", 3),
        ("invalid_json", 400),
        ("seq_gap", 401),
    ]
    assert log.diagnostics[2].message == "expected seq 398, found 399: 1 missing"
    assert len(log.events) == EVENTS - 1 and log.lines_skipped == 1
    assert list(log.lines) == [*range(2, 400), *range(401, 602)]
    assert log.events[397]["seq"] == 397 and log.events[398]["seq"] == 399


def test_strict_raises_at_the_first_error_by_line() -> None:
    content = ledger({3: tool_result(1, "never-asked"), 400: b"{oops"})
    with pytest.raises(LedgerError, match=r"x\.jsonl:3: error \[orphan_result\]"):
        read_session("x.jsonl", content, strict=True)
    decoding_first = ledger({3: b"{oops", 400: tool_result(398, "never-asked")})
    with pytest.raises(LedgerError, match=r"x\.jsonl:3: error \[invalid_json\]"):
        read_session("x.jsonl", decoding_first, strict=True)


def test_strict_raises_at_a_check_error_of_a_later_run() -> None:
    content = ledger({500: tool_result(498, "never-asked")})
    with pytest.raises(LedgerError, match=r"x\.jsonl:500: error \[orphan_result\]"):
        read_session("x.jsonl", content, strict=True)


def test_a_clean_block_keeps_its_lines_as_one_range() -> None:
    log = read_session("x.jsonl", ledger({}))
    assert log.lines == range(2, 602)
    assert [e["seq"] for e in log.events] == list(range(EVENTS))
    assert list(log.event_table().seq) == list(range(EVENTS)) and log.diagnostics == []


def test_the_last_line_of_the_last_run_may_be_torn() -> None:
    content = ledger({}) + b'{"type":"turn/st\n'  # decodes to nothing, at the very end
    log = read_session("x.jsonl", content)
    assert [(d.kind, d.line, d.severity) for d in log.diagnostics] == [
        ("torn_tail", 602, "warning")
    ]
    bad_at_a_run_end = ledger({257: b'{"type":"turn/st'})  # the last line of run 1
    assert [(d.kind, d.line) for d in read_session("x.jsonl", bad_at_a_run_end).diagnostics] == [
        ("invalid_json", 257),
        ("seq_gap", 258),
    ]


def test_pending_diagnostics_are_added_once_in_line_order() -> None:
    held, log = PendingDiagnostics(), DiagnosticLog("x.jsonl", strict=False)
    held.add(9, "seq_gap", "late")
    held.add(2, "unknown_ignorable_event", "kept", "info")
    held.add(9, "orphan_result", "same line, recorded second")
    log.add(5, "invalid_json", "added directly")
    held.replay(log)
    held.replay(log)
    assert [(d.line, d.kind, d.severity, d.message) for d in log.finish()] == [
        (5, "invalid_json", "error", "added directly"),
        (2, "unknown_ignorable_event", "info", "kept"),
        (9, "seq_gap", "error", "late"),
        (9, "orphan_result", "error", "same line, recorded second"),
    ]
    strict = DiagnosticLog("x.jsonl", strict=True)
    held.add(3, "orphan_result", "raised on replay")
    with pytest.raises(LedgerError, match="raised on replay"):
        held.replay(strict)


def test_pending_diagnostics_past_a_kinds_limit_are_only_counted() -> None:
    held, log = PendingDiagnostics(), DiagnosticLog("x.jsonl", strict=False)
    for line in range(100, 130):  # 30 blank lines: 20 listed, the 21st named, 9 more
        held.add(line, "blank_line", "empty", "warning")
    for line in range(10, 35):  # 25 infos of a kind also raised as warnings
        held.add(line, "unknown_type", "noted", "info")
    held.add(50, "unknown_type", "not ignorable", "warning")
    held.add(5, "orphan_result", "one error")
    held.replay(log)
    listed = log.finish()
    assert [(d.kind, d.line) for d in listed[:21]] == [
        ("orphan_result", 5), *(("unknown_type", line) for line in range(10, 30)),
    ]
    assert [(d.kind, d.line) for d in listed[21:41]] == [
        ("blank_line", line) for line in range(100, 120)
    ]
    assert [(d.kind, d.line, d.severity, d.message) for d in listed[41:]] == [
        ("more_diagnostics", 30, "info",
         "6 more [unknown_type] diagnostics not listed, from line 30 on (26 in all)"),
        ("more_diagnostics", 120, "warning",
         "10 more [blank_line] diagnostics not listed, from line 120 on (30 in all)"),
    ]


def test_strict_raises_at_an_error_past_the_limit_of_its_kind_with_another_severity() -> None:
    held = PendingDiagnostics()
    for line in range(2, 40):
        held.add(line, "invalid_event", "a warning", "warning")
    held.add(40, "invalid_event", "the first error", "error")
    with pytest.raises(LedgerError, match=r"x\.jsonl:40: error \[invalid_event\] the first error"):
        held.replay(DiagnosticLog("x.jsonl", strict=True))


def test_repeated_keys_are_found_in_every_run_in_line_order() -> None:
    repeated = b'{"type":"plan/mode","seq":%d,"seq":%d,"data":{"active":false}}'
    content = ledger({
        5: repeated % (3, 3),
        300: tool_result(298, "never-asked"),
        520: repeated % (518, 518),
    })
    log = read_session("x.jsonl", content, duplicate_keys=True)
    assert [(d.kind, d.line) for d in log.diagnostics] == [
        ("duplicate_key", 5),
        ("orphan_result", 300),
        ("duplicate_key", 520),
    ]
    assert log.diagnostics[2].message == (
        "key 'seq' repeated within one object: the last value is used")
