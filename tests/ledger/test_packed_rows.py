"""``expand_packed_row``: each malformation gets its own message; valid rows expand exactly.

Messages and chunk events are literals written from the v0/v1 packed-row shape
(LEDGER_FORMAT.md): ``seq0``/``time0``, ``data.dt`` one shorter than the payload.
"""

from __future__ import annotations

import pytest
from ledger_lines import encode, turn_start

from ledgerviz.ledger import read_session
from ledgerviz.ledger.numbers import holds_big_integer
from ledgerviz.ledger.packed import expand_packed_row

DT_LENGTH = "packed row 'dt' must have one element fewer than its payload"


def text_row(**data: object) -> dict:
    return {"type": "text-chunks", "seq0": 4, "time0": 100,
            "data": {"turn": 1, "step": 2, "index": 0, **data}}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"type": "text-chunks", "data": []}, "packed row without a data object"),
        (text_row(texts="ab"), "packed text-chunks row without a non-empty texts list"),
        (text_row(texts=[]), "packed text-chunks row without a non-empty texts list"),
        ({"type": "tool-call-chunks", "data": {"args": []}},
         "packed tool-call-chunks row without a non-empty args list"),
        (text_row(texts=["a", "b"]), DT_LENGTH),
        (text_row(texts=["a"], dt=5), DT_LENGTH),
        ({**text_row(texts=["a"]), "seq0": "4"},
         "packed row: 'seq0' must be an integer, not string"),
        ({**text_row(texts=["a"]), "time0": 1.5},
         "packed row: 'time0' must be an integer, not number"),
        (text_row(texts=["a"], turn="1"), "packed row: 'data.turn' must be an integer, not string"),
        (text_row(texts=["a"], step=[2]), "packed row: 'data.step' must be an integer, not array"),
        (text_row(texts=["a", "b"], dt=[-1]), "packed row 'dt' must hold non-negative integers"),
        ({"type": "tool-call-chunks", "data": {"args": ["{", 7], "dt": [1]}},
         "packed tool-call-chunks row 'args' must hold strings"),
    ],
)  # fmt: skip
def test_each_malformed_row_says_what_is_wrong(row: dict, message: str) -> None:
    assert expand_packed_row(row) == message


def test_one_text_without_dt_is_one_chunk() -> None:
    assert expand_packed_row(text_row(texts=["only"])) == [
        {"type": "assistant/chunk", "seq": 4, "time": 100,
         "data": {"turn": 1, "step": 2,
                  "chunk": {"type": "text-delta", "index": 0, "text": "only"}}}
    ]


def test_a_zero_delta_repeats_the_time() -> None:
    events = expand_packed_row(text_row(texts=["a", "b", "c"], dt=[0, 3]))
    assert isinstance(events, list)
    assert [(e["seq"], e["time"], e["data"]["chunk"]["text"]) for e in events] == [
        (4, 100, "a"), (5, 100, "b"), (6, 103, "c")
    ]


def test_integer_bounds_of_a_64_bit_decoder() -> None:
    assert not holds_big_integer([-(2**63), 2**64 - 1, {"a": 0}])
    assert holds_big_integer({"a": [-(2**63) - 1]})
    assert holds_big_integer([2**64])


def test_the_largest_delta_the_runtime_writes_is_accepted_and_one_more_is_not() -> None:
    row = {**text_row(texts=["a", "b"], dt=[2**53 - 1]), "time0": 0}
    events = expand_packed_row(row)
    assert isinstance(events, list)
    assert [e["time"] for e in events] == [0, 2**53 - 1]
    assert expand_packed_row(text_row(texts=["a", "b"], dt=[2**53])) == (
        "packed row 'dt' must hold non-negative integers"
    )


def packed_ledger(seq0: int | None) -> bytes:
    row = {"type": "text-chunks", "time0": 5,
           "data": {"turn": 1, "step": 1, "index": 0, "texts": ["a", "b", "c"], "dt": [1, 2]}}
    if seq0 is not None:
        row["seq0"] = seq0
    header = {"type": "session", "version": 1, "id": "packed", "createdAt": 0}
    return encode([header, turn_start(0), row, turn_start(6, 2)])


def test_a_packed_row_takes_seqs_from_its_seq0() -> None:
    # seq 0, then chunks 3-5 (1 and 2 missing), then seq 6 continues them
    log = read_session("p.jsonl", packed_ledger(3))
    assert [(d.kind, d.line, d.message) for d in log.diagnostics] == [
        ("seq_gap", 3, "expected seq 1, found 3: 2 missing")
    ]
    assert [e.get("seq") for e in log.events] == [0, 3, 4, 5, 6]


def test_a_packed_row_without_seq0_takes_the_next_seqs() -> None:
    # chunks take 1-3, so seq 6 leaves 4 and 5 missing
    log = read_session("p.jsonl", packed_ledger(None))
    assert [(d.kind, d.line, d.message) for d in log.diagnostics] == [
        ("seq_gap", 4, "expected seq 4, found 6: 2 missing")
    ]
    assert log.fields is not None
    assert list(log.fields.seqs) == [0, 1, 2, 3, 6]
