"""One pass over a session that annotates every event under a recovery policy."""

from __future__ import annotations

import gc
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, repeat
from operator import add, and_, is_, is_not, ne
from typing import Any

from ledgerviz.recovery.analysis import (
    POLICIES,
    Analysis,
    Branch,
    CallFacts,
    CallStatus,
    Policy,
)
from ledgerviz.recovery.closers import tail_closers
from ledgerviz.recovery.columns import Column, EngineColumns, columns_of
from ledgerviz.recovery.events import Event, Generation, data_of, generation_for
from ledgerviz.recovery.payload import payload_tool_call_blocks
from ledgerviz.recovery.result_columns import (
    BRANCH_CODE,
    RECOVERY_CODE,
    STATUS_CODE,
    CallColumns,
    EventMarks,
    flag_bytes,
)
from ledgerviz.recovery.results import synthetic_result
from ledgerviz.recovery.runs import EventRuns
from ledgerviz.recovery.runtime_values import UNDEFINED, call_key, defined
from ledgerviz.recovery.scan_codes import (
    _ARGS,
    _ASSISTANT_KIND,
    _CALL_KIND,
    _CLOSING_KINDS,
    _CODE,
    _DISPATCHED,
    _ID,
    _IS_ERROR,
    _KINDS,
    _NAME,
    _NODE,
    _RESTORE_KIND,
    _RESULT,
    _RESULT_KIND,
    _RESULT_SEQ,
    _REWIND_KIND,
    _SEQ,
    _SLOTS,
    _STEP,
    _STEP_END_KIND,
    _TURN,
    _TURN_END_KIND,
    _TURN_START_KIND,
    _USER_KIND,
)
from ledgerviz.recovery.settled import SettledCalls, scan_settled
from ledgerviz.recovery.surface import SurfaceFold
from ledgerviz.recovery.tracker import PendingCall, PendingCalls
from ledgerviz.recovery.vocab import (
    BRANCHES,
    MISSING,
    NOT_STARTED_CODE,
    RECOVERY_CODES,
    SYNTHETIC_END_KINDS,
    UNKNOWN_CODE,
)

_ACTIVE, _ABANDONED, _LOG = (BRANCH_CODE[name] for name in ("active", "abandoned", "log"))
_UNKNOWN_STATUS = STATUS_CODE["outcome_unknown"]


def call_status(answered: bool, dispatched: bool, code: str | None, is_error: bool) -> CallStatus:
    """Return a call's status from its result (when ``answered``: code, isError) and dispatch."""
    if not answered:
        return "outcome_unknown" if dispatched else "not_started"
    if code == UNKNOWN_CODE:
        return "outcome_unknown"
    if code == NOT_STARTED_CODE:
        return "not_started"
    return "error" if is_error else "ok"


def _status(call: Sequence[Any]) -> CallStatus:
    """Return the status of a scanned call."""
    answered, dispatched = call[_RESULT] is not None, call[_DISPATCHED] is not None
    return call_status(answered, dispatched, call[_CODE], call[_IS_ERROR])


def _pending(call: list[Any]) -> PendingCall:
    """Return a scanned call as the ``PendingCall`` a synthetic result is built from."""
    return PendingCall(
        call[_ID], call[_TURN], call[_STEP], call[_DISPATCHED], call[_NAME], call[_SEQ]
    )


def _integer(column: Column, events: Sequence[Event], row: int, name: str) -> Any:
    """Return ``column[row]``, the ``data`` field ``name`` of ``events[row]`` when the column
    holds ``MISSING`` there (a value an integer column cannot hold)."""
    value = column[row]
    return data_of(events[row]).get(name) if value == MISSING else value


def _seqs(columns: EngineColumns, events: Sequence[Event], first: int, stop: int,
          logged: bool) -> Iterable[Any]:
    """Return the seq of rows ``first`` to ``stop`` as the scan files them: the column's,
    the event's own where the column holds ``MISSING``; None for events never logged."""
    if not logged:
        return repeat(None, stop - first)
    seqs = columns.seq[first:stop]
    if MISSING not in seqs:
        return seqs
    return [events[row].get("seq", row) if seq == MISSING else seq
            for row, seq in zip(range(first, stop), seqs, strict=True)]


