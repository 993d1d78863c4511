"""A hand-made ``Ledger`` whose events no reader checked, with a field of a wrong type that
the recovery engine reads past but a frame cannot: the frame raises a ``TypeError`` naming
the session, the event (index and seq) and what is wrong with it, not pandas' or a column
builder's own error (``unhashable type: 'list'`` from deep inside)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from ledgerviz import Ledger
from ledgerviz.ledger import SessionLog

LEDGER = Path(__file__).parent / "data" / "scheduler-failure-unrecovered.jsonl"
HEADER, *EVENTS = [orjson.loads(line) for line in LEDGER.read_bytes().splitlines()]
LEFT_OUT = "; the runtime reads this line as it is (left out of the frames)"

# (index, the field made a list, the frame that fails, what the reader's check says of it):
# the fixture's seqs are its indexes (2 a system message, 5 and 18 assistant messages, 6 a
# tool call)
CASES = [
    (2, ("data", "message", "role"), "messages",
     f"seq 2): system/message: 'data.message.role' must be string, not array{LEFT_OUT}"),
    (6, ("seq",), "calls", "seq []): tool/call: 'seq' must be an integer, not array"),
    (5, ("data", "message", "content", 1, "id"), "calls",
     f"seq 5): assistant/message: 'data.message.content[].id' must be string, not array"
     f"{LEFT_OUT}"),
    (18, ("data", "turn"), "calls",
     f"seq 18): assistant/message: 'data.turn' must be an integer, not array{LEFT_OUT}"),
]


def spoiled(index: int, path: tuple[Any, ...]) -> list[dict[str, Any]]:
    events = copy.deepcopy(EVENTS)
    target: Any = events[index]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = []
    return events


def test_the_fixture_is_what_the_cases_say() -> None:
    assert [event["seq"] for event in EVENTS] == list(range(len(EVENTS)))
    assert [EVENTS[i]["type"] for i in (2, 5, 6, 18)] == [
        "system/message", "assistant/message", "tool/call", "assistant/message"]


@pytest.mark.parametrize(("index", "path", "frame", "said"), CASES)
def test_a_frame_names_the_event_it_cannot_read(index: int, path: tuple[Any, ...],
                                                frame: str, said: str) -> None:
    log = SessionLog("hand.jsonl", "hand", HEADER, HEADER["version"], spoiled(index, path))
    with pytest.raises(TypeError) as raised:
        getattr(Ledger([log]).frames, frame)
    assert str(raised.value) == (
        f"cannot build the frames: session 'hand', event {index} ({said} [unhashable type: "
        "'list']; the frames read events as a ledger reader checked them")
