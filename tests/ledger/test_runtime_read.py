"""``ledger.runtime_read``: which bytes the runtime's recoverable reader uses (format §1.2).

Expected events, lines, offsets and messages are worked out by hand from the bytes
each test writes.
"""

from __future__ import annotations

from ledger_lines import HEADER, assistant_calls, encode, tool_result, turn_start

from ledgerviz.ledger import Diagnostic, SessionLog
from ledgerviz.ledger.reader import read_session
from ledgerviz.ledger.runtime_read import Fragment, RuntimeRead, line_offsets, runtime_read

TURN_END = {"type": "turn/end", "seq": 3, "time": 1003, "data": {"turn": 1}}


def read(content: bytes) -> tuple[SessionLog, RuntimeRead]:
    log = read_session("t.jsonl", content)
    return log, runtime_read(log, content)


def seqs(events: list[dict]) -> list[int]:
    return [event["seq"] for event in events]


def test_line_offsets() -> None:
    assert line_offsets(b"") == [0]
    assert line_offsets(b"\n") == [0, 1]
    assert line_offsets(b"a\nbb\n") == [0, 2, 5]
    assert line_offsets(b"a\nbb") == [0, 2, 4]
    assert line_offsets(b"a\n\nccc\nd") == [0, 2, 3, 7, 8]


def test_a_clean_log_is_used_whole() -> None:
    log, read_back = read(encode([HEADER, turn_start(0), assistant_calls(1, "A")]))
    assert read_back == RuntimeRead(log.events, None, None, None)
    assert seqs(read_back.events) == [0, 1]


def test_a_torn_last_line_is_cut_and_everything_before_it_used() -> None:
    whole = encode([HEADER, turn_start(0), assistant_calls(1, "A")])
    fragment = b'{"type":"tool/res'
    _, read_back = read(whole + fragment)
    assert seqs(read_back.events) == [0, 1]
    assert (read_back.stop, read_back.refusal) == (None, None)
    assert read_back.cut == Fragment(4, len(whole), len(fragment))


def test_a_bad_line_stops_the_reading_and_is_cut_with_all_after_it() -> None:
    good = encode([HEADER, turn_start(0), assistant_calls(1, "A")])
    rest = b"{oops\n" + encode([tool_result(3, "A")])
    log, read_back = read(good + rest)
    assert seqs(log.events) == [0, 1, 3]
    assert seqs(read_back.events) == [0, 1]
    assert read_back.stop is not None
    assert (read_back.stop.line, read_back.stop.kind) == (4, "invalid_json")
    assert read_back.refusal is None
    assert read_back.cut == Fragment(4, len(good), len(rest))


def test_a_kept_event_on_the_stop_line_is_not_used() -> None:
    # a user/message without surfaceOp is kept by the reader, but it is invalid_event
    typed = {"type": "user/message", "seq": 1, "time": 1001,
             "data": {"role": "user", "content": []}}
    good = encode([HEADER, turn_start(0)])
    log, read_back = read(good + encode([typed, assistant_calls(2, "A")]))
    assert seqs(log.events) == [0, 1, 2]
    assert read_back.stop is not None and read_back.stop.line == 3
    assert seqs(read_back.events) == [0]
    assert read_back.cut is not None and read_back.cut.offset == len(good)


def test_a_turn_end_after_the_damage_refuses_the_log() -> None:
    content = encode([HEADER, turn_start(0), b"{oops", turn_start(2), {**TURN_END, "seq": 3}])
    _, read_back = read(content)
    assert seqs(read_back.events) == [0]
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
    _, read_back = read(good + encode([damaged_end]))
    assert read_back.stop is not None and read_back.stop.line == 3
    assert read_back.refusal is None
    assert read_back.cut == Fragment(3, len(good), len(encode([damaged_end])))


