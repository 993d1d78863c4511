"""``ledger.runtime_read``: which bytes the runtime's recoverable reader uses (format §1.2).

Expected events, lines, offsets and messages are worked out by hand from the bytes
each test writes. Every file is read whole and in chunks of a few bytes, which must
give the same reading.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ledger_lines import HEADER, assistant_calls, encode, tool_result, turn_start

from ledgerviz.ledger import Diagnostic, SessionLog
from ledgerviz.ledger.read import read_session
from ledgerviz.ledger.runtime_read import (
    Fragment,
    LineOffsets,
    RuntimeRead,
    first_stop,
    runtime_read,
)
from ledgerviz.simulate import write_scenario

TURN_END = {"type": "turn/end", "seq": 3, "time": 1003, "data": {"turn": 1}}


def read_in(chunks: list[bytes]) -> tuple[RuntimeRead, list[int]]:
    """Return the runtime read of ``chunks`` and the seqs of the events it used."""
    used: list[int] = []
    read_back = runtime_read("t.jsonl", chunks, lambda fields: used.extend(fields.seqs))
    return read_back, used


def read(content: bytes) -> tuple[SessionLog, RuntimeRead, list[int]]:
    """Return the load's log of ``content``, its runtime read and the seqs used."""
    log = read_session("t.jsonl", content, duplicate_keys=True)
    read_back, used = read_in([content])
    assert read_back.diagnostics == log.diagnostics
    for size in (1, 2, 5, 64):
        assert read_in([content[i:i + size] for i in range(0, len(content), size)]) == (
            read_back, used)
    return log, read_back, used


def seqs(events: list[dict]) -> list[int]:
    return [event["seq"] for event in events]


def offsets_of(chunks: list[bytes], lines: range) -> list[int]:
    """Return the offsets of ``lines`` once every chunk is passed on, nothing forgotten."""
    offsets = LineOffsets(chunks, lambda: 0)
    assert b"".join(offsets) == b"".join(chunks)
    return [offsets.offset_of(line) for line in lines]


@pytest.mark.parametrize("size", [1, 2, 3, 100])
def test_line_offsets(size: int) -> None:
    def cut(content: bytes) -> list[bytes]:
        return [content[i:i + size] for i in range(0, len(content), size)]

    assert offsets_of(cut(b""), range(1, 3)) == [0, 0]
    assert offsets_of(cut(b"\n"), range(1, 4)) == [0, 1, 1]
    assert offsets_of(cut(b"a\nbb\n"), range(1, 5)) == [0, 2, 5, 5]
    assert offsets_of(cut(b"a\nbb"), range(1, 4)) == [0, 2, 4]
    assert offsets_of(cut(b"a\n\nccc\nd"), range(1, 6)) == [0, 2, 3, 7, 8]


def test_line_offsets_keep_only_the_chunks_of_lines_not_read() -> None:
    lines_read = 0
    offsets = LineOffsets([b"a\nb", b"b\ncc", b"c\nd\n"], lambda: lines_read)
    passed = iter(offsets)
    next(passed), next(passed)
    lines_read = 2  # "a" and "bb": the chunk holding newline 2 is kept
    next(passed)
    assert [offsets.offset_of(line) for line in (3, 4, 5)] == [5, 9, 11]
    with pytest.raises(ValueError, match="line 2 starts in bytes no longer held"):
        offsets.offset_of(2)
    offsets.close()
    with pytest.raises(ValueError, match="line 3 starts in bytes no longer held"):
        offsets.offset_of(3)


def test_line_offsets_keep_the_first_line_of_a_chunk_of_whitespace() -> None:
    offsets = LineOffsets([b"{}\n", b" \n\t\n \n", b"{}\n"], lambda: 0)
    assert list(offsets)[-1] == b"{}\n"
    assert [offsets.offset_of(line) for line in (1, 2, 3, 6)] == [0, 3, 5, 12]
    with pytest.raises(ValueError, match="line 4 starts in bytes no longer held"):
        offsets.offset_of(4)  # inside the whitespace: after its first blank line


