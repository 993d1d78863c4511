"""Span records as the OpenTelemetry SDK's ``ReadableSpan``s, for its OTLP/HTTP exporter
(``--endpoint``): the SDK encodes and sends them as protobuf."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from ledgerviz.export.otlp_spans import CLIENT, ERROR, SpanRecord

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def readable_span(span: SpanRecord, resource: Resource, scope: InstrumentationScope
                  ) -> ReadableSpan:
    """Return ``span`` as a ``ReadableSpan`` of ``resource`` and ``scope``."""
    def context(span_id: int, remote: bool = False) -> SpanContext:
        return SpanContext(span.trace_id, span_id, is_remote=remote, trace_flags=_SAMPLED)

    links = [Link(SpanContext(link.trace_id, link.span_id, is_remote=True,
                              trace_flags=_SAMPLED), link.attributes) for link in span.links]
    return ReadableSpan(
        span.name,
        context=context(span.span_id),
        parent=None if span.parent_id is None else context(span.parent_id),
        resource=resource,
        attributes=span.attributes,
        links=links,
        kind=SpanKind.CLIENT if span.kind == CLIENT else SpanKind.INTERNAL,
        status=Status(StatusCode(span.status), span.message if span.status == ERROR else None),
        start_time=span.start,
        end_time=span.end,
        instrumentation_scope=scope,
    )


class SdkSpans:
    """Sends batches of span records through an SDK span exporter."""

    def __init__(self, exporter: SpanExporter, resource: Resource,
                 scope: InstrumentationScope) -> None:
        self._exporter, self._resource, self._scope = exporter, resource, scope

    def __call__(self, spans: Sequence[SpanRecord]) -> bool:
        """Export ``spans``; return whether the exporter delivered them."""
        readable = [readable_span(span, self._resource, self._scope) for span in spans]
        return self._exporter.export(readable) is SpanExportResult.SUCCESS
