"""One large dsh ledger file as OTLP spans without loading it: two streamed passes.

The first pass runs the recovery scan block by block (``recovery.blocks.analyze_blocks``):
the fork points, the abandoned and synthetic seqs and the closers, which are known only at
the end, the calls left unanswered when their step closed and the requesting messages'
branches; it also folds the rows once, only to count them, to find the latest time,
whether the turn numbers never go down and the seqs rise, and (a file with a parent) the
turn holding the fork boundary (``_Holding``). The second reads the file again, then the
closers, and folds each block into the rows the spans are made of: turns and steps as the
frames make them (``frames.turns``' rules: ``route_of``, ``add_assistant``), the calls as
``recovery.followed.CallFollower`` finds them again, with the times their spans need.
When the numbers are in order, a turn's spans are made as the second pass goes
(``_Fold.ready``): its rows are held only until the next turn number begins and its calls
are settled. Otherwise every row is held until the end. The events are never held. The
spans are those ``ledger_spans`` makes of the loaded file (the tests hold the two to each
other byte for byte).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

from ledgerviz.export.otlp_rows import (
    CallRow,
    LineageRow,
    SessionClock,
    SessionRows,
    StepRow,
    TurnRow,
)
from ledgerviz.export.otlp_spans import (
    NO_TURN,
    Session,
    SpanLink,
    SpanRecord,
    TurnGroup,
    held_session,
    lineage_links,
    session_spans,
)
from ledgerviz.frames.events import TOOL_EVENTS
from ledgerviz.frames.turns import (
    NO_ROUTE,
    ROUTE_EVENTS,
    STEP_EVENTS,
    STEP_ROW,
    TURN_EVENTS,
    USAGE_COLUMNS,
    add_assistant,
)
from ledgerviz.ledger.checks import CheckedEvents
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.lineage import LINEAGE_EVENTS, SEED_MARKER, inherited_count, lineage_of
from ledgerviz.ledger.reader import READ_BYTES, FileScan, reported_chunks
from ledgerviz.ledger.sources import Found, found_chunks
from ledgerviz.ledger.table import route_of
from ledgerviz.progress import BYTES_THRESHOLD, progress
from ledgerviz.recovery.analysis import Policy
from ledgerviz.recovery.blocks import SessionFacts, analyze_blocks
from ledgerviz.recovery.columns import DictColumns, columns_of
from ledgerviz.recovery.followed import CallFollower, FollowedCall
from ledgerviz.recovery.payload import payload_end_reason_kind

_NS_PER_MS = 1_000_000
_INT64 = range(-(2**63), 2**63)
_START, _END, _PROVIDER, _MODEL = map(STEP_ROW.index, ("start", "end", "provider", "model"))
_USAGE = slice(_MODEL + 1, _MODEL + 1 + len(USAGE_COLUMNS))
_FOLDED = TURN_EVENTS | STEP_EVENTS | TOOL_EVENTS | LINEAGE_EVENTS
_CALL_EVENTS = TOOL_EVENTS | {"assistant/message"}


@dataclass(frozen=True, slots=True)
class StreamedFile:
    """One file read in two passes: its session key, whether it has error diagnostics, its
    spans (made when iterated) and how many there are."""

    key: str
    has_errors: bool
    spans: Iterator[SpanRecord]
    count: int


class _FirstRead(NamedTuple):
    """What the second pass needs of the first pass's ``FileScan`` (not held: its checks'
    state grows with the file)."""

    key: str
    header: dict[str, Any]
    version: int | None
    lines: int


def stream_file(found: Found, size: int, policy: Policy) -> StreamedFile:
    """Read the dsh ledger file ``found`` (``size`` bytes: a bar is drawn for a large one)
    twice and return its spans under ``policy``. Raises ValueError (while the spans are
    iterated) when the second read does not find the lines of the first (the file changed)."""
    survey = _Fold(flat=True)
    scan, blocks = _pass(found, size, "reading")
    facts = analyze_blocks(_surveyed(blocks, survey, scan), policy=policy,
                           version=scan.version)
    survey.take(EventFields.of(facts.closers, start=survey.events))
    has_errors = any(d.severity == "error" for d in scan.diagnostics())
    first = _FirstRead(scan.key, scan.header_fields, scan.version, scan.lines_read)
    del scan, blocks
    clock = SessionClock(survey.latest * _NS_PER_MS, {}, frozenset(facts.synthetic_seqs),
                         min(facts.abandoned_seqs, default=None), tuple(sorted(facts.fork_points)))
    count = survey.rows + facts.calls
    if survey.ordered and (survey.holding is not None
                           or not first.header.get("parentSession")):
        links = ()
        if survey.holding is not None:
            survey.holding.finish()
            links = lineage_links(survey.lineage_row(first.header, first.version),
                                  survey.holding.found)
        spans = _flat_spans(found, size, first, facts, clock, policy, links)
    else:
        rows = _held_rows(found, size, first, facts, clock, survey.ordered)
        spans = session_spans(held_session(first.key, policy, rows, clock))
    return StreamedFile(first.key, has_errors, spans, count)


def _surveyed(blocks: Iterable[CheckedEvents], survey: _Fold, scan: FileScan
              ) -> Iterator[tuple[list[Any], DictColumns]]:
    """Yield the blocks' events and their columns for the recovery scan (read with the
    reader's envelope columns), each block folded into ``survey`` first (its rows counted,
    then dropped; for a file with a parent, the turn holding its fork boundary looked for,
    ``_Holding``)."""
    for block in blocks:
        if not survey.events and scan.header_fields.get("parentSession"):
            survey.holding = _Holding.of(scan.header_fields, scan.version)
        survey.take(block.fields)
        survey.closed.clear()
        survey.events += len(block.events)
        yield block.events, columns_of(block.events, envelope=block.fields)


def _second_pass(found: Found, size: int, first: _FirstRead, folded: _Fold,
                 closers: list[Any]) -> Iterator[None]:
    """Fold the file into ``folded`` again, block by block (yielding after each), then the
    closers. Raises ValueError when the file's lines are not those of the first pass."""
    again, blocks = _pass(found, size, "reading again")
    position = 0
    for block in blocks:
        folded.take(block.fields)
        position += len(block.events)
        del block  # not held while the next block is read
        yield
    if again.lines_read != first.lines:
        raise ValueError(f"{found.path} changed while it was read; export it again")
    folded.take(EventFields.of(closers, start=position))
    if folded.follower is not None:
        folded.follower.finish()
    yield


