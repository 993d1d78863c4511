"""One large dsh ledger file as OTLP spans without loading it: two streamed passes.

The first pass runs the recovery scan block by block (``recovery.analyze_blocks``): the
calls' statuses and branches, the fork points, the abandoned and synthetic seqs and the
closers, which are known only at the end. The second reads the file again, then the
closers, and folds each block into the rows the spans are made of: turns and steps as the
frames make them (``frames.turns``' rules: ``route_of``, ``add_assistant``), the times of
the seqs the calls need, the lineage markers and the latest time. Only the block being
read is held besides the scan's few numbers per event and one small row per turn, step
and call, never the events, so memory follows the count of turns and calls, not the
file's bytes. The spans are those ``ledger_spans`` makes of the loaded file (the tests
hold the two to each other byte for byte).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ledgerviz.export.otlp_rows import (
    CallRow,
    LineageRow,
    SessionClock,
    SessionRows,
    StepRow,
    TurnRow,
)
from ledgerviz.export.otlp_spans import Session, SpanRecord, session_spans
from ledgerviz.frames.events import TOOL_EVENTS
from ledgerviz.frames.turns import (
    NO_ROUTE,
    ROUTE_EVENTS,
    STEP_EVENTS,
    STEP_ROW,
    TURN_EVENTS,
    USAGE_COLUMNS,
    add_assistant,
    route_of,
)
from ledgerviz.ledger.checks import CheckedEvents
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.lineage import LINEAGE_EVENTS, SEED_MARKER, inherited_count, lineage_of
from ledgerviz.ledger.reader import READ_BYTES, FileScan, reported_chunks
from ledgerviz.ledger.sources import Found, found_chunks
from ledgerviz.progress import BYTES_THRESHOLD, progress
from ledgerviz.recovery.analysis import Policy
from ledgerviz.recovery.analyze import SessionFacts, analyze_blocks
from ledgerviz.recovery.events import payload_end_reason_kind

_NS_PER_MS = 1_000_000
_INT64 = range(-(2**63), 2**63)
_START, _END, _PROVIDER, _MODEL = map(STEP_ROW.index, ("start", "end", "provider", "model"))
_USAGE = slice(_MODEL + 1, _MODEL + 1 + len(USAGE_COLUMNS))
_FOLDED = TURN_EVENTS | STEP_EVENTS | TOOL_EVENTS | LINEAGE_EVENTS


@dataclass(frozen=True, slots=True)
class StreamedFile:
    """One file read in two passes: its session key, whether it has error diagnostics, its
    spans (made when iterated) and how many there are."""

    key: str
    has_errors: bool
    spans: Iterator[SpanRecord]
    count: int


def stream_file(found: Found, size: int, policy: Policy) -> StreamedFile:
    """Read the dsh ledger file ``found`` (``size`` bytes: a bar is drawn for a large one)
    twice and return its spans under ``policy``. Raises ValueError when the second read
    does not find the lines of the first (the file changed)."""
    scan, blocks = _pass(found, size, "reading")
    facts = analyze_blocks(((block.events, block.fields) for block in blocks),
                           policy=policy, version=scan.version)
    folded = _Fold(_wanted(facts))
    again, blocks = _pass(found, size, "reading again")
    position = 0
    for block in blocks:
        folded.take(block.fields)
        position += len(block.events)
        del block  # not held while the next block is read
    if again.lines_read != scan.lines_read:
        raise ValueError(f"{found.path} changed while it was read; export it again")
    folded.take(EventFields.of(facts.closers, start=position))
    clock = SessionClock(folded.latest * _NS_PER_MS, folded.requested_times,
                         frozenset(facts.synthetic_seqs),
                         min(facts.abandoned_seqs, default=None), tuple(sorted(facts.fork_points)))
    rows = SessionRows(folded.turn_rows(), folded.step_rows(), folded.call_rows(facts),
                       folded.lineage_row(scan.header_fields, scan.version))
    del facts, folded  # the rows hold what the spans need
    has_errors = any(d.severity == "error" for d in scan.diagnostics())
    return StreamedFile(scan.key, has_errors, session_spans(Session(scan.key, policy, rows, clock)),
                        len(rows.turns) + len(rows.steps) + len(rows.calls))


def _pass(found: Found, size: int, doing: str) -> tuple[FileScan, Iterator[CheckedEvents]]:
    """Return a new scan of the file and its blocks, read as they are consumed."""
    scan = FileScan(found.path)

    def blocks() -> Iterator[CheckedEvents]:
        with progress(size, BYTES_THRESHOLD, doing, unit="B") as step:
            yield from scan.blocks(reported_chunks(found_chunks(found, READ_BYTES), step))

    return scan, blocks()  # type: ignore[return-value]  # no typed blocks: typed=False


def _wanted(facts: SessionFacts) -> tuple[set[int], set[int]]:
    """Return the seqs whose tool events' times the call rows need, and the seqs of the
    assistant messages of the calls never dispatched (where such a span starts)."""
    tools = {seq for call in facts.calls for seq in (call.dispatched_seq, call.result_seq)
             if seq.__class__ is int}
    return tools, {call.requested_seq for call in facts.calls if call.dispatched_seq is None}


def _int(value: Any) -> int | None:
    """Return ``value`` as the frames' ``Int64`` columns hold it: an int within int64, else
    None."""
    return value if value.__class__ is int and value in _INT64 else None


def _ns(time: Any) -> int | None:
    """Return an event's ``time`` (epoch ms) in epoch ns, None when the frames have none."""
    ms = _int(time)
    return None if ms is None else ms * _NS_PER_MS


