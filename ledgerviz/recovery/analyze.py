"""One pass over a session that annotates every event under a recovery policy."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from ledgerviz.recovery.analysis import (
    POLICIES,
    Analysis,
    Branch,
    CallFacts,
    CallStatus,
    Policy,
)
from ledgerviz.recovery.closers import tail_closers
from ledgerviz.recovery.events import (
    NOT_STARTED_CODE,
    RECOVERY_CODES,
    SYNTHETIC_END_KINDS,
    UNKNOWN_CODE,
    EnvelopeColumns,
    Event,
    Generation,
    data_of,
    envelope_rows,
    generation_for,
    is_user_typed,
    payload_end_reason_kind,
    payload_result_facts,
    payload_tool_call_blocks,
)
from ledgerviz.recovery.results import synthetic_result
from ledgerviz.recovery.runtime_values import UNDEFINED, call_key, defined
from ledgerviz.recovery.surface import SurfaceFold
from ledgerviz.recovery.tracker import PendingCall, PendingCalls

# Event types the scan acts on, as small codes (one dict lookup per event).
(
    _RESULT_KIND,
    _CALL_KIND,
    _ASSISTANT_KIND,
    _CLOSING_KIND,
    _USER_KIND,
    _REWIND_KIND,
    _RESTORE_KIND,
    _MESSAGE_KIND,
) = range(1, 9)
_KINDS = {
    "tool/result": _RESULT_KIND,
    "tool/call": _CALL_KIND,
    "assistant/message": _ASSISTANT_KIND,
    "step/end": _CLOSING_KIND,
    "turn/start": _CLOSING_KIND,
    "turn/end": _CLOSING_KIND,
    "user/message": _USER_KIND,
    "surface/rewind": _REWIND_KIND,
    "surface/restore": _RESTORE_KIND,
    "system/message": _MESSAGE_KIND,
    "developer/message": _MESSAGE_KIND,
}

# A call under scan is a plain list (cheap to allocate); these name its slots.
(
    _ID,
    _NAME,
    _ARGS,
    _TURN,
    _STEP,
    _NODE,
    _SEQ,
    _DISPATCHED,
    _RESULT,
    _RESULT_SEQ,
    _CODE,
    _IS_ERROR,
) = range(12)


def call_status(answered: bool, dispatched: bool, code: str | None, is_error: bool) -> CallStatus:
    """Return a call's status from its result (when ``answered``: code, isError) and dispatch."""
    if not answered:
        return "outcome_unknown" if dispatched else "not_started"
    if code == UNKNOWN_CODE:
        return "outcome_unknown"
    if code == NOT_STARTED_CODE:
        return "not_started"
    return "error" if is_error else "ok"


def _status(call: list[Any]) -> CallStatus:
    """Return the status of a scanned call."""
    answered, dispatched = call[_RESULT] is not None, call[_DISPATCHED] is not None
    return call_status(answered, dispatched, call[_CODE], call[_IS_ERROR])


def _pending(call: list[Any]) -> PendingCall:
    """Return a scanned call as the ``PendingCall`` a synthetic result is built from."""
    return PendingCall(
        call[_ID], call[_TURN], call[_STEP], call[_DISPATCHED], call[_NAME], call[_SEQ]
    )


class _Suffix:
    """A scan's events from a position on, the ones before it forgotten: what a scan that
    does not keep its events reads back (the event before a turn/end, and the events from
    the last turn boundary on, for the closers)."""

    __slots__ = ("_events", "append", "start")

    def __init__(self) -> None:
        self._events: list[Event] = []
        self.append = self._events.append
        self.start = 0

    def __len__(self) -> int:
        return self.start + len(self._events)

    def __getitem__(self, key: int) -> Event:
        return self._events[key - self.start]

    def forget_before(self, key: int) -> None:
        """Drop the events before position ``key``."""
        del self._events[: key - self.start]
        self.start = key


