"""Sessions as OpenTelemetry traces: sent to an OTLP/HTTP endpoint or written as OTLP/JSON.

Quick start (``pip install "ledgerviz[otlp]"``)::

    >>> import ledgerviz as lv                                        # doctest: +SKIP
    >>> ledger = lv.load("sessions/")                                 # doctest: +SKIP
    >>> lv.to_otlp(ledger, "http://127.0.0.1:6006", policy="fork")    # doctest: +SKIP

One trace per session, spans per the GenAI semantic conventions (``otlp_spans``), ids
derived from the session id and seqs (``otlp_ids``): a re-export sends the same ids
again, never new ones. Spans leave in batches of ``batch_spans`` while they are made,
so memory holds one batch of files' frames and one batch of spans; :func:`export_otlp`
reads a fleet folder 64 MiB of files at a time, and a larger dsh file in two streamed
passes (``otlp_stream``). ``otlp_json`` writes OTLP/JSON; ``otlp_sdk`` hands the spans to
the SDK's OTLP/HTTP exporter. docs/otlp.md lists every attribute.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import islice
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from ledgerviz import __version__
from ledgerviz.api import Ledger
from ledgerviz.export.dataset import batches
from ledgerviz.file_mode import replaced_atomically
from ledgerviz.ledger.formats import file_format
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.ledger.overwrite import ledger_held, refusal
from ledgerviz.ledger.read import file_sessions, read_file
from ledgerviz.ledger.reader import READ_BYTES, reported_chunks, with_unique_keys
from ledgerviz.ledger.sources import Found, expand_found, found_chunks
from ledgerviz.progress import BYTES_THRESHOLD, SPANS_THRESHOLD, progress
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, Policy

if TYPE_CHECKING:
    from ledgerviz.export.otlp_spans import SpanRecord

OTLP_HINT = 'pip install "ledgerviz[otlp]"'
"""How to install what OTLP export needs."""

BATCH_SPANS = 2048
"""Spans per request (per OTLP/JSON line)."""

TRACES_PATH = "/v1/traces"

STREAM_BYTES = 64 * 2**20
"""A dsh ledger file larger than this is read in two streamed passes (``otlp_stream``),
not loaded: one large session in bounded memory."""


class OtlpError(Exception):
    """An OTLP export that cannot run or was refused; ``str()`` is one line for the user."""


@dataclass(slots=True)
class OtlpSummary:
    """What one OTLP export sent."""

    target: str
    """The endpoint URL or the output file."""
    policy: Policy
    sessions: list[str] = field(default_factory=list)
    spans: int = 0
    error_sessions: list[str] = field(default_factory=list)
    """Sessions with error-level diagnostics (exported leniently)."""


@cache
def require_opentelemetry() -> ModuleType:
    """Return ``opentelemetry.sdk.trace``; raise ImportError with a pip hint when the
    OpenTelemetry SDK or its OTLP/HTTP exporter is missing."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace
    except ImportError as error:
        raise ImportError(f"OTLP export needs the OpenTelemetry SDK: {OTLP_HINT}") from error
    return opentelemetry.sdk.trace


