"""The analysis of any prefix of a session (the log as if the writer died after ``n`` events),
resumed from the nearest checkpoint of one scan over the whole session.

The scan is online: what it holds after the first ``n`` events depends on nothing later, so
the state it held then, with the policy's closers of that prefix, is exactly what
``analyze(events[:n])`` computes. One pass over the whole session keeps a checkpoint every
``every`` events; a prefix then costs copying one checkpoint and scanning fewer than
``every`` events. The lists the scan only appends to are shared with the whole-session
scan and cut to their length at the checkpoint.

Until the scan meets an event that policies handle differently (an outcome-unknown result,
a step closed with calls unanswered), it holds the same state under every policy: another
policy's analyses take over the checkpoints from before that event (``like``) and scan
only the events after the last of them.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, compress, count, islice, repeat, takewhile
from operator import and_, eq, is_, itemgetter, not_
from typing import Any

from ledgerviz.recovery.analysis import Analysis, CallFacts, Policy
from ledgerviz.recovery.analyze import (
    _DISPATCHED,
    _ID,
    _NODE,
    _RESULT,
    _collector_paused,
    _facts,
    _Scan,
)
from ledgerviz.recovery.columns import EngineColumns, columns_of
from ledgerviz.recovery.events import Event, generation_for
from ledgerviz.recovery.runtime_values import call_key
from ledgerviz.recovery.surface import SurfaceSnapshot
from ledgerviz.recovery.vocab import BRANCHES

CHECKPOINT_EVERY = 2_000
CHECKPOINTS_MOST = 64
"""A long session keeps at most this many checkpoints (further apart), bounding memory."""


@dataclass(frozen=True, slots=True)
class _Checkpoint:
    """What a scan held after its first ``consumed`` events.

    Lengths stand for the append-only lists of the whole-session scan, its calls among
    them: those the scan can no longer change (dispatched and answered) are shared with it,
    ``open_calls`` holds private copies of the others by position. ``surface`` reads its
    nodes from the whole scan's surface until that changes them.
    """

    consumed: int
    out: int
    synthetic: int
    computed: int
    codes: int
    unanswered: int
    fork_points: int
    calls: int
    surface: SurfaceSnapshot
    open_calls: dict[int, list[Any]]
    step_calls: list[tuple[Any, int]]
    scalars: tuple[Any, ...]
    rewound_forks: dict[Any, tuple[int, int | None]]
    policy_mattered: bool


_SCALARS = ("open_turn", "boundary", "step_end", "fork_node", "fork_turn")


def _checkpoint(scan: _Scan, consumed: int, previous: _Checkpoint | None) -> _Checkpoint:
    """Return the state of ``scan`` after ``consumed`` recorded events (``previous``: the
    checkpoint before, whose open calls are the only earlier ones that can still be open)."""
    calls = scan.calls
    since = range(previous.calls if previous else 0, len(calls))
    candidates = [*(previous.open_calls if previous else ()), *since]
    open_calls = {i: list(calls[i]) for i in candidates
                  if calls[i][_DISPATCHED] is None or calls[i][_RESULT] is None}
    position = {id(calls[i]): i for i in open_calls}  # the open step's calls are all open
    return _Checkpoint(
        consumed=consumed,
        out=len(scan.out),
        synthetic=len(scan.synthetic),
        computed=len(scan.computed),
        codes=len(scan.codes),
        unanswered=len(scan.unanswered_closed),
        fork_points=len(scan.fork_points),
        calls=len(calls),
        surface=scan.surface.snapshot(),
        open_calls=open_calls,
        step_calls=[(call_id, position[id(call)]) for call_id, call in scan.step_calls.items()],
        scalars=tuple(getattr(scan, name) for name in _SCALARS),
        rewound_forks=dict(scan.rewound_forks),
        policy_mattered=scan.policy_mattered,
    )


class _CallIndex:
    """Where each call id occurs among the whole-session scan's calls (by ``call_key``)."""

    def __init__(self, calls: list[list[Any]]) -> None:
        self._last: dict[Any, int] = {}
        self._repeated: dict[Any, list[int]] = {}
        """Every position of each id given to more than one call."""
        for position, call in enumerate(calls):
            call_id = call_key(call[_ID])  # as the scan files it
            if call_id in self._last:
                self._repeated.setdefault(call_id, [self._last[call_id]]).append(position)
            self._last[call_id] = position

    def last_before(self, call_id: Any, stop: int) -> int | None:
        """Return the position of the last call with ``call_id`` before ``stop``, or None."""
        position = self._last.get(call_id)
        if position is None or position < stop:
            return position
        positions = self._repeated.get(call_id, ())
        before = bisect_left(positions, stop)
        return positions[before - 1] if before else None


