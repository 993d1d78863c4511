"""The scan of a whole session whose every call settles inside its step, column at a time.

Most sessions are like that: each call a message requests has an id of its own, is
answered before its step closes (or its step is the last and never closes), no result
says its outcome is unknown, nothing is rewound, restored or replaced on the surface and
no turn ends interrupted or forked. For such a session the event-by-event scan
(``analyze._Scan.run``) does the same under every policy, and what it ends up holding can
be worked out from whole columns: the calls from the requested-call columns, each call's
answer (the first result naming it) and dispatch (the last tool/call naming it before
that) from the rows of the tool events, the surface from the rows that append to it (of
an event type the scan acts on: a type it does not know is log-only).
:func:`scan_settled` does that in a few passes in C and holds the calls as one list per
slot (:class:`SettledCalls`), not a list per call. It declines (returns False, having
changed nothing) as soon as a condition fails; the caller then runs the event-by-event
scan, so the result never depends on which of the two ran.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_, is_not, lt
from typing import TYPE_CHECKING, Any, NamedTuple

from ledgerviz.recovery.columns import EngineColumns
from ledgerviz.recovery.events import Event, data_of
from ledgerviz.recovery.scan_codes import (
    _ASSISTANT_KIND,
    _CALL_KIND,
    _CODE,
    _DISPATCHED,
    _IS_ERROR,
    _KINDS,
    _RESTORE_KIND,
    _RESULT,
    _RESULT_KIND,
    _RESULT_SEQ,
    _REWIND_KIND,
    _STEP_END_KIND,
    _TURN_END_KIND,
    _TURN_START_KIND,
)
from ledgerviz.recovery.vocab import MISSING, RECOVERY_CODES, SYNTHETIC_END_KINDS, UNKNOWN_CODE

if TYPE_CHECKING:
    from ledgerviz.recovery.analyze import _Scan


@dataclass(frozen=True, slots=True)
class SettledCalls:
    """A settled scan's calls, one list per slot of the scan's call layout (``scan_codes``;
    the id, name and arguments lists are the columns' own ``requests`` lists, not copied),
    and the calls still open at the end as the scan's own lists by position (the closers
    may answer them)."""

    slots: list[list[Any]]
    open: dict[int, list[Any]]

    def final(self) -> list[list[Any]]:
        """Return the slots with the open calls' values as they are now."""
        for position, call in self.open.items():
            for slot in (_DISPATCHED, _RESULT, _RESULT_SEQ, _CODE, _IS_ERROR):
                self.slots[slot][position] = call[slot]
        return self.slots

    def __len__(self) -> int:
        return len(self.slots[0])


def _closing_table() -> bytes:
    """Return the ``bytes.translate`` table giving 1 for the actions that close a step."""
    table = bytearray(256)
    for kind in (_STEP_END_KIND, _TURN_START_KIND, _TURN_END_KIND):
        table[kind] = 1
    return bytes(table)


_CLOSING = _closing_table()
_TOOL = bytes(kind in (_RESULT_KIND, _CALL_KIND) for kind in range(256))
_IS_RESULT = bytes(kind == _RESULT_KIND for kind in range(256))
_ASSISTANT = bytes([_ASSISTANT_KIND])


def _actions(columns: EngineColumns) -> bytes | None:
    """Return each row's scan action as one byte (``scan_codes``' kinds, 0: none), or
    None when the type codes are not an ``array`` of codes below 256."""
    codes, names = columns.type_code, columns.type_names
    if not isinstance(codes, array) or len(names) > 256:
        return None
    table = bytearray(256)
    for code, name in enumerate(names):
        table[code] = _KINDS.get(name, 0)
    if codes.itemsize == 1:
        raw = codes.tobytes()
    elif codes.typecode == "H" and sys.byteorder == "little":
        raw = codes.tobytes()[::2]  # every code is below 256: its high byte is zero
    else:
        raw = bytes(array("B", codes))
    return raw.translate(table)


