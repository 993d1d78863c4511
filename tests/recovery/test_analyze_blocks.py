"""``analyze_blocks`` reads a session block by block, its events never held, and keeps only
what a second read cannot find again; ``CallFollower`` is that second read. The small
ledgers' figures are worked out by hand (DESIGN.md, "Fork" and "Synthesize"); the bundled
examples are held to ``analyze`` under every policy and every block size."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

import ledgerviz
from ledgerviz.examples import examples_dir
from ledgerviz.ledger.fields import EventFields
from ledgerviz.recovery.analysis import CallFacts
from ledgerviz.recovery.analyze import analyze
from ledgerviz.recovery.blocks import SessionFacts, analyze_blocks
from ledgerviz.recovery.columns import DictColumns, columns_of
from ledgerviz.recovery.followed import CallFollower
from ledgerviz.recovery.runtime_values import call_key
from ledgerviz.recovery.seq_runs import SeqRuns
from ledgerviz.recovery.vocab import POLICIES

from .build import LedgerBuilder, crashed_mid_dispatch

CLOSING = ("step/end", "turn/start", "turn/end")


def blocks(events: Sequence[dict[str, Any]], size: int, *, envelope: bool = False
           ) -> Iterator[tuple[Sequence[dict[str, Any]], DictColumns | None]]:
    """Yield ``events`` in blocks of ``size``, each with no columns or (``envelope``) with
    the columns the streamed OTLP route passes: ``columns_of`` over the reader's
    ``EventFields``."""
    for start in range(0, len(events), size):
        block = events[start:start + size]
        yield block, (columns_of(block, envelope=EventFields.of(block, start))
                      if envelope else None)


def followed(events: Sequence[dict[str, Any]], facts: SessionFacts) -> list[CallFacts]:
    """Return the calls a second read of ``events`` (then the closers) finds."""
    follower = CallFollower(facts)
    for position, event in enumerate([*events, *facts.closers]):
        follower.follow(event.get("type"), event.get("seq", position), event.get("data", {}),
                        event.get("time"))
    follower.finish()
    assert all(call.final for call in follower.calls)
    return [call.facts() for call in follower.calls]


def test_a_crash_mid_dispatch_read_in_blocks_of_every_size() -> None:
    events = crashed_mid_dispatch().events
    for size in range(1, len(events) + 1):
        fork = analyze_blocks(blocks(events, size), policy="fork", version=4)
        # the fork point is the assistant message of the call dispatched without a result;
        # the fork policy appends nothing while a fork is pending
        assert fork.fork_points == [11]
        assert fork.closers == []
        assert min(fork.abandoned_seqs) == 11
        # three calls; the step of B and C never closes, so none is left unresolved by a
        # closed step; A's message (seq 3) stays active, B and C's (seq 11) is abandoned
        assert fork.calls == 3
        assert fork.unresolved == {}
        assert fork.branches == [(0, "active"), (1, "abandoned")]
        synthesize = analyze_blocks(blocks(events, size), policy="synthesize", version=4)
        assert synthesize.fork_points == []
        assert synthesize.abandoned_seqs == []
        # crash repair answers B (dispatched: outcome unknown) and C (never dispatched),
        # then closes the step and the turn: seqs 13-16, each synthetic
        assert [event["type"] for event in synthesize.closers] == [
            "tool/result", "tool/result", "step/end", "turn/end"]
        assert synthesize.synthetic_seqs == [13, 14, 15, 16]
        assert synthesize.branches == [(0, "active")]
        assert [(call.call_id, call.status, call.result_seq)
                for call in followed(events, synthesize)] == [
            ("A", "ok", 5), ("B", "outcome_unknown", 13), ("C", "not_started", 14)]


def late_result() -> list[dict[str, Any]]:
    """Return a step closed with A dispatched (seq 4) and B never, then A's result (6)."""
    b = LedgerBuilder()
    b.turn_start()  # 0
    b.user("one")  # 1
    b.step_start()  # 2
    b.assistant("A", "B")  # 3
    b.tool_call("A")  # 4
    b.step_end()  # 5
    b.tool_result("A")  # 6
    b.turn_end()  # 7
    return b.events


