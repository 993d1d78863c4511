"""A dsh session's events decoded on demand from the file's bytes (``ledger.lazy_events``),
its table filled by the read route with each event's byte range (``ledger.tabled``)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from ledger_lines import HEADER, assistant_calls, encode, mark, tool_result, turn_start

from ledgerviz.ledger import UnreadableSourceError, read_sessions
from ledgerviz.ledger.lazy_events import WINDOW, LazyEvents
from ledgerviz.ledger.reader import READ_BYTES
from ledgerviz.ledger.reread import END_KEPT, LedgerChangedError

Writer = Callable[..., Path]


def _marks(count: int) -> list[dict]:
    return [turn_start(0), *(mark(seq) for seq in range(1, count))]


def test_events_are_the_lines_decoded_by_index_slice_and_iteration(write_ledger: Writer) -> None:
    events = [*_marks(WINDOW + 10), assistant_calls(WINDOW + 10, "c1"),
              tool_result(WINDOW + 11, "c1")]
    (log,) = read_sessions(write_ledger([HEADER, *events]))
    assert isinstance(log.events, LazyEvents)
    assert len(log.events) == len(events)
    assert log.events == events and events == list(log.events)
    assert log.events[-1] == events[-1] and log.events[WINDOW] == events[WINDOW]
    assert log.events[3:WINDOW + 5:7] == events[3:WINDOW + 5:7]
    assert log.events[5] is log.events[5]  # kept once decoded: the same dict, as a list gave
    with pytest.raises(IndexError):
        log.events[len(events)]


def test_each_event_row_holds_its_line_byte_range(write_ledger: Writer) -> None:
    path = write_ledger([HEADER, *_marks(50)])
    (log,) = read_sessions(path)
    content = path.read_bytes()
    lines = content.split(b"\n")
    table = log.event_table()
    assert list(table.line) == list(range(2, 52))
    for start, stop, line in zip(table.start, table.stop, table.line, strict=True):
        assert content[start:stop] == lines[line - 1] and content[stop:stop + 1] == b"\n"


def test_byte_ranges_count_a_byte_order_mark_leading_blanks_and_a_cut_line(
    write_ledger: Writer,
) -> None:
    # the NUL line, longer than a read block, is held only up to its NUL (reader._lines_of)
    nul_line = b'{"type": "mark", "data": {"x": "\x00' + b"a" * 3 * READ_BYTES + b'"}}'
    marks = _marks(6)
    path = write_ledger([b"", b" ", HEADER, *marks[:3], nul_line, *marks[3:]])
    content = b"\xef\xbb\xbf" + path.read_bytes()
    path.write_bytes(content)
    (log,) = read_sessions(path)
    assert log.events == marks  # the blank and the cut lines give no events
    table = log.event_table()
    for row, start in enumerate(table.start):
        assert orjson.loads(content[start:table.stop[row]]) == marks[row]


def test_a_block_checked_the_dict_route_keeps_its_events(write_ledger: Writer) -> None:
    events = _marks(20)
    orphan = tool_result(20, "never-asked")  # an error: its block is checked the usual way
    path = write_ledger([HEADER, *events, orphan])
    (log,) = read_sessions(path)
    assert "orphan_result" in {d.kind for d in log.diagnostics}
    assert log.events == [*events, orphan]
    path.unlink()  # the dicts were kept: nothing is read again
    assert log.events[20] == orphan


def test_events_of_a_file_appended_to_still_read(write_ledger: Writer) -> None:
    path = write_ledger([HEADER, *_marks(30)])
    (log,) = read_sessions(path)
    with path.open("ab") as handle:
        handle.write(orjson.dumps(mark(30)) + b"\n")
    assert log.events == _marks(30)


def test_a_file_changed_since_it_was_read_is_an_error_not_other_events(
    write_ledger: Writer,
) -> None:
    path = write_ledger([HEADER, *_marks(30)])
    (log,) = read_sessions(path)
    path.write_bytes(encode([HEADER, *(mark(seq) for seq in range(100, 130))]))
    with pytest.raises(LedgerChangedError, match="changed since it was read"):
        log.events[0]


def test_a_file_gone_since_it_was_read_is_a_clear_error(write_ledger: Writer) -> None:
    path = write_ledger([HEADER, *_marks(30)])
    (log,) = read_sessions(path)
    path.unlink()
    assert len(log.events) == 30 and len(log.event_table()) == 30
    with pytest.raises(UnreadableSourceError, match="cannot read its events again"):
        log.events[0]


def test_a_binary_stream_keeps_its_bytes() -> None:
    events = _marks(40)
    stream = io.BytesIO(encode([HEADER, *events]))
    (log,) = read_sessions(stream)
    stream.close()
    assert log.events == events


def test_a_line_moved_in_the_same_file_is_an_error_not_other_events(
    write_ledger: Writer,
) -> None:
    path = write_ledger([HEADER, *_marks(300)])
    (log,) = read_sessions(path)
    assert path.stat().st_size > END_KEPT  # line 10 is before the end kept
    middle = log.event_table().start[10] + 5
    with path.open("r+b") as handle:  # same file, size and end: one line split in two
        handle.seek(middle)
        handle.write(b"\n")
    with pytest.raises(LedgerChangedError, match="the line of event 10 is no longer where"):
        log.events[0]
