"""What an analysis says of each event and of each requested call, as compact columns.

The scan writes its per-event marks as ``array("b")`` codes (one byte per event) and its
calls' facts as one column per fact, so a columnar reader (the frames) takes them without a
pass per row (``numpy.frombuffer``); ``Analysis`` gives a caller of dicts the same facts as
lists and ``CallFacts`` tuples, made from these on first use.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple, Protocol

from ledgerviz.recovery.vocab import (
    BRANCHES,
    CALL_STATUSES,
    NOT_STARTED_CODE,
    UNKNOWN_CODE,
    Branch,
    CallStatus,
)

RECOVERY_CODE_NAMES: tuple[str | None, ...] = (None, UNKNOWN_CODE, NOT_STARTED_CODE)
"""The values of a ``recovery_code`` code (0: none)."""

BRANCH_CODE = {name: code for code, name in enumerate(BRANCHES)}
STATUS_CODE = {name: code for code, name in enumerate(CALL_STATUSES)}
RECOVERY_CODE = {name: code for code, name in enumerate(RECOVERY_CODE_NAMES)}


class CallFacts(NamedTuple):
    """Everything the ledger (and the policy) says about one requested tool call.

    An immutable named tuple (cheap to build: analyze makes one per call).
    """

    call_id: str
    name: str | None
    arguments: str | None
    turn: int | None
    step: int | None
    requested_seq: int
    dispatched_seq: int | None
    result_seq: int | None
    status: CallStatus
    error_code: str | None
    is_error: bool
    branch: Branch
    settled: bool


def _codes(values: Sequence[Any], code_of: dict[Any, int]) -> array:
    """Return ``values`` as one-byte codes (``code_of``: each value's)."""
    return array("b", map(code_of.__getitem__, values))


def _names(codes: array, names: Sequence[Any]) -> list[Any]:
    """Return the values of one-byte ``codes`` (into ``names``)."""
    return list(map(names.__getitem__, codes))


@dataclass(frozen=True, slots=True)
class EventMarks:
    """The policy's marks of each event of ``Analysis.events``, one byte per event."""

    branch: array
    """Codes into ``BRANCHES``."""
    synthetic: array
    """1 for an event recovery wrote (in the log or now), else 0."""
    recorded: array
    """1 for an event of the log, 0 for one the policy adds."""
    recovery_code: array
    """Codes into ``RECOVERY_CODE_NAMES`` (a tool result's recovery code, 0: none)."""

    @classmethod
    def of_lists(cls, branch: Sequence[Branch], synthetic: Sequence[bool],
                 recorded: Sequence[bool], recovery_code: Sequence[str | None]) -> EventMarks:
        """Return the marks given as lists (``Analysis``' list attributes)."""
        return cls(_codes(branch, BRANCH_CODE), array("b", map(bool, synthetic)),
                   array("b", map(bool, recorded)), _codes(recovery_code, RECOVERY_CODE))

    def branches(self) -> list[Branch]:
        """Return each event's branch name."""
        return _names(self.branch, BRANCHES)

    def recovery_codes(self) -> list[str | None]:
        """Return each event's recovery code (None: none)."""
        return _names(self.recovery_code, RECOVERY_CODE_NAMES)


_FLAGS = ("is_error", "settled")
_CODED = {"status": CALL_STATUSES, "branch": BRANCHES}
_CODE_OF = {"status": STATUS_CODE, "branch": BRANCH_CODE}


@dataclass(frozen=True, slots=True)
class CallColumns:
    """The ``CallFacts`` of an analysis' calls, one column per field (same names, same
    order): the ids, names, arguments, turns, steps, seqs and error codes as the scan read
    them (lists); ``status`` and ``branch`` as one-byte codes into ``CALL_STATUSES`` and
    ``BRANCHES``; ``is_error`` and ``settled`` as 0 or 1."""

    call_id: list[Any]
    name: list[Any]
    arguments: list[Any]
    turn: list[Any]
    step: list[Any]
    requested_seq: list[Any]
    dispatched_seq: list[Any]
    result_seq: list[Any]
    status: array
    error_code: list[Any]
    is_error: array
    branch: array
    settled: array

    def __len__(self) -> int:
        return len(self.status)

    @classmethod
    def of_facts(cls, facts: Sequence[CallFacts]) -> CallColumns:
        """Return the columns of ``facts``."""
        columns: dict[str, Any] = {}
        for name in CallFacts._fields:
            values = list(map(attrgetter(name), facts))
            if name in _CODED:
                columns[name] = _codes(values, _CODE_OF[name])
            elif name in _FLAGS:
                columns[name] = array("b", map(bool, values))
            else:
                columns[name] = values
        return cls(**columns)

    @classmethod
    def joined(cls, parts: Sequence[CallColumns]) -> CallColumns:
        """Return the calls of ``parts`` one after another (the part itself when one)."""
        if len(parts) == 1:
            return parts[0]
        columns: dict[str, Any] = {}
        for name in CallFacts._fields:
            joined = array("b") if name in _CODED or name in _FLAGS else []
            for part in parts:
                joined += getattr(part, name)
            columns[name] = joined
        return cls(**columns)

    def facts(self) -> list[CallFacts]:
        """Return one ``CallFacts`` per call."""
        columns: list[Any] = []
        for name in CallFacts._fields:
            values = getattr(self, name)
            if name in _CODED:
                values = _names(values, _CODED[name])
            elif name in _FLAGS:
                values = list(map(bool, values))
            columns.append(values)
        return list(map(CallFacts._make, zip(*columns, strict=True)))

    def status_counts(self) -> dict[CallStatus, int]:
        """Return how many calls have each status, in order of first appearance."""
        counts: dict[int, int] = {}
        for code in self.status:
            counts[code] = counts.get(code, 0) + 1
        return {CALL_STATUSES[code]: count for code, count in counts.items()}


class CallSource(Protocol):
    """What makes an analysis' calls in either form (the scan's calls, kept until both are
    made): ``Analysis.calls`` and ``Analysis.call_columns`` are each made from it directly."""

    def facts(self) -> list[CallFacts]: ...

    def columns(self) -> CallColumns: ...

    def __len__(self) -> int: ...


def flag_bytes(length: int, value: int) -> array:
    """Return ``length`` one-byte codes, each ``value``."""
    return array("b", bytes((value,)) * length)