def test_calls_left_unanswered_by_a_closed_step_are_kept_from_the_first_read() -> None:
    events = late_result()
    for size in range(1, len(events) + 1):
        # synthesize: the closing step/end gets A an unlogged outcome-unknown result and B
        # a not-started one, so the late result at 6 finds A answered and changes nothing
        synthesize = analyze_blocks(blocks(events, size), policy="synthesize", version=4)
        unresolved = synthesize.unresolved
        assert sorted(unresolved) == [(0, "A"), (0, "B")]
        assert (unresolved[0, "A"].status, unresolved[0, "A"].dispatched_seq,
                unresolved[0, "A"].result_seq) == ("outcome_unknown", 4, None)
        assert (unresolved[0, "B"].status, unresolved[0, "B"].dispatched_seq) == (
            "not_started", None)
        assert [call.status for call in followed(events, synthesize)] == [
            "outcome_unknown", "not_started"]
        # fork: A (dispatched, unanswered when the step closed) makes seq 3 the fork point;
        # B gets no synthetic result, and the late result answers A: ok, but abandoned
        # with the suffix from seq 3 (the message, then the result at 6)
        fork = analyze_blocks(blocks(events, size), policy="fork", version=4)
        assert fork.fork_points == [3]
        assert sorted(fork.abandoned_seqs) == [3, 6]
        assert fork.branches == [(0, "abandoned")]
        assert [(call.call_id, call.status, call.result_seq, call.branch, call.settled)
                for call in followed(events, fork)] == [
            ("A", "ok", 6, "abandoned", False), ("B", "not_started", None, "abandoned", False)]


def unresolved_in(events: Sequence[dict[str, Any]], calls: list[CallFacts]
                  ) -> dict[tuple[int, Any], CallFacts]:
    """Return the calls not answered by a logged result before the first closing event
    after their request, by their message's ordinal among requesting messages (a result
    recovery inserts into a closed step has no seq)."""
    closing = [event.get("seq", position) for position, event in enumerate(events)
               if event.get("type") in CLOSING]  # a snapshot's events count as their seq
    ordinals = {seq: ordinal for ordinal, seq in
                enumerate(dict.fromkeys(call.requested_seq for call in calls))}
    kept = {}
    for call in calls:
        closed = next((seq for seq in closing if seq > call.requested_seq), None)
        if closed is not None and (call.result_seq is None or call.result_seq > closed):
            kept[ordinals[call.requested_seq], call_key(call.call_id)] = call
    return kept


DATA = Path(__file__).parent.parent / "data"
SOURCES = [examples_dir(), DATA / "dsh", DATA / "scheduler-failure-unrecovered.jsonl"]


@pytest.mark.parametrize("envelope", [False, True])
@pytest.mark.parametrize("policy", POLICIES)
def test_every_example_in_blocks_as_analyze_finds_it(policy: Any, envelope: bool) -> None:
    held = 0
    for log in ledgerviz.load(SOURCES).sessions:
        whole = analyze(log.events, policy=policy, version=log.version)
        synthetic = [seq for seq, mark in zip(whole.seqs, whole.synthetic, strict=True)
                     if mark and seq is not None]
        calls = [call._replace(arguments=None) for call in whole.calls]
        branches = [call.branch for call in
                    {call.requested_seq: call for call in calls}.values()]
        for size in (1, 7, len(log.events) or 1):
            facts = analyze_blocks(blocks(log.events, size, envelope=envelope),
                                   policy=policy, version=log.version)
            assert facts.calls == len(calls)
            assert facts.unresolved == unresolved_in([*log.events, *whole.closers], calls)
            runs = [*facts.branches, (len(branches), None)]
            assert [branch for (first, branch), (end, _) in pairwise(runs)
                    for _ in range(first, end)] == branches
            assert facts.closers == whole.closers
            assert facts.fork_points == whole.fork_points
            assert sorted(facts.abandoned_seqs) == sorted(whole.abandoned_seqs)
            assert sorted(facts.synthetic_seqs) == sorted(synthetic)
            assert followed(log.events, facts) == calls
        held += len(facts.unresolved)
    assert held  # a step closed with calls unanswered is among them


def test_seq_runs_read_back_what_was_appended() -> None:
    values: list[Any] = [0, 1, 2, 3, 7, 8, None, 9, 10, 10, "x", 2**63, -5, -4, True, 11]
    runs = SeqRuns()
    for value in values:
        runs.append(value)
    assert len(runs) == len(values)
    assert [runs[position] for position in range(len(values))] == values
    assert [type(runs[position]) for position in range(len(values))] == list(map(type, values))
    with pytest.raises(IndexError):
        runs[len(values)]
