"""Trace and span ids derived from what a ledger records, so that a re-export never duplicates.

A session's trace id hashes its session id; a span id hashes the session id and the span's
key (``turn/<n>``, ``step/<n>/<m>``, ``call/<requested seq>/<call id>``). Exporting the same
session twice, from any machine, gives the same ids: a backend that keys spans by id stores
them once. Stdlib only.
"""

from __future__ import annotations

from hashlib import blake2b

_TRACE = b"ledgerviz/trace\0"
_SPAN = b"ledgerviz/span\0"


def trace_id(session_id: str) -> int:
    """Return the 128-bit trace id of a session (never 0, which OTLP reserves for none)."""
    digest = blake2b(_TRACE + session_id.encode("utf-8", "surrogatepass"), digest_size=16)
    return int.from_bytes(digest.digest()) or 1


def span_id(session_id: str, key: str) -> int:
    """Return the 64-bit id of the span ``key`` of a session (never 0)."""
    text = f"{session_id}\0{key}".encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(_SPAN + text, digest_size=8).digest()) or 1


def turn_key(turn: object) -> str:
    """Return the span key of turn ``turn`` (its number as recorded)."""
    return f"turn/{turn}"


def step_key(turn: object, step: object) -> str:
    """Return the span key of step ``step`` of turn ``turn``."""
    return f"step/{turn}/{step}"


def call_key(requested_seq: object, call_id: object) -> str:
    """Return the span key of a tool call: the seq of the assistant message that requested it,
    and its call id."""
    return f"call/{requested_seq}/{call_id}"
