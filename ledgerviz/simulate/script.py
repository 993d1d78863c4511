"""The scripted model and tools: seeded plans of what each turn, step and tool call does."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolError:
    """The machine identity of a failed tool result (``error {name, code}``)."""

    name: str
    code: str


@dataclass(frozen=True, slots=True)
class ProviderFailure:
    """One failed model call: the failure object recorded by the runtime."""

    message: str
    code: str
    status: int


@dataclass(frozen=True, slots=True)
class CallPlan:
    """One tool call the scripted model asks for, and how the scripted tool behaves."""

    name: str
    arguments: str
    duration_ms: int
    output: str
    error: ToolError | None = None
    child: TurnPlan | None = None


@dataclass(frozen=True, slots=True)
class StepPlan:
    """One model call and the tools it requests, with the faults injected into it."""

    text: str
    calls: tuple[CallPlan, ...]
    latency_ms: int
    failed_attempts: tuple[ProviderFailure, ...] = ()
    gives_up: bool = False
    scheduler_fails_at: int | None = None
    cancel_at: int | None = None


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """One user turn: the prompt and the steps the model takes to answer it."""

    prompt: str
    steps: tuple[StepPlan, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A scripted tool: its schema and how to make arguments, output and duration."""

    name: str
    description: str
    parameters: dict[str, Any]
    arguments: Callable[[random.Random], dict[str, str]]
    output: Callable[[random.Random, dict[str, str]], str]
    duration_ms: tuple[int, int]
    verb: str

    def schema(self) -> dict[str, Any]:
        """Return the tool schema as written in ``request/header.header.tools``."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


PATHS = (
    "src/app.py",
    "src/db.py",
    "src/api/routes.py",
    "tests/test_api.py",
    "README.md",
    "setup.cfg",
)
PATTERNS = ("TODO", "def handle", "timeout", "import json", "retry")
COMMANDS = ("pytest -q", "git status --short", "ls src", "python -m mypy src", "git diff --stat")
URLS = ("https://docs.python.org/3/library/json.html", "https://example.org/changelog")
PROMPTS = (
    "Fix the failing test in tests/test_api.py.",
    "Find where request timeouts are configured and raise them to 30 seconds.",
    "Summarise what changed in the last commit.",
    "Add a retry around the database connection.",
    "Check the README for outdated setup steps.",
    "Rename handle_request to dispatch_request everywhere.",
    "Why does the build print a deprecation warning?",
)
ANSWERS = (
    "Done: the change is in place and the tests pass.",
    "The timeout is set in src/api/routes.py; I raised it to 30 seconds.",
    "I could not reproduce the failure; the suite passes locally.",
    "Summary: two files changed, one test added.",
    "Fixed. The warning came from an old import path.",
)


def _string_schema(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "required": list(names),
    }


def _lines(rng: random.Random, count: int) -> str:
    return "\n".join(
        f"{n}: {rng.choice(PATTERNS)} ..." for n in sorted(rng.sample(range(1, 400), count))
    )


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "read",
            "Read a text file.",
            _string_schema("path"),
            lambda rng: {"path": rng.choice(PATHS)},
            lambda rng, args: _lines(rng, rng.randint(2, 5)),
            (20, 400),
            "Let me read",
        ),
        ToolSpec(
            "grep",
            "Search files for a pattern.",
            _string_schema("pattern", "path"),
            lambda rng: {"pattern": rng.choice(PATTERNS), "path": "src"},
            lambda rng, args: "\n".join(
                f"{rng.choice(PATHS)}:{rng.randint(1, 400)}: {args['pattern']}"
                for _ in range(rng.randint(1, 3))
            ),
            (40, 700),
            "Searching for",
        ),
        ToolSpec(
            "bash",
            "Run a shell command.",
            _string_schema("command"),
            lambda rng: {"command": rng.choice(COMMANDS)},
            lambda rng, args: f"$ {args['command']}\nexit 0 ({rng.randint(1, 90)} lines of output)",
            (200, 4000),
            "Running",
        ),
        ToolSpec(
            "edit",
            "Replace text in a file.",
            _string_schema("path", "old", "new"),
            lambda rng: {"path": rng.choice(PATHS), "old": "timeout=10", "new": "timeout=30"},
            lambda rng, args: f"Edited {args['path']} (1 replacement).",
            (30, 300),
            "Editing",
        ),
        ToolSpec(
            "web_fetch",
            "Fetch a web page as text.",
            _string_schema("url"),
            lambda rng: {"url": rng.choice(URLS)},
            lambda rng, args: f"Fetched {args['url']}: {rng.randint(2, 40)} KB of text.",
            (300, 3000),
            "Fetching",
        ),
        ToolSpec(
            "subagent",
            "Delegate a task to a fresh subagent.",
            _string_schema("description", "prompt"),
            lambda rng: {"description": "Delegated check", "prompt": rng.choice(PROMPTS)},
            lambda rng, args: "The subagent finished.",
            (500, 5000),
            "Delegating:",
        ),
    )
}

EVERYDAY_TOOLS = ("read", "grep", "bash", "edit", "web_fetch")


class Script:
    """Seeded generator of turn, step and call plans for the scripted model."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def call(self, name: str | None = None, *, error: ToolError | None = None) -> CallPlan:
        """Return a plan for one call of ``name`` (a random everyday tool if None)."""
        rng = self.rng
        spec = TOOLS[name or rng.choice(EVERYDAY_TOOLS)]
        args = spec.arguments(rng)
        output = spec.output(rng, args)
        if error is not None:
            output = f"{error.name}: {error.code} while running {spec.name}"
        return CallPlan(
            name=spec.name,
            arguments=json.dumps(args, ensure_ascii=False),
            duration_ms=rng.randint(*spec.duration_ms),
            output=output,
            error=error,
        )

    def tool_step(self, calls: int | tuple[CallPlan, ...] | None = None) -> StepPlan:
        """Return a step whose assistant message asks for tool calls (1-4 random by default)."""
        rng = self.rng
        if not isinstance(calls, tuple):
            calls = tuple(self.call() for _ in range(calls or rng.randint(1, 4)))
        subject = next(iter(json.loads(calls[0].arguments).values()))
        more = f" and {len(calls) - 1} more" if len(calls) > 1 else ""
        return StepPlan(
            text=f"{TOOLS[calls[0].name].verb} {subject}{more}.",
            calls=calls,
            latency_ms=rng.randint(600, 4000),
        )

    def answer_step(self, text: str | None = None) -> StepPlan:
        """Return a final step: text only, no tool calls."""
        rng = self.rng
        return StepPlan(
            text=text or rng.choice(ANSWERS), calls=(), latency_ms=rng.randint(500, 3000)
        )

    def turn(self, tool_steps: int | None = None, prompt: str | None = None) -> TurnPlan:
        """Return a turn of ``tool_steps`` tool-using steps (0-2 random) and a final answer."""
        rng = self.rng
        count = rng.randint(0, 2) if tool_steps is None else tool_steps
        steps = (*(self.tool_step() for _ in range(count)), self.answer_step())
        return TurnPlan(prompt=prompt or rng.choice(PROMPTS), steps=steps)

    def with_step(self, turn: TurnPlan, index: int, **changes: Any) -> TurnPlan:
        """Return ``turn`` with step ``index`` changed (fault injection on a scripted step)."""
        steps = list(turn.steps)
        steps[index] = replace(steps[index], **changes)
        return replace(turn, steps=tuple(steps))
