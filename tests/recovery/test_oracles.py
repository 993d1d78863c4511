"""Every call fact, fork point, branch and synthetic result checked against the generator's truth.

The generator writes a ledger and remembers, for every call, what it wrote: the seqs of
its request, dispatch and result, whether the result is an error and with which code,
whether the step closed and whether each turn's first message was typed by the user. For
every cut of the ledger the expected analysis is derived from that record alone, by the
rules of DESIGN.md and LEDGER_FORMAT.md §9, never by calling another engine function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerviz.recovery import Analysis, analyze

from .build import LedgerBuilder

UNKNOWN, NOT_STARTED = "TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED"


@dataclass
class CallTruth:
    call_id: str
    turn: int
    step: int
    requested: int
    dispatched: int | None = None
    result: int | None = None
    is_error: bool = False
    code: str | None = None


@dataclass
class StepTruth:
    turn: int
    step: int
    assistant: int
    calls: list[CallTruth]
    end: int | None = None


@dataclass
class TurnTruth:
    turn: int
    start: int
    message: int
    typed: bool
    steps: list[StepTruth] = field(default_factory=list)
    end: int | None = None


@dataclass
class Truth:
    version: int
    events: list[dict[str, Any]]
    turns: list[TurnTruth]


# A call is (dispatched before the results, result): result None = never recorded.
CALLS = st.lists(st.tuples(st.booleans(), st.sampled_from([None, "ok", "ok", "error"])), max_size=3)
STEPS = st.lists(st.tuples(CALLS, st.booleans()), max_size=3)
TURNS = st.lists(st.tuples(STEPS, st.booleans(), st.booleans()), min_size=1, max_size=4)


@st.composite
def ledgers(draw: st.DrawFn) -> Truth:
    """A v3 or v4 ledger of turns of steps with parallel calls; a step whose scheduler
    failed (a result never recorded) closes with its remaining calls unanswered."""
    version = draw(st.sampled_from([3, 4]))
    b = LedgerBuilder(version)
    turns: list[TurnTruth] = []
    for turn_steps, typed, noisy in draw(TURNS):
        start = b.turn_start()
        turn = TurnTruth(b.turn, start, b.user("task", kind="user" if typed else "goal"), typed)
        turns.append(turn)
        failed = False
        for plans, plugin_between in turn_steps:
            b.step_start()
            ids = [f"t{b.turn}s{b.step}c{k}" for k in range(len(plans))]
            step = StepTruth(b.turn, b.step, b.assistant(*ids), [])
            step.calls = [CallTruth(i, b.turn, b.step, step.assistant) for i in ids]
            turn.steps.append(step)
            for call, (dispatched, _) in zip(step.calls, plans, strict=True):
                if dispatched:
                    call.dispatched = b.tool_call(call.call_id)
            if plugin_between or noisy:
                b.log()
            for call, (_, outcome) in zip(step.calls, plans, strict=True):
                if outcome is None:
                    failed = True
                    break
                if call.dispatched is None:
                    call.dispatched = b.tool_call(call.call_id)
                call.is_error = outcome == "error"
                call.code = "ENOENT" if call.is_error else None
                call.result = b.tool_result(call.call_id, is_error=call.is_error, code=call.code)
            step.end = b.step_end()
            if failed:
                break
        turn.end = b.turn_end("error" if failed else "completed")
    return Truth(version, b.events, turns)


def before(seq: int | None, cut: int) -> int | None:
    """The seq if that event is inside the cut, else None."""
    return seq if seq is not None and seq < cut else None


def steps_in(truth: Truth, cut: int) -> list[StepTruth]:
    return [s for t in truth.turns for s in t.steps if s.assistant < cut]


def unanswered(step: StepTruth, cut: int) -> list[CallTruth]:
    return [c for c in step.calls if c.requested < cut and before(c.result, cut) is None]


def open_tail(truth: Truth, cut: int) -> tuple[TurnTruth | None, StepTruth | None]:
    """The turn and step the cut leaves open (None when closed)."""
    turn = next((t for t in reversed(truth.turns) if t.start < cut), None)
    if turn is None or before(turn.end, cut) is not None:
        return None, None
    started = [s for s in turn.steps if s.assistant - 1 < cut]
    step = started[-1] if started and before(started[-1].end, cut) is None else None
    return turn, step


def surface_seqs(truth: Truth, cut: int) -> list[int]:
    """Seqs of every recorded message inside the cut (the generator never replaces)."""
    seqs = []
    for turn in truth.turns:
        seqs.append(turn.message)
        for step in turn.steps:
            seqs.append(step.assistant)
            seqs.extend(c.result for c in step.calls if c.result is not None)
    return sorted(s for s in seqs if s < cut)


# --- synthesize ------------------------------------------------------------------------


def expected_synthesize(truth: Truth, cut: int) -> dict[str, Any]:
    """Call facts, synthetic results and closers that crash repair must give at ``cut``."""
    facts, inserted, closers = {}, [], []
    turn, tail = open_tail(truth, cut)
    tail_seq = cut
    tail_results = [] if tail is None else unanswered(tail, cut)
    for step in steps_in(truth, cut):
        closed = before(step.end, cut) is not None
        for offset, call in enumerate(unanswered(step, cut) if closed else []):
            started = before(call.dispatched, cut) is not None
            inserted.append(
                (
                    call.call_id,
                    f"interrupted-tool-result-{call.call_id}-{step.end + offset}",
                    UNKNOWN if started else NOT_STARTED,
                    [call.dispatched] if started else None,
                )
            )
        for call in step.calls:
            dispatched = before(call.dispatched, cut)
            result = before(call.result, cut)
            if result is not None:
                status = "error" if call.is_error else "ok"
                code, is_error = call.code, call.is_error
            else:
                status = "outcome_unknown" if dispatched is not None else "not_started"
                code, is_error = (UNKNOWN if dispatched is not None else NOT_STARTED), True
                if not closed:
                    result = cut + tail_results.index(call)
            facts[call.call_id] = (
                call.turn,
                call.step,
                call.requested,
                dispatched,
                result,
                status,
                code,
                is_error,
                "active",
                status != "outcome_unknown",
            )
    if turn is not None:
        for call in tail_results:
            started = before(call.dispatched, cut) is not None
            closers.append(
                (
                    "tool/result",
                    tail_seq,
                    turn.turn,
                    call.step,
                    call.call_id,
                    f"interrupted-tool-result-{call.call_id}-{tail_seq}",
                    UNKNOWN if started else NOT_STARTED,
                    [call.dispatched] if started else None,
                )
            )
            tail_seq += 1
        if tail is not None:
            closers.append(("step/end", tail_seq, turn.turn, tail.step, None, None, None, None))
            tail_seq += 1
        closers.append(("turn/end", tail_seq, turn.turn, None, None, None, None, None))
    active = surface_seqs(truth, cut) + [c[1] for c in closers if c[0] == "tool/result"]
    return {"facts": facts, "inserted": inserted, "closers": closers, "active": active}


def call_facts(analysis) -> dict[str, tuple]:
    return {
        c.call_id: (
            c.turn,
            c.step,
            c.requested_seq,
            c.dispatched_seq,
            c.result_seq,
            c.status,
            c.error_code,
            c.is_error,
            c.branch,
            c.settled,
        )
        for c in analysis.calls
    }


def closer_rows(closers: list[dict[str, Any]]) -> list[tuple]:
    rows = []
    for e in closers:
        data = e["data"]
        message = data.get("message") or {}
        rows.append(
            (
                e["type"],
                e["seq"],
                data["turn"],
                data.get("step"),
                (message.get("source") or {}).get("callId"),
                message.get("id"),
                (data.get("error") or {}).get("code"),
                e.get("sourceEventSeqs"),
            )
        )
    return rows


def inserted_rows(analysis) -> list[tuple]:
    """The results synthesize put before a closed step's step/end (never logged)."""
    rows = []
    for key, event in enumerate(analysis.events):
        if analysis.seqs[key] is None:
            assert analysis.events[key + 1]["type"] in ("tool/result", "step/end")
            rows.append(
                (
                    event["data"]["message"]["source"]["callId"],
                    event["data"]["message"]["id"],
                    event["data"]["error"]["code"],
                    event.get("sourceEventSeqs"),
                )
            )
    return rows