@dataclass(slots=True)
class _Fold:
    """The rows of one session's events, taken a block at a time in log order."""

    wanted: tuple[set[int], set[int]]
    turns: list[list[Any]] = field(default_factory=list)
    steps: list[list[Any]] = field(default_factory=list)
    tool_times: dict[int, int | None] = field(default_factory=dict)
    requested_times: dict[int, int] = field(default_factory=dict)
    markers: list[tuple[str, Any, Any]] = field(default_factory=list)
    latest: int = 0
    _turn_at: dict[Any, list[Any]] = field(default_factory=dict)
    _step_at: dict[Any, list[Any]] = field(default_factory=dict)
    _open_step: list[Any] | None = None
    _route: tuple[Any, Any] = NO_ROUTE

    def take(self, fields: EventFields) -> None:
        """Fold one block's events (given as their columns)."""
        tools, requested = self.wanted
        for kind, seq, data, time, turn, step in zip(fields.types, fields.seqs, fields.datas,
                                                     fields.times, fields.turns, fields.steps,
                                                     strict=True):
            numbered = seq.__class__ is int
            if time.__class__ is int:
                self.latest = max(self.latest, time)
                if numbered and seq in requested:
                    self.requested_times[seq] = time * _NS_PER_MS
            if kind not in _FOLDED:
                continue
            if kind in TOOL_EVENTS:
                if numbered and seq in tools:
                    self.tool_times[seq] = _ns(time)
                continue
            if kind in LINEAGE_EVENTS:
                self.markers.append((kind, seq, data))
                continue
            at = (_int(seq), _ns(time))  # as the frames' seq and time columns hold them
            if kind in TURN_EVENTS:
                self._turn(kind, turn, data, at)
            if kind in STEP_EVENTS:
                self._step(kind, turn, step, data, at)

    def _turn(self, kind: str, turn: Any, data: dict[str, Any],
              at: tuple[int | None, int | None]) -> None:
        """``frames.turns._turn_rows`` for one event: [turn, start, end, end reason]."""
        row = self._turn_at.get(turn)
        if kind == "turn/start" or row is None:
            row = self._turn_at[turn] = [turn, None, None, None]
            self.turns.append(row)
        if kind == "turn/start":
            row[1] = at
        elif kind == "turn/end":
            row[2], row[3] = at, payload_end_reason_kind(data)

    def _step(self, kind: str, turn: Any, step: Any, data: dict[str, Any],
              at: tuple[int | None, int | None]) -> None:
        """``frames.turns._step_rows`` for one event (rows laid out as ``STEP_ROW``)."""
        if kind in ROUTE_EVENTS:
            self._route = route_of(kind, data) or self._route
            if self._open_step is not None:
                self._open_step[_PROVIDER], self._open_step[_MODEL] = self._route
            return
        row = self._step_at.get((turn, step))
        if kind == "step/start" or row is None:
            row = self._step_at[(turn, step)] = [0, turn, step, None, None, *self._route,
                                                 None, None, None, None, 0, 0]
            self.steps.append(row)
        if kind == "step/start":
            row[_START] = at
            self._open_step = row
        elif kind == "step/end":
            row[_END] = at
            self._open_step = None
        else:
            add_assistant(row, data)

    def turn_rows(self) -> list[TurnRow]:
        """Return the turn rows (the folded lists are dropped as they are turned)."""
        turns, self.turns = self.turns, []
        self._turn_at.clear()
        return [TurnRow(_int(turn), *_seq_time(start, end), reason)
                for turn, start, end, reason in turns]

    def step_rows(self) -> list[StepRow]:
        """Return the step rows (the folded lists are dropped as they are turned)."""
        steps, self.steps = self.steps, []
        self._step_at.clear()
        return [StepRow(_int(row[1]), _int(row[2]), *_seq_time(row[_START], row[_END]),
                        row[_PROVIDER], row[_MODEL], *map(_int, row[_USAGE]))
                for row in steps]

    def call_rows(self, facts: SessionFacts) -> list[CallRow]:
        times: Callable[[Any], int | None] = self.tool_times.get
        return [CallRow(call.call_id, call.name, _int(call.turn), _int(call.step),
                        call.requested_seq, _int(call.dispatched_seq), _int(call.result_seq),
                        times(call.dispatched_seq), times(call.result_seq), call.status,
                        call.error_code, call.branch, call.settled)
                for call in facts.calls]

    def lineage_row(self, header: dict[str, Any], version: int | None) -> LineageRow:
        """``frames.lineage.lineage_row`` of a session read alone (no catalog names it)."""
        seeds = ((seq, data) for kind, seq, data in self.markers if kind == SEED_MARKER)
        lineage = lineage_of(header, inherited_count(header, version, seeds),
                             has_descriptor=any(kind == "subagent/descriptor"
                                                for kind, _, _ in self.markers))
        return LineageRow(lineage.parent, lineage.relation, _int(lineage.boundary),
                          header.get("agentPreset"))


def _seq_time(start: tuple[int | None, int | None] | None,
              end: tuple[int | None, int | None] | None
              ) -> tuple[int | None, int | None, int | None, int | None]:
    """Return the start and end seqs, then times (ns), of a row's start and end events."""
    first, last = start or (None, None), end or (None, None)
    return first[0], last[0], first[1], last[1]