def _requested(event: Event) -> tuple[Any, Any, list[tuple[Any, Any, Any]]]:
    """Return the turn, step and requested calls (id, name, arguments) an assistant
    message's event says (a missing id: ``UNDEFINED``)."""
    data = data_of(event)
    blocks = payload_tool_call_blocks(data)
    made = [(b.get("id", UNDEFINED), b.get("name"), b.get("arguments")) for b in blocks]
    return data.get("turn"), data.get("step"), made


class _Scan:
    """The state of one analysis pass over a session."""

    def __init__(self, policy: Policy, generation: Generation) -> None:
        self.policy = policy
        self.generation = generation
        self.fork = policy == "fork"
        self.repair = policy != "recorded"
        self.out = EventRuns()
        """The events scanned, as runs of the caller's events and of the ones recovery made
        (a scan with no result forgets those before its last turn boundary)."""
        self.seqs: list[int | None] = []
        self.surface = SurfaceFold(self.seqs)
        self.calls: list[list[Any]] = []
        self.by_id: dict[Any, list[Any]] = {}  # by call_key(call id)
        self.step_calls: dict[Any, list[Any]] = {}
        self.open_turn: int | None = None
        self.boundary = 0
        self.turn_ended = False
        """Whether the event at ``boundary`` (the last turn boundary) is a turn/end."""
        self.step_end = -1
        """The position of the last step/end scanned."""
        self.synthetic: list[int] = []
        self.computed: list[int] = []
        self.codes: dict[int, str] = {}
        self.unanswered_closed: list[str] = []
        self.fork_points: list[int] = []
        self.fork_node: int | None = None
        self.fork_turn: int | None = None
        self.rewound_forks: dict[Any, tuple[int, int | None]] = {}
        self.settled: SettledCalls | None = None
        """The calls, one list per slot, when ``settled.scan_settled`` scanned the session
        (``calls`` then holds none)."""
        self.policy_mattered = False
        """Whether the scan has met an event that policies handle differently (an
        outcome-unknown result, a step closed with calls unanswered): until it has, every
        policy's scan holds the same state."""

    def run_events(self, events: Sequence[Event], start: int = 0) -> None:
        """Annotate event dicts in log order (``start``: the position of ``events[0]`` in
        its session), read through :func:`columns_of`."""
        self.run(columns_of(events, start), events)

    def run_computed(self, events: Sequence[Event], *, logged: bool = True) -> None:
        """Annotate events recovery made (closers; ``logged`` False: never in the log)."""
        start = len(self.out)
        self.run(columns_of(events, start), events, recorded=False, logged=logged)
        made = range(start, len(self.out))
        self.computed.extend(made)
        self.synthetic.extend(made)

    def run(
        self,
        columns: EngineColumns,
        events: Sequence[Event],
        first: int = 0,
        stop: int | None = None,
        *,
        recorded: bool = True,
        logged: bool = True,
    ) -> None:
        """Annotate rows ``first`` to ``stop`` (default: the last) of ``columns`` in log
        order; ``events[row]`` is the event of a row, read only where a column cannot
        tell (see ``recovery.columns``); ``logged`` False for results never in the log."""
        stop = len(columns) if stop is None else stop
        out, surface = self.out, self.surface
        add_seq, add_node = self.seqs.append, surface.slots.append
        by_id, step_calls, add_call = self.by_id, self.step_calls, self.calls.append
        find, forget = by_id.get, step_calls.pop
        actions = [_KINDS.get(name, 0) for name in columns.type_names]
        requests = columns.requests
        asked_rows, asked = requests.row, bisect_left(requests.row, first)
        asked_count = len(asked_rows)
        call_ids, codes, errors = columns.call_id, columns.error_code, columns.is_error
        synthetics, taken, base = columns.synthetic, first, len(out)
        turns, steps = columns.turn, columns.step
        end_reasons, source_kinds = columns.end_reason, columns.source_kind
        rows = zip(range(first, stop), columns.type_code[first:stop],
                   _seqs(columns, events, first, stop, logged),
                   columns.surface_op[first:stop], strict=True)
        for row, type_code, seq, op in rows:
            action = actions[type_code]
            if not action:  # log-only: never on the surface, nothing to track
                add_seq(seq)
                continue
            key = base + row - taken
            if action == _RESULT_KIND:
                code, synthetic = codes[row], synthetics[row] == 1
                if synthetic or code is not None:
                    self._recovery_result(key, code, recorded and synthetic)
                filed = call_ids[row]
                if filed.__class__ is not str:  # a string is its own key (call_key)
                    filed = call_key(filed)
                forget(filed, None)
                call = find(filed)
                if call is not None and call[_RESULT] is None:
                    call[_RESULT], call[_RESULT_SEQ] = key, seq
                    call[_CODE], call[_IS_ERROR] = code, errors[row] == 1
                    if code == UNKNOWN_CODE:
                        self.policy_mattered = True
                        if self.fork:
                            self._fork_at(call)
            elif action == _CALL_KIND:
                # the runtime's rule (format §9.1): a call records the seq of each
                # tool/call until it is answered, so the closers cite the last one
                call_id = call_ids[row]
                if call_id.__class__ is not str:
                    if call_id is None:
                        call_id = data_of(events[row]).get("callId", UNDEFINED)
                    call_id = call_key(call_id)
                call = find(call_id)
                if call is not None and call[_RESULT] is None:
                    call[_DISPATCHED] = seq
            elif action == _ASSISTANT_KIND:
                if asked < asked_count and asked_rows[asked] == row:
                    # the calls it requests (read from its event where a column cannot
                    # tell an id, turn or step)
                    after = bisect_right(asked_rows, row, asked)
                    turn, step = turns[row], steps[row]
                    ids = requests.call_id[asked:after]
                    if turn == MISSING or step == MISSING or None in ids:
                        turn, step, made = _requested(events[row])
                    else:
                        made = zip(ids, requests.name[asked:after],
                                   requests.arguments[asked:after], strict=True)
                    for call_id, name, arguments in made:
                        call = [call_id, name, arguments, turn, step, key, seq,
                                None, None, None, None, False]
                        add_call(call)
                        filed = call_id if call_id.__class__ is str else call_key(call_id)
                        step_calls[filed] = by_id[filed] = call
                    asked = after
            elif action in _CLOSING_KINDS:
                if step_calls:
                    out.take(events, taken, row)
                    time = columns.time[row]
                    if time == MISSING:
                        time = events[row].get("time")
                    self._close_step(time, action, seq, recorded, logged)
                    taken, base = row, len(out)
                    key = base
                if action == _STEP_END_KIND:
                    self.step_end = key
                else:
                    self.boundary, self.turn_ended = key, action == _TURN_END_KIND
                    if action == _TURN_START_KIND:
                        self.open_turn = _integer(turns, events, row, "turn")
                    else:
                        self.open_turn = None
                        if recorded and end_reasons[row] in SYNTHETIC_END_KINDS:
                            self._mark_synthetic_end(key)
            elif action == _USER_KIND:
                if (self.fork_node is not None and self.open_turn != self.fork_turn
                        and source_kinds[row] == "user"):
                    self._apply_fork()
            elif action == _REWIND_KIND:
                self._rewind(data_of(events[row]), seq)
            elif action == _RESTORE_KIND:
                self._restore(data_of(events[row]).get("rewindSeq"))
            add_seq(seq)
            if op == 1:
                add_node(key)
            elif op:
                raw = events[row].get("surfaceOp")
                if isinstance(raw, dict):
                    surface.replace(raw, key)
        out.take(events, taken, stop)

    def _close_step(
        self, time: Any, action: int, seq: int | None, recorded: bool, logged: bool
    ) -> None:
        """Handle the calls a closing step, turn/end or turn/start leaves unanswered
        (``time``: the closing event's)."""
        unanswered = list(self.step_calls.values())
        self.step_calls.clear()
        if not unanswered or not logged:
            return
        self.policy_mattered = True
        if recorded:
            self.unanswered_closed.extend(defined(call[_ID]) for call in unanswered)
        if self.fork:
            for call in unanswered:
                if call[_DISPATCHED] is not None:
                    self._fork_at(call)
        if action == _STEP_END_KIND and self.repair:
            results = [
                synthetic_result(
                    _pending(call),
                    turn=self.open_turn,
                    id_seq=(seq or 0) + offset,
                    seq=None,
                    time=time,
                    generation=self.generation,
                )
                for offset, call in enumerate(c for c in unanswered if self._answerable(c))
            ]
            self.run_computed(results, logged=False)

    def _answerable(self, call: list[Any]) -> bool:
        """Whether the policy gives this unanswered call a synthetic result."""
        return not self.fork or (
            call[_DISPATCHED] is None
            and self.fork_node is None
            and not self.surface.is_hidden(call[_NODE])
        )

    def _recovery_result(self, key: int, code: str | None, synthetic: bool) -> None:
        """Record the recovery code of the tool/result at ``key`` and whether it is synthetic."""
        if code in RECOVERY_CODES:
            self.codes[key] = code  # type: ignore[assignment]
        if synthetic:
            self.synthetic.append(key)

    def _mark_synthetic_end(self, key: int) -> None:
        """Mark a recorded interrupted/forked turn/end synthetic, with the step/end before it
        when that step/end directly follows a synthetic result (a runtime's crash closers)."""
        synthetic = self.synthetic
        if (
            key >= 2
            and self.step_end == key - 1
            and synthetic
            and synthetic[-1] == key - 2
        ):
            synthetic.append(key - 1)
        synthetic.append(key)

    def _fork_at(self, call: list[Any]) -> None:
        """Make the call's assistant message the pending fork point (first one wins)."""
        if self.fork_node is not None or self.surface.is_hidden(call[_NODE]):
            return
        self.fork_node = call[_NODE]
        self.fork_turn = call[_TURN]
        self.fork_points.append(call[_SEQ])

    def _apply_fork(self) -> None:
        """Hide the surface from the pending fork point on, and clear the pending fork."""
        node = self.fork_node
        assert node is not None
        self.surface.hide(("fork", self.seqs[node]), self.surface.visible_from(node))
        self.fork_node = None

    def _rewind(self, data: dict[str, Any], seq: int | None) -> None:
        """Apply a recorded ``surface/rewind`` (the undo plugin's, ``data`` its payload):
        hide the nodes it lists; a pending fork it hides is dropped."""
        self.surface.rewind_seqs(seq, list(data.get("shadowedSeqs") or ()))
        if self.fork_node is not None and self.surface.is_hidden(self.fork_node):
            self.rewound_forks[seq] = (self.fork_node, self.fork_turn)
            self.fork_node = None

    def _restore(self, rewind_seq: Any) -> None:
        """Apply a ``surface/restore``; a pending fork its rewind dropped is pending again."""
        self.surface.restore(rewind_seq)
        dropped = self.rewound_forks.pop(rewind_seq, None)
        if dropped and self.fork_node is None and not self.surface.is_hidden(dropped[0]):
            self.fork_node, self.fork_turn = dropped

    def tail_tracker(self) -> PendingCalls:
        """Return a tracker that has seen the log from its last turn boundary on."""
        tracker = PendingCalls()
        out, seqs = self.out, self.seqs
        for key in range(self.boundary, len(out)):
            if seqs[key] is not None:
                tracker.observe(out[key], seqs[key])
        return tracker

    def closers(self) -> list[Event]:
        """Return the events the policy appends after the recorded log.

        Synthesize: the crash closers. Fork: none while a fork is pending (the policy
        seeds a child instead, see ``recovery.fork``); otherwise the crash closers too,
        since only calls that never started can be pending then.
        """
        if not self.repair or not self.out:
            return []
        if self.fork:
            for call in self.step_calls.values():
                if call[_RESULT] is None and call[_DISPATCHED] is not None:
                    self._fork_at(call)
            if self.fork_node is not None:
                return []
        if self.turn_ended and self.boundary == len(self.out) - 1:
            return []  # the log ends with a turn/end: no turn is open (no event is read)
        return tail_closers(self.tail_tracker(), generation=self.generation)

    def branches(self) -> tuple[array, list[int], list[int]]:
        """Return each event's branch (codes into ``BRANCHES``), the surface's visible and
        its hidden nodes, once the pending fork (if any) is applied."""
        if self.fork_node is not None:
            self._apply_fork()
        visible = self.surface.visible()
        hidden = self.surface.hidden_nodes()
        branch = flag_bytes(len(self.out), _LOG)
        for node in visible:
            branch[node] = _ACTIVE
        for node in hidden:
            branch[node] = _ABANDONED
        return branch, visible, hidden

    def result(self, closers: list[Event], facts: CallFactsOf | None = None) -> Analysis:
        """Return the finished :class:`Analysis` (``facts``: makes the calls' ``CallFacts`` of
        the scanned calls and each event's branch code; by default the calls are made on
        first use, as ``CallFacts`` or as columns, of the scanned calls)."""
        branch, visible, hidden = self.branches()
        total = len(self.out)
        synthetic = flag_bytes(total, 0)
        for node in self.synthetic:
            synthetic[node] = 1
        recorded = flag_bytes(total, 1)
        for node in self.computed:
            recorded[node] = 0
        codes = flag_bytes(total, 0)
        for node, code in self.codes.items():
            codes[node] = RECOVERY_CODE[code]
        seqs = self.seqs
        assert not self.out.forgotten, "a scan that forgets its events has no result"
        if self.settled is not None:
            assert facts is None, "a settled scan holds its calls as slots"
        scanned = ScannedCalls(self.calls if self.settled is None else self.settled, branch)
        calls = None if facts is None else facts(self.calls, branch)
        return Analysis(
            policy=self.policy,
            generation=self.generation,
            events=self.out,
            seqs=seqs,
            marks=EventMarks(branch, synthetic, recorded, codes),
            calls=calls,
            calls_from=scanned if calls is None else None,
            closers=closers,
            fork_points=self.fork_points,
            abandoned_seqs=[seqs[n] for n in hidden if seqs[n] is not None],  # type: ignore[misc]
            unanswered_in_closed_steps=self.unanswered_closed,
            surface=visible,
        )


