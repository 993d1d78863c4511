"""OTLP/JSON files: spans encoded by the OTLP exporters' own protobuf encoder, one request per
line, as the OpenTelemetry Collector's ``otlpjsonfile`` receiver reads them.

OTLP/JSON is the protobuf JSON mapping with three differences (OTLP specification,
"JSON Protobuf Encoding"): trace and span ids are hex strings, not base64; enums are
integers; field names are lowerCamelCase. ``json_format`` does the mapping and
:func:`hex_ids` the first difference.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import IO, Any

import orjson
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def encode_line(spans: Sequence[ReadableSpan]) -> bytes:
    """Return one OTLP/JSON line (an ``ExportTraceServiceRequest``) holding ``spans``."""
    document = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource_spans in document.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                hex_ids(span)
                for link in span.get("links", ()):
                    hex_ids(link)
    return orjson.dumps(document) + b"\n"


def hex_ids(message: dict[str, Any]) -> None:
    """Rewrite the base64 ids of one span or link dict as OTLP/JSON's hex, in place."""
    for field in _ID_FIELDS:
        if field in message:
            message[field] = base64.b64decode(message[field]).hex()


class OtlpJsonFileExporter(SpanExporter):
    """A span exporter that appends each batch to an open binary file as one OTLP/JSON line."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write ``spans`` as one line; an OSError propagates (the file is the user's)."""
        self._stream.write(encode_line(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Flush what was written (the caller owns and closes the file)."""
        self._stream.flush()