def traces_url(endpoint: str) -> str:
    """Return the OTLP/HTTP traces URL of ``endpoint``: as given when it has a path, else
    with ``/v1/traces`` added (``http://host:4318`` -> ``http://host:4318/v1/traces``)."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise OtlpError(f"{endpoint}: not an http(s) URL of an OTLP endpoint")
    return endpoint if parts.path.strip("/") else endpoint.rstrip("/") + TRACES_PATH


def ledger_spans(ledger: Ledger, policy: Policy = DEFAULT_POLICY) -> Iterator[SpanRecord]:
    """Yield the spans of every session of ``ledger`` under ``policy``, session by session."""
    from ledgerviz.export.otlp_rows import SessionRows, clock_of, session_rows
    from ledgerviz.export.otlp_spans import held_session, session_spans, wanted_seqs

    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    view = ledger.recovery(policy)
    rows = session_rows(view.frames)
    for log in ledger.sessions:
        held = rows.get(log.key, SessionRows([], [], [], None))
        clock = clock_of(view.analyses[log.key], wanted_seqs(held))
        yield from session_spans(held_session(log.key, policy, held, clock))


def span_count(ledger: Ledger, policy: Policy) -> int:
    """Return how many spans ``ledger`` makes under ``policy`` (turns + steps + calls)."""
    frames = ledger.recovery(policy).frames
    return len(frames.turns) + len(frames.steps) + len(frames.calls)


SpanSink = Callable[[Sequence["SpanRecord"]], bool]
"""Takes one batch of spans; returns whether it was delivered."""


@contextmanager
def span_exporter(endpoint: str | None, output: str | os.PathLike[str] | None,
                  headers: Mapping[str, str] | None) -> Iterator[SpanSink]:
    """Yield the sink of one run: the SDK's OTLP/HTTP exporter to ``endpoint``, or OTLP/JSON
    lines into ``output`` (written to a temporary file of a name of its own in the same
    folder, renamed into place when every batch is in). The resource is
    ``service.name=ledgerviz`` merged with ``OTEL_RESOURCE_ATTRIBUTES`` (no random
    ``service.instance.id``, as ``Resource.create`` adds: a re-export is the same file)."""
    require_opentelemetry()
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    if (endpoint is None) == (output is None):
        raise OtlpError("give exactly one of an endpoint URL and an output file")
    held = None if output is None else ledger_held(output)
    if held is not None:
        raise OtlpError(refusal(output, held))
    resource = Resource({"service.name": "ledgerviz", "service.version": __version__}).merge(
        OTELResourceDetector().detect())
    if endpoint is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        from ledgerviz.export.otlp_sdk import SdkSpans

        exporter = OTLPSpanExporter(endpoint=traces_url(endpoint), headers=dict(headers or {}))
        try:
            yield SdkSpans(exporter, resource, InstrumentationScope("ledgerviz", __version__))
        finally:
            exporter.shutdown()
        return
    from ledgerviz.export.otlp_json import OtlpJson

    with replaced_atomically(Path(os.fspath(output))) as stream:
        yield OtlpJson(stream, resource.attributes, ("ledgerviz", __version__))


def send(spans: Iterable[SpanRecord], sink: SpanSink, target: str,
         batch_spans: int = BATCH_SPANS, step: Any = None) -> int:
    """Hand ``spans`` to ``sink`` in batches of ``batch_spans``; return how many were sent.

    ``step``, if given, is called with each batch's size. Raises ``OtlpError`` naming the
    target and the spans of a batch the sink could not deliver.
    """
    iterator = iter(spans)
    sent = 0
    while True:
        with paused_gc():  # spans and their encodings hold no cycles; the ledger is large
            batch = list(islice(iterator, batch_spans))
            accepted = not batch or sink(batch)
        if not batch:
            return sent
        if not accepted:
            raise OtlpError(f"{target}: spans {sent + 1}..{sent + len(batch)} were not "
                            "accepted (is an OTLP/HTTP receiver listening there?)")
        sent += len(batch)
        if step is not None:
            step(len(batch))


def to_otlp(
    ledger: Ledger,
    endpoint: str | None = None,
    *,
    output: str | os.PathLike[str] | None = None,
    policy: Policy = DEFAULT_POLICY,
    headers: Mapping[str, str] | None = None,
    batch_spans: int = BATCH_SPANS,
) -> OtlpSummary:
    """Send every session of ``ledger`` under ``policy`` as one trace each to the OTLP/HTTP
    ``endpoint``, or write them as OTLP/JSON lines to ``output``; return what was sent.

    ``headers`` go with every request (an API key, say). Raises ``OtlpError`` for a bad
    endpoint or a refused batch, ``ImportError`` (with a pip hint) without the SDK.
    """
    target = traces_url(endpoint) if endpoint is not None else os.fspath(output or "")
    summary = OtlpSummary(target, policy)
    with span_exporter(endpoint, output, headers) as sink:
        _send_ledger(ledger, sink, summary, batch_spans)
    return summary


def _send_ledger(ledger: Ledger, sink: SpanSink, summary: OtlpSummary,
                 batch_spans: int) -> None:
    """Send one loaded ledger's spans, with a progress bar when they are many."""
    total = partial(span_count, ledger, summary.policy)  # counted only when someone watches
    with progress(total, SPANS_THRESHOLD, "sending spans", unit="span") as step:
        summary.spans += send(ledger_spans(ledger, summary.policy), sink, summary.target,
                              batch_spans, step)
    summary.sessions += ledger.keys
    summary.error_sessions += [log.key for log in ledger.sessions if log.has_errors]


