"""OTLP/JSON lines: span records encoded directly, one ``ExportTraceServiceRequest`` per line,
as the OpenTelemetry Collector's ``otlpjsonfile`` receiver reads them.

OTLP/JSON is the protobuf JSON mapping with three differences (OTLP specification, "JSON
Protobuf Encoding"): trace and span ids are lowercase hex strings, not base64; enums are
integers; keys are lowerCamelCase. As in the mapping, 64-bit integers (times, ``intValue``)
are decimal strings, an ``AnyValue`` is an object with one of ``stringValue``,
``boolValue``, ``intValue``, ``doubleValue``, and fields at their default (0, "", empty)
are left out. The fields come in field-number order, as the SDK's encoder and
``json_format`` write them, so a line is byte for byte what they would make of the same
spans (``tests/test_otlp.py`` holds the two to each other), at a tenth of the cost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import IO, Any

import orjson

from ledgerviz.export.otlp_spans import SpanLink, SpanRecord

_INT64 = range(-(2**63), 2**63)
_HAS_IS_REMOTE, _IS_REMOTE = 0x100, 0x200
"""``SpanFlags`` bits: whether the parent (link target) is remote is known; it is remote."""
_NOT_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def any_value(value: Any) -> dict[str, Any]:
    """Return the OTLP/JSON ``AnyValue`` of an attribute value (str, bool, int or float).

    An int outside int64, which ``intValue`` cannot hold, is written as its decimal
    ``stringValue`` rather than lost. Raises TypeError for any other type.
    """
    kind = value.__class__
    if kind is str:
        return {"stringValue": value}
    if kind is bool:
        return {"boolValue": value}
    if kind is int:
        return {"intValue" if value in _INT64 else "stringValue": str(value)}
    if kind is float:
        return {"doubleValue": value if math.isfinite(value)
                else _NOT_FINITE.get(value, "NaN")}
    raise TypeError(f"an OTLP attribute value must be str, bool, int or float, not {value!r}")


def key_values(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return attributes as OTLP/JSON ``KeyValue`` objects, in their order."""
    return [{"key": key, "value": any_value(value)} for key, value in attributes.items()]


def _set(document: dict[str, Any], key: str, value: Any) -> None:
    """Add ``key`` unless ``value`` is the field's default (left out, as protobuf's JSON does)."""
    if value:
        document[key] = value


def _link(link: SpanLink) -> dict[str, Any]:
    document: dict[str, Any] = {"traceId": f"{link.trace_id:032x}",
                                "spanId": f"{link.span_id:016x}"}
    _set(document, "attributes", key_values(link.attributes))
    document["flags"] = _HAS_IS_REMOTE | _IS_REMOTE
    return document


def span_json(span: SpanRecord) -> dict[str, Any]:
    """Return one span as an OTLP/JSON ``Span`` object."""
    document: dict[str, Any] = {"traceId": f"{span.trace_id:032x}",
                                "spanId": f"{span.span_id:016x}"}
    if span.parent_id is not None:
        document["parentSpanId"] = f"{span.parent_id:016x}"
    _set(document, "name", span.name)
    _set(document, "kind", span.kind)
    _set(document, "startTimeUnixNano", span.start and str(span.start))
    _set(document, "endTimeUnixNano", span.end and str(span.end))
    _set(document, "attributes", key_values(span.attributes))
    _set(document, "links", [_link(link) for link in span.links])
    status: dict[str, Any] = {}
    _set(status, "message", span.message)
    _set(status, "code", span.status)
    document["status"] = status
    document["flags"] = _HAS_IS_REMOTE
    return document


class OtlpJson:
    """Writes batches of spans to an open binary file, one OTLP/JSON line each, under one
    resource and instrumentation scope."""

    def __init__(self, stream: IO[bytes], resource: Mapping[str, Any],
                 scope: tuple[str, str]) -> None:
        self._stream = stream
        self._resource = {"attributes": key_values(resource)} if resource else {}
        self._scope = {"name": scope[0], "version": scope[1]}

    def encode(self, spans: Sequence[SpanRecord]) -> bytes:
        """Return one OTLP/JSON line (an ``ExportTraceServiceRequest``) holding ``spans``."""
        if not spans:
            return b"{}\n"
        scope_spans = {"scope": self._scope, "spans": [span_json(span) for span in spans]}
        return orjson.dumps({"resourceSpans": [
            {"resource": self._resource, "scopeSpans": [scope_spans]}]}) + b"\n"

    def __call__(self, spans: Sequence[SpanRecord]) -> bool:
        """Write ``spans`` as one line; an OSError propagates (the file is the user's)."""
        self._stream.write(self.encode(spans))
        return True
