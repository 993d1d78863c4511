"""Summaries of ledger files read as a stream: counts, diagnostics and recovery facts.

A file is read in chunks (``FileScan``); each block of checked events is handed to the
incremental recovery tracker (``PendingCalls``) and a call-status counter, then
dropped. Memory does not grow with the events: what is kept is the open turn's
pending calls, the calls still unanswered, and the reader's set of requested call ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ledgerviz.ledger.diagnostics import Diagnostic
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.reader import READ_BYTES, FileScan, with_unique_keys
from ledgerviz.ledger.sources import Source, SourceProblem, iter_source_chunks
from ledgerviz.ledger.typed import CallFact, StreamBlock
from ledgerviz.recovery.analysis import CallStatus
from ledgerviz.recovery.analyze import call_status
from ledgerviz.recovery.closers import tail_closers
from ledgerviz.recovery.events import (
    generation_for,
    payload_result_facts,
    payload_tool_call_blocks,
)
from ledgerviz.recovery.tracker import PendingCalls
from ledgerviz.recovery.vocab import OPEN_STATUSES


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What one ledger file holds, read in bounded memory.

    ``calls`` counts the requested tool calls by status as recorded (the ``calls``
    frame's ``status``); ``unanswered`` lists, in request order, the calls whose
    status is ``outcome_unknown`` or ``not_started``; ``closers`` is how many events
    crash repair (policy ``synthesize``) appends to close the tail, which is open
    at turn ``open_turn`` (None: closed) with ``pending`` calls unanswered.
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
    tracker, calls = PendingCalls(), _CallCounter()
    events = turns = 0
    for block in scan.blocks(chunks):
        if isinstance(block, StreamBlock):
            columns, facts = block, block.calls
        else:
            columns, facts = block.fields, _call_facts(block.fields)
        events += len(columns.types)
        turns += columns.types.count("turn/start")
        tracker.observe_columns(columns.types, columns.seqs, columns.times, columns.datas)
        calls.count(facts)
        del block, columns, facts  # not held while the next block is decoded
    closers = tail_closers(tracker, generation=generation_for(scan.version))
    unanswered = calls.finish()
    return SessionSummary(
        path=path,
        key=scan.key,
        version=scan.version,
        events=events,
        turns=turns,
        lines_skipped=scan.skipped,
        diagnostics=scan.diagnostics(),
        calls=dict(calls.counts),
        unanswered=unanswered,
        closers=len(closers),
        open_turn=tracker.open_turn,
        open_step=tracker.open_step,
        pending=[call.call_id for call in tracker.pending.values()],
    )


def _call_facts(fields: EventFields) -> list[CallFact]:
    """Return the call facts of a run of events given as the reader's columns, in order
    (what ``typed.stream_block`` reads without the dicts)."""
    facts: list[CallFact] = []
    for kind, data in zip(fields.types, fields.datas, strict=True):
        if kind == "assistant/message":
            facts.extend(("request", call.get("id"), None, False)
                         for call in payload_tool_call_blocks(data))
        elif kind == "tool/call":
            facts.append(("dispatch", data.get("callId"), None, False))
        elif kind == "tool/result":
            call_id, code, is_error, _ = payload_result_facts(data)
            facts.append(("answer", call_id, code, is_error))
    return facts


class _CallCounter:
    """Counts calls by status as ``analyze`` settles them, keeping only unanswered calls.

    A call is matched by id to the latest request with that id, as the recovery scan
    matches it; once answered (or shadowed by a later request with its id) its status
    is final and it is counted and forgotten.
    """

    def __init__(self) -> None:
        self.counts: Counter[CallStatus] = Counter()
        self._requests = 0
        self._open: dict[Any, list[Any]] = {}  # call id -> [request number, dispatched]
        self._unanswered: list[tuple[int, str, CallStatus]] = []

    def count(self, facts: Iterable[CallFact]) -> None:
        """Take the calls requested, dispatched and answered by a run of events, in order."""
        request, dispatch = self.request, self.dispatch
        for what, call_id, code, is_error in facts:
            if what == "request":
                request(call_id)
            elif what == "dispatch":
                dispatch(call_id)
            else:
                self.answer(call_id, code, is_error)

    def request(self, call_id: Any) -> None:
        shadowed = self._open.get(call_id)
        if shadowed is not None:
            self._settle(call_id, shadowed, call_status(False, shadowed[1], None, False))
        self._open[call_id] = [self._requests, False]
        self._requests += 1

    def dispatch(self, call_id: Any) -> None:
        call = self._open.get(call_id)
        if call is not None:
            call[1] = True

    def answer(self, call_id: Any, code: str | None, is_error: bool) -> None:
        call = self._open.pop(call_id, None)
        if call is not None:
            self._settle(call_id, call, call_status(True, call[1], code, is_error))

    def _settle(self, call_id: Any, call: list[Any], status: CallStatus) -> None:
        self.counts[status] += 1
        if status in OPEN_STATUSES:
            self._unanswered.append((call[0], call_id, status))

    def finish(self) -> list[tuple[str, CallStatus]]:
        """Settle the calls still open; return every unanswered call, in request order."""
        for call_id, call in self._open.items():
            self._settle(call_id, call, call_status(False, call[1], None, False))
        self._open.clear()
        return [(call_id, status) for _, call_id, status in sorted(self._unanswered)]
