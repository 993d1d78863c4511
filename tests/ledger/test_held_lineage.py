"""A typed block's lineage events are held as read: their payloads never read the file again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ledger_lines import HEADER, encode, mark, tool_result, turn_start

import ledgerviz
from ledgerviz.ledger import UnreadableSourceError, read_sessions
from ledgerviz.ledger.lazy_events import LazyEvents
from ledgerviz.ledger.reader import READ_BYTES

Writer = Callable[..., Path]

SEED_END = {"type": "session/end-seed", "seq": 3, "time": 1003, "data": {"inherited": True}}
"""The end of a seed of 3 events (seqs 0-2), written as a fork's child holds it."""


def _seeded() -> list[dict]:
    return [turn_start(0), mark(1), mark(2), SEED_END, mark(4)]


def test_a_seed_marker_is_held_and_the_other_events_stay_on_disk(write_ledger: Writer) -> None:
    path = write_ledger([HEADER, *_seeded()])
    (log,) = read_sessions(path)
    assert isinstance(log.events, LazyEvents) and log.diagnostics == []  # the typed route
    path.unlink()
    assert log.events[3] == SEED_END  # held: the file is gone
    with pytest.raises(UnreadableSourceError):
        log.events[1]  # decoded on demand: it needs the file


def test_a_seeded_sessions_frames_read_no_file(write_ledger: Writer) -> None:
    path = write_ledger([HEADER, *_seeded()])
    ledger = ledgerviz.load(path)
    path.unlink()
    events = ledger.frames.events
    # the 3 events before the seed's end are the parent's (the marker's seq, hand-counted)
    assert events["inherited"].tolist() == [True, True, True, False, False]
    assert ledger.frames.lineage["relation"].tolist() == ["fork"]


def test_held_lineage_rows_merge_with_a_dict_route_block(write_ledger: Writer) -> None:
    lines = _seeded()
    count = READ_BYTES // len(encode([mark(5)]))  # the marks up to seq 99,999 are no shorter
    lines.extend(mark(seq) for seq in range(5, 5 + count))
    assert len(encode(lines)) > READ_BYTES  # a first block of typed events
    orphan = tool_result(len(lines), "never-asked")  # an error: the next block, dict route
    lines.append(orphan)
    path = write_ledger([HEADER, *lines])
    (log,) = read_sessions(path)
    assert [d.kind for d in log.diagnostics] == ["orphan_result"]
    path.unlink()
    assert log.events[3] == SEED_END and log.events[len(lines) - 1] == orphan
    with pytest.raises(UnreadableSourceError):
        log.events[4]
