"""Fork seeds (format §11): the child session a runtime writes to continue from a prefix.

The fork policy never appends to the parent: it seeds a child from the trustworthy
prefix, the parent's events up to the boundary ``F - 1`` (``F`` = the first fork point),
so the runtime resumes the child with nothing unanswered and the parent stays as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from ledgerviz.recovery.analyze import first_fork_point
from ledgerviz.recovery.closers import tail_closers, track
from ledgerviz.recovery.events import Event, seq_of
from ledgerviz.recovery.results import new_event
from ledgerviz.recovery.tracker import PendingCalls

FORK_VERSION = 4
"""The format generation whose runtime closes an open turn at the cut (``forked`` closers)."""
SEEDED_VERSIONS = frozenset({2, 3, 4})
"""Generations that mark a fork with ``isSeeded`` and ``session/end-seed {inherited}``."""

SEED_MARKER = "session/end-seed"
MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer the runtime holds exactly (a JavaScript number)."""
DEPTH_VERSIONS = frozenset({0, 1, 2})
"""Generations whose header requires ``delegationDepth`` (format §2)."""


class ForkRefused(ValueError):
    """Raised when a fork seed cannot be written as the runtime would write it."""


def fork_boundary(events: Sequence[Event], *, version: int | None) -> int | None:
    """Return the fork policy's boundary seq ``F - 1``, or None without an unresolvable call.

    ``F`` is the first fork point on the active branch: the prefix before it is the
    only one that holds no dispatched call without a genuine result.
    """
    point = first_fork_point([(events, None)], version=version)
    return point - 1 if point is not None else None


def fork_header(parent: dict[str, Any], *, session_id: str, created_at: int) -> dict[str, Any]:
    """Return the child's header as the runtime's ``SessionStore.fork`` writes it: type,
    version, the new id and createdAt, the parent's cwd, ``parentSession`` = the parent's
    id, ``isSeeded: true``, in that order; no ``delegationDepth``, ``origin`` or
    ``agentPreset``.

    The runtime writes version 4 (it migrates an older parent first). A v2/v3 parent's
    child keeps the parent's version, since its events are copied unmigrated in that
    generation's shapes, and, for v2, the ``delegationDepth`` that generation's header
    requires. Raises :class:`ForkRefused` for the parent's own id (the runtime refuses a
    fork onto an existing session) or a createdAt that is not epoch milliseconds from 0
    to 2^53 - 1.
    """
    if session_id == parent.get("id"):
        raise ForkRefused(f"the child's id {session_id!r} is the parent's: the runtime "
                          "refuses to fork onto a session that exists; give another id")
    if type(created_at) is not int or not 0 <= created_at <= MAX_SAFE_INTEGER:
        raise ForkRefused(f"createdAt {created_at!r} is not epoch milliseconds the reader "
                          f"accepts (an integer from 0 to {MAX_SAFE_INTEGER})")
    version = parent.get("version")
    header: dict[str, Any] = {
        "type": "session",
        "version": version,
        "id": session_id,
        "createdAt": created_at,
    }
    if "cwd" in parent:
        header["cwd"] = parent["cwd"]
    header["parentSession"] = parent.get("id")
    header["isSeeded"] = True
    if version in DEPTH_VERSIONS and "delegationDepth" in parent:
        header["delegationDepth"] = parent["delegationDepth"]
    return header


def fork_seed(
    parent_header: dict[str, Any],
    events: Sequence[Event],
    boundary: int,
    *,
    session_id: str,
    created_at: int,
) -> tuple[dict[str, Any], list[Event]]:
    """Return the child's ``(header, events)`` exactly as the runtime's fork seed builds them.

    Events ``0 … boundary`` of the parent (the same dicts, not copies), then
    ``session/end-seed {"inherited": true}`` at ``boundary + 1`` with the time of event
    ``boundary``, then the §9.1 closers of that seed with cause ``forked`` (v4 shapes).
    A v2/v3 parent is forked in its own generation only at a turn boundary (no
    closers: that runtime had no ``forked`` cause); raises :class:`ForkRefused` for a
    cut inside one of its turns, a v0/v1 parent, or a boundary that is not the seq of
    one of its events. The parent's events are not modified.
    """
    header, inherited, added = seed_parts(parent_header, events, boundary,
                                          session_id=session_id, created_at=created_at)
    seeded = list(islice(events, inherited))  # one copy: a long prefix's dicts are cold
    seeded.extend(added)
    return header, seeded


