"""``expand_packed_row``: a row is accepted exactly when the runtime's decoder accepts it.

Messages and chunk events are literals written from the packed-row shape the runtime's
``chunk-rows.ts`` decoder validates (LEDGER_FORMAT.md §4.3): exactly ``type, seq0, time0,
data``; data exactly ``turn, step, index, dt, texts`` (tool rows: ``id``, ``name?``,
``args``); safe-integer ``dt`` gaps (negative ones too), one fewer than the payload.
"""

from __future__ import annotations

import pytest
from ledger_lines import encode, mark, turn_start

from ledgerviz.ledger import read_session
from ledgerviz.ledger.numbers import holds_big_integer
from ledgerviz.ledger.packed import expand_packed_row

DT_LENGTH = "packed text-chunks row: 'dt' must have one element fewer than its payload"
TEXTS = "packed text-chunks row: 'texts' must be a non-empty list of strings"
TOOL_NAMES = "packed tool-call-chunks row: 'id' (and 'name') must be strings"
DT_GAPS = "packed text-chunks row: 'dt' must be a list of safe integers"
TEXT_KEYS = "packed text-chunks row: 'data' must hold exactly dt, index, step, texts, turn"


def text_row(**data: object) -> dict:
    return {"type": "text-chunks", "seq0": 4, "time0": 100,
            "data": {"turn": 1, "step": 2, "index": 0, "dt": [], **data}}


def tool_row(**data: object) -> dict:
    return {"type": "tool-call-chunks", "seq0": 4, "time0": 100,
            "data": {"turn": 1, "step": 2, "index": 0, "id": "A", "dt": [1], **data}}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"type": "text-chunks", "data": []},
         "packed text-chunks row must have exactly type, seq0, time0, data "
         "(it lacks 'seq0', 'time0')"),
        ({**text_row(texts=["a"]), "extra": 1},
         "packed text-chunks row must have exactly type, seq0, time0, data (it has 'extra')"),
        ({**text_row(texts=["a"]), "data": []},
         "packed text-chunks row: 'data' must be an object, not array"),
        (text_row(texts=["a"], extra=1), TEXT_KEYS),
        ({**text_row(), "data": {"turn": 1, "step": 2, "index": 0, "texts": ["a"]}}, TEXT_KEYS),
        (text_row(texts="ab"), TEXTS),
        (text_row(texts=[]), TEXTS),
        (text_row(texts=["a", 1], dt=[1]), TEXTS),
        (tool_row(args=["{", 7]),
         "packed tool-call-chunks row: 'args' must be a non-empty list of strings"),
        (tool_row(args=["{", "}"], id=7), TOOL_NAMES),
        (tool_row(args=["{", "}"], name=None), TOOL_NAMES),
        (text_row(texts=["a", "b"]), DT_LENGTH),
        (text_row(texts=["a"], dt=5), DT_GAPS),
        (text_row(texts=["a", "b"], dt=[0.5]), DT_GAPS),
        ({**text_row(texts=["a"]), "seq0": "4"},
         "packed text-chunks row: 'seq0' must be a non-negative safe integer"),
        ({**text_row(texts=["a"]), "seq0": -1},
         "packed text-chunks row: 'seq0' must be a non-negative safe integer"),
        ({**text_row(texts=["a"]), "time0": 1.5},
         "packed text-chunks row: 'time0' must be a safe integer"),
        (text_row(texts=["a"], turn="1"),
         "packed text-chunks row: 'turn', 'step' and 'index' must be numbers"),
        (text_row(texts=["a"], step=[2]),
         "packed text-chunks row: 'turn', 'step' and 'index' must be numbers"),
        ({**text_row(texts=["a", "b"], dt=[1]), "seq0": 2**53 - 1},
         "packed text-chunks row: its members' seqs and times must stay safe integers"),
    ],
)  # fmt: skip
def test_each_malformed_row_says_what_is_wrong(row: dict, message: str) -> None:
    assert expand_packed_row(row) == message


def test_one_text_is_one_chunk() -> None:
    assert expand_packed_row(text_row(texts=["only"])) == [
        {"type": "assistant/chunk", "seq": 4, "time": 100,
         "data": {"turn": 1, "step": 2,
                  "chunk": {"type": "text-delta", "index": 0, "text": "only"}}}
    ]


def test_a_negative_gap_steps_the_clock_back_and_whole_floats_are_integers() -> None:
    row = {**text_row(texts=["a", "b"], dt=[-1.0], turn=1.0), "seq0": 4.0}
    events = expand_packed_row(row)
    assert isinstance(events, list)
    assert [(e["seq"], e["time"], e["data"]["turn"]) for e in events] == [(4, 100, 1), (5, 99, 1)]
    assert all(type(e["seq"]) is int and type(e["data"]["turn"]) is int for e in events)


def test_every_tool_call_chunk_carries_the_name() -> None:
    events = expand_packed_row(tool_row(args=["{", "}"], name="ls"))
    assert isinstance(events, list)
    assert [e["data"]["chunk"] for e in events] == [
        {"type": "tool-call-delta", "index": 0, "id": "A", "name": "ls", "argumentsDelta": arg}
        for arg in "{}"
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
    assert expand_packed_row(text_row(texts=["a", "b"], dt=[2**53])) == DT_GAPS


def packed_ledger(seq0: int) -> bytes:
    row = {"type": "text-chunks", "seq0": seq0, "time0": 5,
           "data": {"turn": 1, "step": 1, "index": 0, "texts": ["a", "b", "c"], "dt": [1, 2]}}
    header = {"type": "session", "version": 1, "id": "packed", "createdAt": 0}
    return encode([header, turn_start(0), row, mark(6)])


def test_a_packed_row_takes_seqs_from_its_seq0() -> None:
    # seq 0, then chunks 3-5 (1 and 2 missing), then seq 6 continues them
    log = read_session("p.jsonl", packed_ledger(3))
    assert [(d.kind, d.line, d.message) for d in log.diagnostics] == [
        ("seq_gap", 3, "expected seq 1, found 3: 2 missing")
    ]
    assert [e.get("seq") for e in log.events] == [0, 3, 4, 5, 6]
