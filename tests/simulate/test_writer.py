import random
from pathlib import Path

import pytest

from ledgerviz.ledger.writer import encode_line, encode_source_seqs
from ledgerviz.simulate.clock import SimClock
from ledgerviz.simulate.writer import LedgerWriter, ProcessCrash

HEADER = {"type": "session", "version": 4, "id": "w", "createdAt": 5, "isSeeded": False}


@pytest.mark.parametrize(
    ("seqs", "stored"),
    [
        ([4, 5, 6, 7, 9], [[4, 7], 9]),
        ([4, 5], [4, 5]),
        ([19, 20, 4], [19, 20, 4]),
        ([1, 2, 3, 5, 6, 7, 8, 10], [[1, 3], [5, 8], 10]),
        ([3], [3]),
    ],
)
def test_source_seqs_are_range_encoded_like_the_runtime(seqs: list[int], stored: list) -> None:
    assert encode_source_seqs(seqs) == stored


def _writer(path: Path, **options) -> LedgerWriter:
    return LedgerWriter.create(path, HEADER, SimClock(1000, random.Random(0)), **options)


def test_envelope_key_order_seq_and_time(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    with _writer(path) as writer:
        writer.append("turn/start", {"turn": 1})
        writer.clock.advance(7)
        writer.append("tool/result", {"turn": 1}, surface_op="append", source_seqs=[0])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[1] == '{"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}'
    assert lines[2] == (
        '{"type":"tool/result","seq":1,"time":1007,"data":{"turn":1},'
        '"surfaceOp":"append","sourceEventSeqs":[0]}'
    )


def test_commit_refuses_a_seq_that_is_not_next(tmp_path: Path) -> None:
    with (
        _writer(tmp_path / "l.jsonl") as writer,
        pytest.raises(ValueError, match="not the next seq 0"),
    ):
        writer.commit({"type": "turn/start", "seq": 3, "time": 1, "data": {}})


def test_crash_point_stops_after_the_matching_event(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    seen: list[int] = []
    writer = _writer(path, crash_point=lambda e: e["seq"] == 1)
    writer.observers.append(lambda e: seen.append(e["seq"]))
    with writer, pytest.raises(ProcessCrash):
        for turn in range(5):
            writer.append("turn/start", {"turn": turn})
    assert seen == [0, 1]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 3


def test_torn_append_writes_half_a_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    writer = _writer(path, crash_point=lambda e: e["seq"] == 0, tear_after_crash=True)
    with writer:
        writer.append("turn/start", {"turn": 1})
        with pytest.raises(ProcessCrash):
            writer.append("step/start", {"turn": 1, "step": 1})
    text = path.read_text(encoding="utf-8")
    full = encode_line(
        {"type": "step/start", "seq": 1, "time": 1000, "data": {"turn": 1, "step": 1}}
    )
    assert not text.endswith("\n")
    assert text.split("\n")[-1] == full[: len(full) // 2]
    assert writer.next_seq == 1