def scan_settled(scan: _Scan, columns: EngineColumns, events: Sequence[Event]) -> bool:
    """Give the fresh ``scan`` the state the event-by-event scan of every row of
    ``columns`` would leave, and return True; return False, ``scan`` untouched, when the
    session is not one whose calls all settle inside their steps (see the module)."""
    found = _settled_calls(columns)
    if found is None:
        return False
    actions, slots = found.actions, found.slots
    scan.seqs.extend(columns.seq)
    scan.surface.slots.extend(compress(range(len(actions)),
                                       _on_surface(actions, columns.surface_op.tobytes())))
    scan.out.take(events, 0, len(actions))
    _result_marks(scan, found, columns.synthetic)
    calls = SettledCalls(slots, {})
    for position in found.open_positions:  # after the last step closed: the step still open
        call = [slot[position] for slot in slots]
        calls.open[position] = scan.step_calls[call[0]] = scan.by_id[call[0]] = call
    scan.settled = calls
    _close_state(scan, columns, events, actions)
    return True


_ACTING = bytes(1) + bytes([1]) * 255


def _on_surface(actions: bytes, appended: bytes) -> bytes:
    """Return 1 for each row that appends to the surface (``appended``, 0 or 1 per row) and
    has a scan action, else 0 (a row of a type the scan does not know is log-only): the two
    masks and-ed as integers, in C."""
    acting = int.from_bytes(actions.translate(_ACTING), "little")
    return (int.from_bytes(appended, "little") & acting).to_bytes(len(actions), "little")


def _settled_calls(columns: EngineColumns) -> _Found | None:
    """Return what a settled session's scan needs (:class:`_Found`), or None when the
    session's calls do not all settle inside their steps."""
    actions = _actions(columns)
    ops, seq, requests = columns.surface_op, columns.seq, columns.requests
    if (actions is None or _REWIND_KIND in actions or _RESTORE_KIND in actions
            or not isinstance(ops, array) or ops.itemsize != 1
            or ops.tobytes().translate(None, b"\x00\x01") or MISSING in seq):
        return None
    ids, call_ids = requests.call_id, columns.call_id
    if not set(map(type, ids)) <= {str}:
        return None  # an id that is not a str (an array or object is no dict key)
    index = dict(zip(ids, range(len(ids)), strict=True))
    if len(index) != len(ids):
        return None  # a repeated id (a later call takes an earlier's place)
    asked = list(requests.row)
    if bytes(map(actions.__getitem__, asked)).strip(_ASSISTANT):
        return None
    turns, steps = list(map(columns.turn.__getitem__, asked)), list(map(columns.step.__getitem__,
                                                                         asked))
    if MISSING in turns or MISSING in steps:
        return None
    tool_rows = list(compress(range(len(actions)), actions.translate(_TOOL)))
    try:
        tool_calls = list(map(index.get, map(call_ids.__getitem__, tool_rows)))
    except TypeError:  # an id that is an array or object: its own key (``call_key``)
        return None
    is_result = bytes(map(actions.__getitem__, tool_rows)).translate(_IS_RESULT)
    unmatched = map(is_, tool_calls, repeat(None))
    if any(call_ids[row] is None for row in compress(tool_rows, unmatched)):
        return None  # a tool event without a call id in its column: the scan reads its dict
    result_rows = list(compress(tool_rows, is_result))
    codes = list(map(columns.error_code.__getitem__, result_rows))
    if UNKNOWN_CODE in codes or not _ends_plainly(columns, actions):
        return None
    # each call's answer is the first result naming it, which must follow its request
    first = dict(reversed(list(compress(zip(tool_calls, tool_rows, strict=True), is_result))))
    first.pop(None, None)
    answers = list(map(first.get, range(len(ids))))
    end = len(actions)
    bounds = [end if answer is None else answer for answer in answers]
    if any(map(lt, bounds, asked)):
        return None
    # no step closes between a request and its answer (or the end, for a call unanswered)
    closing = actions.translate(_CLOSING)
    if max(map(closing.find, repeat(1), asked, bounds), default=-1) != -1:
        return None
    dispatched = _dispatched(tool_calls, tool_rows, is_result, asked, bounds, seq)
    if dispatched is None:
        return None
    slots = [ids, requests.name, requests.arguments, turns, steps, asked,
             list(map(seq.__getitem__, asked)), dispatched, answers,
             *_answer_facts(columns, answers, len(first) == len(ids))]
    open_positions = list(compress(range(len(ids)), map(is_, answers, repeat(None))))
    return _Found(actions, slots, open_positions, result_rows, codes)