def test_an_error_before_the_stop_refuses_the_log_and_one_after_it_does_not() -> None:
    orphan = tool_result(1, "never-requested")
    content = encode([HEADER, turn_start(0), orphan, b"{oops", turn_start(3)])
    _, read_back = read(content)
    assert read_back.stop is not None and read_back.stop.line == 4
    assert read_back.refusal == (
        "line 3: tool/result answers call 'never-requested', never requested [orphan_result]"
    )
    content = encode([HEADER, turn_start(0), b"{oops", {**orphan, "seq": 2}])
    _, read_back = read(content)
    assert read_back.stop is not None and read_back.stop.line == 3
    assert read_back.refusal is None


def test_an_error_without_a_stop_refuses_the_log() -> None:
    _, read_back = read(encode([HEADER, turn_start(0), tool_result(1, "x")]))
    assert read_back.stop is None and read_back.cut is None
    assert read_back.refusal == (
        "line 3: tool/result answers call 'x', never requested [orphan_result]"
    )


def test_warnings_and_infos_refuse_nothing() -> None:
    header = {**HEADER, "extra": 1}  # unknown_header_key: a warning
    ignorable = {"type": "x/y", "seq": 1, "data": {}, "ignorable": True}  # an info
    log, read_back = read(encode([header, turn_start(0), ignorable]))
    assert {d.severity for d in log.diagnostics} == {"warning", "info"}
    assert read_back == RuntimeRead(log.events, None, None, None)


def test_no_header_refuses_the_log() -> None:
    log = SessionLog("t.jsonl", "t", {}, None, [])
    assert runtime_read(log, b"").refusal == (
        "line 1 is not a session header: the runtime refuses this log"
    )


def test_an_info_of_a_stop_kind_is_no_stop() -> None:
    info = Diagnostic("t.jsonl", 2, "seq_gap", "info", "noted")
    log = SessionLog("t.jsonl", "t", HEADER, 4, [turn_start(0)], [info], 0, [2])
    assert runtime_read(log, encode([HEADER, turn_start(0)])).stop is None


def test_a_stop_beyond_the_last_line_cuts_nothing() -> None:
    content = encode([HEADER, turn_start(0)])
    stop = Diagnostic("t.jsonl", 9, "blank_line", "warning", "empty line")
    log = SessionLog("t.jsonl", "t", HEADER, 4, [turn_start(0)], [stop], 0, [2])
    read_back = runtime_read(log, content)
    assert read_back.stop == stop
    assert read_back.cut == Fragment(9, len(content), 0)
    assert seqs(read_back.events) == [0]


def test_the_first_stop_and_the_first_tail_count() -> None:
    content = encode([HEADER, turn_start(0)])
    first = Diagnostic("t.jsonl", 2, "blank_line", "warning", "a")
    second = Diagnostic("t.jsonl", 3, "invalid_json", "error", "b")
    log = SessionLog("t.jsonl", "t", HEADER, 4, [], [first, second], 0, [])
    assert runtime_read(log, content).stop == first
    torn = [Diagnostic("t.jsonl", 2, "torn_tail", "warning", "a"),
            Diagnostic("t.jsonl", 3, "torn_tail", "warning", "b")]
    log = SessionLog("t.jsonl", "t", HEADER, 4, [], torn, 0, [])
    assert runtime_read(log, content).cut == Fragment(2, len(encode([HEADER])), len(content)
                                                      - len(encode([HEADER])))


def test_an_error_on_the_stop_line_itself_does_not_refuse_the_log() -> None:
    # seq 5 after seq 0 stops the reading at line 3; that line's orphan result is cut with it
    good = encode([HEADER, turn_start(0)])
    stray = encode([tool_result(5, "Z")])
    log, read_back = read(good + stray)
    assert [(d.kind, d.line) for d in log.diagnostics] == [("seq_gap", 3), ("orphan_result", 3)]
    assert read_back.refusal is None
    assert read_back.cut == Fragment(3, len(good), len(stray))
