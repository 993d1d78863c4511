"""Prefix analyses resumed from checkpoints: every cut gives what the runtime and the
generator's truth say that cut should give."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerviz.examples import example_path
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery import PrefixAnalyses, analyze, fork_seed

from .build import requesting
from .ledgers import conformance_cases, conformance_input
from .test_oracles import Truth, check_fork, check_synthesize, ledgers

INTERRUPTED = [case for case in conformance_cases() if case["cause"] == "interrupted"]
INPUTS = sorted({case["input"] for case in INTERRUPTED})


@pytest.mark.parametrize("name", INPUTS)
@pytest.mark.parametrize("every", [1, 4, 1_000])
@pytest.mark.parametrize("like", [False, True])
def test_every_cut_closes_as_the_runtime_does(name: str, every: int, like: bool) -> None:
    """Synthesize appends the runtime's own crash closers at every cut; fork appends the
    same closers, or none while a fork is pending (it seeds a child instead), which needs a
    fork point. So does fork taken over from synthesize's checkpoints (``like``)."""
    header, events = conformance_input(name)
    version = header.get("version")
    synthesize = PrefixAnalyses(events, policy="synthesize", version=version, every=every)
    fork = PrefixAnalyses(events, policy="fork", version=version, every=every,
                          like=synthesize if like else None)
    cases = [case for case in INTERRUPTED if case["input"] == name]
    assert len(cases) == len(events)
    for case in cases:
        assert synthesize.analysis(case["cut"]).closers == case["closers"]
        forked = fork.analysis(case["cut"])
        if forked.closers != case["closers"]:
            assert forked.closers == [] and forked.fork_points


@pytest.mark.parametrize("name", INPUTS)
def test_a_readers_table_closes_as_the_runtime_does(name: str) -> None:
    header, events = conformance_input(name)
    synthesize = PrefixAnalyses(events, policy="synthesize", version=header.get("version"),
                                columns=EventTable.of(events), every=4)
    for case in INTERRUPTED:
        if case["input"] == name:
            assert synthesize.analysis(case["cut"]).closers == case["closers"]


@settings(max_examples=30, deadline=None)
@given(ledgers(), st.integers(min_value=1, max_value=5))
def test_every_cut_matches_the_generator_truth(truth: Truth, every: int) -> None:
    synthesize = PrefixAnalyses(truth.events, policy="synthesize", version=truth.version,
                                every=every)
    fork = PrefixAnalyses(truth.events, policy="fork", version=truth.version, every=every)
    for cut in range(len(truth.events) + 1):
        check_synthesize(truth, cut, synthesize.analysis(cut))
        check_fork(truth, cut, fork.analysis(cut))


@settings(max_examples=30, deadline=None)
@given(ledgers(), st.integers(min_value=1, max_value=5))
def test_a_policy_taken_over_from_another_matches_the_generator_truth(
        truth: Truth, every: int) -> None:
    """Each policy's analyses made ``like`` the other's (its checkpoints shared up to the
    first event that only some policies handle so) give every cut the truth's closers."""
    first = {}
    for policy in ("synthesize", "fork"):
        first[policy] = PrefixAnalyses(truth.events, policy=policy, version=truth.version,
                                       every=every)
    fork = PrefixAnalyses(truth.events, policy="fork", version=truth.version, every=every,
                          like=first["synthesize"])
    synthesize = PrefixAnalyses(truth.events, policy="synthesize", version=truth.version,
                                every=every, like=first["fork"])
    for cut in range(len(truth.events) + 1):
        check_synthesize(truth, cut, synthesize.analysis(cut))
        check_fork(truth, cut, fork.analysis(cut))


def test_analyses_of_other_events_or_spacing_are_not_taken_over() -> None:
    _, events = conformance_input(INPUTS[0])
    synthesize = PrefixAnalyses(events, policy="synthesize", version=4, every=2)
    for others, version, every in ((list(events), 4, 2), (events, 4, 3), (events, 0, 2)):
        with pytest.raises(ValueError, match="same events, with the same version"):
            PrefixAnalyses(others, policy="fork", version=version, every=every, like=synthesize)


def test_events_after_the_prefix_are_scanned_as_if_they_followed_it() -> None:
    """A fork seed's marker and closers after the first k events: the child's analysis
    closes nothing more (its seed already ended the turn) and ends with the seed's events."""
    header, events = conformance_input("random-01-v4.jsonl")
    fork = PrefixAnalyses(events, policy="fork", version=4, every=3)
    seeded = 0
    for k in range(1, len(events) + 1):
        _, child = fork_seed(header, events, events[k - 1]["seq"], session_id="child",
                             created_at=0)
        tail = child[k:]
        analysis = fork.analysis(k, then=tail)
        assert analysis.closers == []
        assert analysis.events[-len(tail):] == tail
        assert analysis == analyze(child, policy="fork", version=4)
        seeded += len(tail) > 1
    assert seeded  # some cuts fall inside a turn, so their seed has closers


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1 event apart"):
        PrefixAnalyses([], policy="synthesize", every=0)
    with pytest.raises(ValueError, match="n must be >= 0"):
        PrefixAnalyses([], policy="synthesize").analysis(-1)


