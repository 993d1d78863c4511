"""Check the decoded events of one ledger file: envelopes, payload shapes, numbering and calls."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from ledgerviz.ledger.boundaries import BOUNDARY_TYPES, TURN_BOUNDARIES, OpenBoundaries
from ledgerviz.ledger.call_ids import CallIds
from ledgerviz.ledger.decode import UNREADABLE
from ledgerviz.ledger.diagnostics import DiagnosticSink
from ledgerviz.ledger.fields import EventFields, concatenated
from ledgerviz.ledger.packed import expand_packed_row
from ledgerviz.ledger.shapes import (
    FAST_PAYLOAD_CHECKS,
    MAX_INTEGER,
    MIN_INTEGER,
    SUSPECT,
    integer_problem,
    json_type,
    payload_problem,
    plain_source_seqs,
    repair_scan_problem,
    shape_warning,
    surface_fields_problem,
)
from ledgerviz.ledger.vocabulary import (
    CHUNK_EVENT,
    KNOWN_EVENT_TYPES,
    PACKED_CHUNK_ROWS,
    surface_types,
)


def requested_call_ids(data: dict[str, Any]) -> Iterator[str]:
    """Yield the ids of the tool-call blocks of an ``assistant/message`` payload."""
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool-call":
                yield block.get("id")


def result_call_id(data: dict[str, Any]) -> str | None:
    """Return the call id a ``tool/result`` payload answers (either message shape)."""
    message = data.get("message")
    if not isinstance(message, dict):
        return None
    source = message.get("source")
    if isinstance(source, dict) and isinstance(source.get("callId"), str):
        return source["callId"]
    if isinstance(message.get("toolCallId"), str):
        return message["toolCallId"]
    content = message.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        wrapped = content[0].get("toolCallId")
        return wrapped if isinstance(wrapped, str) else None
    return None


def _envelope_problem(event: dict[str, Any]) -> str:
    """Return what is wrong with an envelope that failed the fast shape test."""
    kind = event.get("type")
    if not isinstance(kind, str):
        return f"'type' must be a string, not {json_type(kind)}"
    if not isinstance(event.get("data"), dict):
        return f"{kind}: 'data' must be an object, not {json_type(event.get('data'))}"
    problem = integer_problem("seq", event["seq"]) if "seq" in event else None
    if problem is None and event.get("time") is not None:
        problem = integer_problem("time", event["time"])
    return f"{kind}: {problem}"


class CheckState:
    """What checking a file's next block of lines needs from the blocks before it."""

    __slots__ = ("answered", "boundaries", "dispatched", "kept", "numbered", "numbering",
                 "requested", "runtime")

    def __init__(self, *, runtime: bool = False, compact_ids: bool = False) -> None:
        self.runtime = runtime
        """Read as the runtime does (``runtime_read``): an event without ``seq`` is unusable,
        and one whose payload only ledgerviz cannot read is kept."""
        self.boundaries = OpenBoundaries()
        """The turn and step open after the blocks checked so far."""
        self.requested: set[str] | CallIds = CallIds() if compact_ids else set()
        """Every call id an assistant message has requested so far (``compact_ids``: held
        as ``CallIds``, for a reader that keeps nothing else of a file's events)."""
        self.dispatched: set[str] = set()
        """Every call id a ``tool/call`` has dispatched in the open turn (the runtime pairs
        by id within a step; kept per turn, the memory of a streamed check stays bounded)."""
        self.answered: set[str] = set()
        """Every call id an appended ``tool/result`` has answered in the open turn."""
        self.numbering = Numbering()
        """The seq numbering so far (the seq the next event should have)."""
        self.kept = 0
        """How many usable events the blocks checked so far gave."""
        self.numbered = False
        """Whether an event so far had a ``seq``: a raw log, not a normalised snapshot."""


class CheckedEvents(NamedTuple):
    """The usable events of one file, their columns and file lines, and how many lines gave none."""

    events: list[dict[str, Any]]
    fields: EventFields
    lines: Sequence[int]
    rejected: int


