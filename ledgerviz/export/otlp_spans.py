"""One session's spans, shaped by the OpenTelemetry GenAI semantic conventions.

Per session one trace (``gen_ai.conversation.id`` = the session id); per turn an
``invoke_agent`` span (a root); per step a ``chat {model}`` span inside its turn, with the
step's token usage; per requested tool call an ``execute_tool {tool}`` span inside the step
that requested it. Recovery facts are in the ``ledgerviz.*`` namespace; docs/otlp.md gives
every attribute and how each call status maps onto span status, Langfuse and Phoenix.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from ledgerviz.export.otlp_ids import call_key, span_id, step_key, trace_id, turn_key
from ledgerviz.export.otlp_rows import (
    CallRow,
    LineageRow,
    SessionClock,
    SessionRows,
    StepRow,
    TurnRow,
)
from ledgerviz.recovery.vocab import CallStatus

CALL_STATUS = "ledgerviz.call.status"
BRANCH = "ledgerviz.branch"
SYNTHETIC = "ledgerviz.synthetic"
FORK_POINT = "ledgerviz.fork_point"
LANGFUSE_LEVEL = "langfuse.observation.level"
OPENINFERENCE_KIND = "openinference.span.kind"

LEVELS: dict[CallStatus, str] = {
    "ok": "DEFAULT", "error": "ERROR", "outcome_unknown": "WARNING", "not_started": "DEFAULT"}
"""``langfuse.observation.level`` of a tool call span, by call status."""

INTERNAL, CLIENT = 1, 3
"""OTLP ``Span.SpanKind`` numbers (the protobuf enum's, not the Python API's)."""
UNSET, OK, ERROR = 0, 1, 2
"""OTLP ``Status.StatusCode`` numbers."""


class SpanLink(NamedTuple):
    """A link to a span of another trace (always remote: another session's)."""

    trace_id: int
    span_id: int
    attributes: dict[str, Any]


class SpanRecord(NamedTuple):
    """One span as plain values, in OTLP's terms; attributes hold no None."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    kind: int
    start: int
    end: int
    attributes: dict[str, Any]
    status: int = UNSET
    message: str = ""
    links: tuple[SpanLink, ...] = ()


class TurnGroup(NamedTuple):
    """The rows of one turn number (of each frame, in frame order): what the spans of one
    turn are made of."""

    turns: list[TurnRow]
    steps: list[StepRow]
    calls: list[CallRow]


@dataclass(frozen=True, slots=True)
class Session:
    """Everything one session's spans are made from."""

    session_id: str
    policy: str
    groups: Iterable[TurnGroup]
    """The rows a turn number at a time, ascending, turn None last (``turn_groups``)."""
    agent: str | None
    """The session's ``agentPreset`` (what its turn spans are named after)."""
    links: tuple[SpanLink, ...]
    """The links every turn span carries (``lineage_links``)."""
    clock: SessionClock
    calls_rise: bool = False
    """Whether the calls come in the order of their requesting messages' seqs, each an int
    above the last: a call key can then repeat only within one message."""


def held_session(session_id: str, policy: str, rows: SessionRows, clock: SessionClock
                 ) -> Session:
    """Return the ``Session`` of rows all held in memory."""
    lineage = rows.lineage
    return Session(session_id, policy, turn_groups(rows),
                   lineage.agent_preset if lineage else None,
                   lineage_links(lineage, holding_turn(lineage, rows.turns)), clock)


def turn_groups(rows: SessionRows) -> list[TurnGroup]:
    """Return ``rows`` grouped by turn number, ascending, turn None last."""
    groups: dict[int | None, TurnGroup] = {}
    for kind, held in enumerate((rows.turns, rows.steps, rows.calls)):
        for row in held:
            group = groups.get(row.turn)
            if group is None:
                group = groups[row.turn] = TurnGroup([], [], [])
            group[kind].append(row)
    return [groups[turn] for turn in sorted(groups, key=turn_order)]


def turn_order(turn: int | None) -> tuple[bool, int]:
    """Sort key of turn numbers: ascending, None last."""
    return turn is None, turn or 0


NO_TURN: tuple[()] = ()
"""``holding_turn``'s answer when no turn holds the boundary."""


def holding_turn(lineage: LineageRow | None, turns: list[TurnRow]) -> int | tuple[()] | None:
    """Return the number of the last of ``turns`` holding the fork boundary (the turn whose
    seqs reach from at most to at least it, or that never ended), else ``NO_TURN``."""
    boundary = lineage.boundary_seq if lineage is not None else None
    holding = [turn.turn for turn in turns if boundary is not None
               and turn.start_seq is not None and turn.start_seq <= boundary
               and (turn.end_seq is None or boundary <= turn.end_seq)]
    return holding[-1] if holding else NO_TURN


def lineage_links(lineage: LineageRow | None, holding: int | tuple[()] | None
                  ) -> tuple[SpanLink, ...]:
    """Return the link to the parent session's trace: to its turn ``holding`` the fork
    boundary (``holding_turn``), else (a subagent, whose spawning turn the ledger does not
    name) to its first turn."""
    if lineage is None or lineage.parent_session is None:
        return ()
    parent = lineage.parent_session
    attributes = {"ledgerviz.relation": lineage.relation or "child",
                  "ledgerviz.boundary_seq": lineage.boundary_seq}
    turn = 1 if holding == NO_TURN else holding
    return (SpanLink(trace_id(parent), span_id(parent, turn_key(turn)),
                     {name: value for name, value in attributes.items() if value is not None}),)


def wanted_seqs(rows: SessionRows) -> set[int]:
    """Return the seqs whose event times the spans need beyond the frames: the assistant
    messages of calls never dispatched (where such a call's span starts and ends)."""
    return {call.requested_seq for call in rows.calls if call.dispatched_seq is None}


def session_spans(session: Session) -> Iterator[SpanRecord]:
    """Yield the spans of one session a turn number at a time: the turn's, its steps',
    its calls' (a parent is always in its child's group, so a group's ids are all that is
    held besides the calls' keys)."""
    return _Builder(session).spans()


class _Builder:
    """Makes one session's spans; keeps the ids already given so that none repeats (a turn
    or step key names its turn number: those of one group; a call key names the seq of its
    message: those of all, or of one message when the seqs rise, ``calls_rise``)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.trace = trace_id(session.session_id)
        self.given: Counter[str] = Counter()
        self.calls_given: Counter[str] = Counter()
        self.latest: dict[str, int] = {}
        """The id of the latest span made for each key (the parent of what follows)."""
        self.message: Any = None
        """The requesting seq of the latest call span (``calls_rise``)."""

    def spans(self) -> Iterator[SpanRecord]:
        for group in self.session.groups:
            self.given.clear()
            self.latest.clear()
            yield from map(self._turn_span, group.turns)
            yield from map(self._step_span, group.steps)
            yield from map(self._call_span, group.calls)

    def _id(self, key: str, given: Counter[str]) -> int:
        """Return a new span id for ``key`` (of ``key#n`` for its n-th repeat in ``given``)."""
        given[key] += 1
        count = given[key]
        unique = key if count == 1 else f"{key}#{count}"
        made = self.latest[key] = span_id(self.session.session_id, unique)
        return made

    def _span(self, name: str, key: str, parent: int | None, kind: int,
              times: tuple[int, int], attributes: dict[str, Any],
              status: tuple[int, str] = (UNSET, ""), links: tuple[SpanLink, ...] = (),
              given: Counter[str] | None = None) -> SpanRecord:
        session = self.session
        common = {"gen_ai.conversation.id": session.session_id, "ledgerviz.policy": session.policy}
        return SpanRecord(
            name, self.trace, self._id(key, self.given if given is None else given), parent,
            kind, times[0], max(times),
            {attribute: value for attribute, value in {**common, **attributes}.items()
             if value is not None},
            *status, links)

    def _branch(self, last: int | None) -> str:
        """Return ``abandoned`` when a span ending at seq ``last`` (None: open) reaches into
        the abandoned suffix, else ``active``."""
        start = self.session.clock.abandoned_from
        abandoned = start is not None and (last is None or last >= start)
        return "abandoned" if abandoned else "active"

    def _fork_point(self, first: int | None, last: int | None) -> int | None:
        """Return the first fork point within seqs ``first``..``last`` (None: unbounded)."""
        points = self.session.clock.fork_points
        at = 0 if first is None else bisect_left(points, first)
        if at < len(points) and (last is None or points[at] <= last):
            return points[at]
        return None

    def _recovery(self, first: int | None, last: int | None) -> dict[str, Any]:
        """Return the recovery attributes of a span covering seqs ``first``..``last``."""
        return {
            BRANCH: self._branch(last),
            SYNTHETIC: last in self.session.clock.synthetic,
            FORK_POINT: self._fork_point(first, last),
        }

    def _turn_span(self, turn: TurnRow) -> SpanRecord:
        clock = self.session.clock
        start = _first(turn.start_time, turn.end_time, clock.end)
        failed = turn.end_reason == "error"
        agent = self.session.agent
        return self._span(
            f"invoke_agent {agent}" if agent else "invoke_agent",
            turn_key(turn.turn), None, INTERNAL,
            (start, _first(turn.end_time, clock.end)),
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                OPENINFERENCE_KIND: "AGENT",
                "ledgerviz.turn": turn.turn,
                "ledgerviz.turn.end_reason": turn.end_reason,
                "error.type": turn.end_reason if failed else None,
                **self._recovery(turn.start_seq, turn.end_seq),
            },
            (ERROR, "turn ended with an error") if failed else (UNSET, ""),
            self.session.links,
        )

    def _step_span(self, step: StepRow) -> SpanRecord:
        clock = self.session.clock
        start = _first(step.start_time, step.end_time, clock.end)
        return self._span(
            f"chat {step.model}" if step.model else "chat",
            step_key(step.turn, step.step), self.latest.get(turn_key(step.turn)),
            CLIENT, (start, _first(step.end_time, clock.end)),
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": step.provider,
                "gen_ai.request.model": step.model,
                "gen_ai.usage.input_tokens": step.input_tokens,
                "gen_ai.usage.output_tokens": step.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": step.cache_read_tokens,
                "ledgerviz.usage.reasoning_tokens": step.reasoning_tokens,
                OPENINFERENCE_KIND: "LLM",
                "ledgerviz.turn": step.turn,
                "ledgerviz.step": step.step,
                **self._recovery(step.start_seq, step.end_seq),
            },
        )

    def _call_span(self, call: CallRow) -> SpanRecord:
        clock = self.session.clock
        if self.session.calls_rise and call.requested_seq != self.message:
            self.calls_given.clear()  # no later call repeats the key of an earlier message
            self.message = call.requested_seq
        requested = clock.times.get(call.requested_seq)
        start = _first(call.dispatch_time, requested, call.result_time, clock.end)
        open_end = clock.end if call.status == "outcome_unknown" else start
        parent = (self.latest.get(step_key(call.turn, call.step))
                  or self.latest.get(turn_key(call.turn)))
        error = (call.error_code or "tool_error") if call.status == "error" else None
        status = ((ERROR, error) if error
                  else (OK, "") if call.status == "ok" else (UNSET, ""))
        return self._span(
            f"execute_tool {call.tool}" if call.tool else "execute_tool",
            call_key(call.requested_seq, call.call_id), parent, INTERNAL,
            (start, _first(call.result_time, open_end)),
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.tool,
                "gen_ai.tool.call.id": call.call_id,
                "gen_ai.tool.type": "function",
                "error.type": error,
                OPENINFERENCE_KIND: "TOOL",
                LANGFUSE_LEVEL: LEVELS[call.status],
                CALL_STATUS: call.status,
                "ledgerviz.call.code": call.error_code,
                "ledgerviz.call.settled": call.settled,
                "ledgerviz.call.requested_seq": call.requested_seq,
                "ledgerviz.call.dispatched_seq": call.dispatched_seq,
                "ledgerviz.call.result_seq": call.result_seq,
                "ledgerviz.turn": call.turn,
                "ledgerviz.step": call.step,
                BRANCH: call.branch,
                SYNTHETIC: call.result_seq in clock.synthetic,
                FORK_POINT: self._fork_point(call.requested_seq, call.requested_seq),
            },
            status,
            given=self.calls_given,
        )


def _first(*times: int | None) -> int:
    """Return the first time given (the last one always is)."""
    return next(time for time in times if time is not None)