def check_synthesize(truth: Truth, cut: int, analysis: Analysis | None = None) -> None:
    """Check the synthesize analysis of the first ``cut`` events (computed here unless
    given) against the truth."""
    if analysis is None:
        analysis = analyze(truth.events[:cut], policy="synthesize", version=truth.version)
    expected = expected_synthesize(truth, cut)
    assert call_facts(analysis) == expected["facts"]
    assert inserted_rows(analysis) == expected["inserted"]
    assert closer_rows(analysis.closers) == expected["closers"]
    assert [analysis.seqs[k] for k in analysis.surface if analysis.seqs[k] is not None] == (
        expected["active"]
    )
    assert analysis.fork_points == [] and analysis.abandoned_seqs == []
    assert sum(s is None for s in analysis.seqs) == len(expected["inserted"])


# --- fork ------------------------------------------------------------------------------


def expected_fork(truth: Truth, cut: int) -> dict[str, Any]:
    """Fork points, abandoned seqs and each call's (status, branch, settled) at ``cut``.

    A dispatched call without a result forks at its request once its step is closed, or
    at the end when the cut leaves its step open; the first pending fork wins. A pending
    fork is applied at the next turn's message when the user typed it (or at the end):
    every message from the fork point up to there leaves the context.
    """
    _, tail = open_tail(truth, cut)
    surface = surface_seqs(truth, cut)
    points: list[int] = []
    abandoned: set[int] = set()
    pending: int | None = None

    def apply(until: int) -> None:
        abandoned.update(s for s in surface if pending <= s < until)  # type: ignore[operator]

    for turn in truth.turns:
        if turn.message >= cut:
            break
        if pending is not None and turn.typed:
            apply(turn.message)
            pending = None
        for step in turn.steps:
            closed = before(step.end, cut) is not None
            lost = [c for c in unanswered(step, cut) if before(c.dispatched, cut) is not None]
            if step.assistant < cut and lost and pending is None and (closed or step is tail):
                pending = step.assistant
                points.append(pending)
    if pending is not None:
        apply(cut)
    calls = {}
    for step in steps_in(truth, cut):
        branch = "abandoned" if step.assistant in abandoned else "active"
        for call in step.calls:
            if before(call.result, cut) is not None:
                status = "error" if call.is_error else "ok"
            elif before(call.dispatched, cut) is not None:
                status = "outcome_unknown"
            else:
                status = "not_started"
            settled = status != "outcome_unknown" and branch != "abandoned"
            calls[call.call_id] = (status, branch, settled)
    active = [s for s in surface if s not in abandoned]
    return {"points": points, "abandoned": sorted(abandoned), "active": active, "calls": calls}


def check_fork(truth: Truth, cut: int, analysis: Analysis | None = None) -> None:
    """Check the fork analysis of the first ``cut`` events (computed here unless given)
    against the truth."""
    if analysis is None:
        analysis = analyze(truth.events[:cut], policy="fork", version=truth.version)
    expected = expected_fork(truth, cut)
    assert analysis.fork_points == expected["points"]
    assert analysis.abandoned_seqs == expected["abandoned"]
    logged = [analysis.seqs[k] for k in analysis.surface if analysis.seqs[k] is not None]
    assert [s for s in logged if s < cut] == expected["active"]
    assert {c.call_id: (c.status, c.branch, c.settled) for c in analysis.calls} == (
        expected["calls"]
    )


@settings(max_examples=60, deadline=None)
@given(ledgers())
def test_every_cut_matches_the_generator_truth(truth: Truth) -> None:
    for cut in range(len(truth.events) + 1):
        check_synthesize(truth, cut)
        check_fork(truth, cut)