CallFactsOf = Callable[[list[list[Any]], array], list[CallFacts]]
_CALL_COLUMNS = tuple(zip(
    ("call_id", "name", "arguments", "turn", "step", "requested_seq", "dispatched_seq",
     "result_seq", "error_code"),
    (_ID, _NAME, _ARGS, _TURN, _STEP, _SEQ, _DISPATCHED, _RESULT_SEQ, _CODE), strict=True))
"""The ``CallColumns`` read as they are from a slot of each scanned call."""
_STATUS_CODES = {(answered, dispatched, code, is_error):
                 STATUS_CODE[call_status(answered, dispatched, code, is_error)]
                 for answered in (False, True) for dispatched in (False, True)
                 for code in (None, UNKNOWN_CODE, NOT_STARTED_CODE)
                 for is_error in (False, True)}
"""The status code of each (answered, dispatched, recovery code, isError) of a call."""


def call_columns_of(calls: list[list[Any]], branch: array) -> CallColumns:
    """Return the ``CallColumns`` of scanned calls (``branch``: each event's code)."""
    return slot_call_columns(_slots_of(calls), branch)


def _slots_of(calls: list[list[Any]]) -> list[list[Any]]:
    """Return scanned calls as one list per slot.

    The calls are laid flat once (one pass over them, in C) and each slot is read as a
    slice of that list: a pass per slot over the calls themselves costs several times more
    (each call is a list of its own, wherever it lies in memory)."""
    flat = list(chain.from_iterable(calls))
    if len(flat) != _SLOTS * len(calls):
        raise ValueError("a scanned call has not the scan's slots")
    return [flat[slot::_SLOTS] for slot in range(_SLOTS)]


