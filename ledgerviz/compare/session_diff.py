"""``SessionDiff``: two sessions aligned by what happened, where they part, and what differs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ledgerviz.compare.align import Row, align_sessions
from ledgerviz.compare.signatures import SessionKeys, differences, session_keys
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.recovery.analysis import CallFacts, Policy

if TYPE_CHECKING:
    import pandas as pd

    from ledgerviz.api import Ledger

Kind = Literal["same", "changed", "a_only", "b_only"]
KINDS: tuple[Kind, ...] = ("same", "changed", "a_only", "b_only")
"""What one alignment row holds: an equal pair, a pair that differs, one side's event."""

KIND_WORDS: dict[Kind, str] = {"same": "same", "changed": "changed", "a_only": "only in a",
                               "b_only": "only in b"}
"""How every view of a diff names the kinds."""


RUN_STARTS = ("turn/start", "step/start")
"""Where a run of events on one side only is put when it could sit a few rows earlier or
later: beginning at a turn, else at a step."""


class Divergence(NamedTuple):
    """Where two sessions part: the first row of the alignment that is not ``same``.

    ``a_seq`` and ``b_seq`` are the seqs of the events on each side at that point: for an
    event only in A, ``b_seq`` is the B event it stands before (None when B has ended), and
    the other way round; ``differs`` names what differs in a changed pair.
    """

    a_seq: int | None
    b_seq: int | None
    kind: Kind
    differs: tuple[str, ...]


class DiffSide(NamedTuple):
    """One session of a diff: its ledger and the facts the alignment reads."""

    ledger: Ledger
    key: str
    path: str
    seqs: list[Any]
    turns: list[Any]
    """The turn of each event: the number its turn started with (None before the first)."""
    keys: SessionKeys

    @classmethod
    def of(cls, ledger: Ledger) -> DiffSide:
        """Return the side of ``ledger``'s only session."""
        log = ledger.sessions[0]
        fields = log.event_fields()
        keys = session_keys(log.events)
        return cls(ledger, log.key, log.path, list(fields.seqs),
                   _turn_of_each(keys.types, fields.turns), keys)

    def where(self, index: int) -> str:
        """Return event ``index`` as plain text: ``seq 18 · assistant/message · turn 2``."""
        turn = self.turns[index]
        return " · ".join([f"seq {_seq_text(self.seqs[index])}", str(self.keys.types[index]),
                           *([] if turn is None else [f"turn {turn}"])])

    def calls(self, policy: Policy) -> list[CallFacts]:
        """Return the recovery engine's facts of every call of this session under ``policy``."""
        return self.ledger.recovery(policy).analyses[self.key].calls