def check_events(
    values: list[Any],
    first_line: int,
    version: int | None,
    log: DiagnosticSink,
    state: CheckState | None = None,
) -> CheckedEvents:
    """Return the usable events of decoded lines, their columns and lines (one pass).

    Events whose envelope cannot be used (not an object, non-string ``type``,
    non-object ``data``, non-integer ``seq``/``time``) are dropped; every other
    problem is recorded and the event kept as decoded. A file checked in blocks
    passes the same ``state`` to each block's check, so it gets exactly the
    diagnostics it gets when checked whole.

    Each event is visited once: a fast test accepts the shapes well-formed events
    have, and only an event it does not accept goes through ``shape_problem``, which
    decides and says what is wrong. The seq numbering is followed inline while seqs
    count up by one (``Numbering`` takes over at a break).
    """
    state = CheckState() if state is None else state
    table = _kind_table(version)
    requested = state.requested
    start = state.kept
    rejected: set[int] = set()
    expanded: dict[int, list[dict[str, Any]]] = {}
    # The columns of EventFields, appended here so that the dicts are visited once.
    fields = EventFields.empty()
    add_type, add_seq, add_data, add_time, add_turn, add_step, add_op = fields.appenders()
    kept_types = fields.types
    strings: dict[str, str] = {}
    shared = strings.setdefault  # one str object per unknown type name and op (see EventFields)
    numbering = state.numbering
    boundary = state.boundaries.see
    expected = numbering.expected  # moved on inline while seqs count up by one
    numbered = state.numbered
    for index, event in enumerate(values):
        if event.__class__ is not dict:
            if event is not UNREADABLE:
                message = f"an event must be an object, not {json_type(event)}"
                log.add(first_line + index, "invalid_event", message)
            rejected.add(index)
            continue
        kind = event.get("type")
        entry = table.get(kind) if kind.__class__ is str else _NOT_A_TYPE
        known = entry is not None
        if not known:
            entry = (shared(kind, kind), None, False)
        name, check, surface = entry
        if check is _SPECIAL:
            numbering.ran_to(expected)
            if kind == "session":
                _second_header(log, first_line + index, event)
                rejected.add(index)
            else:
                chunks = _packed_events(event, first_line + index, log, numbering)
                if chunks is None:
                    rejected.add(index)
                else:
                    if CHUNK_EVENT not in table:
                        _unknown_type(log, first_line + index, CHUNK_EVENT, False)
                    expanded[index] = chunks
                    fields.extend(chunks, start + len(fields))
            expected = numbering.expected
            continue
        data = event.get("data")
        seq = event.get("seq", _MISSING)
        has_seq = seq is not _MISSING
        if has_seq:
            numbered = True
        else:
            if name is not None and state.runtime:
                log.add(first_line + index, "invalid_event", f"{kind}: {NO_SEQ}")
                rejected.add(index)
                continue
            if name is not None and numbered:  # a raw log, where every event has one
                log.add(first_line + index, "missing_seq",
                        f"{kind}: numbered by its position, but {NO_SEQ}")
            seq = expected
        time = event.get("time")
        if not _usable_envelope(name, data, seq, time):
            if _read_integral_floats(event, ("seq", "time"), "", first_line + index, log):
                seq, time = event.get("seq", seq), event.get("time")
            if not _usable_envelope(name, data, seq, time):
                log.add(first_line + index, "invalid_event", _envelope_problem(event))
                rejected.add(index)
                continue
        turn = data.get("turn")
        step = data.get("step")
        payload = check(data) if check is not None else None
        op = event.get("surfaceOp", _MISSING)
        seqs = event.get("sourceEventSeqs", _MISSING)
        if not (
            payload is not SUSPECT
            and (name == "user/message" or (
                (turn is None or (turn.__class__ is int and MIN_INTEGER <= turn <= MAX_INTEGER))
                and (step is None or (step.__class__ is int and MIN_INTEGER <= step <= MAX_INTEGER))
            ))
            and (op is _MISSING or op.__class__ is str)
            and (seqs is _MISSING or plain_source_seqs(seqs))
        ):
            line = first_line + index
            if name != "user/message" and _read_integral_floats(data, ("turn", "step"), "data.",
                                                                line, log):
                turn, step = data.get("turn"), data.get("step")
            problem = surface_fields_problem(event)
            if problem is not None:
                log.add(line, "invalid_event", f"{kind}: {problem}")
                rejected.add(index)
                continue
            problem = payload_problem(kind, data)
            if problem is not None and not _unusual_payload(
                kind, data, problem, line, log,
                state.runtime or payload_problem(kind, data, ids=False) is None,
            ):
                rejected.add(index)  # left out, but committed: its seq is in the numbering
                numbering.ran_to(expected)
                numbering.see(log, line, seq)
                expected = numbering.expected
                continue
            warning = shape_warning(data) if name in _CARRY_MESSAGES else None
            if warning is not None:
                log.add(line, "deep_arguments", f"{kind}: {warning}", "warning")
            payload = _BOUNDARY if name in BOUNDARY_TYPES else _RECHECK
        if name == "assistant/message" or name == "tool/result":
            _fails_repair_scan(kind, data, first_line + index, log)  # an error; still read
        if seq == expected:
            expected = seq + 1
        else:
            numbering.ran_to(expected)
            numbering.see(log, first_line + index, seq)
            expected = numbering.expected
        add_seq(seq if has_seq else start + len(kept_types))  # see EventFields.seqs
        add_type(name)
        add_data(data)
        add_time(time)
        add_turn(turn)
        add_step(step)
        if op is _MISSING:
            add_op(None)
        else:
            add_op(shared(op, op) if op.__class__ is str else op)
        if surface:
            if op != "append" and not (op.__class__ is dict and op.get("op") == "replace"):
                message = f"{kind}: 'surfaceOp' missing or not understood"
                log.add(first_line + index, "invalid_event", message)
            if name == "assistant/message":
                ids = ([i for i in requested_call_ids(data) if i.__class__ is str]
                       if payload is _RECHECK else payload)
                _note_requests(log, first_line + index, ids, requested)
            elif name == "tool/result":
                call_id = result_call_id(data) if payload is _RECHECK else payload
                _check_result(log, first_line + index, call_id, requested)
                if op == "append" and call_id is not None:
                    _note_call(log, first_line + index, call_id, state.answered, "answers")
        elif not known:
            _unknown_type(log, first_line + index, kind, event.get("ignorable") is True)
        else:
            if op is not _MISSING or seqs is not _MISSING:
                log.add(first_line + index, "invalid_event", _not_surface(kind, version))
            if payload is _BOUNDARY:
                nested = boundary(name, turn, step, first_line + index)
                if nested is not None:
                    log.add(first_line + index, *nested, "warning")
                if name in TURN_BOUNDARIES:
                    state.dispatched.clear()
                    state.answered.clear()
            elif name == "tool/call":
                call_id = data.get("callId") if payload is _RECHECK else payload
                if call_id.__class__ is str:  # read as the runtime, a payload may be kept as is
                    _note_call(log, first_line + index, call_id, state.dispatched, "dispatches")
    numbering.ran_to(expected)
    state.kept += len(fields)
    state.numbered = numbered
    if not rejected and not expanded:
        return CheckedEvents(values, fields, range(first_line, first_line + len(values)), 0)
    events, lines = _usable(values, first_line, rejected, expanded)
    return CheckedEvents(events, fields, lines, len(rejected))