def joined_call_columns(analyses: Sequence[Analysis]) -> CallColumns:
    """Return the ``call_columns`` of ``analyses`` one after another (what
    ``CallColumns.joined`` of each one's gives): the calls still held as their scans' are
    laid out together and made columns in one pass, not one per analysis (a fleet of small
    sessions), and no analysis' own columns are made for it."""
    parts: list[CallColumns] = []
    slots: list[list[Any]] = [[] for _ in range(_SLOTS)]
    branch = array("b")
    for analysis in analyses:
        source = analysis.call_source()
        if not isinstance(source, ScannedCalls):
            if slots[0]:
                parts.append(slot_call_columns(slots, branch))
                slots, branch = [[] for _ in range(_SLOTS)], array("b")
            parts.append(analysis.call_columns)
        elif len(source):
            own, offset = source.slots(), len(branch)
            for slot, (joined, values) in enumerate(zip(slots, own, strict=True)):
                joined += map(add, values, repeat(offset)) if slot == _NODE else values
            branch += source.branch
    if slots[0] or not parts:
        parts.append(slot_call_columns(slots, branch))
    return CallColumns.joined(parts)


def slot_call_columns(slots: list[list[Any]], branch: array) -> CallColumns:
    """Return the ``CallColumns`` of calls held as one list per slot (``branch``: each
    event's code)."""
    columns: dict[str, Any] = {name: slots[slot] for name, slot in _CALL_COLUMNS}
    if any(map(is_, columns["call_id"], repeat(UNDEFINED))):  # a block without id (rare)
        columns["call_id"] = list(map(defined, columns["call_id"]))  # None, as tables show
    codes = [code if code in RECOVERY_CODES else None for code in columns["error_code"]]
    is_error = array("b", slots[_IS_ERROR])
    answered = map(is_not, slots[_RESULT], repeat(None))
    dispatched = map(is_not, columns["dispatched_seq"], repeat(None))
    status = array("b", map(_STATUS_CODES.__getitem__,
                            zip(answered, dispatched, codes, map(bool, is_error), strict=True)))
    call_branch = array("b", map(branch.__getitem__, slots[_NODE]))
    settled = array("b", map(and_, map(ne, status, repeat(_UNKNOWN_STATUS)),
                             map(ne, call_branch, repeat(_ABANDONED))))
    return CallColumns(**columns, status=status, is_error=is_error, branch=call_branch,
                       settled=settled)


