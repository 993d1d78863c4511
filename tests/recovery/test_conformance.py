"""Crash closers match the runtime's own repair on every conformance case."""

from __future__ import annotations

import copy

import pytest

from ledgerviz.recovery import crash_closers, generation_for

from .ledgers import conformance_cases, conformance_input

CASES = conformance_cases()


def test_case_count() -> None:
    assert len(CASES) == 1865


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['input']}-cut{c['cut']}-{c['cause']}" for c in CASES]
)
def test_closers_match_runtime(case: dict) -> None:
    header, events = conformance_input(case["input"])
    assert generation_for(header.get("version")) == case["generation"]
    prefix = list(events[: case["cut"]])
    before = copy.deepcopy(prefix)
    closers = crash_closers(prefix, generation=case["generation"], cause=case["cause"])
    assert closers == case["closers"]
    assert prefix == before