def joined_checks(parts: Sequence[CheckedEvents]) -> CheckedEvents:
    """Return the checked events of consecutive runs of lines as one (the part itself when one)."""
    if len(parts) == 1:
        return parts[0]
    events = concatenated(part.events for part in parts)
    fields = EventFields.joined([part.fields for part in parts])
    rejected = sum(part.rejected for part in parts)
    return CheckedEvents(events, fields, joined_lines([part.lines for part in parts]), rejected)


def joined_lines(parts: Sequence[Sequence[int]]) -> Sequence[int]:
    """Return the event lines of consecutive runs of lines as one: a range when every part
    is one (none rejected or expanded), else a list."""
    if len(parts) == 1:
        return parts[0]
    first, last = parts[0], parts[-1]
    if (isinstance(first, range) and isinstance(last, range)
            and all(isinstance(part, range) for part in parts)):
        return range(first.start, last.stop)
    return concatenated(parts)


_MISSING: Any = object()
"""Stands in for a key an event does not have."""

NO_SEQ = "no 'seq': the runtime stops reading at an event it cannot number (format §3)"


def _usable_envelope(name: Any, data: Any, seq: Any, time: Any) -> bool:
    """Return whether an envelope has a known type string, a data object and integer
    seq and time (time may be absent) the runtime could have written."""
    return (
        name is not None
        and data.__class__ is dict
        and seq.__class__ is int
        and (time is None or time.__class__ is int)
        and MIN_INTEGER <= seq <= MAX_INTEGER
        and (time is None or MIN_INTEGER <= time <= MAX_INTEGER)
    )


