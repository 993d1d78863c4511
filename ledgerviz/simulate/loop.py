"""The reference agent loop: turns, steps, a concurrency-limited tool scheduler, live recovery."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledgerviz.recovery import PendingCalls, failed_step_closers
from ledgerviz.simulate.script import TOOLS, CallPlan, StepPlan, TurnPlan
from ledgerviz.simulate.writer import Event, LedgerWriter

FORMAT_VERSION = 4
SYSTEM_PROMPT = (
    "You are a careful coding agent working in the user's repository. "
    "Use the tools to inspect and change files; report what you did."
)
ABORT_TEXT = "The tool call was aborted before it was dispatched; it did not run."
ABORTED = ("AbortError", "ABORTED_BEFORE_DISPATCH")


@dataclass(frozen=True, slots=True)
class SessionIdentity:
    """Who a session is: everything its header line says."""

    id: str
    created_at: int
    cwd: str = "/home/dev/project"
    provider: str = "deepseek-official"
    model: str = "deepseek-v4-flash"
    parent_session: str | None = None
    origin: str | None = None
    delegation_depth: int = 0

    def header(self) -> dict[str, Any]:
        """Return the v4 header line object, keys in the runtime's order."""
        header: dict[str, Any] = {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self.id,
            "createdAt": self.created_at,
            "cwd": self.cwd,
        }
        if self.parent_session is not None:
            header["parentSession"] = self.parent_session
        header["isSeeded"] = False
        if self.origin is not None:
            header["origin"] = self.origin
        header["delegationDepth"] = self.delegation_depth
        return header


@dataclass(frozen=True, slots=True)
class ChildRun:
    """What a spawned subagent session reports back to its parent's tool call."""

    session_id: str
    created_at: int
    duration_ms: int
    output: str


Spawner = Callable[[int, CallPlan], ChildRun]


def random_id(rng: random.Random, prefix: str) -> str:
    """Return a seeded id such as ``msg-0f3a9c21d7e4``."""
    return f"{prefix}-{rng.getrandbits(48):012x}"


def text_tokens(text: str) -> int:
    """Return a rough token count for ``text`` (four characters a token, at least one)."""
    return len(text) // 4 + 1


def message_text(event: Event) -> str:
    """Return the text blocks of the message an event carries, joined ("" if none)."""
    data = event.get("data") or {}
    message = data if event.get("type") == "user/message" else data.get("message") or {}
    return "".join(
        b.get("text", "") for b in message.get("content") or () if b.get("type") == "text"
    )


def error_reason(message: str, code: str, status: int | None = None) -> dict[str, Any]:
    """Return a ``turn/end`` reason of kind ``error``."""
    error: dict[str, Any] = {"message": message, "code": code}
    if status is not None:
        error["status"] = status
    return {"kind": "error", "error": error}


@dataclass(slots=True)
class DispatchState:
    """Progress of one step's tool calls through the scheduler (indices in model order)."""

    calls: list[tuple[str, CallPlan]]
    finish_at: dict[int, int] = field(default_factory=dict)
    outputs: dict[int, tuple[str, Any]] = field(default_factory=dict)
    call_seqs: dict[int, int] = field(default_factory=dict)
    next_start: int = 0
    next_commit: int = 0
    lost: int | None = None
    failure: dict[str, Any] | None = None

    def running(self, now: int) -> int:
        """Return how many started calls are still running at ``now``."""
        return sum(1 for t in self.finish_at.values() if t > now)

    def settled(self) -> int:
        """Return how many leading calls can get a result (the started ones before a lost call)."""
        return self.next_start if self.lost is None else self.lost

    def drained(self) -> bool:
        """Return True when no call will start or commit any more."""
        done_starting = self.failure is not None or self.next_start == len(self.calls)
        return done_starting and self.next_commit == self.settled()

    def next_finish(self, now: int) -> int:
        """Return when the next running call finishes (``now`` if one already has)."""
        return min((t for t in self.finish_at.values() if t > now), default=now)