@dataclass(frozen=True, slots=True)
class ScannedCalls:
    """A scan's calls (a list per call, or ``SettledCalls``: a list per slot) and each
    event's branch code: makes the analysis' ``CallFacts`` (:func:`facts_of`) or
    ``CallColumns`` (:func:`call_columns_of`) when first asked."""

    calls: list[list[Any]] | SettledCalls
    branch: array

    def facts(self) -> list[CallFacts]:
        calls = self.calls
        if isinstance(calls, SettledCalls):
            return facts_of(list(zip(*calls.final(), strict=True)), self.branch)
        return facts_of(calls, self.branch)

    def columns(self) -> CallColumns:
        return slot_call_columns(self.slots(), self.branch)

    def slots(self) -> list[list[Any]]:
        """Return the calls as one list per slot (a settled scan's own lists)."""
        calls = self.calls
        return calls.final() if isinstance(calls, SettledCalls) else _slots_of(calls)

    def __len__(self) -> int:
        return len(self.calls)


def facts_of(calls: Sequence[Sequence[Any]], branch: array) -> list[CallFacts]:
    """Return the ``CallFacts`` of scanned calls (``branch``: each event's code)."""
    return [_facts(call, BRANCHES[branch[call[_NODE]]]) for call in calls]


def _facts(call: Sequence[Any], branch: Branch) -> CallFacts:
    """Return the ``CallFacts`` of a scanned call whose assistant message is on ``branch``
    (``_make`` takes one tuple: cheaper than thirteen arguments to the constructor)."""
    status = _status(call)
    return CallFacts._make((
        defined(call[_ID]),
        call[_NAME],
        call[_ARGS],
        call[_TURN],
        call[_STEP],
        call[_SEQ],
        call[_DISPATCHED],
        call[_RESULT_SEQ],
        status,
        call[_CODE],
        call[_IS_ERROR],
        branch,
        status != "outcome_unknown" and branch != "abandoned",
    ))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: the scan allocates many objects, no cycles."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


