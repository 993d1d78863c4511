"""The named fault-injection scenarios: each writes one ledger (or a folder of them)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ledgerviz.simulate.lifecycle import fork_session, resume_session, start_session
from ledgerviz.simulate.loop import AgentLoop, ChildRun, SessionIdentity
from ledgerviz.simulate.script import CallPlan, ProviderFailure, Script, ToolError, TurnPlan
from ledgerviz.simulate.writer import CrashPoint, Event, ProcessCrash

BASE_TIME_MS = 1_772_442_000_000  # 2026-03-02T09:00:00Z
FAULT_CALLS = 4
CONTINUE_PROMPT = "Continue from where you stopped; check what already happened first."
RESUMED_PROMPT = "The process restarted. Continue safely from the interrupted operation."


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named scenario: what it shows, and how to write it."""

    name: str
    description: str
    default_turns: int
    multi_session: bool
    write: Callable[[Path, int, int], list[Path]]


class UnknownScenario(ValueError):
    """Raised for a scenario name that is not in :data:`SCENARIOS`."""


def _session(name: str, seed: int) -> tuple[SessionIdentity, random.Random, Script]:
    rng = random.Random(seed)
    created = BASE_TIME_MS + rng.randrange(0, 30 * 86_400_000)
    return SessionIdentity(id=f"sim-{name}-{seed}", created_at=created), rng, Script(rng)