class AgentLoop:
    """Runs scripted turns against one ledger, as a dsh runtime lifecycle would.

    A :class:`PendingCalls` tracker observes every committed event; when a step
    fails live, the loop closes it with the recovery engine's failed-step closers.
    """

    def __init__(
        self,
        writer: LedgerWriter,
        identity: SessionIdentity,
        rng: random.Random,
        *,
        concurrency: int = 2,
        last_turn: int = 0,
        header_reason: str = "initial",
        spawner: Spawner | None = None,
    ) -> None:
        self.writer = writer
        self.clock = writer.clock
        self.identity = identity
        self.rng = rng
        self.concurrency = concurrency
        self.turn = last_turn
        self.tracker = PendingCalls()
        self.surface: list[int] = []
        self.spawner = spawner
        self._header_reason: str | None = header_reason
        self._system_pending = header_reason == "initial"
        self._context_tokens = text_tokens(SYSTEM_PROMPT)
        self._cached_tokens = 0
        writer.observers.append(self.tracker.observe)
        writer.observers.append(self._follow_surface)

    def restore(self, events: list[Event]) -> None:
        """Take over the state of a restarted session from its committed ``events``."""
        for event in events:
            self.tracker.observe(event)
            self._follow_surface(event)
            message = message_text(event) if event.get("surfaceOp") == "append" else ""
            self._context_tokens += text_tokens(message) if message else 0

    def _follow_surface(self, event: Event) -> None:
        op = event.get("surfaceOp")
        if op == "append":
            self.surface.append(event["seq"])
        elif isinstance(op, dict):
            start = self.surface.index(op["startSeq"])
            end = self.surface.index(op["endSeq"])
            self.surface[start : end + 1] = [event["seq"]]
        elif event["type"] == "surface/rewind":
            hidden = set(event["data"]["shadowedSeqs"])
            self.surface = [seq for seq in self.surface if seq not in hidden]

    def _tick(self) -> None:
        self.clock.advance(0, 3)

    def _append(self, event_type: str, data: dict[str, Any], **envelope: Any) -> Event:
        event = self.writer.append(event_type, data, **envelope)
        self._tick()
        return event

    def _message(self, role: str, text: str, source: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": random_id(self.rng, "msg"),
            "role": role,
            "content": [{"type": "text", "text": text}],
            "source": source,
        }

    def run_turn(
        self, plan: TurnPlan, *, think_ms: tuple[int, int] = (2_000, 40_000)
    ) -> dict[str, Any]:
        """Run one user turn after ``think_ms`` of user time; return its ``turn/end`` reason."""
        self.clock.advance(*think_ms)
        self.turn += 1
        self._append("turn/start", {"turn": self.turn})
        for number, step in enumerate(plan.steps, 1):
            failure = self._run_step(number, step, plan.prompt if number == 1 else None)
            if failure is not None:
                self._fail_step(failure)
                return failure
        reason = {"kind": "completed"}
        self._append("turn/end", {"turn": self.turn, "reason": reason})
        return reason

    def _fail_step(self, failure: dict[str, Any]) -> None:
        closers = failed_step_closers(
            self.tracker, failure, next_seq=self.writer.next_seq, time=self.clock.now
        )
        for event in closers:
            self.writer.commit(event)

    def _run_step(self, number: int, plan: StepPlan, prompt: str | None) -> dict[str, Any] | None:
        turn = self.turn
        self._append("step/start", {"turn": turn, "step": number})
        if self._system_pending:
            self._system_pending = False
            message = self._message("system", SYSTEM_PROMPT, {"kind": "system-prompt"})
            self._append(
                "system/message",
                {"turn": turn, "step": number, "message": message},
                surface_op="append",
            )
        if prompt is not None:
            self._context_tokens += text_tokens(prompt)
            self._append(
                "user/message", self._message("user", prompt, {"kind": "user"}), surface_op="append"
            )
        if self._header_reason is not None:
            self._write_request_header()
        failure = self._call_model(number, plan)
        if failure is not None:
            return failure
        calls = self._write_assistant_message(number, plan)
        failure = self._dispatch(number, plan, calls)
        if failure is not None:
            return failure
        self._append("step/end", {"turn": turn, "step": number})
        return None

    def _write_request_header(self) -> None:
        config = {
            "provider": self.identity.provider,
            "model": self.identity.model,
            "maxTokens": 8192,
        }
        header = {"config": config, "tools": [spec.schema() for spec in TOOLS.values()]}
        data: dict[str, Any] = {"header": header, "reason": self._header_reason}
        self._append("request/header", data)
        self._header_reason = None

    def _call_model(self, number: int, plan: StepPlan) -> dict[str, Any] | None:
        """Record the model call's failed attempts and retries; return a failure if it gives up."""
        turn = self.turn
        for retry, failure in enumerate(plan.failed_attempts, 1):
            self.clock.advance(200, plan.latency_ms)
            finish = {
                "kind": "error",
                "failure": {"message": failure.message, "code": failure.code},
            }
            record = {
                "type": "chunk",
                "time": self.clock.now,
                "chunk": {"type": "finish", "reason": finish},
            }
            self._append("assistant/attempt", {"turn": turn, "step": number, "stream": [record]})
            if plan.gives_up and retry == len(plan.failed_attempts):
                return error_reason(failure.message, failure.code, failure.status)
            retry_id = random_id(self.rng, "retry")
            delay = 500 * 2 ** (retry - 1)
            self._append(
                "llm/retry",
                {
                    "retryId": retry_id,
                    "turn": turn,
                    "step": number,
                    "provider": self.identity.provider,
                    "mode": "automatic",
                    "policyKey": "transient",
                    "retry": retry,
                    "delayMs": delay,
                    "failure": {
                        "message": failure.message,
                        "code": failure.code,
                        "status": failure.status,
                    },
                    "maxRetries": 3,
                },
            )
            self.clock.advance(delay)
            self._append(
                "llm/retry-started",
                {"retryId": retry_id, "turn": turn, "step": number, "retry": retry},
            )
        self.clock.advance(plan.latency_ms)
        return None

    def _write_assistant_message(self, number: int, plan: StepPlan) -> list[tuple[str, CallPlan]]:
        calls = [(random_id(self.rng, "call"), call) for call in plan.calls]
        content: list[dict[str, Any]] = [{"type": "text", "text": plan.text}]
        content += [
            {"type": "tool-call", "id": call_id, "name": call.name, "arguments": call.arguments}
            for call_id, call in calls
        ]
        output_tokens = text_tokens(plan.text) + sum(
            text_tokens(c.arguments) + 8 for c in plan.calls
        )
        fresh = self._context_tokens - self._cached_tokens
        usage = {
            "inputTokens": fresh,
            "outputTokens": output_tokens,
            "totalTokens": self._context_tokens + output_tokens,
            "cacheReadTokens": self._cached_tokens,
        }
        self._cached_tokens = self._context_tokens
        self._context_tokens += output_tokens
        source = {"kind": "model", "provider": self.identity.provider, "model": self.identity.model}
        message = {
            "id": random_id(self.rng, "msg"),
            "role": "assistant",
            "content": content,
            "source": source,
        }
        self._append(
            "assistant/message",
            {"turn": self.turn, "step": number, "message": message, "stream": [], "usage": usage},
            surface_op="append",
        )
        return calls

    def _dispatch(
        self, number: int, plan: StepPlan, calls: list[tuple[str, CallPlan]]
    ) -> dict[str, Any] | None:
        """Run the step's calls under the concurrency limit; return a failure if the step fails.

        Calls start in the model's order, results are committed in the model's
        order, and calls already started are drained before a failure is reported.
        """
        state = DispatchState(calls)
        while True:
            self._commit_finished(number, state)
            self._start_ready(number, plan, state)
            if state.drained():
                break
            self.clock.advance_to(state.next_finish(self.clock.now))
        if state.failure is not None and state.failure["kind"] == "aborted":
            for call_id, call in calls[state.next_start :]:
                seq = self._record_call(number, call_id, call)["seq"]
                self._record_result(number, call_id, (ABORT_TEXT, ABORTED), seq)
        return state.failure

    def _commit_finished(self, number: int, state: DispatchState) -> None:
        """Commit, in model order, each result whose call has finished and whose turn has come."""
        while (
            state.next_commit < state.settled()
            and state.finish_at[state.next_commit] <= self.clock.now
        ):
            index = state.next_commit
            call_id = state.calls[index][0]
            self._record_result(number, call_id, state.outputs[index], state.call_seqs[index])
            state.next_commit += 1

    def _start_ready(self, number: int, plan: StepPlan, state: DispatchState) -> None:
        """Start calls in model order while slots are free and nothing failed or was cancelled."""
        while (
            state.failure is None
            and state.next_start < len(state.calls)
            and state.running(self.clock.now) < self.concurrency
        ):
            index = state.next_start
            if plan.cancel_at == index:
                state.failure = {"kind": "aborted", "reason": {"kind": "user"}}
                return
            state.next_start += 1
            call_id, call = state.calls[index]
            state.call_seqs[index] = self._record_call(number, call_id, call)["seq"]
            if plan.scheduler_fails_at == index:
                state.lost = index
                message = f"tool scheduler failed dispatching {call.name}: pool closed"
                state.failure = error_reason(message, "UNKNOWN")
                return
            duration, state.outputs[index] = self._execute(call_id, call)
            state.finish_at[index] = self.clock.now + duration

    def _record_call(self, number: int, call_id: str, call: CallPlan) -> Event:
        data = {
            "turn": self.turn,
            "step": number,
            "callId": call_id,
            "name": call.name,
            "arguments": call.arguments,
        }
        return self._append("tool/call", data)

    def _execute(self, call_id: str, call: CallPlan) -> tuple[int, tuple[str, Any]]:
        """Run one scripted tool; return its duration and (output text, error name/code or None)."""
        error = (call.error.name, call.error.code) if call.error else None
        if call.child is None or self.spawner is None:
            return call.duration_ms, (call.output, error)
        child = self.spawner(self.clock.now, call)
        label = json.loads(call.arguments).get("description", call.name)
        self._append(
            "subagent/catalog",
            {
                "version": 1,
                "childId": child.session_id,
                "childCreatedAt": child.created_at,
                "mode": "one-shot",
                "label": label,
            },
        )
        return child.duration_ms, (child.output, error)

    def _record_result(
        self, number: int, call_id: str, output: tuple[str, Any], call_seq: int
    ) -> Event:
        text, error = output
        message = {
            "id": random_id(self.rng, "msg"),
            "role": "tool",
            "toolCallId": call_id,
            "isError": error is not None,
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "text", "text": text}],
        }
        data: dict[str, Any] = {"turn": self.turn, "step": number, "message": message}
        if error is not None:
            data["error"] = {"name": error[0], "code": error[1]}
        self._context_tokens += text_tokens(text)
        return self._append("tool/result", data, surface_op="append", source_seqs=[call_seq])

    def compact(self, summary: str) -> None:
        """Replace every surface node after the system head by one summary (between turns)."""
        shadowed = self.surface[1:]
        compaction_id = random_id(self.rng, "compaction")
        self.clock.advance(1_000, 5_000)
        self._append("compaction/start", {"compactionId": compaction_id, "turn": None})
        self.clock.advance(2_000, 8_000)
        summary_tokens = text_tokens(summary)
        self._append(
            "compaction/summary",
            {
                "compactionId": compaction_id,
                "summary": [summary],
                "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                "shadowedSeqs": shadowed,
                "shadowedTokenCount": self._context_tokens - text_tokens(SYSTEM_PROMPT),
                "provider": self.identity.provider,
                "model": self.identity.model,
                "usage": {"inputTokens": self._context_tokens, "outputTokens": summary_tokens},
            },
        )
        message = self._message("user", summary, {"kind": "compact-checkpoint"})
        op = {"op": "replace", "startSeq": shadowed[0], "endSeq": shadowed[-1]}
        self._append("user/message", message, surface_op=op, source_seqs=shadowed)
        self._append("compaction/end", {"compactionId": compaction_id, "turn": None})
        self._context_tokens = text_tokens(SYSTEM_PROMPT) + summary_tokens
        self._cached_tokens = 0
        self._header_reason = "series"


def read_committed(path: Path) -> list[Event]:
    """Return a ledger's events as a restarting runtime sees them (a torn last line dropped)."""
    events: list[Event] = []
    with path.open(encoding="utf-8") as stream:
        next(stream)
        for line in stream:
            if not line.endswith("\n"):
                break
            events.append(json.loads(line))
    return events