def _held_rows(found: Found, size: int, first: _FirstRead, facts: SessionFacts,
               clock: SessionClock, ordered: bool) -> SessionRows:
    """Return every row of the file (its turns not in order, or it has a parent: the
    lineage link needs all turns), ``clock.times`` filled. When its seqs do not rise
    (``ordered`` False), a seq may name several events: the time of every seq is held,
    the last event's kept, as the frames read it."""
    folded = _Fold(CallFollower(facts), times=clock.times, by_seq=not ordered)
    for _ in _second_pass(found, size, first, folded, facts.closers):
        pass
    calls = folded.follower.calls if folded.follower else ()
    return SessionRows(folded.turn_rows(folded.turns), folded.step_rows(folded.steps),
                       folded.call_rows(calls),
                       folded.lineage_row(first.header, first.version))


def _flat_spans(found: Found, size: int, first: _FirstRead, facts: SessionFacts,
                clock: SessionClock, policy: Policy, links: tuple[SpanLink, ...]
                ) -> Iterator[SpanRecord]:
    """Yield the spans of a file whose turn numbers never go down and whose seqs rise, a
    turn at a time as the second pass reads it (``_Fold.ready``)."""
    follower = CallFollower(facts)
    folded = _Fold(follower, times=clock.times, flat=True)
    calls, closers = follower.calls, facts.closers
    del facts  # the calls are dropped from ``calls`` as their spans are made

    def groups() -> Iterator[TurnGroup]:
        for _ in _second_pass(found, size, first, folded, closers):
            yield from folded.ready(calls)
        folded.close()
        yield from folded.ready(calls, final=True)

    agent = first.header.get("agentPreset")
    yield from session_spans(Session(first.key, policy, groups(), agent, links, clock,
                                     calls_rise=True))


