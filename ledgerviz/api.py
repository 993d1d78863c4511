"""The ``Ledger`` facade returned by ``ledgerviz.load``: sessions, diagnostics, policies, frames."""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from ledgerviz.display import notebook, reprs
from ledgerviz.frames import Frames, build_frames
from ledgerviz.frames.fork_frames import ForkFrames
from ledgerviz.frames.prefix import prefix_frames
from ledgerviz.frames.session_frames import SessionFrames
from ledgerviz.ledger import Diagnostic, SessionLog, read_sessions
from ledgerviz.ledger.checks import NO_SEQ
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.head_events import head_then
from ledgerviz.ledger.reader import with_distinct_keys
from ledgerviz.ledger.runtime_read import LoadedRead, loaded_read
from ledgerviz.ledger.sources import Source
from ledgerviz.ledger.table import EventTable
from ledgerviz.progress import BYTES_THRESHOLD, EVENTS_THRESHOLD, progress, source_size
from ledgerviz.recovery import (
    PROVIDERS,
    ContextMessage,
    ForkRefused,
    Problem,
    analyze,
    export,
    fork_boundary,
)
from ledgerviz.recovery.analysis import POLICIES, Analysis, Policy
from ledgerviz.recovery.columns import EngineColumns, columns_of
from ledgerviz.recovery.context import ContextProjector
from ledgerviz.recovery.events import seq_of
from ledgerviz.recovery.fork import (
    SEED_MARKER,
    check_seedable,
    event_position,
    no_boundary,
    seed_parts,
)
from ledgerviz.recovery.pairing_memo import PairingMemo
from ledgerviz.recovery.prefixes import PrefixAnalyses
from ledgerviz.recovery.providers import Provider
from ledgerviz.streams.fork_file import no_child_at

Triple = tuple[str, SessionLog, Analysis]
"""A session's key, its log and its analysis under one policy: what frames are built from."""


@dataclass(frozen=True, slots=True, repr=False)
class RecoveryView:
    """Every session of a ledger under one recovery policy, with its frames."""

    policy: Policy
    analyses: dict[str, Analysis]
    frames: Frames

    def __repr__(self) -> str:
        return f"<{reprs.recovery_title(self)}>"

    def _repr_html_(self) -> str:
        return reprs.recovery_html(self)


@dataclass(frozen=True, slots=True, repr=False)
class Context:
    """The next model request one session would get under one policy, and its pairing checks."""

    policy: Policy
    session: str
    messages: list[ContextMessage]
    payload: dict[str, Any] | None
    """The request in ``provider``'s shape (None when no provider was asked for)."""
    problems: dict[Provider, list[Problem]]
    valid: dict[Provider, bool]

    def accepted_by(self) -> str:
        """Name the providers whose pairing rules accept this request: ``"all"``, ``"none"``,
        or the accepting ones joined by ``+`` (in :data:`~ledgerviz.recovery.PROVIDERS` order)."""
        accepted = [provider for provider in PROVIDERS if self.valid[provider]]
        if len(accepted) == len(PROVIDERS):
            return "all"
        return "+".join(accepted) or "none"

    def __repr__(self) -> str:
        return f"<{reprs.context_title(self)}>"

    def _repr_html_(self) -> str:
        return reprs.context_repr_html(self)


@dataclass(frozen=True, slots=True)
class _Memos:
    """What a ledger's contexts (its own and its cuts') projected and checked last, which
    the next context resumes from.

    Every policy shares them: a projection or a pairing scan depends only on the events or
    messages it reads, so a cut under one policy resumes from what the other read (a fork
    context is a prefix of the whole session's, which the first display projects)."""

    projector: ContextProjector
    """The projections, each copying what it shares with one made before."""
    pairing: PairingMemo
    """The pairing checks, resumed from a context checked before."""

    @classmethod
    def new(cls) -> _Memos:
        """Return a projector and pairing checks that have read nothing yet."""
        return cls(ContextProjector(), PairingMemo())


