"""Read and check the header line of a ledger file."""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from ledgerviz.ledger.decode import describe_undecodable
from ledgerviz.ledger.diagnostics import DiagnosticLog
from ledgerviz.ledger.schema import HEADER_FIELDS
from ledgerviz.ledger.shapes import type_problem
from ledgerviz.ledger.vocabulary import HEADER_KEYS, KNOWN_VERSIONS


class Header(NamedTuple):
    """What line 1 says: the header dict, its version, whether events may be read."""

    fields: dict[str, Any]
    version: int | None
    readable: bool
    line_is_event: bool


def read_header(raw: bytes, log: DiagnosticLog) -> Header:
    """Return the parsed header of line 1, recording every problem with it."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        kind, message = describe_undecodable(raw, error)
        log.add(1, "bad_header", f"line 1 should be the session header: {kind}: {message}")
        return Header({}, None, True, False)
    if not isinstance(value, dict) or value.get("type") != "session":
        looks_like_event = isinstance(value, dict) and isinstance(value.get("type"), str)
        found = f"a {value['type']!r} event" if looks_like_event else "no session header"
        log.add(1, "bad_header", f"missing session header: line 1 holds {found}")
        return Header({}, None, True, looks_like_event)
    value = _typed_fields(value, log)
    for key in sorted(set(value) - HEADER_KEYS):
        message = f"header key {key!r} is not in any known version: the runtime refuses the log"
        log.add(1, "unknown_header_key", message)
    if "version" not in value:
        log.add(1, "missing_version", "header has no 'version': read as v0", "info")
        return Header(value, None, True, False)
    version = value["version"]
    if type(version) is not int or version not in KNOWN_VERSIONS:
        known = ", ".join(str(v) for v in sorted(KNOWN_VERSIONS))
        log.add(
            1,
            "unsupported_version",
            f"format version {version!r} is not supported (known: {known}); events not read",
        )
        return Header(value, None, False, False)
    return Header(value, version, True, False)


REQUIRED_KEYS = ("id", "createdAt")
"""Header keys every version has (format §2)."""


def _typed_fields(header: dict[str, Any], log: DiagnosticLog) -> dict[str, Any]:
    """Return the header without the keys whose value is not of their declared type
    (``schema.HEADER_FIELDS``; the version is judged apart), each one an error."""
    for key in REQUIRED_KEYS:
        if key not in header:
            log.add(1, "bad_header", f"header has no '{key}'")
    wrong = [key for key, expected in HEADER_FIELDS.items()
             if key in header and key != "version"
             and type_problem(key, header[key], expected) is not None]
    for key in wrong:
        problem = type_problem(key, header[key], HEADER_FIELDS[key])
        log.add(1, "bad_header", f"header {problem}: ignored")
    return {key: item for key, item in header.items() if key not in wrong} if wrong else header