def _pass(found: Found, size: int, doing: str) -> tuple[FileScan, Iterator[CheckedEvents]]:
    """Return a new scan of the file and its blocks, read as they are consumed (the events
    are dropped: the requested call ids are held compactly)."""
    scan = FileScan(found.path, compact_ids=True)

    def blocks() -> Iterator[CheckedEvents]:
        with progress(size, BYTES_THRESHOLD, doing, unit="B") as step:
            yield from scan.blocks(reported_chunks(found_chunks(found, READ_BYTES), step))

    return scan, blocks()  # type: ignore[return-value]  # no typed blocks: typed=False


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
    """The rows of one session's events, taken a block at a time in log order.

    ``flat``: rows of a turn number below the latest one met are moved to ``closed`` as
    the turn number rises (no more come for them when the numbers never go down:
    ``ordered`` says whether they did, and whether the seqs always rose), and lineage
    markers are not kept. Otherwise every row stays in ``turns`` and ``steps``.
    """

    follower: CallFollower | None = None
    """Finds the calls again (the second pass); None: rows only (the first)."""
    times: dict[int, int] = field(default_factory=dict)
    """Epoch ns of the assistant messages of calls never dispatched, as their spans need
    them (``SessionClock.times``)."""
    by_seq: bool = False
    """Whether every event's time is held by seq (in ``times``; tool events' also in
    ``tool_times``): the seqs do not rise, so the time of a seq is its last event's."""
    flat: bool = False
    turns: list[list[Any]] = field(default_factory=list)
    steps: list[list[Any]] = field(default_factory=list)
    closed: dict[int | None, TurnGroup] = field(default_factory=dict)
    """Rows by turn number (of raw lists while folding), in the order the numbers came."""
    tool_times: dict[int, int | None] = field(default_factory=dict)
    markers: list[tuple[str, Any, Any]] = field(default_factory=list)
    latest: int = 0
    rows: int = 0
    """How many turn and step rows were made."""
    events: int = 0
    """How many events were read (kept by the caller)."""
    ordered: bool = True
    holding: _Holding | None = None
    """Looks for the turn holding the fork boundary (the first pass of a file with a
    parent)."""
    turn: int | None = None
    """The latest turn number met (flat)."""
    last_seq: int | None = None
    _turn_at: dict[Any, list[Any]] = field(default_factory=dict)
    _step_at: dict[Any, list[Any]] = field(default_factory=dict)
    _open_step: list[Any] | None = None
    _route: tuple[Any, Any] = NO_ROUTE
    _unnumbered: list[FollowedCall] = field(default_factory=list)

    def take(self, fields: EventFields) -> EventFields:
        """Fold one block's events (given as their columns); return ``fields``."""
        follow = self.follower.follow if self.follower is not None else None
        by_seq = self.by_seq
        for kind, seq, data, time, turn, step in zip(fields.types, fields.seqs, fields.datas,
                                                     fields.times, fields.turns, fields.steps,
                                                     strict=True):
            numbered = seq.__class__ is int
            if numbered:
                if self.last_seq is not None and seq <= self.last_seq:
                    self.ordered = False
                self.last_seq = seq
                if self.holding is not None:
                    self.holding.reading(seq)
            else:
                self.ordered = False
            if time.__class__ is int:
                self.latest = max(self.latest, time)
                if numbered and by_seq:
                    self.times[seq] = time * _NS_PER_MS
            if kind not in _FOLDED:
                continue
            if follow is not None and kind in _CALL_EVENTS:
                follow(kind, seq, data, time)
            if kind in TOOL_EVENTS:
                if numbered and by_seq:
                    self.tool_times[seq] = _ns(time)
                continue
            if kind in LINEAGE_EVENTS:
                if not self.flat or self.holding is not None:
                    self.markers.append((kind, seq, data))
                if self.holding is not None and kind == SEED_MARKER:
                    self.holding.seeded(seq, data)
                continue
            if self.flat and kind not in ROUTE_EVENTS:
                self._number(turn)
            at = (_int(seq), _ns(time))  # as the frames' seq and time columns hold them
            if kind in TURN_EVENTS:
                self._turn(kind, turn, data, at)
            if kind in STEP_EVENTS:
                self._step(kind, turn, step, data, at)
        return fields

    def _number(self, turn: Any) -> None:
        """Note an event of turn ``turn``; when its number is above the latest, close the
        rows of the numbers below it."""
        number = _int(turn)
        if number is None:
            return
        if self.turn is not None and number < self.turn:
            self.ordered = False
        elif self.turn is None or number > self.turn:
            self.close()
            self.turn = number

    def close(self) -> None:
        """Move every row of a numbered turn into ``closed`` (flat)."""
        if not self.flat:
            return
        for kind, rows in enumerate((self.turns, self.steps)):
            kept = []
            for row in rows:
                number = _int(row[0] if kind == 0 else row[1])
                if number is None:
                    kept.append(row)
                    continue
                group = self.closed.get(number)
                if group is None:
                    group = self.closed[number] = TurnGroup([], [], [])
                group[kind].append(row)
            rows[:] = kept
        self._turn_at = {turn: row for turn, row in self._turn_at.items() if _int(turn) is None}
        self._step_at = {key: row for key, row in self._step_at.items()
                         if _int(key[0]) is None}

    def _turn(self, kind: str, turn: Any, data: dict[str, Any],
              at: tuple[int | None, int | None]) -> None:
        """``frames.turns._turn_rows`` for one event: [turn, start, end, end reason]."""
        row = self._turn_at.get(turn)
        if kind == "turn/start" or row is None:
            row = self._turn_at[turn] = [turn, None, None, None]
            self.turns.append(row)
            self.rows += 1
        if kind == "turn/start":
            row[1] = at
        elif kind == "turn/end":
            row[2], row[3] = at, payload_end_reason_kind(data)
        if self.holding is not None:
            self.holding.took(kind, row, self.rows - 1)

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
            self.rows += 1
        if kind == "step/start":
            row[_START] = at
            self._open_step = row
        elif kind == "step/end":
            row[_END] = at
            self._open_step = None
        else:
            add_assistant(row, data)

    def ready(self, calls: deque[FollowedCall], final: bool = False) -> Iterator[TurnGroup]:
        """Yield, ascending, the groups of the turn numbers below the latest one met (all,
        ``final``) whose calls are settled and their events read (their calls taken from
        the front of ``calls``, in log order, numbered calls ascending; unnumbered ones are
        set aside for the last group, turn None)."""
        while True:
            while calls and _int(calls[0].turn) is None:
                self._unnumbered.append(calls.popleft())
            firsts = [number for number in (next(iter(self.closed), None),
                                            _int(calls[0].turn) if calls else None)
                      if number is not None]
            if not firsts:
                break
            number = min(firsts)
            if not final and not self._complete(number, calls):
                return
            group = self.closed.pop(number, None) or TurnGroup([], [], [])
            taken = []
            while calls and _int(calls[0].turn) in (number, None):
                call = calls.popleft()
                (taken if _int(call.turn) is not None else self._unnumbered).append(call)
            yield self._group(group, taken)
            self._forget(taken)  # the group's spans are made when the next one is asked for
        if final:
            yield self._group(TurnGroup(self.turns, self.steps, []), self._unnumbered)

    def _complete(self, number: int, calls: deque[FollowedCall]) -> bool:
        """Return whether turn ``number``'s rows and the events its calls need are read."""
        if self.turn is None or number >= self.turn:
            return False
        group = self.closed.get(number)
        if group is not None and any(row is self._open_step for row in group.steps):
            return False  # a route event may still name its model
        last = -1 if self.last_seq is None else self.last_seq
        for call in calls:
            turn = _int(call.turn)
            if turn is None:
                continue
            if turn != number:
                break
            if not call.final:
                return False
            facts = call.facts()
            if any(seq.__class__ is int and seq > last for seq in (facts.dispatched_seq,
                                                                  facts.result_seq)):
                return False
        return True

    def _group(self, group: TurnGroup, calls: list[FollowedCall]) -> TurnGroup:
        """Return a group of raw rows as rows."""
        return TurnGroup(self.turn_rows(group.turns), self.step_rows(group.steps),
                         self.call_rows(calls))

    def _forget(self, calls: list[FollowedCall]) -> None:
        """Drop the times ``calls`` needed (their spans are made)."""
        for call in calls:
            self.times.pop(call.requested_seq, None)

    def turn_rows(self, turns: list[list[Any]]) -> list[TurnRow]:
        """Return raw turn rows as ``TurnRow``s."""
        return [TurnRow(_int(turn), *_seq_time(start, end), reason)
                for turn, start, end, reason in turns]

    def step_rows(self, steps: list[list[Any]]) -> list[StepRow]:
        """Return raw step rows as ``StepRow``s."""
        return [StepRow(_int(row[1]), _int(row[2]), *_seq_time(row[_START], row[_END]),
                        row[_PROVIDER], row[_MODEL], *map(_int, row[_USAGE]))
                for row in steps]

    def call_rows(self, calls: Iterable[FollowedCall]) -> list[CallRow]:
        """Return the rows of ``calls``, with the times of their tool events (and, in
        ``times``, those of the messages requesting the calls never dispatched)."""
        rows = []
        for followed in calls:
            call = followed.facts()
            dispatched, result = _int(call.dispatched_seq), _int(call.result_seq)
            if self.by_seq:
                times: Sequence[Any] = (None, self.tool_times.get(dispatched),
                                        self.tool_times.get(result))
            else:
                times = [None, *map(_ns, followed.times[1:])]
                requested_time = followed.times[0]
                if (call.dispatched_seq is None and requested_time.__class__ is int
                        and call.requested_seq.__class__ is int):
                    self.times[call.requested_seq] = requested_time * _NS_PER_MS
            rows.append(CallRow(call.call_id, call.name, _int(call.turn), _int(call.step),
                                call.requested_seq, dispatched, result,
                                times[1] if dispatched is not None else None,
                                times[2] if result is not None else None, call.status,
                                call.error_code, call.branch, call.settled))
        return rows

    def lineage_row(self, header: dict[str, Any], version: int | None) -> LineageRow:
        """``frames.lineage.lineage_row`` of a session read alone (no catalog names it)."""
        seeds = ((seq, data) for kind, seq, data in self.markers if kind == SEED_MARKER)
        lineage = lineage_of(header, inherited_count(header, version, seeds),
                             has_descriptor=any(kind == "subagent/descriptor"
                                                for kind, _, _ in self.markers))
        return LineageRow(lineage.parent, lineage.relation, _int(lineage.boundary),
                          header.get("agentPreset"))


