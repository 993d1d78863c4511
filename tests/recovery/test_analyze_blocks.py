"""``analyze_blocks`` reads a session block by block, its events never held, and finds what
``analyze`` finds of the whole session: calls (without their arguments), closers, fork
points, abandoned and synthetic seqs. The crashed ledger's figures are worked out by hand
(DESIGN.md, "Fork" and "Synthesize"); the bundled examples are held to ``analyze`` under
every policy and every block size."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

import ledgerviz
from ledgerviz.examples import examples_dir
from ledgerviz.recovery.analyze import analyze, analyze_blocks
from ledgerviz.recovery.vocab import POLICIES

from .build import crashed_mid_dispatch


def blocks(events: Sequence[dict[str, Any]], size: int
           ) -> Iterator[tuple[Sequence[dict[str, Any]], None]]:
    for start in range(0, len(events), size):
        yield events[start:start + size], None


def test_a_crash_mid_dispatch_read_in_blocks_of_every_size() -> None:
    events = crashed_mid_dispatch().events
    for size in range(1, len(events) + 1):
        fork = analyze_blocks(blocks(events, size), policy="fork", version=4)
        # the fork point is the assistant message of the call dispatched without a result;
        # the fork policy appends nothing while a fork is pending
        assert fork.fork_points == [11]
        assert fork.closers == []
        assert min(fork.abandoned_seqs) == 11
        synthesize = analyze_blocks(blocks(events, size), policy="synthesize", version=4)
        assert synthesize.fork_points == []
        assert synthesize.abandoned_seqs == []
        # crash repair answers B (dispatched: outcome unknown) and C (never dispatched),
        # then closes the step and the turn: seqs 13-16, each synthetic
        assert [event["type"] for event in synthesize.closers] == [
            "tool/result", "tool/result", "step/end", "turn/end"]
        assert synthesize.synthetic_seqs == [13, 14, 15, 16]
        assert [(call.call_id, call.status) for call in synthesize.calls] == [
            ("A", "ok"), ("B", "outcome_unknown"), ("C", "not_started")]


@pytest.mark.parametrize("policy", POLICIES)
def test_every_example_in_blocks_as_analyze_finds_it(policy: Any) -> None:
    for log in ledgerviz.load(examples_dir()).sessions:
        whole = analyze(log.events, policy=policy, version=log.version)
        synthetic = [seq for seq, mark in zip(whole.seqs, whole.synthetic, strict=True)
                     if mark and seq is not None]
        for size in (1, 7, len(log.events) or 1):
            facts = analyze_blocks(blocks(log.events, size), policy=policy,
                                   version=log.version)
            assert facts.calls == [call._replace(arguments=None) for call in whole.calls]
            assert facts.closers == whole.closers
            assert facts.fork_points == whole.fork_points
            assert sorted(facts.abandoned_seqs) == sorted(whole.abandoned_seqs)
            assert sorted(facts.synthetic_seqs) == sorted(synthetic)
