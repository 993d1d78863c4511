"""A session's recovery facts from its blocks, in memory that does not grow with the session.

:func:`analyze_blocks` runs the scan of ``analyze`` block by block and keeps what a second
read of the same blocks cannot find again on its own (``followed.CallFollower`` is that
second read): the closers, fork points, abandoned and synthetic seqs, the calls left
unanswered when their step closed (what happens to them later, or never, is known only at
the end) and which requesting messages end up off the active branch, as runs. A call
answered before its step closes is forgotten once answered: the second read finds its
facts in the same events.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Hashable, Iterable
from typing import Any, NamedTuple

from ledgerviz.recovery.analysis import POLICIES, Branch, CallFacts, Policy
from ledgerviz.recovery.analyze import (
    _ARGS,
    _ID,
    _NODE,
    _RESULT,
    Block,
    _collector_paused,
    _facts,
    _Scan,
    _scan_block,
)
from ledgerviz.recovery.events import Event, generation_for
from ledgerviz.recovery.runtime_values import call_key
from ledgerviz.recovery.seq_runs import SeqRuns
from ledgerviz.recovery.surface import SurfaceFold

_PRUNE_AT = 4096
"""Answered calls are dropped from the scan's index by id once it holds this many more
entries than after the last pruning."""


class SessionFacts(NamedTuple):
    """What a session's analysis finds that a second read of its events needs: what
    :func:`analyze_blocks` returns."""

    calls: int
    """How many calls the session requests."""
    unresolved: dict[tuple[int, Hashable], CallFacts]
    """The facts (``arguments`` not kept: None) of the calls still unanswered when their
    step closed, by the ordinal of their requesting message among the messages that
    request calls (from 0) and the ``call_key`` of their id."""
    branches: list[tuple[int, Branch]]
    """Runs of the requesting messages' branches: ``(first ordinal, branch)``, ascending;
    the messages from one run's ordinal to the next one's are on its branch."""
    closers: list[Event]
    """The events the policy appends after the recorded log."""
    fork_points: list[int]
    abandoned_seqs: list[int]
    synthetic_seqs: list[int]
    """The seqs of the events the policy marks synthetic (the results it inserts into
    closed steps have none)."""


class _BlockScan(_Scan):
    """The scan with no per-event lists: seqs as runs, surface nodes as machine integers,
    and of the calls only those a second read cannot settle."""

    def __init__(self, policy: Policy, version: int | None) -> None:
        super().__init__(policy, generation_for(version))
        self.seqs = SeqRuns()  # type: ignore[assignment]  # read by position, as a list is
        self.surface = SurfaceFold(self.seqs)  # type: ignore[arg-type]
        self.surface.slots = array("q")  # type: ignore[assignment]
        self.requesting = array("q")
        """The node of each message that requests calls, in log order (ascending)."""
        self.unresolved: list[list[Any]] = []
        self.count = 0
        self._indexed = 0

    def _close_step(self, time: Any, action: int, seq: int | None, recorded: bool,
                    logged: bool) -> None:
        self.unresolved.extend(self.step_calls.values())
        super()._close_step(time, action, seq, recorded, logged)

    def feed(self, block: Block, start: int) -> None:
        """Scan one block (``start``: its first event's position), then forget what no
        later event can change: the events before the last turn boundary, the calls made
        (their requesting nodes kept) and, now and then, the answered calls by id."""
        _scan_block(self, block, start)
        requesting, last = self.requesting, self.requesting[-1] if self.requesting else -1
        for call in self.calls:
            if call[_NODE] != last:
                last = call[_NODE]
                requesting.append(last)
            call[_ARGS] = None  # the largest strings a call holds, and no scan reads them
        self.count += len(self.calls)
        self.calls.clear()
        if len(self.by_id) > self._indexed + _PRUNE_AT:
            # an answered call matches nothing again: a result or tool/call naming its id
            # finds it answered and changes nothing, so dropping it changes nothing
            self.by_id = {key: call for key, call in self.by_id.items() if call[_RESULT] is None}
            self._indexed = len(self.by_id)

    def finish(self, closers: list[Event]) -> SessionFacts:
        """Return the facts once the last block and the ``closers`` are scanned."""
        if self.fork_node is not None:
            self._apply_fork()
        on_surface = self._on_surface()
        branch_of = self._branch_of(on_surface)
        unresolved = {}
        for call in self.unresolved:
            ordinal = bisect_left(self.requesting, call[_NODE])
            unresolved[ordinal, call_key(call[_ID])] = _facts(call, branch_of(ordinal))
        runs: list[tuple[int, Branch]] = []
        for ordinal in range(len(self.requesting)):
            branch = branch_of(ordinal)
            if not runs or runs[-1][1] != branch:
                runs.append((ordinal, branch))
        seqs = self.seqs
        hidden = self.surface.hidden_nodes()
        return SessionFacts(
            self.count, unresolved, runs, closers, self.fork_points,
            [seqs[n] for n in hidden if seqs[n] is not None],
            [seqs[n] for n in self.synthetic if seqs[n] is not None])

    def _on_surface(self) -> bytearray:
        """Return, per requesting message, whether its node is on the final surface."""
        requesting, count = self.requesting, len(self.requesting)
        on = bytearray(count)
        for node in self.surface.slots:
            at = bisect_left(requesting, node)
            if at < count and requesting[at] == node:
                on[at] = 1
        return on

    def _branch_of(self, on_surface: bytearray) -> Any:
        """Return the function giving a requesting message's branch by its ordinal (as
        ``branches`` gives its node's)."""
        requesting, is_hidden = self.requesting, self.surface.is_hidden

        def branch_of(ordinal: int) -> Branch:
            if not on_surface[ordinal]:
                return "log"
            return "abandoned" if is_hidden(requesting[ordinal]) else "active"

        return branch_of


def analyze_blocks(
    blocks: Iterable[Block], *, policy: Policy, version: int | None
) -> SessionFacts:
    """Return what a second read of a session's events needs of its analysis under
    ``policy`` (:class:`SessionFacts`), the session coming as consecutive blocks of
    ``(events, columns)`` (as for ``first_fork_point``). Neither the events nor the calls
    answered in their step are held: only runs of seqs, the surface's nodes (a machine
    integer each), the events of the last turn and the calls not yet settled."""
    if policy not in POLICIES:
        raise ValueError(f"unknown recovery policy {policy!r}")
    scan = _BlockScan(policy, version)
    position = 0
    with _collector_paused():
        for block in blocks:
            scan.feed(block, position)
            position += len(block[0])
        closers = scan.closers()
        if closers:
            scan.run_computed(closers)
        return scan.finish(closers)