class _ResumedCallsById(dict[Any, list[Any]]):
    """A resumed scan's calls by id (the scan's rule: the last call wins): the calls it adds,
    and the calls it resumed with, found in the index on demand instead of all copied in."""

    def __init__(self, calls: list[list[Any]], index: _CallIndex) -> None:
        super().__init__()
        self._calls, self._resumed, self._index = calls, len(calls), index

    def get(self, call_id: Any, default: Any = None) -> Any:
        """Return the last call with ``call_id``, or ``default``."""
        if call_id in self:
            return self[call_id]
        position = self._index.last_before(call_id, self._resumed)
        return default if position is None else self._calls[position]


def _resumed(point: _Checkpoint, whole: _Scan, index: _CallIndex,
             policy: Policy | None = None) -> _Scan:
    """Return a new scan in the state ``point`` recorded (``whole``: the whole-session scan,
    whose append-only lists begin with what the scan had then; ``index``: of its calls),
    under ``policy`` (default: ``whole``'s; another only where the policy has not mattered)."""
    scan = _Scan(policy or whole.policy, whole.generation)
    scan.out = whole.out.head(point.out)
    scan.seqs = whole.seqs[: point.out]
    scan.surface = point.surface.copy(scan.seqs)
    scan.synthetic = whole.synthetic[: point.synthetic]
    scan.computed = whole.computed[: point.computed]
    scan.codes = dict(islice(whole.codes.items(), point.codes))
    scan.unanswered_closed = whole.unanswered_closed[: point.unanswered]
    scan.fork_points = whole.fork_points[: point.fork_points]
    calls = whole.calls[: point.calls]
    for i, call in point.open_calls.items():
        calls[i] = list(call)
    scan.calls = calls
    scan.by_id = _ResumedCallsById(calls, index)
    scan.step_calls = {call_id: calls[i] for call_id, i in point.step_calls}
    for name, value in zip(_SCALARS, point.scalars, strict=True):
        setattr(scan, name, value)
    scan.rewound_forks = dict(point.rewound_forks)
    scan.policy_mattered = point.policy_mattered
    return scan


class _SharedFacts:
    """The facts of the whole-session scan's calls that prefixes share, each made once per
    branch it is on: a prefix's scan shares only calls that can no longer change."""

    def __init__(self, whole: _Scan, like: _SharedFacts | None = None) -> None:
        self._calls = whole.calls
        self._made: list[CallFacts | None] = [None] * len(whole.calls)
        self._made_on: list[int | None] = [None] * len(whole.calls)
        """The branch (code) each of ``_made`` was made on."""
        if like is not None:  # take what ``like`` made of the calls both scans share
            for i in compress(count(), map(is_, self._calls, like._calls)):
                self._made[i], self._made_on[i] = like._made[i], like._made_on[i]

    def __call__(self, calls: list[list[Any]], branch: array) -> list[CallFacts]:
        """Return the ``CallFacts`` of a prefix's scanned calls (see ``facts_of``); the
        calls are compared with the whole scan's in C, and only those not made yet (on
        their branch) are made."""
        whole, made, made_on = self._calls, self._made, self._made_on
        branches = list(map(branch.__getitem__, map(_NODE_OF, calls)))
        known = map(and_, map(is_, calls, whole), map(eq, branches, made_on))
        facts: list[Any] = made[:len(calls)] + [None] * (len(calls) - len(whole))
        unknown = chain(map(not_, known), repeat(True, len(facts) - len(whole)))
        for i in compress(count(), unknown):
            call, on = calls[i], branches[i]
            facts[i] = _facts(call, BRANCHES[on])
            if i < len(whole) and whole[i] is call:
                made[i], made_on[i] = facts[i], on
        return facts


