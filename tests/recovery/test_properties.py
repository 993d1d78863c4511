"""Property tests: crash at every event of fixtures and generated ledgers.

Invariants only (balanced, valid, idempotent, input untouched); the facts themselves are
checked against the generator's own truth in ``test_oracles.py``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerviz.recovery import (
    PROVIDERS,
    analyze,
    crash_closers,
    export,
    fork_boundary,
    fork_seed,
    generation_for,
    pairing_problems,
    project_context,
    result_error_code,
)

from .build import LedgerBuilder
from .ledgers import DSH, read_ledger

# A call is (dispatched, result) where result is None (never recorded), "ok" or "error".
calls = st.lists(st.tuples(st.booleans(), st.sampled_from([None, "ok", "ok", "error"])), max_size=3)
steps = st.lists(st.tuples(calls, st.booleans()), min_size=0, max_size=3)
turns = st.lists(st.tuples(steps, st.booleans(), st.booleans()), min_size=1, max_size=4)


@st.composite
def ledgers(draw: st.DrawFn) -> tuple[int, list[dict[str, Any]]]:
    """A valid v3 or v4 ledger: turns of steps with parallel calls; some results missing
    (a step whose scheduler failed closes with calls unanswered)."""
    version = draw(st.sampled_from([3, 4]))
    b = LedgerBuilder(version)
    for turn_steps, typed, noisy in draw(turns):
        b.turn_start()
        b.user("task", kind="user" if typed else "goal")
        failed = False
        for step_calls, plugin_between in turn_steps:
            b.step_start()
            ids = [f"t{b.turn}s{b.step}c{k}" for k in range(len(step_calls))]
            b.assistant(*ids)
            for call_id, (dispatched, _) in zip(ids, step_calls, strict=True):
                if dispatched:
                    b.tool_call(call_id)
            if plugin_between or noisy:
                b.log()
            for call_id, (dispatched, result) in zip(ids, step_calls, strict=True):
                if result is None:
                    failed = True
                    break
                if not dispatched:
                    b.tool_call(call_id)
                b.tool_result(
                    call_id,
                    is_error=result == "error",
                    code="ENOENT" if result == "error" else None,
                )
            b.step_end()
            if failed:
                break
        b.turn_end("error" if failed else "completed")
    return version, b.events


def check_prefix(version: int, events: list[dict[str, Any]]) -> None:
    generation = generation_for(version)
    before = copy.deepcopy(events)

    synth = analyze(events, policy="synthesize", version=version)
    repaired = events + synth.closers
    assert crash_closers(repaired, generation=generation) == []
    context = project_context(synth)
    for provider in PROVIDERS:
        assert pairing_problems(export(context, provider)) == [], provider

    fork = analyze(events, policy="fork", version=version)
    # a pending fork appends nothing to the parent (the policy seeds a child); otherwise
    # only calls that never started can be pending, closed as crash repair closes them
    assert fork.closers in ([], synth.closers)
    assert "TOOL_OUTCOME_UNKNOWN" not in {result_error_code(e) for e in fork.closers}
    pending_fork = len(fork.fork_points) == 1 and fork.closers == [] and synth.closers != []
    assert not any(fork.recovery_code[k] == "TOOL_OUTCOME_UNKNOWN" for k in fork.surface)
    context = project_context(fork)
    for provider in PROVIDERS:
        assert pairing_problems(export(context, provider)) == [], provider
    assert not any(c.settled for c in fork.calls if c.branch == "abandoned")
    boundary = fork_boundary(events, version=version)
    assert (boundary is None) == (not fork.fork_points)
    if boundary is not None and version == 4:
        check_child(events, boundary, context if pending_fork else None)

    assert events == before


def check_child(events: list[dict[str, Any]], boundary: int, parent_context: list | None) -> None:
    """The seeded child is balanced, has nothing to fork, no unknown outcome, a valid next
    request, and (``parent_context`` given: the fork was pending at the end of the parent)
    the next request the fork policy projects for the parent."""
    header = {"type": "session", "version": 4, "id": "p", "createdAt": 0}
    _, child = fork_seed(header, events, boundary, session_id="c", created_at=1)
    assert crash_closers(child) == []
    analysis = analyze(child, policy="fork", version=4)
    assert analysis.fork_points == [] and analysis.closers == []
    assert "TOOL_OUTCOME_UNKNOWN" not in analysis.recovery_code
    context = project_context(analysis)
    for provider in PROVIDERS:
        assert pairing_problems(export(context, provider)) == [], provider
    if parent_context is not None:
        assert context == parent_context


@settings(max_examples=60, deadline=None)
@given(ledgers())
def test_generated_ledgers_cut_at_every_event(ledger: tuple[int, list[dict[str, Any]]]) -> None:
    version, events = ledger
    for cut in range(len(events) + 1):
        check_prefix(version, events[:cut])


@pytest.mark.parametrize("path", sorted(DSH.glob("*.jsonl")), ids=lambda p: p.name[-45:])
def test_fixtures_cut_at_every_event(path: Any) -> None:
    header, events = read_ledger(path)
    for cut in range(len(events) + 1):
        check_prefix(header.get("version") or 0, events[:cut])
