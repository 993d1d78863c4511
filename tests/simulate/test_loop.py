"""The scheduler and the live failure paths, checked on the ledgers they write."""

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from ledgerviz.recovery import crash_closers
from ledgerviz.simulate import SCENARIOS
from ledgerviz.simulate.lifecycle import start_session
from ledgerviz.simulate.loop import SessionIdentity
from ledgerviz.simulate.script import Script, TurnPlan

from .conftest import read_ledger


def _steps(events: list[dict]) -> list[list[dict]]:
    """Return the events of each step, from step/start up to (excluding) the next step/start."""
    steps: list[list[dict]] = []
    for event in events:
        if event["type"] == "step/start":
            steps.append([])
        if steps:
            steps[-1].append(event)
    return steps


def _requested(step: list[dict]) -> list[str]:
    return [
        block["id"]
        for event in step
        if event["type"] == "assistant/message"
        for block in event["data"]["message"]["content"]
        if block["type"] == "tool-call"
    ]


def test_concurrency_one_alternates_dispatch_and_result(tmp_path: Path) -> None:
    rng = random.Random(3)
    script = Script(rng)
    loop = start_session(tmp_path / "l.jsonl", SessionIdentity("c1", 1_000_000), rng)
    loop.concurrency = 1
    with loop.writer:
        loop.run_turn(TurnPlan("go", (script.tool_step(4), script.answer_step())))
    _, events = read_ledger(tmp_path / "l.jsonl")
    tools = [e["type"] for e in events if e["type"].startswith("tool/")]
    assert tools == ["tool/call", "tool/result"] * 4


@pytest.mark.parametrize("name", [n for n in SCENARIOS if n != "subagent"])
def test_calls_start_and_results_commit_in_model_order(name: str, written: Callable) -> None:
    for path in written(name):
        _, events = read_ledger(path)
        for step in _steps(events):
            requested = _requested(step)
            dispatched = [e["data"]["callId"] for e in step if e["type"] == "tool/call"]
            answered = [
                e["data"]["message"]["toolCallId"] for e in step if e["type"] == "tool/result"
            ]
            assert dispatched == requested[: len(dispatched)]
            assert answered == requested[: len(answered)]


def _turn_events(events: list[dict], turn: int) -> list[dict]:
    start = next(
        i for i, e in enumerate(events) if e["type"] == "turn/start" and e["data"]["turn"] == turn
    )
    end = next(
        i for i, e in enumerate(events) if e["type"] == "turn/end" and e["data"]["turn"] == turn
    )
    return events[start : end + 1]


def test_scheduler_failure_drains_started_calls_then_records_recovery(written: Callable) -> None:
    [path] = written("scheduler-failure")
    _, events = read_ledger(path)
    failed = _turn_events(events, 2)
    kinds = [e["type"] for e in failed]
    results = [e for e in failed if e["type"] == "tool/result"]
    codes = [e["data"].get("error", {}).get("code") for e in results]
    assert codes == [None, None, "TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED"]
    assert kinds[-2:] == ["step/end", "turn/end"]
    assert kinds.index("step/end") > max(i for i, k in enumerate(kinds) if k == "tool/result")
    reason = failed[-1]["data"]["reason"]
    assert reason["kind"] == "error"
    assert reason["error"]["code"] == "UNKNOWN"
    assert reason["error"]["message"].startswith("tool scheduler failed dispatching")
    third_call = [e for e in failed if e["type"] == "tool/call"][2]
    unknown = results[2]
    assert unknown["sourceEventSeqs"] == [third_call["seq"]]
    assert (
        unknown["data"]["message"]["id"]
        == f"interrupted-tool-result-{unknown['data']['message']['toolCallId']}-{unknown['seq']}"
    )
    assert _turn_events(events, 3)[-1]["data"]["reason"] == {"kind": "completed"}


def test_cancel_records_aborted_results_for_calls_never_started(written: Callable) -> None:
    [path] = written("cancel")
    _, events = read_ledger(path)
    cancelled = _turn_events(events, 2)
    calls = [e for e in cancelled if e["type"] == "tool/call"]
    results = [e for e in cancelled if e["type"] == "tool/result"]
    assert len(calls) == len(results) == 4
    errors = [r["data"].get("error") for r in results]
    abort = {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}
    assert errors == [None, None, abort, abort]
    kinds = [e["type"] for e in cancelled]
    first_abort = results[2]["seq"]
    assert kinds[-3:] == ["tool/result", "step/end", "turn/end"]
    assert all(r["sourceEventSeqs"] == [c["seq"]] for c, r in zip(calls, results, strict=True))
    assert calls[2]["seq"] > results[1]["seq"] and calls[2]["seq"] == first_abort - 1
    assert cancelled[-1]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}


def test_provider_error_retries_then_ends_the_turn_with_the_error(written: Callable) -> None:
    [path] = written("provider-error")
    _, events = read_ledger(path)
    failing = _turn_events(events, 2)
    kinds = [e["type"] for e in failing]
    assert kinds == [
        "turn/start", "step/start", "user/message", "assistant/attempt", "llm/retry",
        "llm/retry-started", "assistant/attempt", "step/end", "turn/end",
    ]  # fmt: skip
    assert failing[-1]["data"]["reason"] == {
        "kind": "error",
        "error": {"message": "rate limit exceeded", "code": "RATE_LIMITED", "status": 429},
    }
    retried = [e["type"] for e in _turn_events(events, 3)]
    assert retried[3:7] == [
        "assistant/attempt",
        "llm/retry",
        "llm/retry-started",
        "assistant/message",
    ]
    assert _turn_events(events, 3)[-1]["data"]["reason"] == {"kind": "completed"}


def test_tool_error_result_carries_the_error_identity(written: Callable) -> None:
    [path] = written("tool-error")
    _, events = read_ledger(path)
    errors = [e for e in events if e["type"] == "tool/result" and e["data"]["message"]["isError"]]
    [error] = errors
    assert error["data"]["error"] == {"name": "FsError", "code": "ENOENT"}
    assert events[-1]["data"]["reason"] == {"kind": "completed"}


def test_resume_synthesize_appends_the_crash_closers_then_a_new_lifecycle(
    written: Callable,
) -> None:
    _, crashed = read_ledger(written("crash-mid-dispatch")[0])
    _, events = read_ledger(written("resume-synthesize")[0])
    closers = crash_closers(crashed)
    codes = [e["data"].get("error", {}).get("code") for e in closers]
    assert codes == ["TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED", "TOOL_NOT_STARTED", None, None]
    assert [e["type"] for e in closers[-2:]] == ["step/end", "turn/end"]
    seed_end = len(crashed) + len(closers)
    assert events[:seed_end] == crashed + closers
    assert events[seed_end]["type"] == "session/end-seed"
    assert events[seed_end]["data"] == {}
    after = events[seed_end + 1 :]
    assert [e["type"] for e in after[:4]] == [
        "turn/start",
        "step/start",
        "user/message",
        "request/header",
    ]
    assert after[3]["data"]["reason"] == "resume"
    assert after[0]["data"]["turn"] == closers[-1]["data"]["turn"] + 1
    assert after[-1]["data"]["reason"] == {"kind": "completed"}