_NODE_OF = itemgetter(_NODE)


def _policy_free(point: _Checkpoint) -> bool:
    """Whether the scan's state at ``point`` is the same under every policy."""
    return not point.policy_mattered


class PrefixAnalyses:
    """Every prefix of one session's events analysed under one policy, on demand.

    ``analysis(n)`` equals ``analyze(events[:n], policy=..., version=...)``; building the
    object scans the whole session once, or, given ``like`` (the same events' analyses
    under another policy, same ``version`` and ``every``), from ``like``'s last checkpoint
    before the policy mattered. The events are not modified and must not be changed while
    this object is used.
    """

    def __init__(
        self,
        events: Sequence[Event],
        *,
        policy: Policy,
        version: int | None = None,
        columns: EngineColumns | None = None,
        every: int = CHECKPOINT_EVERY,
        like: PrefixAnalyses | None = None,
    ) -> None:
        if every < 1:
            raise ValueError(f"checkpoints must be at least 1 event apart, got {every}")
        self._events = events
        self._every = max(every, -(-len(events) // CHECKPOINTS_MOST))
        generation = generation_for(version)
        if like is not None and (like._events is not events or like._every != self._every
                                 or like._whole.generation != generation):
            raise ValueError("`like` must analyse the same events, with the same version "
                             "and checkpoint spacing")
        self._columns = like._columns if like else (
            columns_of(events) if columns is None else columns)
        self._points: list[_Checkpoint] = []
        first = 0
        with _collector_paused():
            shared = list(takewhile(_policy_free, like._points)) if like else []
            if like is not None and shared:  # go on from the last (checkpointed again below)
                self._points, point = shared[:-1], shared[-1]
                self._whole = _resumed(point, like._whole, like._index, policy)
                first = point.consumed
            else:
                self._whole = _Scan(policy, generation)
            for start in range(first, len(events) + 1, self._every):
                previous = self._points[-1] if self._points else None
                self._points.append(_checkpoint(self._whole, start, previous))
                stop = min(start + self._every, len(events))
                self._run(self._whole, start, stop)
        self._facts = _SharedFacts(self._whole, like._facts if like else None)
        # a scan lists the recorded events' calls in the same order under every policy
        self._index = like._index if like else _CallIndex(self._whole.calls)

    def __len__(self) -> int:
        return len(self._events)

    def _run(self, scan: _Scan, start: int, stop: int) -> None:
        """Scan the recorded events ``start`` to ``stop`` with ``scan``."""
        if stop > start:
            scan.run(self._columns, self._events, start, stop)

    def analysis(self, n: int, then: Sequence[Event] = ()) -> Analysis:
        """Return the analysis of the first ``n`` events (all of them when ``n`` is larger)
        followed by the events ``then`` (e.g. a fork seed's marker and closers)."""
        if n < 0:
            raise ValueError(f"cannot keep {n} events: n must be >= 0")
        n = min(n, len(self._events))
        point = self._points[n // self._every]
        with _collector_paused():
            scan = _resumed(point, self._whole, self._index)
            self._run(scan, point.consumed, n)
            if then:
                scan.run(columns_of(then, n), then)
            closers = scan.closers()
            scan.run_computed(closers)
            return scan.result(closers, self._facts)
