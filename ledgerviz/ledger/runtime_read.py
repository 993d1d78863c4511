"""What the runtime's recoverable reader makes of a file (format §1.2), to append safely.

The runtime reads a log up to its first unusable line (one that does not parse, has a
malformed envelope or breaks the seq numbering) and refuses the whole log when a later
line holds a ``turn/end``, the proof that the damaged region had been committed. It
never uses a last line without a newline. Anything appended to the file must therefore
come after the bytes the runtime uses; :func:`runtime_read` says which bytes those are.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ledgerviz.ledger.diagnostics import Diagnostic
from ledgerviz.ledger.session import SessionLog

STOP_KINDS = frozenset(
    {"invalid_json", "invalid_utf8", "blank_line", "invalid_event", "seq_gap", "second_header"}
)
"""Line diagnostics after which the runtime's recoverable reader uses nothing."""

TAIL_KINDS = frozenset({"torn_tail"})
"""Diagnostics of a last line the runtime drops silently (and that must be cut)."""

_NEWLINE = re.compile(b"\n")


class Fragment(NamedTuple):
    """Bytes at the end of a file that must be cut before anything is appended."""

    line: int
    """The 1-based line it starts on."""
    offset: int
    """Its byte offset: the file's size once it is cut."""
    size: int
    """How many bytes it holds (to the end of the file)."""


class RuntimeRead(NamedTuple):
    """The events the runtime would use, where it stops, and what must be cut."""

    events: list[dict[str, Any]]
    stop: Diagnostic | None
    """The first line (after line 1) the runtime cannot use, if any."""
    refusal: str | None
    """Why the runtime would refuse the whole log (then nothing may be appended)."""
    cut: Fragment | None
    """The bytes to cut before appending (from ``stop``, or the torn last line)."""


def line_offsets(content: bytes) -> list[int]:
    """Return the byte offset of every line start of ``content`` (one more entry at EOF)."""
    offsets = [0, *(newline.end() for newline in _NEWLINE.finditer(content))]
    if offsets[-1] != len(content):
        offsets.append(len(content))
    return offsets


def runtime_read(log: SessionLog, content: bytes) -> RuntimeRead:
    """Return what the runtime's recoverable reader would use of ``log`` (read from ``content``)."""
    stop = next(
        (d for d in log.diagnostics if d.kind in STOP_KINDS and d.severity != "info"), None
    )
    tail = next((d for d in log.diagnostics if d.kind in TAIL_KINDS), None)
    lines = log.lines
    if stop is None:
        kept = log.events
    else:
        kept = [event for event, line in zip(log.events, lines, strict=True) if line < stop.line]
        committed = next(
            (line for event, line in zip(log.events, lines, strict=True)
             if line > stop.line and event.get("type") == "turn/end"),
            None,
        )
        if committed is not None:
            refusal = (
                f"line {stop.line}: {stop.message}; line {committed} after it holds a "
                "turn/end, so the damaged region had been committed: the runtime refuses "
                "this log (repair it by hand; nothing can be appended safely)"
            )
            return RuntimeRead(kept, stop, refusal, None)
    refusal = _refusal(log, stop)
    first_cut = stop or tail
    cut = None
    if first_cut is not None:
        offsets = line_offsets(content)
        offset = offsets[min(first_cut.line - 1, len(offsets) - 1)]
        cut = Fragment(first_cut.line, offset, len(content) - offset)
    return RuntimeRead(kept, stop, refusal, cut)


def _refusal(log: SessionLog, stop: Diagnostic | None) -> str | None:
    """Return why the runtime refuses the log outright (an error before ``stop``), or None."""
    for diagnostic in log.diagnostics:
        if diagnostic.severity != "error" or diagnostic.kind in STOP_KINDS:
            continue
        if stop is not None and diagnostic.line >= stop.line:
            continue
        return f"line {diagnostic.line}: {diagnostic.message} [{diagnostic.kind}]"
    if not log.header:
        return "line 1 is not a session header: the runtime refuses this log"
    return None
