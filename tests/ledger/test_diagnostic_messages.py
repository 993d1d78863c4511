"""Diagnostic messages word for word, where the mutation run found only a fragment checked
(expected texts written out by hand: positions and sizes counted in the test's own bytes)."""

from __future__ import annotations

import orjson
import pytest
from ledger_lines import HEADER, encode, mark, turn_start

from ledgerviz.ledger import read_session
from ledgerviz.ledger.checks import check_events
from ledgerviz.ledger.decode import decode_lines
from ledgerviz.ledger.diagnostics import DiagnosticLog
from ledgerviz.ledger.reader import read_chunks
from ledgerviz.ledger.shapes import MAX_INTEGER


def diagnostics(content: bytes) -> list[tuple[str, int, str]]:
    return [(d.kind, d.line, d.message) for d in read_session("x.jsonl", content).diagnostics]


def orjson_refusal(raw: bytes) -> str:
    """Return orjson's own message for a line it refuses (what the reader quotes)."""
    with pytest.raises(orjson.JSONDecodeError) as refused:
        orjson.loads(raw)
    return str(refused.value)


def test_the_first_bad_byte_of_a_line_is_counted_from_one() -> None:
    bad = b'{"a":"\xff"}'  # the 7th byte is not UTF-8
    content = encode([HEADER, turn_start(0), bad, mark(1)])
    assert diagnostics(content) == [
        ("invalid_utf8", 3, "byte 7 of the line is not valid UTF-8")
    ]


@pytest.mark.parametrize("cut", [None, 3], ids=["whole", "bad line in the first chunk"])
def test_a_torn_tail_is_listed_first_counted_and_sized(cut: int | None) -> None:
    lines = [HEADER, turn_start(0), b"{not json", mark(1)]
    torn = b'{"type":"step/st'  # 16 bytes
    chunks = [encode(lines) + torn] if cut is None else [encode(lines[:cut]),
                                                          encode(lines[cut:]) + torn]
    log = read_chunks("x.jsonl", chunks)
    assert [(d.kind, d.line) for d in log.diagnostics] == [("torn_tail", 5), ("invalid_json", 3)]
    assert log.diagnostics[0].message == (
        "last line has no newline (16 bytes): an interrupted append, dropped"
    )
    assert log.lines_skipped == 2


def test_unknown_types_are_named_kept_or_not_ignorable() -> None:
    ignorable = {"type": "brand/new", "seq": 1, "data": {}, "ignorable": True}
    required = {"type": "brand/other", "seq": 2, "data": {}}
    assert diagnostics(encode([HEADER, turn_start(0), ignorable, required])) == [
        ("unknown_ignorable_event", 3, "unknown type 'brand/new' kept"),
        ("unknown_required_event", 4, "unknown type 'brand/other' not ignorable"),
    ]


def test_a_second_header_without_an_id_is_not_named() -> None:
    second = {"type": "session", "version": 4, "createdAt": 0}
    assert diagnostics(encode([HEADER, turn_start(0), second, mark(1)])) == [
        ("second_header", 3, "a second session header in the middle of the file: two ledgers "
         "concatenated? Only the first header counts"),
    ]


def test_envelope_problems_name_the_type_found() -> None:
    not_an_object = {"type": "turn/start", "seq": 0, "data": [1]}
    seqless_bad_time = {"type": "turn/start", "time": 1.5, "data": {"turn": 1}}
    assert diagnostics(encode([HEADER, not_an_object])) == [
        ("invalid_event", 2, "turn/start: 'data' must be an object, not array")
    ]
    assert diagnostics(encode([HEADER, seqless_bad_time])) == [
        ("invalid_event", 2, "turn/start: 'time' must be an integer, not number")
    ]


def test_an_undecodable_last_line_is_a_dropped_torn_tail() -> None:
    content = encode([HEADER, turn_start(0), b'{"type":"tu'])
    assert diagnostics(content) == [
        ("torn_tail", 3, "last line is no JSON (11 bytes): an interrupted append, dropped")]


def test_two_unknown_types_keep_their_own_names() -> None:
    first = {"type": "brand/new", "seq": 1, "data": {}, "ignorable": True}
    second = {"type": "brand/other", "seq": 2, "data": {}, "ignorable": True}
    log = read_session("x.jsonl", encode([HEADER, turn_start(0), first, second]))
    assert log.event_table().types == ["turn/start", "brand/new", "brand/other"]


def test_a_replayed_stretch_is_reported_once() -> None:
    # seqs 0 1 2 3, then 1 2 3 again, then 4: only the step back (line 6) is reported
    seqs = [0, 1, 2, 3, 1, 2, 3, 4]
    content = encode([HEADER, *(mark(seq) for turn, seq in enumerate(seqs, 1))])
    assert diagnostics(content) == [
        ("seq_gap", 6, "seq 1 repeats or goes backwards (expected 4)")
    ]