def _read_integral_floats(
    container: dict[str, Any], keys: tuple[str, ...], label: str, line: int, log: DiagnosticSink
) -> bool:
    """Replace each of ``keys`` written as a whole float (``4.0``, ``4e0``) by the integer
    the runtime reads (JavaScript has one number type); return whether any was."""
    changed = False
    for key in keys:
        value = container.get(key)
        if value.__class__ is float and value.is_integer() and abs(value) <= MAX_INTEGER:
            container[key] = int(value)
            message = (f"'{label}{key}' written as {value!r}: read as {int(value)}, as the "
                       "runtime reads it (JSON numbers have no integer type)")
            log.add(line, "integer_as_float", message, "warning")
            changed = True
    return changed


def _unusual_payload(kind: str, data: dict[str, Any], problem: str, line: int,
                     log: DiagnosticSink, keep: bool) -> bool:
    """Record a payload the runtime reads as it is (a warning); return whether the event is
    kept (``keep``: read as the runtime, or only a call id is odd; else left out of the
    frames, which cannot read it)."""
    if _fails_repair_scan(kind, data, line, log):
        return False
    where = "kept as the runtime reads it" if keep else "left out of the frames"
    message = f"{kind}: {problem}; the runtime reads this line as it is ({where})"
    log.add(line, "unusual_payload", message, "warning")
    return keep


def _fails_repair_scan(kind: str, data: dict[str, Any], line: int, log: DiagnosticSink) -> bool:
    """Record (an error) a payload the runtime's repair scan fails on; return whether it does."""
    problem = repair_scan_problem(kind, data)
    if problem is None:
        return False
    message = (f"{kind}: {problem}: the runtime's crash-repair scan fails on it, so the "
               "runtime refuses to open this log")
    log.add(line, "unopenable_event", message)
    return True

_CARRY_MESSAGES = frozenset(
    {"assistant/message", "system/message", "developer/message", "user/message", "tool/result"})
"""The event types whose payload holds a message (``user/message``: is one)."""

_RECHECK: Any = object()
"""The payload passed ``shape_problem`` but not the fast test: its call ids are read again."""

_BOUNDARY: Any = object()
"""The payload check's answer for a turn or step boundary (see ``boundaries``)."""


PayloadCheck = Callable[[dict[str, Any]], Any]


def _boundary_check(check: PayloadCheck | None) -> PayloadCheck:
    """Return the payload check of a boundary type: ``check``'s SUSPECT, else _BOUNDARY."""
    if check is None:
        return lambda data: _BOUNDARY
    return lambda data: SUSPECT if check(data) is SUSPECT else _BOUNDARY


_SPECIAL: Any = object()
"""The check of a line that is no plain event: a session header, a packed chunk row."""

KindEntry = tuple[Any, Any, bool]
"""Per event type: the shared type string (None: not a string), the fast payload check,
whether it is a surface type in the version."""

_NOT_A_TYPE: KindEntry = (None, None, False)

_KIND_TABLES: dict[int | None, dict[str, KindEntry]] = {}


def _kind_table(version: int | None) -> dict[str, KindEntry]:
    """Return what checking needs per known event type in ``version`` (built once)."""
    table = _KIND_TABLES.get(version)
    if table is None:
        surface = surface_types(version)
        known = KNOWN_EVENT_TYPES | surface
        if version is not None and version >= 2:
            known = known - {CHUNK_EVENT}
        table = {kind: (kind, FAST_PAYLOAD_CHECKS.get(kind), kind in surface)
                 for kind in known}
        table.update({kind: (kind, _boundary_check(FAST_PAYLOAD_CHECKS.get(kind)), False)
                      for kind in BOUNDARY_TYPES})
        special = ("session", *PACKED_CHUNK_ROWS)
        table.update({kind: (kind, _SPECIAL, False) for kind in special})
        table = _KIND_TABLES[version] = table
    return table


def _packed_events(
    row: dict[str, Any], line: int, log: DiagnosticSink, numbering: Numbering
) -> list[dict[str, Any]] | None:
    """Return the chunk events of a packed row, numbered, or None (recorded) if malformed."""
    chunks = expand_packed_row(row)
    if isinstance(chunks, str):
        log.add(line, "invalid_event", chunks)
        return None
    numbering.see(log, line, chunks[0].get("seq", numbering.expected), len(chunks))
    return chunks