class _Scan:
    """The state of one analysis pass over a session."""

    def __init__(self, policy: Policy, generation: Generation, out: _Suffix | None = None
                 ) -> None:
        self.policy = policy
        self.generation = generation
        self.fork = policy == "fork"
        self.repair = policy != "recorded"
        self.out: list[Event] | _Suffix = [] if out is None else out
        """The events scanned (``out``: only the last ones, for a scan with no result)."""
        self.seqs: list[int | None] = []
        self.surface = SurfaceFold(self.seqs)
        self.calls: list[list[Any]] = []
        self.by_id: dict[Any, list[Any]] = {}  # by call_key(call id)
        self.step_calls: dict[Any, list[Any]] = {}
        self.open_turn: int | None = None
        self.boundary = 0
        self.synthetic: list[int] = []
        self.computed: list[int] = []
        self.codes: dict[int, str] = {}
        self.unanswered_closed: list[str] = []
        self.fork_points: list[int] = []
        self.fork_node: int | None = None
        self.fork_turn: int | None = None
        self.rewound_forks: dict[Any, tuple[int, int | None]] = {}
        self.policy_mattered = False
        """Whether the scan has met an event that policies handle differently (an
        outcome-unknown result, a step closed with calls unanswered): until it has, every
        policy's scan holds the same state."""

    def run_computed(self, events: Sequence[Event], *, logged: bool = True) -> None:
        """Annotate events recovery made (closers; ``logged`` False: never in the log)."""
        start = len(self.out)
        self.run(events, recorded=False, logged=logged)
        made = range(start, len(self.out))
        self.computed.extend(made)
        self.synthetic.extend(made)

    def run(
        self,
        events: Sequence[Event],
        *,
        recorded: bool = True,
        logged: bool = True,
        columns: EnvelopeColumns | None = None,
        start: int = 0,
    ) -> None:
        """Annotate events in log order; ``logged`` False for results never in the log.

        ``columns``, when given, spares reading the envelope from every dict again;
        ``start`` is the position of ``events[0]`` in the log (see ``envelope_rows``).
        """
        out, surface = self.out, self.surface
        add_event, add_seq, add_node = out.append, self.seqs.append, surface.slots.append
        find, forget, step_calls = self.by_id.get, self.step_calls.pop, self.step_calls
        add_call, by_id, kinds = self.calls.append, self.by_id, _KINDS
        for event, kind, seq, data, op in envelope_rows(events, columns, start):
            if not logged:
                seq = None
            action = kinds.get(kind, 0)
            if not action:  # log-only: never on the surface, nothing to track
                add_event(event)
                add_seq(seq)
                continue
            key = len(out)
            if action == _RESULT_KIND:
                call_id, code, is_error, synthetic = payload_result_facts(data)
                if synthetic or code is not None:
                    self._recovery_result(key, code, recorded and synthetic)
                filed = call_key(call_id)
                forget(filed, None)
                call = find(filed)
                if call is not None and call[_RESULT] is None:
                    call[_RESULT], call[_RESULT_SEQ] = key, seq
                    call[_CODE], call[_IS_ERROR] = code, is_error
                    if code == UNKNOWN_CODE:
                        self.policy_mattered = True
                        if self.fork:
                            self._fork_at(call)
            elif action == _CALL_KIND:
                # the runtime's rule (format §9.1): a call records the seq of each
                # tool/call until it is answered, so the closers cite the last one
                call = find(call_key(data.get("callId", UNDEFINED)))
                if call is not None and call[_RESULT] is None:
                    call[_DISPATCHED] = seq
            elif action == _ASSISTANT_KIND:
                turn, step = data.get("turn"), data.get("step")
                for block in payload_tool_call_blocks(data):
                    call_id = block.get("id", UNDEFINED)
                    call = [
                        call_id,
                        block.get("name"),
                        block.get("arguments"),
                        turn,
                        step,
                        key,
                        seq,
                        None,
                        None,
                        None,
                        None,
                        False,
                    ]
                    add_call(call)
                    filed = call_key(call_id)
                    step_calls[filed] = by_id[filed] = call
            elif action == _CLOSING_KIND:
                if step_calls:
                    self._close_step(event, kind, seq, recorded, logged)
                    key = len(out)
                if kind == "turn/start":
                    self.open_turn = data.get("turn")
                elif kind == "turn/end":
                    self.open_turn = None
                    if recorded and payload_end_reason_kind(data) in SYNTHETIC_END_KINDS:
                        self._mark_synthetic_end(key)
                if kind != "step/end":
                    self.boundary = key
            elif action == _USER_KIND:
                if self.fork_node is not None:
                    self._user_message(event)
            elif action == _REWIND_KIND:
                self._rewind(event, seq)
            elif action == _RESTORE_KIND:
                self._restore(data.get("rewindSeq"))
            add_event(event)
            add_seq(seq)
            if op == "append":
                add_node(key)
            elif isinstance(op, dict):
                surface.replace(op, key)

    def _user_message(self, event: Event) -> None:
        """A message typed by the user in a later turn starts the branch after a fork."""
        if self.open_turn != self.fork_turn and is_user_typed(event):
            self._apply_fork()

    def _close_step(
        self, event: Event, kind: str, seq: int | None, recorded: bool, logged: bool
    ) -> None:
        """Handle the calls a closing step, turn/end or turn/start leaves unanswered."""
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
        if kind == "step/end" and self.repair:
            results = [
                synthetic_result(
                    _pending(call),
                    turn=self.open_turn,
                    id_seq=(seq or 0) + offset,
                    seq=None,
                    time=event.get("time"),
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
        synthetic, out = self.synthetic, self.out
        if (
            key >= 2
            and out[key - 1].get("type") == "step/end"
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

    def _rewind(self, event: Event, seq: int | None) -> None:
        """Apply a recorded ``surface/rewind`` (the undo plugin's): hide the nodes it lists;
        a pending fork it hides is dropped."""
        self.surface.rewind_seqs(seq, list(data_of(event).get("shadowedSeqs") or ()))
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
        return tail_closers(self.tail_tracker(), generation=self.generation)

    def branches(self) -> tuple[list[Branch], list[int], list[int]]:
        """Return each event's branch, the surface's visible and its hidden nodes, once the
        pending fork (if any) is applied."""
        if self.fork_node is not None:
            self._apply_fork()
        visible = self.surface.visible()
        hidden = self.surface.hidden_nodes()
        branch: list[Branch] = ["log"] * len(self.out)
        for node in visible:
            branch[node] = "active"
        for node in hidden:
            branch[node] = "abandoned"
        return branch, visible, hidden

    def result(self, closers: list[Event], facts: CallFactsOf | None = None) -> Analysis:
        """Return the finished :class:`Analysis` (``facts``: makes the calls' facts from
        the scanned calls and each event's branch; default :func:`facts_of`)."""
        branch, visible, hidden = self.branches()
        total = len(self.out)
        synthetic = [False] * total
        for node in self.synthetic:
            synthetic[node] = True
        recorded = [True] * total
        for node in self.computed:
            recorded[node] = False
        codes: list[str | None] = [None] * total
        for node, code in self.codes.items():
            codes[node] = code
        seqs = self.seqs
        assert isinstance(self.out, list), "a scan that forgets its events has no result"
        return Analysis(
            policy=self.policy,
            generation=self.generation,
            events=self.out,
            seqs=seqs,
            branch=branch,
            synthetic=synthetic,
            recorded=recorded,
            recovery_code=codes,
            calls=(facts or facts_of)(self.calls, branch),
            closers=closers,
            fork_points=self.fork_points,
            abandoned_seqs=[seqs[n] for n in hidden if seqs[n] is not None],  # type: ignore[misc]
            unanswered_in_closed_steps=self.unanswered_closed,
            surface=visible,
        )


CallFactsOf = Callable[[list[list[Any]], list[Branch]], list[CallFacts]]


def facts_of(calls: list[list[Any]], branch: list[Branch]) -> list[CallFacts]:
    """Return the ``CallFacts`` of scanned calls (``branch``: of each event)."""
    return [_facts(call, branch[call[_NODE]]) for call in calls]


def _facts(call: list[Any], branch: Branch) -> CallFacts:
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


def _scan(
    events: Sequence[Event],
    policy: Policy,
    generation: Generation,
    columns: EnvelopeColumns | None = None,
) -> tuple[_Scan, list[Event]]:
    """Return the finished scan of ``events`` and the closers it appended."""
    if policy not in POLICIES:
        raise ValueError(f"unknown recovery policy {policy!r}")
    scan = _Scan(policy, generation)
    scan.run(events, columns=columns)
    closers = scan.closers()
    if closers:  # most sessions need none (and every one under recorded)
        scan.run_computed(closers)
    return scan, closers


def first_fork_point(
    blocks: Iterable[tuple[Sequence[Event], EnvelopeColumns | None]], *, version: int | None
) -> int | None:
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
        self._suffix = _Suffix()
        self._scan = _Scan("fork", generation_for(version), self._suffix)
        self._position = 0
        self.found: int | None = None
        """The first fork point, once a block held it."""

    def feed(self, events: Sequence[Event], columns: EnvelopeColumns | None) -> int | None:
        """Scan the next block (nothing once a fork point is found); return the fork
        point found so far, or None."""
        scan = self._scan
        if self.found is None:
            with _collector_paused():
                scan.run(events, columns=columns, start=self._position)
            if scan.fork_points:
                self.found = scan.fork_points[0]
            else:
                self._suffix.forget_before(scan.boundary)
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


class SessionFacts(NamedTuple):
    """What a session's analysis finds, without its events: what :func:`analyze_blocks`
    returns."""

    calls: list[CallFacts]
    closers: list[Event]
    """The events the policy appends after the recorded log."""
    fork_points: list[int]
    abandoned_seqs: list[int]
    synthetic_seqs: list[int]
    """The seqs of the events the policy marks synthetic (the results it inserts into
    closed steps have none)."""


def analyze_blocks(
    blocks: Iterable[tuple[Sequence[Event], EnvelopeColumns | None]],
    *,
    policy: Policy,
    version: int | None,
) -> SessionFacts:
    """Return what :func:`analyze` finds of a session that comes as consecutive blocks of
    ``(events, columns)`` (as for :func:`first_fork_point`), without holding its events:
    only the scan's state (a few numbers per event and per call, and the events of the
    last turn). ``SessionFacts`` holds the same calls (their ``arguments`` not kept:
    None), closers, fork points, abandoned and synthetic seqs as the :class:`Analysis` of
    the whole session."""
    if policy not in POLICIES:
        raise ValueError(f"unknown recovery policy {policy!r}")
    suffix = _Suffix()
    scan = _Scan(policy, generation_for(version), suffix)
    position = 0
    with _collector_paused():
        for events, columns in blocks:
            seen = len(scan.calls)
            scan.run(events, columns=columns, start=position)
            for call in scan.calls[seen:]:
                call[_ARGS] = None  # the largest strings a call holds, and no scan reads them
            suffix.forget_before(scan.boundary)
            position += len(events)
        closers = scan.closers()
        if closers:
            scan.run_computed(closers)
        branch, _, hidden = scan.branches()
        seqs = scan.seqs
        return SessionFacts(facts_of(scan.calls, branch), closers, scan.fork_points,
                            [seqs[n] for n in hidden if seqs[n] is not None],  # type: ignore[misc]
                            [seqs[n] for n in scan.synthetic if seqs[n] is not None])  # type: ignore[misc]


def analyze(
    events: Sequence[Event],
    *,
    policy: Policy,
    version: int | None = None,
    columns: EnvelopeColumns | None = None,
) -> Analysis:
    """Return the :class:`Analysis` of one session's events under ``policy``.

    ``version`` is the header's format version; it picks the closer generation.
    ``columns`` optionally gives each event's type, seq, data and surfaceOp as a
    reader already extracted them (see ``EnvelopeColumns``); the result is the same
    as without them, only the dicts are not read for them again.
    The events are not modified; ``Analysis.events`` holds the same dicts plus the
    new ones the policy adds.
    """
    with _collector_paused():
        scan, closers = _scan(events, policy, generation_for(version), columns)
        return scan.result(closers)