def _analyze(log: SessionLog, policy: Policy) -> Analysis:
    """Return the analysis of one session, the engine reading its columns (its events, when
    no reader checked them: a hand-made log whose columns cannot be read, which
    ``analyze`` then names the event of)."""
    try:
        columns = _columns(log)
    except (TypeError, AttributeError):
        return analyze(log.events, policy=policy, version=log.version)
    return analyze(log.events, policy=policy, version=log.version, columns=columns)


def _columns(log: SessionLog) -> EngineColumns:
    """Return the columns the engine reads of a session: its table when made (by the reader,
    or an earlier caller of ``event_table``), else read from its events with the reader's
    envelope columns (building the table from the dicts only to analyse them costs more)."""
    if log.table is not None:
        return log.table
    return columns_of(log.events, envelope=log.event_fields())


def _no_sharing(_policy: Policy, _analysis: Analysis) -> None:
    """Return None: a ledger's analyses share no events known beforehand."""
    return None


@dataclass(frozen=True, slots=True)
class Strategies:
    """How a ledger analyses and frames its sessions: from scratch (the defaults), or, for a
    cut made with ``reuse`` and the story of its fork, from the work of the ledger it came
    from, which hands these in."""

    analyzer: Callable[[SessionLog, Policy], Analysis] = _analyze
    """Returns a session's analysis under a policy."""
    framer: Callable[[Policy, list[Triple]], Frames] | None = None
    """Builds the frames of the analysed sessions (None: from scratch)."""
    shares: Callable[[Policy, Analysis], tuple[Analysis, int] | None] = _no_sharing
    """The analysis a cut's analysis begins with, and how many events they share (see
    ``ContextProjector.project``)."""
    source: Callable[[Policy], PrefixAnalyses] | None = None
    """For a cut: the prefix analyses of the session it was cut from."""
    whole: Callable[[Policy, Analysis, int], SessionFrames] | None = None
    """For a cut: the whole-session frames to slice the frames of an analysis under a policy
    (of the first given number of recorded events) from."""
    memos: _Memos | None = None
    """For a cut: the projector and pairing checks shared with the ledger it was cut from."""