@dataclass(frozen=True, repr=False)
class SessionDiff:
    """Two sessions aligned event by event (see :func:`ledgerviz.diff`).

    ``rows`` are ``(a_index, b_index)`` event positions, None on the side without the
    event, in order on both sides.
    """

    a: DiffSide
    b: DiffSide
    rows: list[Row]
    policy: Policy
    ids: tuple[list[int], list[int]]
    """Each side's events' signatures as ints (equal signatures, equal ints)."""

    @classmethod
    def of(cls, a: Ledger, b: Ledger, policy: Policy) -> SessionDiff:
        """Return the alignment of the only session of ``a`` with that of ``b``."""
        with paused_gc():  # millions of acyclic tuples: no collection needs to visit them
            left, right = DiffSide.of(a), DiffSide.of(b)
            interned: dict[Any, int] = {}
            a_ids = [interned.setdefault(s, len(interned)) for s in left.keys.signatures]
            b_ids = [interned.setdefault(s, len(interned)) for s in right.keys.signatures]
            del interned
            rows = align_sessions(a_ids, b_ids, left.keys.types, right.keys.types,
                                  left.keys.turn_starts, right.keys.turn_starts, RUN_STARTS)
        return cls(left, right, rows, policy, (a_ids, b_ids))

    @cached_property
    def kinds(self) -> list[Kind]:
        """Return the kind of every row."""
        a_ids, b_ids = self.ids
        return ["a_only" if j is None else "b_only" if i is None
                else "same" if a_ids[i] == b_ids[j] else "changed" for i, j in self.rows]

    @property
    def same(self) -> bool:
        """Return True when every event is matched by an equal one."""
        return self.first_divergence is None

    @cached_property
    def first_divergence(self) -> Divergence | None:
        """Return where the sessions part, None when they do not."""
        kinds = self.kinds
        row = next((n for n, kind in enumerate(kinds) if kind != "same"), None)
        if row is None:
            return None
        i, j = self.rows[row]
        if i is None:
            i = next((r[0] for r in self.rows[row:] if r[0] is not None), None)
        if j is None:
            j = next((r[1] for r in self.rows[row:] if r[1] is not None), None)
        return Divergence(_seq(self.a.seqs, i), _seq(self.b.seqs, j), kinds[row],
                          tuple(self.differs(row)))

    def differs(self, row: int) -> list[str]:
        """Return what differs in row ``row`` (empty unless it is a changed pair)."""
        i, j = self.rows[row]
        if i is None or j is None:
            return []
        return differences(self.a.keys.signatures[i], self.b.keys.signatures[j])

    @property
    def a_only(self) -> list[Any]:
        """Return the seqs of A's events that B does not have."""
        return [self.a.seqs[i] for (i, _), kind in zip(self.rows, self.kinds, strict=True)
                if kind == "a_only"]

    @property
    def b_only(self) -> list[Any]:
        """Return the seqs of B's events that A does not have."""
        return [self.b.seqs[j] for (_, j), kind in zip(self.rows, self.kinds, strict=True)
                if kind == "b_only"]

    @property
    def changed(self) -> list[tuple[Any, Any]]:
        """Return the ``(a_seq, b_seq)`` of every matched pair that differs."""
        return [(self.a.seqs[i], self.b.seqs[j])
                for (i, j), kind in zip(self.rows, self.kinds, strict=True) if kind == "changed"]

    def divergence_text(self) -> str:
        """Return where the sessions part as plain text (``a seq 18, b seq 18: only in a``),
        or ``the same``."""
        first = self.first_divergence
        if first is None:
            return "the same: every event is matched by an equal one"
        what = f" ({', '.join(first.differs)})" if first.differs else ""
        return (f"a seq {_seq_text(first.a_seq)}, b seq {_seq_text(first.b_seq)}: "
                f"{KIND_WORDS[first.kind]}{what}")

    def counts_text(self) -> str:
        """Return the row counts as plain text (``18 same, 0 changed, ...``)."""
        return ", ".join(f"{n} {KIND_WORDS[kind]}" for kind, n in self.counts().items())

    def counts(self) -> dict[Kind, int]:
        """Return how many rows hold each kind."""
        counts = dict.fromkeys(KINDS, 0)
        for kind in self.kinds:
            counts[kind] += 1
        return counts

    @cached_property
    def status_changes(self) -> list[tuple[CallFacts, CallFacts]]:
        """Return the calls whose status under ``policy`` differs: ``(call in A, call in B)``
        pairs in A's order. A call in B is A's call when their requesting assistant messages
        are aligned, it has the same place among that message's calls, and the same tool
        and arguments."""
        b_of = {i: j for (i, j), kind in zip(self.rows, self.kinds, strict=True)
                if kind in ("same", "changed") and self.a.keys.types[i] == "assistant/message"}
        b_seq_of = {self.a.seqs[i]: self.b.seqs[j] for i, j in b_of.items()}
        b_calls = _by_request(self.b.calls(self.policy))
        changes = []
        for (requested, ordinal), call in _by_request(self.a.calls(self.policy)).items():
            other = b_calls.get((b_seq_of.get(requested), ordinal))
            if (other is not None and other.status != call.status
                    and (other.name, other.arguments) == (call.name, call.arguments)):
                changes.append((call, other))
        return changes

    @property
    def frame(self) -> pd.DataFrame:
        """Return the alignment as a DataFrame, one row per aligned pair or unmatched event."""
        from ledgerviz.compare.frames import alignment_frame

        return alignment_frame(self)

    @property
    def status_frame(self) -> pd.DataFrame:
        """Return :attr:`status_changes` as a DataFrame, one row per call."""
        from ledgerviz.compare.frames import status_frame

        return status_frame(self)

    def to_json(self, rows: int | None = None) -> dict[str, Any]:
        """Return the diff as plain JSON values (the ``ledgerviz diff --json`` document)."""
        first = self.first_divergence
        return {
            "same": self.same,
            "first_divergence": None if first is None else first._asdict() | {
                "differs": list(first.differs)},
            "a_only": self.a_only,
            "b_only": self.b_only,
            "changed": [list(pair) for pair in self.changed],
            "counts": self.counts(),
            "status_changes": [
                {"a_call_id": a.call_id, "b_call_id": b.call_id, "tool": a.name,
                 "a_seq": a.requested_seq, "b_seq": b.requested_seq,
                 "a_status": a.status, "b_status": b.status}
                for a, b in self.status_changes],
            "policy": self.policy,
            "a": {"session": self.a.key, "path": self.a.path, "events": len(self.a.seqs)},
            "b": {"session": self.b.key, "path": self.b.path, "events": len(self.b.seqs)},
        }

    def _repr_html_(self) -> str:
        from ledgerviz.compare.tables import diff_html

        return diff_html(self)

    def __repr__(self) -> str:
        return (f"<SessionDiff {self.a.key!r} vs {self.b.key!r}: {self.divergence_text()}; "
                f"{self.counts_text()}>")


def _seq_text(seq: Any) -> str:
    """Return a seq as text, ``-`` for none."""
    return "-" if seq is None else str(seq)


def _seq(seqs: Sequence[Any], index: int | None) -> Any:
    """Return the seq at ``index``, None for no index."""
    return None if index is None else seqs[index]


def _turn_of_each(types: Sequence[Any], turns: Sequence[Any]) -> list[Any]:
    """Return, for every event, the turn number of the ``turn/start`` it follows."""
    current = None
    out = []
    for kind, turn in zip(types, turns, strict=True):
        if kind == "turn/start":
            current = turn
        out.append(current)
    return out


def _by_request(calls: Sequence[CallFacts]) -> dict[tuple[Any, int], CallFacts]:
    """Return the calls keyed by their requesting seq and their place among its calls."""
    keyed: dict[tuple[Any, int], CallFacts] = {}
    ordinals: dict[Any, int] = {}
    for call in calls:
        ordinal = ordinals.get(call.requested_seq, 0)
        ordinals[call.requested_seq] = ordinal + 1
        keyed[(call.requested_seq, ordinal)] = call
    return keyed
