"""``recovery.analyze`` is public (a runtime calls it on its own events), and a hand-made
``Ledger`` reaches it with events no reader checked: an event with a field of a type the
format does not allow is a ``TypeError`` naming that event (its index and seq), not one
raised from deep inside the engine."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from ledgerviz import Ledger
from ledgerviz.ledger import SessionLog
from ledgerviz.recovery import analyze

LEDGER = Path(__file__).parent.parent / "data" / "scheduler-failure-unrecovered.jsonl"
HEADER, *EVENTS = [orjson.loads(line) for line in LEDGER.read_bytes().splitlines()]
AFTER = "; the engine reads events as a ledger reader checked them (ledgerviz.load reports "

# (index, the field made wrong, its value, what the engine met): the fixture's seqs are
# its indexes (event 5 is an assistant message, event 14 a turn/end with a reason)
CASES = [
    (0, ("type",), [], "unhashable type: 'list'"),
    (5, ("data", "message", "content"), -1, "'int' object is not iterable"),
    (14, ("data", "reason", "kind"), [], "unhashable type: 'list'"),
]


def spoiled(index: int, path: tuple[str, ...], value: Any) -> list[dict[str, Any]]:
    events = copy.deepcopy(EVENTS)
    target = events[index]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return events


def test_the_fixture_is_what_the_cases_say() -> None:
    assert [event["seq"] for event in EVENTS] == list(range(len(EVENTS)))
    assert (EVENTS[5]["type"], EVENTS[14]["type"]) == ("assistant/message", "turn/end")


@pytest.mark.parametrize(("index", "path", "value", "met"), CASES)
@pytest.mark.parametrize("policy", ["synthesize", "fork"])
def test_analyze_names_the_event_it_cannot_read(
        index: int, path: tuple[str, ...], value: Any, met: str, policy: str) -> None:
    message = f"cannot analyze event {index} (seq {index}): {met}{AFTER}such an event)"
    with pytest.raises(TypeError) as raised:
        analyze(spoiled(index, path, value), policy=policy, version=HEADER["version"])
    assert str(raised.value) == message


@pytest.mark.parametrize(("index", "path", "value", "met"), CASES)
def test_a_hand_made_ledger_says_the_same(
        index: int, path: tuple[str, ...], value: Any, met: str) -> None:
    log = SessionLog("hand.jsonl", "hand", HEADER, HEADER["version"],
                     spoiled(index, path, value))
    with pytest.raises(TypeError, match=rf"^cannot analyze event {index} \(seq {index}\)"):
        Ledger([log]).recovery("fork")