def _check_policy(policy: Policy) -> None:
    """Raise ValueError for a name that is no policy."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")


class Ledger:
    """One or more sessions read from ledger files; recovery views are computed on demand."""

    def __init__(self, sessions: Sequence[SessionLog], *,
                 strategies: Strategies | None = None) -> None:
        """Hold ``sessions``; ``strategies`` (made by :meth:`cut` and :meth:`with_fork`) says
        how to analyse and frame them from another ledger's work instead of from scratch."""
        self._sessions = with_distinct_keys(list(sessions))  # a key held twice: a warning
        self._by_key = {log.key: log for log in self._sessions}
        self._views: dict[Policy, RecoveryView] = {}
        self._alone: dict[tuple[Policy, str], Analysis] = {}
        """Analyses made for one session before its policy's view (``context``); the view
        takes them."""
        self._prefixes: dict[tuple[str, Policy], PrefixAnalyses] = {}
        self._bases: dict[tuple[str, Policy], SessionFrames] = {}
        self._strategies = strategies or Strategies()
        self._memos = self._strategies.memos
        """The projector and pairing checks every context resumes: made by the first context,
        or shared with the ledger this one was cut from."""

    def __repr__(self) -> str:
        return f"<{reprs.ledger_title(self)}>"

    def _repr_html_(self) -> str:
        return reprs.ledger_html(self)

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def sessions(self) -> list[SessionLog]:
        """Return the sessions in load order."""
        return list(self._sessions)

    @property
    def keys(self) -> list[str]:
        """Return the session keys in load order (unique within this ledger)."""
        return [log.key for log in self._sessions]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Return every diagnostic of every session, in load and line order."""
        return [diagnostic for log in self._sessions for diagnostic in log.diagnostics]

    @property
    def frames(self) -> Frames:
        """Return the frames of the ledger as recorded (``recovery("recorded").frames``)."""
        return self.recovery("recorded").frames

    def session(self, key_or_index: str | int) -> Ledger:
        """Return a one-session ``Ledger`` for a session key or load position."""
        return Ledger([self._log(key_or_index)])

    def cut(self, n: int, session: str | int | None = None, *, reuse: bool = False) -> Ledger:
        """Return a one-session ``Ledger`` holding the first ``n`` events, as if the writer died.

        ``session`` may be omitted when the ledger holds exactly one session. With
        ``reuse``, the cut's recovery resumes from checkpoints of one scan of the whole
        session kept by this ledger (``recovery.PrefixAnalyses``, made on the first such
        cut per policy): the same analyses, cheap for many cuts of a long session.
        """
        if n < 0:
            raise ValueError(f"cannot keep {n} events: n must be >= 0")
        log = self._single(session, "cut")
        cut = [_cut_log(log, n)]
        if not reuse:
            return Ledger(cut)
        if self._memos is None:
            self._memos = _Memos.new()

        def source(policy: Policy) -> PrefixAnalyses:
            return self._prefix_analyses(log, policy)

        def whole(policy: Policy) -> SessionFrames:
            return self._session_frames(log, policy)

        def sliced_from(policy: Policy, analysis: Analysis, recorded: int) -> SessionFrames:
            return self._frames_to_slice(log, policy, analysis, recorded)

        return Ledger(cut, strategies=Strategies(
            # a cut of every event shares the whole session's analysis
            analyzer=((lambda _cut, policy: whole(policy).analysis) if n >= len(log.events)
                      else (lambda _cut, policy: source(policy).analysis(n))),
            framer=lambda policy, triples: prefix_frames(
                sliced_from(policy, triples[0][2], n), *triples[0], recorded=n),
            shares=lambda policy, analysis: _sharing(whole(policy), analysis, n),
            source=source,
            whole=sliced_from,
            memos=self._memos,
        ))

    def with_fork(self) -> Ledger | None:
        """Return this one-session ledger followed by the child ``fork`` seeds from it at the
        fork policy's boundary, or None when it has no fork point (``ForkRefused`` as for
        ``fork``). The parent's analyses are this ledger's; for a cut made with ``reuse``
        the child's resume from the same checkpoints."""
        log = self._single(None, "fork")
        points = self.recovery("fork").analyses[log.key].fork_points
        if not points:
            return None
        (child,) = self.fork(at=points[0] - 1).sessions
        inherited = _seed_marker_position(child.events)
        source, whole = self._strategies.source, self._strategies.whole

        def analyzer(session: SessionLog, policy: Policy) -> Analysis:
            if session is log:
                return self.recovery(policy).analyses[log.key]
            if source is None:
                return _analyze(session, policy)
            return source(policy).analysis(inherited, then=session.events[inherited:])

        framer = None if whole is None else (  # the child's frames are sliced as the cut's are
            lambda policy, triples: ForkFrames(
                self.recovery(policy).frames,
                prefix_frames(whole(policy, triples[1][2], inherited), *triples[1],
                              recorded=inherited), points[0] - 1))
        return Ledger([log, child], strategies=Strategies(analyzer=analyzer, framer=framer))

    def _prefix_analyses(self, log: SessionLog, policy: Policy) -> PrefixAnalyses:
        """Return the prefix analyses of one session under ``policy`` (made once, from
        another policy's as far as the policy does not matter)."""
        key = (log.key, policy)
        if key not in self._prefixes:
            like = next((held for (session, _), held in self._prefixes.items()
                         if session == log.key), None)
            with paused_gc():
                self._prefixes[key] = PrefixAnalyses(
                    log.events, policy=policy, version=log.version, columns=_columns(log),
                    like=like)
        return self._prefixes[key]

    def _session_frames(self, log: SessionLog, policy: Policy) -> SessionFrames:
        """Return the frames of one whole session under ``policy``, to slice cuts from
        (made once; another policy's serve when its analysis says the same)."""
        key = (log.key, policy)
        if key not in self._bases:
            whole = self._prefix_analyses(log, policy).analysis(len(log.events))
            served = (frames.serving(whole) for (held, _), frames in self._bases.items()
                      if held == log.key)
            self._bases[key] = next(filter(None, served), None) or SessionFrames(
                log.key, log, whole)
        return self._bases[key]

    def _frames_to_slice(self, log: SessionLog, policy: Policy, analysis: Analysis,
                         recorded: int) -> SessionFrames:
        """Return the whole-session frames to slice the frames of ``analysis`` (under
        ``policy``, of the first ``recorded`` recorded events of ``log``) from: that policy's
        once its events frame is built, else another policy's that is and shares as many
        first events with ``analysis`` (``prefix_frames`` slices those and builds the rest),
        else that policy's (built on first use)."""
        own = self._session_frames(log, policy)
        if own.frames.built("events") is not None:
            return own
        shared = own.shared_with(analysis, recorded)
        return next((frames for (key, _), frames in self._bases.items()
                     if key == log.key and frames.frames.built("events") is not None
                     and frames.shared_with(analysis, recorded) == shared), own)

    def fork(
        self,
        at: int | None = None,
        *,
        session: str | int | None = None,
        session_id: str | None = None,
        created_at: int | None = None,
    ) -> Ledger:
        """Return the child a runtime following the fork policy seeds from one session.

        A one-session ``Ledger`` in memory (nothing is written; the parent is untouched),
        built by ``recovery.fork_seed`` at boundary seq ``at``, by default the fork
        policy's ``F - 1``. ``session_id`` defaults to ``<parent id>-fork-<boundary>``,
        ``created_at`` to the current clock (epoch ms). Raises ``ForkRefused`` when there
        is no unresolved dispatched call to fork at, the seed cannot be written, or the
        parent as loaded is not what the runtime reads up to the boundary: where
        ``ledgerviz fork`` refuses (a log the runtime refuses, a boundary at or past the
        line it stops at; judged by the same rules, from the load), or where a line up to
        the boundary was left out by the loader though the runtime reads it.
        """
        log = self._single(session, "fork")
        if at is None:  # the fork policy's boundary among the events the runtime reads
            reading = _runtime_reading(log, 0)
            boundary = fork_boundary(log.events[:reading.used], version=log.version)
            index = None if boundary is None else event_position(log.events, boundary)
        else:
            boundary, index = at, event_position(log.events, at)
            reading = _runtime_reading(log, index)
        if reading.refusal is not None:
            raise ForkRefused(f"{log.path}: {reading.refusal}")
        if boundary is None:
            raise ForkRefused(no_boundary(log.path))
        check_seedable(log.version)
        if index is not None and index < reading.used:  # an event the runtime reads
            damage = _left_out(log, index + 1, log.lines[index])
        else:  # any line the runtime reads may hold it
            stop = reading.stop
            damage = _left_out(log, reading.used, stop.line - 1 if stop else float("inf"))
        if damage is not None:
            raise ForkRefused(
                f"{damage}: the runtime would not read the parent as loaded up to seq "
                f"{boundary}, so the child would not be the one it seeds; "
                "`ledgerviz fork` says where it stops")
        last = seq_of(log.events[-1], len(log.events) - 1) if log.events else None
        why = no_child_at(log.path, boundary, index is not None, reading.used, reading.stop,
                          last)
        if why is not None:
            raise ForkRefused(why)
        header, inherited, added = seed_parts(
            log.header,
            log.events,
            boundary,
            session_id=session_id or f"{log.header.get('id')}-fork-{boundary}",
            created_at=created_at if created_at is not None else time.time_ns() // 1_000_000,
        )
        events = head_then(log.events, inherited, added)  # fork_seed's, the parent's not copied
        child = SessionLog(
            path=f"{log.path} (fork at seq {boundary})",
            key=header["id"],
            header=header,
            version=log.version,
            events=events,
            lines=range(2, len(events) + 2),
            # the parent's envelope columns when the reader made them; else the child's
            # are extracted from its events when first asked for (not from the parent's
            # whole session, which a fork story analysed from checkpoints never reads)
            fields=None if log.fields is None else log.fields.prefix_then(
                inherited, EventFields.of(events[inherited:], start=inherited)),
            table=None if log.table is None else _child_table(log.table, events, inherited),
        )
        return Ledger([child])

    def context(
        self, policy: Policy, provider: Provider | None = None, session: str | int | None = None
    ) -> Context:
        """Return the projected next request of one session under ``policy``, checked for
        tool-call pairing against every provider (``session`` optional for one session)."""
        if provider is not None and provider not in PROVIDERS:
            raise ValueError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
        log = self._single(session, "project")
        key = log.key
        if self._memos is None:  # kept: the next context resumes from what this one read
            self._memos = _Memos.new()
        memos = self._memos
        analysis = self._analysis(log, policy)
        with paused_gc():  # many new objects, no cycles: a collection would walk every event
            messages = memos.projector.project(analysis, self._strategies.shares(policy, analysis))
            problems = memos.pairing.problems(messages)
            payload = export(messages, provider).payload if provider else None
        return Context(
            policy,
            key,
            messages,
            payload,
            problems,
            {name: not found for name, found in problems.items()},
        )

    def recovery(self, policy: Policy) -> RecoveryView:
        """Return every session analysed under ``policy`` (computed once, then cached)."""
        _check_policy(policy)
        view = self._views.get(policy)
        if view is None:
            total = sum(len(log.events) for log in self._sessions)
            alone = self._alone
            with paused_gc(), progress(total, EVENTS_THRESHOLD, f"analysing ({policy})") as step:
                analyses = {}
                for log in self._sessions:
                    made = alone.pop((policy, log.key), None)
                    analyses[log.key] = (self._strategies.analyzer(log, policy) if made is None
                                         else made)
                    if step is not None:
                        step(len(log.events))
            triples = [(log.key, log, analyses[log.key]) for log in self._sessions]
            framer = self._strategies.framer
            frames = (build_frames(triples, as_read=True) if framer is None
                      else framer(policy, triples))
            view = self._views[policy] = RecoveryView(policy, analyses, frames)
        return view

    def _analysis(self, log: SessionLog, policy: Policy) -> Analysis:
        """Return one session's analysis under ``policy``: its view's when the view is
        made, else made for this session alone (no other session read or framed)."""
        _check_policy(policy)
        view = self._views.get(policy)
        if view is not None:
            return view.analyses[log.key]
        made = self._alone.get((policy, log.key))
        if made is None:
            with paused_gc():
                made = self._alone[(policy, log.key)] = self._strategies.analyzer(log, policy)
        return made

    def _single(self, session: str | int | None, action: str) -> SessionLog:
        """Return the named session, or the only one when ``session`` is None."""
        if session is None and len(self._sessions) != 1:
            raise ValueError(f"name the session to {action}: this ledger holds {self.keys!r}")
        return self._log(0 if session is None else session)

    def _log(self, key_or_index: str | int) -> SessionLog:
        """Return the session named by key or load position."""
        if isinstance(key_or_index, int):
            return self._sessions[key_or_index]
        log = self._by_key.get(key_or_index)
        if log is None:
            raise KeyError(f"no session {key_or_index!r}; keys are {self.keys!r}")
        return log