def seed_parts(
    parent_header: dict[str, Any],
    events: Sequence[Event],
    boundary: int,
    *,
    session_id: str,
    created_at: int,
) -> tuple[dict[str, Any], int, list[Event]]:
    """Return what :func:`fork_seed` returns, the parent's events apart: the child's header,
    how many first events of the parent it inherits and the events it adds after them.

    Of the parent's events, only the one at ``boundary`` (or, in a log whose seqs are not
    positions, the seqs up to it) and those from the last turn boundary before it are read.
    """
    version = parent_header.get("version")
    check_seedable(version)
    index = event_position(events, boundary)
    if index is None:
        last = seq_of(events[-1], len(events) - 1) if events else None
        raise ForkRefused(no_event_at(boundary, last))
    added = seed_end(version, boundary, track(_Head(events, index + 1)))
    header = fork_header(parent_header, session_id=session_id, created_at=created_at)
    return header, index + 1, added


def check_seedable(version: Any) -> None:
    """Raise :class:`ForkRefused` unless a parent of format ``version`` can be forked."""
    if version not in SEEDED_VERSIONS:
        raise ForkRefused(
            f"cannot fork a v{version} ledger: v0/v1 recorded a fork only as the header's "
            "seedLength; the runtime migrates an older log to v4 before forking it"
        )


def no_boundary(path: str) -> str:
    """Return why a log at ``path`` with no fork point has no boundary to fork at."""
    return (f"{path}: no unresolvable boundary (every dispatched call has a result); "
            "nothing to fork at (give a seq to fork at one)")


def no_event_at(boundary: Any, last: Any) -> str:
    """Return why there is no fork at ``boundary`` in a log whose last seq is ``last``."""
    return f"no event with seq {boundary!r} to fork at " + (
        f"(seqs run 0..{last})" if last is not None else "(the ledger has no events)")


def seed_end(version: Any, boundary: int, tracker: PendingCalls) -> list[Event]:
    """Return what follows a child's inherited events: ``session/end-seed`` at
    ``boundary + 1`` with the time of the last of them, then its forked closers.

    ``tracker`` has observed the inherited events (it then observes the marker). Raises
    :class:`ForkRefused` when a v2/v3 parent is cut inside a turn.
    """
    marker = new_event(SEED_MARKER, boundary + 1, tracker.last_time, {"inherited": True})
    tracker.observe(marker)
    closers = tail_closers(tracker, generation="v4", cause="forked")
    if closers and version != FORK_VERSION:
        raise ForkRefused(
            f"cannot fork this v{version} ledger at seq {boundary}: the cut is inside turn "
            f"{closers[-1]['data']['turn']}, and only the v{FORK_VERSION} runtime closes a "
            "cut turn (forked closers); fork at a turn boundary, or migrate the log to v4"
        )
    return [marker, *closers]


def event_position(events: Sequence[Event], seq: Any) -> int | None:
    """Return the position of the event of ``events`` whose seq is ``seq`` (None: none has
    it), reading only the events the search needs (``position_of_seq``)."""
    return position_of_seq([_Seqs(events)], seq)


def position_of_seq(blocks: Iterable[Sequence[Any]], seq: Any) -> int | None:
    """Return the position of the event whose seq is ``seq``, the session's seqs coming
    as consecutive blocks (read only as far as the answer needs).

    Dense logs (position = seq) are answered at that position; otherwise the first event
    with that seq is.
    """
    search = SeqSearch(seq)
    for seqs in blocks:
        if search.feed(seqs):
            break
    return search.position


class SeqSearch:
    """:func:`position_of_seq` given the seqs one block at a time (``feed``), for a reader
    that pushes the blocks it reads: nothing of them is held."""

    def __init__(self, seq: Any) -> None:
        self._seq = seq
        self._start = 0
        self.done = type(seq) is not int or seq < 0  # such a seq is no event's
        self.position: int | None = None
        """The answer: final once ``done``, else the first event with the seq so far."""

    def feed(self, seqs: Sequence[Any]) -> bool:
        """Search the next block's seqs; return whether the answer is final."""
        if self.done:
            return True
        seq, start = self._seq, self._start
        if start <= seq < start + len(seqs) and seqs[seq - start] == seq:
            self.position, self.done = seq, True
            return True
        if self.position is None:
            self.position = next((start + i for i, value in enumerate(seqs) if value == seq),
                                 None)
        self._start = start = start + len(seqs)
        self.done = self.position is not None and seq < start  # the dense position is passed
        return self.done


class _Seqs(Sequence[Any]):
    """The seqs of a list of events, read from each event when asked (``seq_of``)."""

    def __init__(self, events: Sequence[Event]) -> None:
        self._events = events

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index: int) -> Any:  # type: ignore[override]
        return seq_of(self._events[index], index)


class _Head(Sequence[Event]):
    """The first ``count`` of a list of events, read from it when asked."""

    def __init__(self, events: Sequence[Event], count: int) -> None:
        self._events = events
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> Event:  # type: ignore[override]
        if not -self._count <= index < self._count:
            raise IndexError("event index out of range")
        return self._events[index % self._count]
