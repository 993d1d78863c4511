"""``check`` and ``check --stream``, and the streamed summary and the frames, on every
simulated scenario (issue 38): each is checked on its own against what the scenario wrote,
worked out from the raw lines by the rules of DESIGN.md (call statuses) and
LEDGER_FORMAT.md §9.1 (crash closers); then the two are compared with each other."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ledgerviz as lv
from ledgerviz.cli import main
from ledgerviz.simulate import SCENARIOS
from ledgerviz.streams.summary import summarize

from .conftest import read_ledger

CODES = {"outcome_unknown": "TOOL_OUTCOME_UNKNOWN", "not_started": "TOOL_NOT_STARTED"}


def _result(data: dict[str, Any]) -> tuple[str, str | None, bool]:
    """Return the call id a result answers, its error code and whether it is an error
    (format §4.4: source.callId, else the v4 toolCallId or the wrapper block's)."""
    message = data["message"]
    wrapper = next((b for b in message["content"] if b.get("type") == "tool-result"), {})
    call_id = message.get("source", {}).get("callId") or message.get("toolCallId") \
        or wrapper.get("toolCallId")
    is_error = bool(message["isError"] if "isError" in message else wrapper.get("isError"))
    return call_id, (data.get("error") or {}).get("code"), is_error


def _status(answer: tuple[str | None, bool] | None, dispatched: bool) -> str:
    """Return a call's status by DESIGN.md's rules."""
    if answer is None:
        return "outcome_unknown" if dispatched else "not_started"
    code, is_error = answer
    if code in CODES.values():
        return next(status for status, c in CODES.items() if c == code)
    return "error" if is_error else "ok"


def _closers(events: list[dict[str, Any]]) -> int:
    """Return how many closers crash repair appends (format §9.1)."""
    open_turn, open_step, pending = None, None, {}
    for event in events:
        kind, data = event["type"], event["data"]
        if kind in ("turn/start", "turn/end"):
            open_turn = data["turn"] if kind == "turn/start" else None
            open_step, pending = None, {}
        elif kind == "step/start":
            open_step = data["step"]
        elif kind == "step/end":
            open_step, pending = None, {}
        elif kind == "assistant/message":
            pending.update((b["id"], True) for b in data["message"]["content"]
                           if b["type"] == "tool-call")
        elif kind == "tool/result":
            pending.pop(_result(data)[0], None)
    if open_turn is None:
        return 0
    return len(pending) + (open_step is not None) + 1


def expected_summary(path: Path) -> dict[str, Any]:
    """Return what ``check`` should say of a simulated ledger, from its raw lines."""
    _, events = read_ledger(path)
    requested: list[str] = []
    dispatched: set[str] = set()
    answers: dict[str, tuple[str | None, bool]] = {}
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "assistant/message":
            requested += [b["id"] for b in data["message"]["content"] if b["type"] == "tool-call"]
        elif kind == "tool/call":
            dispatched.add(data["callId"])
        elif kind == "tool/result":
            call_id, code, is_error = _result(data)
            answers[call_id] = (code, is_error)
    statuses = [(c, _status(answers.get(c), c in dispatched)) for c in requested]
    return {
        "events": len(events),
        "turns": sum(event["type"] == "turn/start" for event in events),
        "calls": dict(Counter(status for _, status in statuses)),
        "unanswered": [{"call_id": c, "code": CODES[s]} for c, s in statuses if s in CODES],
        "closers": _closers(events),
    }


@pytest.fixture(scope="module")
def scenario_files(written: Callable[..., list[Path]], tmp_path_factory: pytest.TempPathFactory
                   ) -> Path:
    """Return one folder holding every scenario's files (two seeds each)."""
    folder = tmp_path_factory.mktemp("scenarios")
    for name in SCENARIOS:
        for seed in (7, 8):
            for number, path in enumerate(written(name, seed)):
                (folder / f"{name}-{seed}-{number}.jsonl").write_bytes(path.read_bytes())
    return folder


def _check(folder: Path, capsys: pytest.CaptureFixture[str], *options: str
           ) -> dict[str, dict[str, Any]]:
    main(["check", "--json", *options, str(folder)])
    return {Path(s["path"]).name: s for s in json.loads(capsys.readouterr().out)["sessions"]}


def test_check_and_check_stream_agree_on_every_scenario(
    scenario_files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole, streamed = _check(scenario_files, capsys), _check(scenario_files, capsys, "--stream")
    assert set(whole) == set(streamed) == {p.name for p in scenario_files.iterdir()}
    for name, summary in whole.items():
        expected = expected_summary(scenario_files / name)
        for found in (summary, streamed[name]):  # each against the scenario on its own
            assert {fact: found[fact] for fact in expected} == expected, name
            assert not [d for d in found["diagnostics"] if d["severity"] == "error"], name
        assert summary["diagnostics"] == streamed[name]["diagnostics"], name


def test_the_streamed_summary_equals_the_frames_on_every_scenario(scenario_files: Path) -> None:
    summaries = {Path(s.path).name: s for s in summarize(scenario_files)}
    ledger = lv.load(scenario_files)
    calls = ledger.recovery("recorded").frames.calls
    for log in ledger.sessions:
        name = Path(log.path).name
        expected = expected_summary(Path(log.path))
        rows = calls[calls["session"] == log.key].sort_values("requested_seq")
        in_frames = list(zip(rows["call_id"], rows["status"], strict=True))
        assert dict(Counter(status for _, status in in_frames)) == expected["calls"], name
        unanswered = [(c, s) for c, s in in_frames if s in CODES]
        assert [{"call_id": c, "code": CODES[s]} for c, s in unanswered] == \
            expected["unanswered"], name
        summary = summaries[name]
        assert summary.calls == expected["calls"], name
        assert summary.unanswered == unanswered, name  # same statuses, same order
