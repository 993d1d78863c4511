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


# A seq of a scalar wrong type: the frames built, showing <NA> for the event's seq (the
# reader's check would have dropped the event, or read 6.0 as 6): each frame now refuses,
# naming the event as above, with no error of a column builder to add.
SEQ_CASES = [
    ("6", "tool/call: 'seq' must be an integer, not string"),
    (True, "tool/call: 'seq' must be an integer, not boolean"),
    (None, "tool/call: 'seq' must be an integer, not null"),
    (6.5, "tool/call: 'seq' must be an integer, not number"),
    (2**70, "tool/call: 'seq' 1180591620717411303424 is beyond ±(2^53-1), outside what the "
            "runtime writes"),
    (6.0, "'seq' written as 6.0: read as 6, as the runtime reads it (JSON numbers have no "
          "integer type)"),
]


@pytest.mark.parametrize("frame", ["events", "calls", "turns"])
@pytest.mark.parametrize(("seq", "said"), SEQ_CASES)
def test_a_frame_refuses_a_seq_it_would_show_as_missing(seq: Any, said: str,
                                                        frame: str) -> None:
    events = copy.deepcopy(EVENTS)
    events[6]["seq"] = seq
    log = SessionLog("hand.jsonl", "hand", HEADER, HEADER["version"], events)
    with pytest.raises(TypeError) as raised:
        getattr(Ledger([log]).frames, frame)
    assert str(raised.value) == (
        f"cannot build the frames: session 'hand', event 6 (seq {seq!r}): {said}; the frames "
        "read events as a ledger reader checked them")
    assert events[6]["seq"] is seq  # named, never rewritten (the check reads 6.0 as 6)


def test_a_seq_out_of_order_is_no_type_error_and_frames_build() -> None:
    """A seq that repeats is a numbering problem the reader keeps the event for."""
    events = copy.deepcopy(EVENTS)
    events[6]["seq"] = 5
    log = SessionLog("hand.jsonl", "hand", HEADER, HEADER["version"], events)
    assert Ledger([log]).frames.events["seq"].tolist()[4:8] == [4, 5, 5, 7]


def test_naming_an_event_leaves_the_hand_made_events_as_they_were() -> None:
    """The reader's check reads an integral float time as its integer in place: naming the
    event it stops at (a list role) ran it on the caller's own dicts, and left event 6's
    time an int."""
    events = spoiled(2, ("data", "message", "role"))
    time = float(events[6]["time"])
    events[6]["time"] = time
    log = SessionLog("hand.jsonl", "hand", HEADER, HEADER["version"], events)
    with pytest.raises(TypeError, match=r"'data\.message\.role' must be string"):
        _ = Ledger([log]).frames.messages
    assert events[6]["time"].__class__ is float