def _answer_facts(columns: EngineColumns, answers: list[int | None], every: bool
                  ) -> tuple[list[Any], list[Any], list[bool]]:
    """Return each call's result seq, ``error.code`` and isError from its answer's row
    (None, None, False: no answer; ``every``: each call has one)."""
    seq, error_code, is_error = columns.seq, columns.error_code, columns.is_error
    if every:  # in C
        return (list(map(seq.__getitem__, answers)), list(map(error_code.__getitem__, answers)),
                list(map((1).__eq__, map(is_error.__getitem__, answers))))
    return ([None if row is None else seq[row] for row in answers],
            [None if row is None else error_code[row] for row in answers],
            [row is not None and is_error[row] == 1 for row in answers])


class _Found(NamedTuple):
    """What :func:`_settled_calls` finds of a settled session."""

    actions: bytes
    """Each row's scan action (``scan_codes``' kinds, 0: none)."""
    slots: list[list[Any]]
    """The calls, one list per slot."""
    open_positions: list[int]
    """The positions of the calls no result answers."""
    result_rows: list[int]
    codes: list[Any]
    """The ``error.code`` of each result row."""


def _dispatched(tool_calls: list[int | None], tool_rows: list[int], is_result: bytes,
                asked: list[int], bounds: list[int], seq: Any) -> list[Any] | None:
    """Return each call's dispatch seq: the last tool/call naming it, which must come
    between its request and its answer (or the end); None when one does not."""
    last = dict(compress(zip(tool_calls, tool_rows, strict=True),
                         is_result.translate(_FLIPPED)))
    last.pop(None, None)
    positions, rows = list(last), list(last.values())
    if not (all(map(lt, map(asked.__getitem__, positions), rows))
            and all(map(lt, rows, map(bounds.__getitem__, positions)))):
        return None
    return list(map(dict(zip(positions, map(seq.__getitem__, rows), strict=True)).get,
                    range(len(asked))))


_FLIPPED = bytes([1, 0]) + bytes(254)


def _ends_plainly(columns: EngineColumns, actions: bytes) -> bool:
    """Return whether no turn ends interrupted or forked (the scan marks such an end, and
    the step/end before it, synthetic)."""
    reasons = columns.end_reason
    ends = compress(range(len(actions)), actions.translate(_TURN_ENDS))
    return not any(map(SYNTHETIC_END_KINDS.__contains__, map(reasons.__getitem__, ends)))


_TURN_ENDS = bytes(kind == _TURN_END_KIND for kind in range(256))


def _result_marks(scan: _Scan, found: _Found, synthetic: Any) -> None:
    """File the recovery code and the synthetic mark of every tool/result that has one."""
    rows, codes = found.result_rows, found.codes
    coded = compress(zip(rows, codes, strict=True), map(is_not, codes, repeat(None)))
    scan.codes.update((row, code) for row, code in coded if code in RECOVERY_CODES)
    scan.synthetic.extend(compress(rows, map((1).__eq__, map(synthetic.__getitem__, rows))))


def _close_state(scan: _Scan, columns: EngineColumns, events: Sequence[Event],
                 actions: bytes) -> None:
    """Set the scan's last step/end, last turn boundary and open turn."""
    step_end = actions.rfind(_STEP_END_KIND)
    if step_end != -1:
        scan.step_end = step_end
    start, end = actions.rfind(_TURN_START_KIND), actions.rfind(_TURN_END_KIND)
    if max(start, end) != -1:
        scan.boundary, scan.turn_ended = max(start, end), end > start
    if start > end:
        turn = columns.turn[start]
        scan.open_turn = data_of(events[start]).get("turn") if turn == MISSING else turn
