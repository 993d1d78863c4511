"""Every scenario writes ledgers that obey the format and that the reader accepts."""

from collections.abc import Callable

import pytest

from ledgerviz.ledger import read_sessions
from ledgerviz.simulate import SCENARIOS

from .conftest import read_ledger
from .format_rules import event_problems, header_problems


@pytest.mark.parametrize("seed", [7, 8, 9])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_event_obeys_the_format_rules(name: str, seed: int, written: Callable) -> None:
    for path in written(name, seed):
        header, events = read_ledger(path)
        assert header_problems(header) == []
        assert event_problems(events) == []


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_reader_reports_no_error(name: str, written: Callable) -> None:
    for path in written(name):
        [session] = read_sessions(path)
        errors = [d for d in session.diagnostics if d.severity == "error"]
        assert errors == []
        kinds = {d.kind for d in session.diagnostics}
        assert kinds == ({"torn_tail"} if name == "torn-write" else set())
        assert len(session.events) == len(read_ledger(path)[1])


def test_torn_write_cuts_the_last_line_mid_json(written: Callable) -> None:
    [path] = written("torn-write")
    text = path.read_text(encoding="utf-8")
    tail = text.rsplit("\n", 1)[1]
    assert tail.startswith('{"type":"tool/')
    assert not text.endswith("\n")
    [session] = read_sessions(path)
    [torn] = session.diagnostics
    assert torn.kind == "torn_tail"
    assert torn.line == text.count("\n") + 1


def test_the_rule_checker_catches_broken_ledgers(written: Callable) -> None:
    _, events = read_ledger(written("clean")[0])
    step_end = next(i for i, e in enumerate(events) if e["type"] == "step/end")
    result = next(i for i, e in enumerate(events) if e["type"] == "tool/result")
    dropped_step_end = events[:step_end] + events[step_end + 1 :]
    renumbered = [{**e, "seq": i} for i, e in enumerate(dropped_step_end)]
    assert any("step/start out of place" in p for p in event_problems(renumbered))
    undispatched = [e for e in events if e["type"] != "tool/call"]
    renumbered = [{**e, "seq": i} for i, e in enumerate(undispatched)]
    assert any("has no tool/call in this step" in p for p in event_problems(renumbered))
    unencoded = [
        {**e, "sourceEventSeqs": [[e["seq"] - 1, e["seq"] - 1]]} if i == result else e
        for i, e in enumerate(events)
    ]
    assert any("not encoded as the runtime" in p for p in event_problems(unencoded))