def _sharing(whole: SessionFrames, analysis: Analysis, recorded: int
             ) -> tuple[Analysis, int] | None:
    """Return the whole session's analysis and how many first events ``analysis`` (of its
    first ``recorded`` recorded events) shares with it, or None (see ``SessionFrames``)."""
    shared = whole.shared_with(analysis, recorded)
    return None if shared is None else (whole.analysis, shared)


RUNTIME_DISAGREES = frozenset({"unusual_payload"})
"""Warnings of lines the loader may leave out although the runtime reads them (an event
whose line holds one is left out unless only its call id is odd)."""


def _runtime_reading(log: SessionLog, index: int | None) -> LoadedRead:
    """Return how the runtime reads ``log`` as loaded, forking at its ``index``-th event."""
    return loaded_read(_unnumbered(log, index), log.header, log.lines,
                       lambda: log.event_fields().types)


def _unnumbered(log: SessionLog, index: int | None) -> list[Diagnostic]:
    """Return the diagnostics of ``log`` with, where its first event has no ``seq`` and the
    boundary is the ``index``-th event, the runtime's stop at that line, first of its line.
    (The loader numbers an event without seq by its position and says so only once an event
    before it had one: only the first event can go unsaid.)"""
    if index is None or not log.events or "seq" in log.events[0]:
        return log.diagnostics
    stop = Diagnostic(log.path, log.lines[0], "invalid_event", "error",
                      f"{log.events[0].get('type')}: {NO_SEQ}")
    return sorted([*log.diagnostics, stop], key=lambda d: (d.line, d is not stop))


