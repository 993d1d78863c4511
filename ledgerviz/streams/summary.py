"""Summaries of ledger files read as a stream: counts, diagnostics and recovery facts.

A file is read in chunks (``FileScan``); each block of checked events is handed to the
incremental recovery tracker (``PendingCalls``) and to the streamed recovery
(``streams.recovery``: call statuses, fork points, provider pairing), then dropped.
Memory does not grow with the events: what is kept is the open turn's pending calls,
the calls still unanswered, each policy's pairing state, and every call id requested
(the reader's ``CallIds``, about 40 bytes per id: its checks need them all).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ledgerviz.ledger.compressed import stream_cut
from ledgerviz.ledger.diagnostics import Diagnostic
from ledgerviz.ledger.reader import READ_BYTES, FileScan, with_unique_keys
from ledgerviz.ledger.sources import Source, SourceProblem, iter_source_chunks
from ledgerviz.ledger.typed_stream import StreamBlock
from ledgerviz.recovery.analysis import CallStatus, Policy
from ledgerviz.recovery.closers import tail_closers
from ledgerviz.recovery.events import generation_for
from ledgerviz.recovery.providers import Provider
from ledgerviz.recovery.runtime_values import defined
from ledgerviz.recovery.tracker import PendingCalls
from ledgerviz.streams.recovery import StreamedRecovery, event_facts


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What one ledger file holds, read in bounded memory.

    ``calls`` counts the requested tool calls by status as recorded (the ``calls``
    frame's ``status``); ``unanswered`` lists, in request order, the calls whose
    status is ``outcome_unknown`` or ``not_started``; ``closers`` is how many events
    crash repair (policy ``synthesize``) appends to close the tail, which is open
    at turn ``open_turn`` (None: closed) with ``pending`` calls unanswered.
    ``fork_points`` (the fork policy's) and ``provider_valid`` (per policy, per
    provider: would it accept the next request) are as ``ledgerviz check`` reports them
    for a file read whole; None when the surface is edited (``surface_edited``: the
    line of the first edit, see ``streams.recovery``).
    """

    path: str
    key: str
    version: int | None
    events: int
    turns: int
    lines_skipped: int
    diagnostics: list[Diagnostic]
    calls: dict[CallStatus, int]
    unanswered: list[tuple[str, CallStatus]]
    closers: int
    open_turn: Any
    open_step: Any
    pending: list[str] = field(default_factory=list)
    fork_points: list[int] | None = None
    provider_valid: dict[Policy, dict[Provider, bool]] | None = None
    surface_edited: int | None = None

    @property
    def has_errors(self) -> bool:
        """Return True when any diagnostic of this file is an error."""
        return any(d.severity == "error" for d in self.diagnostics)


def summarize(
    source: Source, *, strict: bool = False, chunk_bytes: int = READ_BYTES
) -> list[SessionSummary]:
    """Return the summary of every ledger file in ``source``, reading each as a stream.

    ``source`` is what ``ledgerviz.load`` takes; keys are made unique as a load makes
    them. ``strict=True`` raises ``LedgerError`` at a file's first error.
    """
    return with_unique_keys(list(iter_summaries(source, strict=strict, chunk_bytes=chunk_bytes)))


def iter_summaries(
    source: Source, *, strict: bool = False, chunk_bytes: int = READ_BYTES
) -> Iterator[SessionSummary]:
    """Yield the summary of each ledger file in ``source`` as soon as it is read (keys as
    the files give them; ``summarize`` makes them unique)."""
    for path, chunks in iter_source_chunks(source, chunk_bytes):
        yield summarize_file(path, chunks, strict=strict)


def summarize_file(
    path: str, chunks: Iterator[bytes | SourceProblem], *, strict: bool = False
) -> SessionSummary:
    """Return the summary of one file whose bytes come as ``chunks``."""
    scan = FileScan(path, strict=strict, typed=True)
    tracker, recovery = PendingCalls(), None
    events = turns = 0
    for block in scan.blocks(chunks):
        if recovery is None:  # the header is read: its version is known
            recovery = StreamedRecovery(generation_for(scan.version))
        if isinstance(block, StreamBlock):
            columns, facts = block, block.facts
        else:
            columns = block.fields
            facts = event_facts(columns.types, columns.seqs, columns.times, columns.datas,
                                columns.surface_ops, block.lines)
        events += len(columns.types)
        turns += columns.types.count("turn/start")
        tracker.observe_columns(columns.types, columns.seqs, columns.times, columns.datas)
        recovery.observe(facts)
        del block, columns, facts  # not held while the next block is decoded
    generation = generation_for(scan.version)
    if recovery is None:
        recovery = StreamedRecovery(generation)
    closers = tail_closers(tracker, generation=generation)
    valid = recovery.finish(closers)
    unanswered = recovery.unanswered()
    edited = recovery.edited
    return SessionSummary(
        path=path,
        key=scan.key,
        version=scan.version,
        events=events,
        turns=turns,
        lines_skipped=scan.skipped,
        diagnostics=scan.diagnostics() + stream_cut(path, getattr(chunks, "end", None), strict),
        calls=dict(recovery.counts),
        unanswered=unanswered,
        closers=len(closers),
        open_turn=tracker.open_turn,
        open_step=tracker.open_step,
        pending=[defined(call.call_id) for call in tracker.pending.values()],
        fork_points=recovery.fork_points if edited is None else None,
        provider_valid=valid if edited is None else None,
        surface_edited=edited,
    )
