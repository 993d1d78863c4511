"""A foreign reader's events sealed a window at a time (``formats/sealed.py``): what a
session holds is what the reader wrote, whatever the window; an event changed after its
window was sealed keeps the change, in its dict and in the table."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import orjson
import pytest

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.formats import sealed
from ledgerviz.ledger.formats.sealed import EventStore, SealedEvents
from ledgerviz.ledger.table import EventTable

DATA = Path(__file__).parent.parent / "data"
FILES = sorted(path for name in ("claude_code", "codex", "gemini")
               for path in (DATA / name).rglob("*.json*"))


def _event(seq: int) -> dict:
    return {"type": "note", "seq": seq, "time": 1000 + seq, "data": {"n": seq}}


def _same_table(made: EventTable, read: EventTable) -> None:
    assert made.types == read.types
    for field in fields(EventTable):
        if field.name not in ("type_names", "type_code"):
            assert getattr(made, field.name) == getattr(read, field.name), field.name


def test_a_store_seals_whole_windows_and_keeps_a_late_change(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sealed, "WINDOW", 4)
    events: list = []
    lines: list[int] = []
    store = EventStore(events, lines)
    for seq in range(10):
        events.append(_event(seq))
        lines.append(seq + 1)
    store.seal_before(9)  # windows 0-3 and 4-7 hold no event from 9 on
    assert events[:8] == [None] * 8
    assert events[8:] == [_event(8), _event(9)]
    store.live(5)["data"]["n"] = "changed"  # its window comes back, to be sealed anew
    assert events[4:8] == [_event(4), {**_event(5), "data": {"n": "changed"}}, _event(6),
                           _event(7)]
    held, held_lines, table = store.finished()
    expected = [_event(seq) for seq in range(10)]
    expected[5]["data"]["n"] = "changed"
    assert isinstance(held, SealedEvents)
    assert list(held) == expected
    assert held_lines == list(range(1, 11))
    _same_table(table, EventTable.of(expected, list(range(1, 11))))


def test_sealed_events_index_slice_and_compare_as_a_list() -> None:
    expected = [_event(seq) for seq in range(7)]
    held = SealedEvents([orjson.dumps(expected[:3]), orjson.dumps(expected[3:6]),
                         orjson.dumps(expected[6:])], 7, size=3)
    assert len(held) == 7
    assert held[4] == expected[4]
    assert held[-1] == expected[6]
    assert held[2:5] == expected[2:5]
    assert held[::3] == [expected[0], expected[3], expected[6]]
    assert held == expected
    assert held[4] is held[4]  # decoded once, kept: the same dict each time
    with pytest.raises(IndexError):
        held[7]


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(DATA)))
def test_a_window_of_two_events_reads_every_fixture_as_one_window(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sealed every two events (each Codex step's messages and outputs, each Claude Code
    record, sealed as soon as the reader lets it) or never: the same sessions."""
    monkeypatch.setattr(sealed, "WINDOW", 10**9)
    whole = read_sessions(path)
    monkeypatch.setattr(sealed, "WINDOW", 2)
    small = read_sessions(path)
    assert [log.key for log in small] == [log.key for log in whole]
    for one, other in zip(small, whole, strict=True):
        assert list(one.events) == list(other.events)
        assert list(one.lines) == list(other.lines)
        assert one.call_reasons == other.call_reasons
        assert one.diagnostics == other.diagnostics
        assert one.table is not None and other.table is not None
        _same_table(one.table, other.table)


ROLLOUT = [
    {"type": "session_meta", "payload": {"id": "late-exit", "timestamp": "2026-01-05T10:00:00Z"}},
    {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}},
    {"type": "response_item", "payload": {"type": "message", "role": "user",
                                          "content": [{"type": "input_text", "text": "go"}]}},
    {"type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                          "call_id": "c1", "arguments": "{}"}},
    {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                          "output": "done"}},
    *[{"type": "event_msg", "payload": {"type": "agent_reasoning", "text": f"note {n}"}}
      for n in range(6)],
    {"type": "event_msg", "payload": {"type": "exec_command_end", "call_id": "c1",
                                      "exit_code": 2}},
    {"type": "event_msg", "payload": {"type": "task_complete", "turn_id": "t1"}},
]


def test_an_exit_code_after_its_output_was_sealed_still_makes_it_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output of c1 (seq 6: the session_meta log-only 0, turn/start 1, user 2, step/start
    3, assistant 4, tool/call 5) is sealed with its window long before line 12's exit code 2
    makes it an error."""
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"timestamp": "2026-01-05T10:00:01Z", **line})
                              + b"\n" for line in ROLLOUT))
    monkeypatch.setattr(sealed, "WINDOW", 2)
    log = read_sessions(path)[0]
    result = log.events[6]
    assert result["type"] == "tool/result"
    assert result["data"]["message"]["isError"] is True
    assert log.table is not None
    assert log.table.column("is_error")[6] == 1


class _Rows:
    """A derivation whose event of row n is ``_event(n)``, noting each window asked for."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    def window(self, first: int, stop: int) -> list[dict]:
        self.asked.append((first, stop))
        return [_event(seq) for seq in range(first, stop)]


def test_derived_events_derive_a_window_when_first_asked_for_and_keep_it() -> None:
    rows = _Rows()
    events = sealed.DerivedEvents(rows, 1030)  # windows 0-511, 512-1023, 1024-1029
    assert len(events) == 1030 and rows.asked == []
    assert events[600] == _event(600) and rows.asked == [(512, 1024)]
    assert events[600] is events[600] and events[-1] == _event(1029)
    assert rows.asked == [(512, 1024), (1024, 1030)]
    assert events[510:514] == [_event(510), _event(511), _event(512), _event(513)]
    assert rows.asked == [(512, 1024), (1024, 1030), (0, 512)]
    assert events == [_event(seq) for seq in range(1030)]
    assert len(rows.asked) == 3  # each window derived once
    with pytest.raises(IndexError):
        events[1030]