def test_a_step_back_after_counting_on_in_order_is_reported_again() -> None:
    # seqs 0 1 2 3, the replay 1 2 3, then 4 5 in order and 4 again: the replay has
    # ended, so the second 4 is a new step back (line 11), not the replay going on
    seqs = [0, 1, 2, 3, 1, 2, 3, 4, 5, 4]
    content = encode([HEADER, *(mark(seq) for turn, seq in enumerate(seqs, 1))])
    assert diagnostics(content) == [
        ("seq_gap", 6, "seq 1 repeats or goes backwards (expected 4)"),
        ("seq_gap", 11, "seq 4 repeats or goes backwards (expected 6)"),
    ]


def test_a_first_event_numbered_below_zero_is_a_step_back() -> None:
    first = {"type": "turn/start", "seq": -1, "time": 1, "data": {"turn": 1}}
    assert diagnostics(encode([HEADER, first])) == [
        ("seq_gap", 2, "seq -1 repeats or goes backwards (expected 0)")
    ]


def test_a_step_back_after_a_gap_is_reported() -> None:
    seqs = [0, 1, 3, 1]  # 2 missing (line 4), then 1 again (line 5)
    content = encode([HEADER, *(mark(seq) for turn, seq in enumerate(seqs, 1))])
    assert diagnostics(content) == [
        ("seq_gap", 4, "expected seq 2, found 3: 1 missing"),
        ("seq_gap", 5, "seq 1 repeats or goes backwards (expected 4)"),
    ]


def test_ranged_source_seqs_on_a_type_without_a_payload_check_are_checked_in_full() -> None:
    ranged = {**turn_start(0), "sourceEventSeqs": [[0, 0]]}  # a well-formed range
    assert diagnostics(encode([HEADER, ranged])) == [
        ("invalid_event", 2, "turn/start carries surface fields but is not a surface type "
         f"in version {HEADER['version']}"),
    ]


def test_a_blank_line_and_a_line_of_bad_json_word_for_word() -> None:
    content = encode([HEADER]) + b"\n{nope\n" + encode([turn_start(0)])
    log = read_session("x.jsonl", content)
    assert [(d.kind, d.line, d.message, d.severity) for d in log.diagnostics] == [
        ("blank_line", 2, "empty line between events", "error"),
        ("invalid_json", 3, f"not valid JSON: {orjson_refusal(b'{nope')}", "error"),
    ]


@pytest.mark.parametrize(("seq", "time", "expected"), [
    (MAX_INTEGER, 1, [("seq_gap", 3, f"expected seq 1, found {MAX_INTEGER}: "
                                     f"{MAX_INTEGER - 1} missing")]),
    (-MAX_INTEGER, 1, [("seq_gap", 3, f"seq {-MAX_INTEGER} repeats or goes backwards "
                                      "(expected 1)")]),
    (1, MAX_INTEGER, []),
    (1, -MAX_INTEGER, []),
])
def test_seqs_and_times_at_the_exact_limits_are_kept(seq: int, time: int, expected: list) -> None:
    edge = {**mark(seq), "time": time}
    log = read_session("x.jsonl", encode([HEADER, turn_start(0), edge]))
    assert [(d.kind, d.line, d.message) for d in log.diagnostics] == expected
    assert [event["seq"] for event in log.events] == [0, seq]


@pytest.mark.parametrize(("line", "kept"), [
    ([1, 2], [0, 2]),  # not an object
    ({**HEADER, "id": "second"}, [0, 2]),  # a second header
    ({"type": "text-chunks", "data": []}, [0, 2]),  # a malformed packed row
    ({"type": "turn/start", "seq": "1", "data": {}}, [0, 2]),  # an unusable envelope
    ({"type": "tool/call", "seq": 1, "data": {"callId": [5]}}, [0, 2]),  # a malformed payload
])
def test_a_line_that_gives_no_event_is_left_out(line: object, kept: list[int]) -> None:
    log = read_session("x.jsonl", encode([HEADER, turn_start(0), line, mark(2)]))
    assert [event["seq"] for event in log.events] == kept
    assert log.lines_skipped == 1


def test_decode_lines_looks_for_big_integers_and_repeated_keys_only_when_asked() -> None:
    lines = [b'{"a":1,"a":2}', b'{"n":12345678901234567890123}']
    log = DiagnosticLog("x.jsonl", strict=False)
    values = decode_lines(lines, 2, log, last_may_be_torn=False)
    assert values == [{"a": 2}, orjson.loads(lines[1])]  # orjson's float, not the exact int
    assert log.items == []