Block = tuple[Sequence[Event], EngineColumns | None]
"""A run of a session's events and their columns (None: read from the events; given, the
seq of an event without one is its position in the session)."""


def _scan(
    events: Sequence[Event],
    policy: Policy,
    generation: Generation,
    columns: EngineColumns | None = None,
) -> tuple[_Scan, list[Event]]:
    """Return the finished scan of ``events`` and the closers it appended."""
    if policy not in POLICIES:
        raise ValueError(f"unknown recovery policy {policy!r}")
    if columns is not None and len(columns) != len(events):
        raise ValueError(f"{len(columns)} rows of columns for {len(events)} events")
    scan = _Scan(policy, generation)
    if columns is None or not scan_settled(scan, columns, events):
        scan.run(columns_of(events) if columns is None else columns, events)
    closers = scan.closers()
    if closers:  # most sessions need none (and every one under recorded)
        scan.run_computed(closers)
    return scan, closers


def _scan_block(scan: _Scan, block: Block, position: int) -> None:
    """Scan one block of a session whose events before it are ``position`` many, then forget
    the events before the scan's last turn boundary."""
    events, columns = block
    scan.run(columns_of(events, position) if columns is None else columns, events)
    scan.out.forget_before(scan.boundary)


def first_fork_point(blocks: Iterable[Block], *, version: int | None) -> int | None:
    """Return the seq of the first fork point the fork policy's analysis finds, or None.

    The session comes as consecutive blocks of ``(events, columns)`` (``columns`` as in
    :func:`analyze`, or None); reading stops at the first fork point, which nothing after
    it can change. The events are not held, only the scan's state (a few numbers per
    event and per call, and the events of the last turn), so a session of any length can
    be read block by block from its file.
    """
    search = ForkPointSearch(version)
    for events, columns in blocks:
        if search.feed(events, columns) is not None:
            break
    return search.finish()