def _fault_turn(script: Script) -> TurnPlan:
    """A turn whose first step asks for four calls, the first one faster than the second."""
    calls = [script.call() for _ in range(FAULT_CALLS)]
    calls[0] = replace(
        calls[0], duration_ms=max(1, min(calls[0].duration_ms, calls[1].duration_ms // 2))
    )
    return TurnPlan(
        prompt=script.rng.choice(
            ("Update the config and rerun the tests.", "Apply the migration and check it.")
        ),
        steps=(script.tool_step(tuple(calls)), script.answer_step()),
    )


def _first_in_turn(turn: int, event_type: str) -> CrashPoint:
    """Return a crash point: the first event of ``event_type`` in turn ``turn``."""

    def hit(event: Event) -> bool:
        return event["type"] == event_type and event["data"].get("turn") == turn

    return hit


def _run(loop: AgentLoop, plans: list[TurnPlan]) -> None:
    with loop.writer:
        for plan in plans:
            loop.run_turn(plan)


def _run_until_crash(loop: AgentLoop, plans: list[TurnPlan]) -> int:
    """Run ``plans`` until the simulated process dies; return the clock time of the crash."""
    with loop.writer:
        try:
            for plan in plans:
                loop.run_turn(plan)
        except ProcessCrash:
            return loop.clock.now
    raise AssertionError("the scripted crash point was never reached")


def _ordinary_turns(script: Script, count: int) -> list[TurnPlan]:
    return [script.turn(tool_steps=1 if n == 0 else None) for n in range(count)]


def write_clean(out: Path, seed: int, turns: int) -> list[Path]:
    """Write ordinary turns that all complete; return the written path."""
    identity, rng, script = _session("clean", seed)
    _run(start_session(out, identity, rng), _ordinary_turns(script, turns))
    return [out]


def write_large(out: Path, seed: int, turns: int) -> list[Path]:
    """Write ``turns`` ordinary turns with up to three calls running at once; return the path."""
    identity, rng, script = _session("large", seed)
    loop = start_session(out, identity, rng)
    loop.concurrency = 3
    with loop.writer:
        for _ in range(turns):
            loop.run_turn(script.turn())
    return [out]


def _crash(
    name: str, out: Path, seed: int, turns: int, event_type: str, *, torn: bool = False
) -> tuple[SessionIdentity, random.Random, Script, int]:
    """Write ordinary turns, then a fault turn that dies at its first ``event_type`` event."""
    identity, rng, script = _session(name, seed)
    plans = [*_ordinary_turns(script, turns), _fault_turn(script)]
    point = _first_in_turn(turns + 1, event_type)
    loop = start_session(out, identity, rng, crash_point=point, tear_after_crash=torn)
    return identity, rng, script, _run_until_crash(loop, plans)


def write_crash_mid_dispatch(out: Path, seed: int, turns: int) -> list[Path]:
    """Die right after the first result of a four-call step; return the written path."""
    _crash("crash-mid-dispatch", out, seed, turns, "tool/result")
    return [out]


def write_crash_before_dispatch(out: Path, seed: int, turns: int) -> list[Path]:
    """Die right after an assistant message asked for four calls; return the written path."""
    _crash("crash-before-dispatch", out, seed, turns, "assistant/message")
    return [out]


def write_torn_write(out: Path, seed: int, turns: int) -> list[Path]:
    """Die halfway through writing the line after the first dispatch; return the written path."""
    _crash("torn-write", out, seed, turns, "tool/call", torn=True)
    return [out]


def write_resume_synthesize(out: Path, seed: int, turns: int) -> list[Path]:
    """Crash mid-dispatch, restart with synthetic crash closers, run a new turn; return the path."""
    identity, rng, script, crashed_at = _crash("resume-synthesize", out, seed, turns, "tool/result")
    loop = resume_session(out, identity, rng, crashed_at)
    _run(loop, [script.turn(tool_steps=1, prompt=RESUMED_PROMPT)])
    return [out]


def write_resume_fork(out: Path, seed: int, turns: int) -> list[Path]:
    """Crash mid-dispatch, restart under the fork policy: the parent stays as it is and a
    seeded child runs a new turn; return [parent, child] paths in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    parent_path, child_path = out / "parent.jsonl", out / "child.jsonl"
    identity, rng, script, crashed_at = _crash(
        "resume-fork", parent_path, seed, turns, "tool/result"
    )
    loop = fork_session(parent_path, child_path, identity, rng, crashed_at)
    _run(loop, [script.turn(tool_steps=1, prompt=RESUMED_PROMPT)])
    return [parent_path, child_path]


def _faulted(name: str, out: Path, seed: int, turns: int, **fault: Any) -> list[Path]:
    """Write ordinary turns, a fault turn whose first step gets ``fault``, and one more turn."""
    identity, rng, script = _session(name, seed)
    faulted = script.with_step(_fault_turn(script), 0, **fault)
    plans = [
        *_ordinary_turns(script, turns),
        faulted,
        script.turn(tool_steps=1, prompt=CONTINUE_PROMPT),
    ]
    _run(start_session(out, identity, rng), plans)
    return [out]


def write_scheduler_failure(out: Path, seed: int, turns: int) -> list[Path]:
    """Write a step whose scheduler fails dispatching the third of four calls, closed by live
    recovery; return the written path."""
    return _faulted("scheduler-failure", out, seed, turns, scheduler_fails_at=2)


def write_cancel(out: Path, seed: int, turns: int) -> list[Path]:
    """The user cancels before the third of four calls starts; return the written path."""
    return _faulted("cancel", out, seed, turns, cancel_at=2)


def write_provider_error(out: Path, seed: int, turns: int) -> list[Path]:
    """A model call fails twice and the turn errors; a later retry succeeds; return the path."""
    identity, rng, script = _session("provider-error", seed)
    overloaded = ProviderFailure("provider overloaded, try again later", "PROVIDER_OVERLOADED", 503)
    limited = ProviderFailure("rate limit exceeded", "RATE_LIMITED", 429)
    failing = script.with_step(
        script.turn(tool_steps=1), 0, failed_attempts=(overloaded, limited), gives_up=True
    )
    retried = script.with_step(
        script.turn(tool_steps=1, prompt=CONTINUE_PROMPT), 0, failed_attempts=(limited,)
    )
    _run(start_session(out, identity, rng), [*_ordinary_turns(script, turns), failing, retried])
    return [out]


def write_tool_error(out: Path, seed: int, turns: int) -> list[Path]:
    """A tool returns an error result and the model recovers; return the written path."""
    identity, rng, script = _session("tool-error", seed)
    calls = (script.call("read", error=ToolError("FsError", "ENOENT")), script.call("grep"))
    turn = TurnPlan(
        prompt="Open the config file and fix the timeout.",
        steps=(script.tool_step(calls), script.tool_step(1), script.answer_step()),
    )
    _run(start_session(out, identity, rng), [*_ordinary_turns(script, turns), turn])
    return [out]


def write_compaction(out: Path, seed: int, turns: int) -> list[Path]:
    """Write ordinary turns, a manual compaction replacing the history by a summary, and one
    more turn; return the written path."""
    identity, rng, script = _session("compaction", seed)
    loop = start_session(out, identity, rng)
    with loop.writer:
        for plan in _ordinary_turns(script, turns):
            loop.run_turn(plan)
        loop.compact(
            f"Summary of {turns} earlier turns: files were inspected and edited; tests pass."
        )
        loop.run_turn(script.turn(tool_steps=1, prompt=CONTINUE_PROMPT))
    return [out]


def write_subagent(out: Path, seed: int, turns: int) -> list[Path]:
    """A parent whose tool call spawns a child session; return [parent, child] paths in ``out``."""
    identity, rng, script = _session("subagent", seed)
    out.mkdir(parents=True, exist_ok=True)
    parent_path, child_path = out / "parent.jsonl", out / "child.jsonl"

    def spawn(start: int, call: CallPlan) -> ChildRun:
        child_rng = random.Random(rng.getrandbits(64))
        child = SessionIdentity(
            id=f"{identity.id}-child",
            created_at=start,
            parent_session=identity.id,
            origin="subagent",
            delegation_depth=1,
        )
        loop = start_session(child_path, child, child_rng)
        descriptor = {
            "mode": "one-shot",
            "version": 3,
            "provider": "spawn",
            "label": "Delegated check",
            "agentProvider": child.provider,
            "agentModel": child.model,
        }
        plan = call.child or TurnPlan(prompt=call.arguments)
        with loop.writer:
            loop.writer.append("subagent/descriptor", descriptor)
            loop.run_turn(plan, think_ms=(5, 50))
        return ChildRun(child.id, start, loop.clock.now - start + 5, plan.steps[-1].text)

    child_script = Script(random.Random(rng.getrandbits(64)))
    subagent_call = script.call("subagent")
    delegated_prompt = json.loads(subagent_call.arguments)["prompt"]
    delegated = replace(
        subagent_call, child=child_script.turn(tool_steps=2, prompt=delegated_prompt)
    )
    turn = TurnPlan(
        prompt="Delegate a check of the test suite to a subagent while you read the README.",
        steps=(script.tool_step((delegated, script.call("read"))), script.answer_step()),
    )
    loop = start_session(parent_path, identity, rng, spawner=spawn)
    _run(loop, [*_ordinary_turns(script, turns - 1), turn])
    return [parent_path, child_path]


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "clean",
            "ordinary turns with parallel tool calls; every turn completes",
            3,
            False,
            write_clean,
        ),
        Scenario(
            "crash-mid-dispatch",
            "the process dies right after the first of four results: one call "
            "dispatched without a result, two never dispatched",
            1,
            False,
            write_crash_mid_dispatch,
        ),
        Scenario(
            "crash-before-dispatch",
            "the process dies right after the assistant asked for four calls; none was dispatched",
            1,
            False,
            write_crash_before_dispatch,
        ),
        Scenario(
            "torn-write",
            "the process dies while appending: the last line is cut mid-JSON",
            1,
            False,
            write_torn_write,
        ),
        Scenario(
            "scheduler-failure",
            "the tool scheduler fails mid-step; started calls are drained, "
            "live recovery records results before step/end, the turn ends with the error",
            1,
            False,
            write_scheduler_failure,
        ),
        Scenario(
            "tool-error",
            "a tool returns an error result (FsError/ENOENT); the model carries on",
            1,
            False,
            write_tool_error,
        ),
        Scenario(
            "provider-error",
            "model calls fail and are retried; one turn gives up with the "
            "provider error, the next succeeds after a retry",
            1,
            False,
            write_provider_error,
        ),
        Scenario(
            "cancel",
            "the user cancels mid-step: started calls finish, the rest get "
            "ABORTED_BEFORE_DISPATCH results, the turn ends aborted",
            1,
            False,
            write_cancel,
        ),
        Scenario(
            "resume-synthesize",
            "crash mid-dispatch, restart with synthetic crash closers "
            "(TOOL_OUTCOME_UNKNOWN / TOOL_NOT_STARTED), then a new turn",
            1,
            False,
            write_resume_synthesize,
        ),
        Scenario(
            "resume-fork",
            "crash mid-dispatch, restart under the fork policy: the parent is left "
            "as it is, a child seeded from its safe prefix (forked closers, no "
            "synthetic results) runs a new turn",
            1,
            True,
            write_resume_fork,
        ),
        Scenario(
            "subagent",
            "a parent session whose tool call spawns a child session (lineage: "
            "parentSession, subagent/catalog, subagent/descriptor)",
            1,
            True,
            write_subagent,
        ),
        Scenario(
            "compaction",
            "ordinary turns, then a compaction replacing the history with a "
            "summary (surface replace op), then one more turn",
            3,
            False,
            write_compaction,
        ),
        Scenario(
            "large",
            "many ordinary turns for benchmarks; size set by --turns",
            1000,
            False,
            write_large,
        ),
    )
}


def get_scenario(name: str) -> Scenario:
    """Return the scenario called ``name``; raise :class:`UnknownScenario` naming the known ones."""
    try:
        return SCENARIOS[name]
    except KeyError:
        known = ", ".join(SCENARIOS)
        raise UnknownScenario(f"unknown scenario {name!r}; known scenarios: {known}") from None


def write_scenario(name: str, out: Path, *, seed: int = 0, turns: int | None = None) -> list[Path]:
    """Write scenario ``name`` to ``out`` (file, or folder if multi-session); return the files."""
    scenario = get_scenario(name)
    count = scenario.default_turns if turns is None else turns
    if count < 1:
        raise ValueError(f"--turns must be at least 1, got {count}")
    out = Path(out)
    if scenario.multi_session and out.is_file():
        raise ValueError(f"{out} is a file; scenario {name!r} writes a folder of ledgers")
    if not scenario.multi_session:
        if out.is_dir():
            raise ValueError(f"{out} is a folder; scenario {name!r} writes one ledger file")
        out.parent.mkdir(parents=True, exist_ok=True)
    return scenario.write(out, seed, count)
