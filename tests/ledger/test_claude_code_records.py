"""Claude Code records: the fast path for well-shaped lines and the checked path for odd
ones give the fields and diagnostics worked out by hand here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ledgerviz
from ledgerviz.ledger.formats.claude_code_records import UNKNOWN, record_of

JAN_5_10H_MS = 1_767_607_200_000
"""2026-01-05T10:00:00Z in epoch ms: 2026-01-01 is 1,767,225,600 s; plus 4 days 10 hours
(381,600 s)."""


class _Sink:
    def __init__(self) -> None:
        self.seen: list[tuple[int, str, str]] = []

    def add(self, line: int, kind: str, message: str, severity: str = "error") -> None:
        self.seen.append((line, kind, severity))


def _record(value: Any) -> tuple[Any, list[tuple[int, str, str]]]:
    sink = _Sink()
    return record_of(value, 3, sink), sink.seen


def test_a_naive_and_an_offset_timestamp_read_as_utc_milliseconds() -> None:
    naive, seen = _record({"type": "user", "uuid": "u1", "parentUuid": "u0", "sessionId": "s",
                           "timestamp": "2026-01-05T10:00:00",
                           "message": {"role": "user", "content": "hi"}})
    assert seen == []
    assert (naive.line, naive.kind, naive.uuid, naive.parent, naive.session) == \
        (3, "user", "u1", "u0", "s")
    assert naive.time == JAN_5_10H_MS and naive.prompt and not naive.sidechain
    offset, seen = _record({"type": "assistant", "uuid": "a1", "parentUuid": "u1",
                            "timestamp": "2026-01-05T12:00:00.250+02:00", "isSidechain": True,
                            "message": {"id": "m", "content": []}})
    assert seen == []
    assert offset.time == JAN_5_10H_MS + 250 and offset.sidechain and not offset.prompt


def test_odd_fields_are_diagnosed_and_read_as_absent() -> None:
    listed, seen = _record({"type": ["user"], "uuid": "u2", "parentUuid": "u1"})
    assert listed.kind == UNKNOWN and seen == [(3, "wrong_shape", "warning")]
    numbered, seen = _record({"type": "assistant", "uuid": 5, "parentUuid": "u1",
                              "timestamp": "noon", "message": {"id": "m", "content": []}})
    assert (numbered.uuid, numbered.time) == (None, None)
    assert seen == [(3, "wrong_shape", "warning"), (3, "wrong_shape", "warning")]
    no_message, seen = _record({"type": "user", "uuid": "u3", "parentUuid": "u1"})
    assert no_message.message is None and not no_message.prompt
    assert seen == [(3, "wrong_shape", "warning")]


def test_a_compact_boundary_without_a_parent_takes_its_logical_parent() -> None:
    boundary, seen = _record({"type": "system", "subtype": "compact_boundary", "uuid": "b",
                              "parentUuid": None, "logicalParentUuid": "u1"})
    assert boundary.parent == "u1" and seen == []


def test_an_interrupt_note_is_no_prompt() -> None:
    note, _ = _record({"type": "user", "uuid": "u4", "parentUuid": "u3",
                       "message": {"content": "[Request interrupted by user]"}})
    assert not note.prompt


def test_a_parent_later_in_the_file_is_no_cycle(tmp_path: Path) -> None:
    lines = [b'{"type":"system","uuid":"s1","parentUuid":"s2","sessionId":"x"}',
             b'{"type":"system","uuid":"s2","parentUuid":null,"sessionId":"x"}']
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    session = ledgerviz.load(path, format="claude_code").sessions[0]
    assert not [d for d in session.diagnostics if d.kind == "parent_cycle"]
    assert [e["type"] for e in session.events] == ["claude-code/system"] * 2