class ForkPointSearch:
    """:func:`first_fork_point` given one block at a time (``feed``), for a reader that
    pushes the blocks it reads; ``finish`` gives the answer once the last block is fed."""

    def __init__(self, version: int | None) -> None:
        self._scan = _Scan("fork", generation_for(version))
        self._position = 0
        self.found: int | None = None
        """The first fork point, once a block held it."""

    def feed(self, events: Sequence[Event], columns: EngineColumns | None) -> int | None:
        """Scan the next block (nothing once a fork point is found); return the fork
        point found so far, or None."""
        scan = self._scan
        if self.found is None:
            with _collector_paused():
                _scan_block(scan, (events, columns), self._position)
            if scan.fork_points:
                self.found = scan.fork_points[0]
            else:
                self._position += len(events)
        return self.found

    def finish(self) -> int | None:
        """Return the first fork point, the closers of an open turn scanned when no block
        held one."""
        scan = self._scan
        if self.found is None:
            closers = scan.closers()
            if closers:
                with _collector_paused():
                    scan.run_computed(closers)
            self.found = scan.fork_points[0] if scan.fork_points else None
        return self.found


def analyze(
    events: Sequence[Event],
    *,
    policy: Policy,
    version: int | None = None,
    columns: EngineColumns | None = None,
) -> Analysis:
    """Return the :class:`Analysis` of one session's events under ``policy``.

    ``version`` is the header's format version; it picks the closer generation.
    ``columns`` optionally gives the facts the scan reads as columns (a reader's
    ``EventTable``, see ``recovery.columns``); then ``events`` is read only at the rows
    the columns cannot tell (it may be a lazy sequence). Without them the scan reads
    ``events`` through :func:`columns_of`; the result is the same.
    The events are not modified; ``Analysis.events`` is ``events`` (not copied) with
    the new events the policy adds spliced in (an ``EventRuns``).

    The events are read as a ledger reader checked them (``ledgerviz.load``): one with a
    field of a type the format does not allow raises ``TypeError`` naming it.
    """
    generation = generation_for(version)
    try:
        with _collector_paused():
            scan, closers = _scan(events, policy, generation, columns)
            return scan.result(closers)
    except (TypeError, AttributeError) as error:
        raise TypeError(_unreadable(events, policy, generation, error)) from error


def _unreadable(events: Sequence[Event], policy: Policy, generation: Generation,
                error: Exception) -> str:
    """Return what to say of ``events`` that ``analyze`` could not read (``error``): the
    event at whose addition the analysis of their prefix first fails (a bisection)."""
    good, bad = 0, len(events)
    while bad - good > 1:
        middle = (good + bad) // 2
        try:
            with _collector_paused():
                scan, closers = _scan([events[i] for i in range(middle)], policy, generation,
                                      None)
                scan.result(closers)
        except (TypeError, AttributeError):
            bad = middle
        else:
            good = middle
    event = events[bad - 1] if events else None
    seq = event.get("seq") if isinstance(event, dict) else None
    return (f"cannot analyze event {bad - 1} (seq {seq!r}): {error}; the engine reads "
            "events as a ledger reader checked them (ledgerviz.load reports such an event)")
