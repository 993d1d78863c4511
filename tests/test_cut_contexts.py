"""The next request of each cut, checked by scans resumed from the cut shown before, equals
the request of the file truncated at that cut, read anew (its checks run from scratch)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_prefix_frames import truncated

import ledgerviz
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