def _usable(
    values: list[Any],
    first_line: int,
    rejected: set[int],
    expanded: dict[int, list[dict[str, Any]]],
) -> tuple[list[dict[str, Any]], list[int]]:
    """Return the kept events (packed rows replaced by their chunks) and their file lines."""
    events: list[dict[str, Any]] = []
    lines: list[int] = []
    for index, event in enumerate(values):
        if index in rejected:
            continue
        chunks = expanded.get(index, [event])
        events.extend(chunks)
        lines.extend([first_line + index] * len(chunks))
    return events, lines


def _not_surface(kind: str, version: int | None) -> str:
    """Return the message for surface fields on an event type that has none in ``version``."""
    return f"{kind} carries surface fields but is not a surface type in version {version}"


def _unknown_type(log: DiagnosticSink, line: int, kind: str, ignorable: bool) -> None:
    """Record an event type the reader does not know (an info when marked ignorable)."""
    if ignorable:
        log.add(line, "unknown_ignorable_event", f"unknown type {kind!r} kept", "info")
    else:
        log.add(line, "unknown_required_event", f"unknown type {kind!r} not ignorable")


def _second_header(log: DiagnosticSink, line: int, event: dict[str, Any]) -> None:
    """Record a session header found after line 1 (two ledgers run together?)."""
    found = event.get("id")
    named = f" (id {found!r})" if isinstance(found, str) else ""
    log.add(
        line,
        "second_header",
        f"a second session header{named} in the middle of the file: two ledgers "
        "concatenated? Only the first header counts",
    )


class Numbering:
    """Follows the seq numbering of a file and records each break in it once.

    A forward jump says how many seqs are missing; a seq that repeats or goes back is
    reported once, and the events that then count on from it (a second ledger run into
    the first, a replayed stretch) are not reported again, nor is the return to the
    expected numbering after one stray seq taken for a gap.
    """

    __slots__ = ("expected", "repeat_end")

    def __init__(self) -> None:
        self.expected = 0
        """The seq the next event should have."""
        self.repeat_end: int | None = None
        """The last seq of the repeated stretch being followed (None outside one)."""

    def ran_to(self, expected: int) -> None:
        """Take the seqs before ``expected`` as counted in order, without ``see``."""
        if expected != self.expected:
            self.expected = expected
            self.repeat_end = None

    def see(self, log: DiagnosticSink, line: int, seq: int, count: int = 1) -> None:
        """Take the next ``count`` seqs, starting at ``seq``, found on ``line``."""
        expected = self.expected
        if seq < expected:
            if self.repeat_end is None or seq != self.repeat_end + 1:
                message = f"seq {seq} repeats or goes backwards (expected {expected})"
                log.add(line, "seq_gap", message)
            self.repeat_end = seq + count - 1
        else:
            if seq > expected:
                message = f"expected seq {expected}, found {seq}: {seq - expected} missing"
                log.add(line, "seq_gap", message)
            self.repeat_end = None
        self.expected = max(expected, seq + count)


def _note_requests(
    log: DiagnosticSink, line: int, ids: list[str], requested: set[str] | CallIds
) -> None:
    """Take the call ids an assistant message requests; warn of those requested before (or
    twice in it): the runtime pairs by id, so a repeated id makes one call of two."""
    again = [call_id for call_id in ids if call_id in requested]
    if len(ids) > 1 and len(set(ids)) < len(ids):
        again += [call_id for call_id in dict.fromkeys(ids) if ids.count(call_id) > 1]
    requested.update(ids)
    if again:
        named = ", ".join(map(repr, dict.fromkeys(again)))
        log.add(line, "repeated_call", f"assistant/message requests {named} again", "warning")


def _note_call(log: DiagnosticSink, line: int, call_id: str, seen: set[str], verb: str) -> None:
    """Take a call id a ``tool/call`` dispatches or an appended ``tool/result`` answers
    (``verb``); warn when it did so before."""
    if call_id in seen:
        kind = "tool/call" if verb == "dispatches" else "tool/result"
        log.add(line, "repeated_call", f"{kind} {verb} call {call_id!r} again", "warning")
    else:
        seen.add(call_id)


def _check_result(
    log: DiagnosticSink, line: int, call_id: str | None, requested: set[str] | CallIds
) -> None:
    """Record a ``tool/result`` that names no call, or a call no assistant message requested."""
    if call_id is None:
        log.add(line, "orphan_result", "tool/result names no call id")
    elif call_id not in requested:
        log.add(line, "orphan_result", f"tool/result answers call {call_id!r}, never requested")