def _left_out(log: SessionLog, count: int, through: float) -> Diagnostic | None:
    """Return the first line up to line ``through`` that the loader left out though the
    runtime reads it, or None (``count``: how many first events' lines to look among; a
    warned line whose event was kept, such as a call id that is a number, is no damage)."""
    loaded: set[int] | None = None  # the lines of the first events, made once if asked
    for d in log.diagnostics:
        if d.kind in RUNTIME_DISAGREES and d.line <= through:
            loaded = set(log.lines[:count]) if loaded is None else loaded
            if d.line not in loaded:
                return d
    return None


def _child_table(parent: EventTable, events: Sequence[dict[str, Any]],
                 inherited: int) -> EventTable:
    """Return the table of a fork child's ``events``, whose first ``inherited`` are the
    parent's first (``parent``: its table): those rows taken from the parent's table, the
    seed's own tabled from their dicts; lines as the child's file numbers them (from 2), no
    byte ranges (the child is in memory)."""
    head = parent.rows(0, inherited)
    head = replace(head, line=array("q", range(2, inherited + 2)), start=None, stop=None)
    seed = EventTable.of(events[inherited:], range(inherited + 2, len(events) + 2), inherited)
    return EventTable.joined([head, seed])


def _seed_marker_position(events: Sequence[dict[str, Any]]) -> int:
    """Return the position of a fork seed's marker: the last ``session/end-seed`` (only its
    closers follow it)."""
    position = len(events) - 1
    while events[position].get("type") != SEED_MARKER:
        position -= 1
    return position