def test_header_and_file_level_messages_word_for_word() -> None:
    assert diagnostics(b"{nope\n" + encode([turn_start(0)]))[0] == (
        "bad_header", 1,
        "line 1 should be the session header: invalid_json: not valid JSON: "
        f"{orjson_refusal(b'{nope')}",
    )
    assert diagnostics(encode([{**HEADER, "id": 5}, turn_start(0)])) == [
        ("bad_header", 1, "header 'id' must be a string, not number: ignored")
    ]
    versionless = {key: value for key, value in HEADER.items() if key != "version"}
    assert diagnostics(encode([versionless, turn_start(0)])) == [
        ("missing_version", 1, "header has no 'version': read as v0")
    ]
    assert diagnostics(b"\xef\xbb\xbf" + encode([HEADER, turn_start(0)])) == [
        ("byte_order_mark", 1, "file starts with a UTF-8 byte order mark: read past it, but "
         "the runtime refuses the file")
    ]
    assert diagnostics(b"") == [("empty_file", 1, "file is empty: no header, no events")]


def test_a_binary_file_is_not_a_ledger_and_its_first_bytes_are_quoted_escaped() -> None:
    opening = b"\xc0\xaf binary"  # no UTF-8 (and no byte order mark)
    shown = opening.decode("utf-8", "backslashreplace")  # what the message quotes
    # line 1 is no header and the two lines after it give no event: 3 lines lost
    log = read_session("x.jsonl", opening + b"\n\x00\x01\n\x02\n")
    assert [(d.path, d.kind, d.line, d.severity, d.message) for d in log.diagnostics] == [
        ("x.jsonl", "not_a_ledger", 1, "error",
         f"not a ledger: no line is a JSON event (line 1: {shown!r}; 3 lines skipped)"),
    ]


def test_a_block_checked_without_a_state_stands_alone() -> None:
    events = [turn_start(0), mark(2)]
    log = DiagnosticLog("x.jsonl", strict=False)
    checked = check_events(events, 2, 4, log)
    assert checked.events == events
    assert [(d.line, d.message) for d in log.items] == [(3, "expected seq 1, found 2: 1 missing")]


def test_events_counting_on_after_a_packed_row_that_steps_back_are_not_reported() -> None:
    v1 = {"type": "session", "version": 1, "id": "packed", "createdAt": 0}
    row = {"type": "text-chunks", "seq0": 1, "time0": 5,
           "data": {"turn": 1, "step": 1, "index": 0, "texts": ["a", "b"], "dt": [1]}}
    # seqs 0 1 2 3, the row's 1 2, then 3 (counting on from the row) and 4
    lines = [v1, turn_start(0), *(mark(seq) for seq in range(1, 4)), row, mark(3), mark(4)]
    assert diagnostics(encode(lines)) == [
        ("seq_gap", 6, "seq 1 repeats or goes backwards (expected 4)")
    ]


def test_header_problems_word_for_word() -> None:
    odd = {"type": "session", "version": 4, "id": "t", "createdAt": "noon", "colour": "red"}
    assert diagnostics(encode([odd, turn_start(0)])) == [
        ("bad_header", 1, "header 'createdAt' must be an integer, not string: ignored"),
        ("unknown_header_key", 1,
         "header key 'colour' is not in any known version: the runtime refuses the log"),
    ]
    assert diagnostics(encode([[1, 2], turn_start(0)])) == [
        ("bad_header", 1, "missing session header: line 1 holds no session header"),
    ]
    assert diagnostics(encode([{**HEADER, "version": 9}, turn_start(0)])) == [
        ("unsupported_version", 1,
         "format version 9 is not supported (known: 0, 1, 2, 3, 4); events not read"),
    ]


def test_a_message_event_without_a_surface_op_says_so() -> None:
    said = {"type": "user/message", "seq": 0, "data": {"role": "user", "content": []}}
    assert diagnostics(encode([HEADER, said])) == [
        ("invalid_event", 2, "user/message: 'surfaceOp' missing or not understood"),
    ]


def test_a_surface_op_not_understood_is_kept_as_written() -> None:
    said = {"type": "user/message", "seq": 0, "surfaceOp": "append",
            "data": {"role": "user", "content": []}}
    odd = {**said, "seq": 1, "surfaceOp": "prepend"}
    log = read_session("x.jsonl", encode([HEADER, said, odd]))
    assert [(d.kind, d.line, d.message) for d in log.diagnostics] == [
        ("invalid_event", 3, "user/message: 'surfaceOp' missing or not understood"),
    ]
    assert log.event_fields().surface_ops == ["append", "prepend"]


def test_a_file_that_is_not_a_ledger_quotes_the_first_40_bytes_of_line_1() -> None:
    first = b"0123456789" * 5  # 50 bytes, not JSON
    log = read_session("x.jsonl", first + b"\n" + b"a,b\n")
    assert [(d.kind, d.line, d.message) for d in log.diagnostics] == [
        ("not_a_ledger", 1, "not a ledger: no line is a JSON event "
         f"(line 1: {'0123456789' * 4!r}; 2 lines skipped)"),  # line 1 is no header either
    ]
