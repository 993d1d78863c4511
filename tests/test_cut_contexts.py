"""The next request of each cut, checked by scans resumed from the cut shown before, equals
the request of the file truncated at that cut, read anew (its checks run from scratch)."""

from __future__ import annotations

from pathlib import Path
from random import Random

import pytest
from test_prefix_frames import truncated

import ledgerviz
from ledgerviz.examples import example_paths
from ledgerviz.recovery import PROVIDERS, pairing_memo
from ledgerviz.simulate import write_scenario

POLICIES = ("recorded", "synthesize", "fork")


@pytest.mark.parametrize("every", [3, pairing_memo.MARK_EVERY])
def test_cut_contexts_moved_back_and_forth_equal_the_truncated_files(
        every: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pairing_memo, "MARK_EVERY", every)  # states kept that often
    (path,) = write_scenario("crash-mid-dispatch", tmp_path / "crash.jsonl", turns=30)
    whole = ledgerviz.load(path)
    (log,) = whole.sessions
    total = len(log.events)
    cuts = [total, *range(total - 1, total // 2, -7), *range(total // 3, total, 11), 5, total]
    found = 0
    for n in cuts:
        cut = whole.cut(n, reuse=True)
        expected = ledgerviz.load(truncated(path, log.lines, n, tmp_path / f"cut-{n}.jsonl"))
        for policy in POLICIES:
            got, want = cut.context(policy, "anthropic"), expected.context(policy, "anthropic")
            assert [m.seq for m in got.messages] == [m.seq for m in want.messages]
            assert got.problems == want.problems, (n, policy)
            assert got.valid == want.valid
            assert got.payload == want.payload
            found += sum(len(got.problems[provider]) for provider in PROVIDERS)
    assert found  # some cuts leave calls unanswered: the checks had problems to find


def test_contexts_asked_in_any_order_equal_each_file_read_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # one ledger's contexts resume from the one asked before, whichever session and policy
    # that was; a ledger read anew for each asks its first context from scratch
    monkeypatch.setattr(pairing_memo, "MARK_EVERY", 3)  # so that scans resume mid-context
    shared = ledgerviz.load(example_paths())
    asked = [(log, policy) for log in shared.sessions for policy in POLICIES] * 2
    Random(13).shuffle(asked)
    found = 0
    for log, policy in asked:
        got = shared.context(policy, "openai", session=log.key)
        want = ledgerviz.load(log.path).context(policy, "openai", session=log.key)
        assert (got.messages, got.problems, got.payload) == (
            want.messages, want.problems, want.payload), (log.key, policy)
        found += sum(map(len, got.problems.values()))
    assert found  # the examples include unanswered calls: there were problems to find