class _File(NamedTuple):
    """A ledger file found in the inputs and its size (what ``batches`` groups by)."""

    found: Found
    size: int


def _files(paths: Sequence[str | os.PathLike[str]]) -> list[_File]:
    """Return every file ``paths`` name with its size (0 when it cannot be read: it is read
    all the same, to a diagnostic, as ``load`` reads it). Raises ``UnreadableSourceError``
    for a path naming no file."""
    files = []
    for path in paths:
        for found in expand_found(os.fspath(path)):
            try:
                size = 0 if found.problem else os.stat(found.path).st_size
            except OSError:
                size = 0
            files.append(_File(found, size))
    return files


def _read(group: Sequence[_File]) -> Ledger:
    """Return a ledger of a batch of files (keys unique within the batch), a bar drawn while
    more than 64 MiB are read."""
    with progress(sum(file.size for file in group), BYTES_THRESHOLD, "reading",
                  unit="B") as step:
        logs = [log for file in group for log in file_sessions(read_file(
            file.found.path, reported_chunks(found_chunks(file.found, READ_BYTES), step)))]
    return Ledger(with_unique_keys(logs))


def _streams(file: _File) -> bool:
    """Return whether ``file`` is read as a stream: a dsh ledger over ``STREAM_BYTES``."""
    if file.size <= STREAM_BYTES:
        return False
    found, _ = file_format(found_chunks(file.found, 4096), path=file.found.path)
    return found.name == "dsh"


def _groups(files: Sequence[_File]) -> Iterator[_File | list[_File]]:
    """Yield the files in their order: each one to stream alone, the others in batches."""
    pending: list[_File] = []
    for file in files:
        if _streams(file):
            yield from batches(pending)
            pending = []
            yield file
        else:
            pending.append(file)
    yield from batches(pending)


def _send_streamed(file: _File, sink: SpanSink, summary: OtlpSummary, batch_spans: int) -> None:
    """Send the spans of one large file read in two streamed passes."""
    from ledgerviz.export.otlp_stream import stream_file

    streamed = stream_file(file.found, file.size, summary.policy)
    with progress(streamed.count, SPANS_THRESHOLD, "sending spans", unit="span") as step:
        summary.spans += send(streamed.spans, sink, summary.target, batch_spans, step)
    summary.sessions.append(streamed.key)
    if streamed.has_errors:
        summary.error_sessions.append(streamed.key)


def export_otlp(
    paths: Sequence[str | os.PathLike[str]],
    endpoint: str | None = None,
    *,
    output: str | os.PathLike[str] | None = None,
    policy: Policy = DEFAULT_POLICY,
    headers: Mapping[str, str] | None = None,
    batch_spans: int = BATCH_SPANS,
) -> OtlpSummary:
    """Export the ledger files ``paths`` name (files, folders, globs) as :func:`to_otlp`
    does, reading them 64 MiB (or 2,000 files) at a time; a dsh file larger than
    ``STREAM_BYTES`` is read in two streamed passes instead, in bounded memory, to the same
    spans. Raises ``UnreadableSourceError`` for a path naming no file; a file in a folder
    that cannot be read is a diagnostic."""
    files = _files(paths)
    target = traces_url(endpoint) if endpoint is not None else os.fspath(output or "")
    summary = OtlpSummary(target, policy)
    with span_exporter(endpoint, output, headers) as sink:
        for group in _groups(files):
            if isinstance(group, _File):
                _send_streamed(group, sink, summary, batch_spans)
            else:
                _send_ledger(_read(group), sink, summary, batch_spans)
    return summary