def test_a_clean_log_is_used_whole() -> None:
    _, read_back, used = read(encode([HEADER, turn_start(0), assistant_calls(1, "A")]))
    assert read_back == RuntimeRead(2, None, None, None, 4, [])
    assert used == [0, 1]


def test_a_torn_last_line_is_cut_and_everything_before_it_used() -> None:
    whole = encode([HEADER, turn_start(0), assistant_calls(1, "A")])
    fragment = b'{"type":"tool/res'
    _, read_back, used = read(whole + fragment)
    assert used == [0, 1]
    assert (read_back.stop, read_back.refusal) == (None, None)
    assert read_back.cut == Fragment(4, len(whole), len(fragment))


def test_a_bad_line_stops_the_reading_and_is_cut_with_all_after_it() -> None:
    good = encode([HEADER, turn_start(0), assistant_calls(1, "A")])
    rest = b"{oops\n" + encode([tool_result(3, "A")])
    log, read_back, used = read(good + rest)
    assert seqs(log.events) == [0, 1, 3]
    assert used == [0, 1]
    assert read_back.stop is not None
    assert (read_back.stop.line, read_back.stop.kind) == (4, "invalid_json")
    assert read_back.refusal is None
    assert read_back.cut == Fragment(4, len(good), len(rest))


def test_a_kept_event_on_the_stop_line_is_not_used() -> None:
    # a user/message without surfaceOp is kept by the reader, but it is invalid_event
    typed = {"type": "user/message", "seq": 1, "time": 1001,
             "data": {"role": "user", "content": []}}
    good = encode([HEADER, turn_start(0)])
    log, read_back, used = read(good + encode([typed, assistant_calls(2, "A")]))
    assert seqs(log.events) == [0, 1, 2]
    assert read_back.stop is not None and read_back.stop.line == 3
    assert used == [0]
    assert read_back.cut is not None and read_back.cut.offset == len(good)


def test_a_turn_end_after_the_damage_refuses_the_log() -> None:
    content = encode([HEADER, turn_start(0), b"{oops", turn_start(2), {**TURN_END, "seq": 3}])
    _, read_back, used = read(content)
    assert used == [0]
    assert read_back.cut is None
    assert read_back.stop is not None and read_back.stop.kind == "invalid_json"
    assert read_back.refusal == (
        f"line 3: {read_back.stop.message}; line 5 after it holds a turn/end, so the damaged "
        "region had been committed: the runtime refuses this log (repair it by hand; nothing "
        "can be appended safely)"
    )


def test_a_turn_end_on_the_stop_line_itself_is_not_a_later_commit() -> None:
    # a turn/end with surface fields is kept but invalid: it is the stop, not after it
    damaged_end = {**TURN_END, "seq": 1, "surfaceOp": "append"}
    good = encode([HEADER, turn_start(0)])
    _, read_back, _ = read(good + encode([damaged_end]))
    assert read_back.stop is not None and read_back.stop.line == 3
    assert read_back.refusal is None
    assert read_back.cut == Fragment(3, len(good), len(encode([damaged_end])))


def test_an_error_before_the_stop_refuses_the_log_and_one_after_it_does_not() -> None:
    orphan = tool_result(1, "never-requested")
    content = encode([HEADER, turn_start(0), orphan, b"{oops", turn_start(3)])
    _, read_back, _ = read(content)
    assert read_back.stop is not None and read_back.stop.line == 4
    assert read_back.refusal == (
        "line 3: tool/result answers call 'never-requested', never requested [orphan_result]"
    )
    content = encode([HEADER, turn_start(0), b"{oops", {**orphan, "seq": 2}])
    _, read_back, _ = read(content)
    assert read_back.stop is not None and read_back.stop.line == 3
    assert read_back.refusal is None