def test_a_cut_longer_than_the_log_is_the_whole_log() -> None:
    header, events = conformance_input(INPUTS[0])
    whole = PrefixAnalyses(events, policy="synthesize", version=header.get("version"))
    assert whole.analysis(len(events) + 10) == whole.analysis(len(events))
    assert len(whole) == len(events)


def test_an_unanswered_call_of_a_closed_step_is_kept_across_checkpoints() -> None:
    b = requesting("A")  # 3
    b.tool_call("A")
    b.step_end()  # 5: closes with A unanswered
    b.turn_end()
    b.turn_start()  # 7
    b.user()
    prefixes = PrefixAnalyses(b.events, policy="synthesize", every=1)
    assert [prefixes.analysis(n).unanswered_in_closed_steps for n in (5, 6, 9)] == [
        [], ["A"], ["A"]
    ]


def test_seqless_events_are_numbered_by_their_position_at_every_cut() -> None:
    # format §1: a normalised log's event seq is its 0-based position among the lines
    b = requesting("A")  # 3
    b.tool_call("A")  # 4
    seqless = [{k: v for k, v in event.items() if k != "seq"} for event in b.events]
    prefixes = PrefixAnalyses(seqless, policy="synthesize", every=2)
    assert [event["seq"] for event in prefixes.analysis(5).closers] == [5, 6, 7]
    assert [event["seq"] for event in prefixes.analysis(4).closers] == [4, 5, 6]


def test_the_facts_of_a_call_that_can_no_longer_change_are_made_once() -> None:
    b = requesting("A")  # 3
    b.tool_call("A")  # 4
    b.tool_result("A")  # 5
    b.step_end()
    b.turn_end()
    b.turn_start()  # 8
    b.user()
    b.step_start()  # 10
    b.assistant("B")
    prefixes = PrefixAnalyses(b.events[:10], policy="synthesize", every=4)
    # the checkpoint after 8 events holds A dispatched and answered: cuts from 8 share it
    shared = [prefixes.analysis(n).calls[0] for n in (8, 9, 10)]
    assert [facts.status for facts in shared] == ["ok"] * 3
    assert shared[0] is shared[1] is shared[2]
    # the one after 4 holds A requested only: cuts 4-7 scan their own copy of it
    own = [prefixes.analysis(n).calls[0] for n in (4, 5, 6, 7)]
    assert [facts.status for facts in own] == ["not_started", "outcome_unknown", "ok", "ok"]
    assert own[2] == own[3] == shared[0]
    assert own[2] is not own[3] and own[3] is not shared[0]
    # events after the prefix may request calls the whole scan never saw
    assert [(facts.call_id, facts.status) for facts in
            prefixes.analysis(10, then=b.events[10:]).calls] == [("A", "ok"), ("B", "not_started")]


@pytest.mark.parametrize("every", [1, 2, 3, 4])
def test_a_call_id_given_twice_finds_the_last_call_before_the_cut(every: int) -> None:
    """The scan's rule: a dispatch or result names the last call requested with its id, also
    when a cut resumes from a checkpoint that the id's second request is before or after."""
    b = requesting("A")  # 3
    b.tool_call("A")  # 4
    b.tool_result("A")  # 5
    b.step_end()
    b.step_start()  # 7
    b.assistant("A")  # 8: the same id again
    b.tool_call("A")  # 9
    b.tool_result("A")  # 10
    prefixes = PrefixAnalyses(b.events, policy="synthesize", every=every)

    def facts(n: int) -> list[tuple[int | None, int | None, str]]:
        return [(call.dispatched_seq, call.result_seq, call.status)
                for call in prefixes.analysis(n).calls]

    assert facts(5) == [(4, 5, "outcome_unknown")]  # its synthetic result takes seq 5
    assert facts(6) == [(4, 5, "ok")]
    assert facts(10) == [(4, 5, "ok"), (9, 10, "outcome_unknown")]
    assert facts(11) == [(4, 5, "ok"), (9, 10, "ok")]


@pytest.mark.parametrize("every", [1, 5])
def test_a_recorded_outcome_unknown_result_is_where_the_policies_part(every: int) -> None:
    """The bundled resume-synthesize ledger records TOOL_OUTCOME_UNKNOWN (seq 22) for a
    call requested at seq 18 and goes on: fork forks there first in every cut
    that holds that result, also when taken over from synthesize, which never forks."""
    lines = example_path("resume-synthesize").read_text(encoding="utf-8").splitlines()
    events = tuple(json.loads(line) for line in lines[1:])
    synthesize = PrefixAnalyses(events, policy="synthesize", version=4, every=every)
    fork = PrefixAnalyses(events, policy="fork", version=4, every=every, like=synthesize)
    after = [event["seq"] for event in events].index(22) + 1
    assert after < len(events) - 10
    for cut in range(after, len(events) + 1):
        assert synthesize.analysis(cut).fork_points == []
        assert fork.analysis(cut).fork_points[:1] == [18]
