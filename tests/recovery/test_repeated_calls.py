"""One rule for a repeated ``tool/call`` or ``tool/result``: the runtime's (format §9.1).

The runtime's crash-repair scan records the seq of every ``tool/call`` of a call still
unanswered, so its closer cites the last one; the first ``tool/result`` answers the call
and any later one changes nothing. The expected seqs are the runtime's own closers
(``tests/data/runtime-vectors``), which the analysis must agree with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ledgerviz.ledger import read_sessions
from ledgerviz.recovery import analyze, crash_closers
from ledgerviz.recovery.analysis import Analysis

VECTORS = Path(__file__).parents[1] / "data" / "runtime-vectors"


def vector(name: str) -> tuple[Path, dict[str, Any]]:
    for line in (VECTORS / "vectors.jsonl").open(encoding="utf-8"):
        case = json.loads(line)
        if case["input"] == name:
            return VECTORS / "inputs" / name, case["runtime"]
    raise LookupError(name)


def analysed(path: Path, policy: str) -> tuple[Analysis, list[dict[str, Any]]]:
    (log,) = read_sessions(path)
    return analyze(log.events, policy=policy, version=log.version), log.events  # type: ignore[arg-type]


def cited(closers: list[dict[str, Any]], call_id: str) -> list[int] | None:
    (result,) = [c for c in closers if c["type"] == "tool/result"
                 and c["data"]["message"]["source"]["callId"] == call_id]
    return result.get("sourceEventSeqs")


@pytest.mark.parametrize("policy", ["recorded", "synthesize", "fork"])
def test_a_repeated_dispatch_is_dated_by_the_last_one(policy: str) -> None:
    path, runtime = vector("repeated-tool-call.jsonl")  # tool/call A at seqs 4 and 5
    assert cited(runtime["closers"], "A") == [5]
    analysis, events = analysed(path, policy)
    (call,) = [c for c in analysis.calls if c.call_id == "A"]
    closer = runtime["closers"][0]["seq"] if policy == "synthesize" else None  # its answer
    assert (call.dispatched_seq, call.result_seq, call.status) == (5, closer, "outcome_unknown")
    if policy == "synthesize":
        assert analysis.closers == runtime["closers"]
    assert crash_closers(events, generation="v4") == runtime["closers"]


@pytest.mark.parametrize("name", ["repeated-tool-result.jsonl", "call-after-result.jsonl"])
def test_the_first_result_answers_and_nothing_after_it_changes_the_call(name: str) -> None:
    path, runtime = vector(name)  # A dispatched at 4, answered at 5; then a result or a call
    assert [c["type"] for c in runtime["closers"]] == ["step/end", "turn/end"]
    analysis, _ = analysed(path, "synthesize")
    (call,) = analysis.calls
    assert (call.dispatched_seq, call.result_seq, call.status) == (4, 5, "ok")
    assert analysis.closers == runtime["closers"]