def test_an_error_without_a_stop_refuses_the_log() -> None:
    _, read_back, _ = read(encode([HEADER, turn_start(0), tool_result(1, "x")]))
    assert read_back.stop is None and read_back.cut is None
    assert read_back.refusal == (
        "line 3: tool/result answers call 'x', never requested [orphan_result]"
    )


def test_warnings_and_infos_refuse_nothing() -> None:
    start = {**turn_start(0), "seq": 0.0}  # integer_as_float: a warning
    ignorable = {"type": "x/y", "seq": 1, "data": {}, "ignorable": True}  # an info
    log, read_back, used = read(encode([HEADER, start, ignorable]))
    assert {d.severity for d in log.diagnostics} == {"warning", "info"}
    assert read_back == RuntimeRead(2, None, None, None, 4, log.diagnostics)
    assert used == [0, 1]


def test_no_header_refuses_the_log() -> None:
    _, read_back, used = read(b"")
    assert read_back.refusal == "line 1 is not a session header: the runtime refuses this log"
    assert (used, read_back.cut) == ([], None)


def test_an_info_of_a_stop_kind_is_no_stop() -> None:
    info = Diagnostic("t.jsonl", 2, "seq_gap", "info", "noted")
    error = Diagnostic("t.jsonl", 3, "blank_line", "warning", "empty line")
    assert first_stop([info]) is None
    assert first_stop([info, error]) == error


def test_a_blank_last_line_is_the_stop_and_is_cut() -> None:
    good = encode([HEADER, turn_start(0)])
    _, read_back, used = read(good + b"\n")
    assert read_back.stop is not None and read_back.stop.kind == "blank_line"
    assert read_back.cut == Fragment(3, len(good), 1)
    assert used == [0]


def test_a_stop_before_a_torn_tail_cuts_from_the_stop() -> None:
    good = encode([HEADER, turn_start(0)])
    rest = b"{oops\n" + b'{"type":"tur'
    _, read_back, _ = read(good + rest)
    assert read_back.stop is not None and read_back.stop.line == 3
    assert read_back.cut == Fragment(3, len(good), len(rest))


def test_an_error_on_the_stop_line_itself_does_not_refuse_the_log() -> None:
    # seq 5 after seq 0 stops the reading at line 3; that line's orphan result is cut with it
    good = encode([HEADER, turn_start(0)])
    stray = encode([tool_result(5, "Z")])
    log, read_back, _ = read(good + stray)
    assert [(d.kind, d.line) for d in log.diagnostics] == [("seq_gap", 3), ("orphan_result", 3)]
    assert read_back.refusal is None
    assert read_back.cut == Fragment(3, len(good), len(stray))


def test_memory_stays_flat_as_the_file_grows(
    tmp_path: Path, traced_peak: Callable[[Callable[[], object]], int]
) -> None:
    def streamed_peak(path: Path) -> int:  # read as the runtime does, 64 KiB at a time
        with path.open("rb") as handle:
            chunks = iter(lambda: handle.read(64 << 10), b"")
            return traced_peak(lambda: runtime_read(str(path), chunks, lambda fields: None))

    small = write_scenario("large", tmp_path / "small.jsonl", turns=150)[0]
    big = write_scenario("large", tmp_path / "big.jsonl", turns=600)[0]
    small_peak, big_peak = streamed_peak(small), streamed_peak(big)
    logs = [read_session(str(path), path.read_bytes()) for path in (small, big)]
    small_calls, big_calls = (sum(e["type"] == "tool/call" for e in log.events) for log in logs)
    # What grows with the events read is the reader's set of requested call ids (about
    # 110 bytes a call, for the orphan_result check); everything else is a block.
    assert big_peak - small_peak <= 200 * (big_calls - small_calls) + (256 << 10)
    content = big.read_bytes()
    assert big_peak * 5 < traced_peak(lambda: read_session(str(big), content))  # held whole
