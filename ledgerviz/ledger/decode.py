"""Decode the event lines of one ledger file: values, or ``UNREADABLE`` with a diagnostic."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import orjson

from ledgerviz.ledger.diagnostics import DiagnosticSink, PendingDiagnostics, torn_tail_message
from ledgerviz.ledger.duplicates import may_repeat_keys, repeated_keys
from ledgerviz.ledger.numbers import exact_loads, holds_big_integer, may_hold_big_integers

BIG_INTEGER = "holds an integer beyond 64 bits: kept exact"
"""What a ``big_integer`` warning says."""
RUNTIME_BIG_INTEGER = f"{BIG_INTEGER} (the runtime never writes one)"
"""What it says of a dsh ledger's line."""

UNREADABLE: Any = object()
"""Stands in for a line that did not decode."""

_LONG_DIGITS = re.compile(rb"[0-9]{19,}")
"""A run of digits that may be an integer beyond 64 bits (``numbers.may_hold_big_integers``)."""


def describe_undecodable(raw: bytes, error: Exception) -> tuple[str, str]:
    """Return ``(kind, message)`` for a line orjson refused: bad UTF-8 or bad JSON."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return "invalid_utf8", f"byte {bad.start + 1} of the line is not valid UTF-8"
    return "invalid_json", f"not valid JSON: {error}"


def decode_lines(
    raw_lines: Sequence[bytes],
    first_line: int,
    log: DiagnosticSink,
    *,
    last_may_be_torn: bool,
    big_integers: bool = False,
    big_integer: str = RUNTIME_BIG_INTEGER,
    duplicate_keys: bool = False,
    tail_size: int | None = None,
) -> list[Any]:
    """Return the decoded value of every line (``UNREADABLE`` where decoding failed).

    A failing final line is a torn tail when ``last_may_be_torn`` (``tail_size``: the size
    of a final line no newline ends, more than it holds when only its start is held; None:
    a newline ends it); other failures are
    recorded as ``blank_line`` (an error: the runtime stops reading there; a warning for the
    last line), ``invalid_utf8`` or ``invalid_json``. With
    ``big_integers`` (the file may hold integers beyond 64 bits, see ``numbers``) such
    lines are decoded exactly and flagged with a ``big_integer`` warning saying
    ``big_integer``. With
    ``duplicate_keys`` a key repeated within one object is a ``duplicate_key`` warning.
    """
    values = _decode_all(raw_lines, first_line, log, last_may_be_torn,
                         big_integer if big_integers else None, tail_size)
    if duplicate_keys:
        _warn_duplicate_keys(raw_lines, values, first_line, log)
    return values


def _warn_duplicate_keys(
    raw_lines: Sequence[bytes], values: list[Any], first_line: int, log: DiagnosticSink
) -> None:
    """Record every line holding an object with a repeated key."""
    for index, (raw, value) in enumerate(zip(raw_lines, values, strict=True)):
        if value is UNREADABLE or not may_repeat_keys(raw, value):
            continue
        keys = repeated_keys(raw)
        if keys:
            named = ", ".join(repr(key) for key in keys)
            which = "key" if len(keys) == 1 else "keys"
            message = f"{which} {named} repeated within one object: the last value is used"
            log.add(first_line + index, "duplicate_key", message, "warning")


def _decode_all(
    raw_lines: Sequence[bytes],
    first_line: int,
    log: DiagnosticSink,
    last_may_be_torn: bool,
    big_integer: str | None,
    tail_size: int | None,
) -> list[Any]:
    """Return the decoded lines (see ``decode_lines``; ``big_integer`` None: the lines hold
    no integer beyond 64 bits)."""
    loads = orjson.loads
    if big_integer is None:
        try:
            return list(map(loads, raw_lines))
        except orjson.JSONDecodeError:
            pass
    values: list[Any] = []
    last = len(raw_lines) - 1
    for index, raw in enumerate(raw_lines):
        if not raw or raw.isspace():  # never JSON: not handed to the decoder to fail
            values.append(UNREADABLE)
            severity = "warning" if index == last and last_may_be_torn else "error"
            log.add(first_line + index, "blank_line", "empty line between events", severity)
            continue
        try:
            if big_integer is not None and may_hold_big_integers(raw):
                values.append(exact_value(raw, first_line + index, log, big_integer))
            else:
                values.append(loads(raw))
            continue
        except ValueError as error:  # orjson.JSONDecodeError is one
            values.append(UNREADABLE)
            line = first_line + index
            if index == last and last_may_be_torn:
                message = torn_tail_message(len(raw) if tail_size is None else tail_size,
                                            no_newline=tail_size is not None, no_json=True)
                log.add(line, "torn_tail", message, "warning")
            else:
                log.add(line, *describe_undecodable(raw, error))
    return values


def exact_again(raw: bytes) -> Any:
    """Return the exact value of a line a reader decodes a second time, one that held an
    integer beyond 64 bits when first read (its warning given then); raise ValueError if
    it no longer decodes."""
    return exact_value(raw, 0, PendingDiagnostics())


def exact_value(raw: bytes, line: int, log: DiagnosticSink, message: str = BIG_INTEGER) -> Any:
    """Return the exact value of a line that may hold a big integer, with a ``big_integer``
    warning saying ``message`` if it does; raise ValueError (orjson's error where it names
    the problem) if the line is invalid.

    orjson decides validity (it refuses lone surrogates, which the standard library
    accepts), judging the line with every run of 19 digits or more read as ``0``: it reads
    an integer beyond 64 bits as a double, so it refuses one beyond a double's range, which
    is valid JSON. The standard library then gives the exact integers.
    """
    try:
        fast = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        try:
            orjson.loads(_LONG_DIGITS.sub(b"0", raw))
        except orjson.JSONDecodeError:
            raise error from None
        fast = UNREADABLE  # an integer beyond a double: valid, and kept exact below
    value = exact_loads(raw)
    if fast is not UNREADABLE and not holds_big_integer(value):
        return fast
    log.add(line, "big_integer", message, "warning")
    return value