def _cut_log(log: SessionLog, n: int) -> SessionLog:
    """Return ``log`` truncated to its first ``n`` events, with the diagnostics of that prefix."""
    lines = log.lines[:n]
    header_lines = 0 if (log.lines and log.lines[0] == 1) else 1
    last_line = lines[-1] if len(lines) else header_lines
    kept = [d for d in log.diagnostics if d.line <= last_line]
    distinct = len(lines) if isinstance(lines, range) else len(set(lines))  # a range repeats none
    skipped = last_line - header_lines - distinct
    return replace(
        log,
        events=head_then(log.events, n),
        lines=lines,
        diagnostics=kept,
        lines_skipped=max(0, skipped),
        fields=None if log.fields is None else log.fields.prefix(n),
        table=None if log.table is None or n >= len(log.table) else log.table.rows(0, n),
    )


notebook.register_formatters()


def load(source: Source, *, strict: bool = False, format: str | None = None) -> Ledger:
    """Return a ``Ledger`` of every session in ``source`` (file, folder, glob, list, stream).

    Lenient by default; ``strict=True`` raises ``LedgerError`` at the first error. Each
    file's format is found by its content unless ``format`` names one for all
    (``ledgerviz.ledger.formats.format_names()`` lists them). Reading
    large files shows progress where someone watches (see ``ledgerviz.progress``).
    """
    size = partial(source_size, source)  # the files are walked twice only for a bar
    with progress(size, BYTES_THRESHOLD, "reading", unit="B") as step:
        return Ledger(read_sessions(source, format=format, strict=strict, progress=step))