@dataclass(slots=True)
class _Holding:
    """Finds, in one read of a file whose seqs rise, the turn holding its fork boundary
    (``otlp_spans.holding_turn`` of all its turn rows) holding only the turns not ended:
    once the events up to the boundary are read, the rows holding it are those begun and
    not yet ended, and the one that ended at the boundary itself; no row begun later is."""

    header: dict[str, Any]
    version: int | None
    boundary: int | None = None
    """The boundary looked for: the header's ``seedLength`` - 1 (v0/v1), or the seq of
    the last ``session/end-seed {inherited: true}`` read - 1."""
    found: int | tuple[()] | None = NO_TURN
    """The holding turn's number (``holding_turn``'s answer), once known."""
    pending: bool = False
    """Whether the boundary is known but not all the events up to it are read (v0/v1)."""
    open: list[tuple[int, list[Any]]] = field(default_factory=list)
    """The rows begun (with an int seq) and not ended, with their positions among the
    rows."""
    ended: tuple[int, list[Any]] | None = None
    """The row that ended last, with its position."""

    @classmethod
    def of(cls, header: dict[str, Any], version: int | None) -> _Holding:
        """Return the search for a file with ``header`` and format ``version``."""
        inherited = inherited_count(header, version, ())
        return cls(header, version, inherited - 1 if inherited else None, pending=inherited > 0)

    def reading(self, seq: int) -> None:
        """Note that the event at ``seq`` is read next: past the boundary, it is found."""
        if self.pending and self.boundary is not None and seq > self.boundary:
            self._find()

    def seeded(self, seq: Any, data: Any) -> None:
        """Take a ``session/end-seed`` (v2+): one that says its events were inherited sets
        the boundary before it, and every event up to it is read."""
        if self.version not in (None, 0, 1) and inherited_count({}, 4, [(seq, data)]):
            self.boundary = seq - 1
            self._find()

    def took(self, kind: str, row: list[Any], position: int) -> None:
        """Note a turn row begun (``turn/start``: its ``position`` among the rows) or ended."""
        if kind == "turn/start" and row[1][0] is not None:
            self.open.append((position, row))
        elif kind == "turn/end":
            entry = next((entry for entry in self.open if entry[1] is row), None)
            if entry is not None:
                self.open.remove(entry)
                self.ended = entry

    def finish(self) -> None:
        """Find the turn once the file is read (a boundary past its last event)."""
        if self.pending:
            self._find()

    def _find(self) -> None:
        """Find the holding turn of the boundary, every event up to it read."""
        self.pending = False
        boundary = self.boundary
        holders = list(self.open)
        ended = self.ended
        if ended is not None and boundary is not None and ended[1][2][0] is not None \
                and ended[1][2][0] >= boundary:
            holders.append(ended)
        self.found = _int(max(holders, key=itemgetter(0))[1][0]) if holders else NO_TURN


def _seq_time(start: tuple[int | None, int | None] | None,
              end: tuple[int | None, int | None] | None
              ) -> tuple[int | None, int | None, int | None, int | None]:
    """Return the start and end seqs, then times (ns), of a row's start and end events."""
    first, last = start or (None, None), end or (None, None)
    return first[0], last[0], first[1], last[1]
