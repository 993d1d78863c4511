"""The result of running the recovery engine over one session: what each policy does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ledgerviz.recovery.result_columns import CallColumns, CallFacts, CallSource, EventMarks
from ledgerviz.recovery.vocab import POLICIES, Branch, CallStatus, Policy

__all__ = ["DEFAULT_POLICY", "POLICIES", "Analysis", "Branch", "CallFacts", "CallStatus", "Policy"]

DEFAULT_POLICY: Policy = "synthesize"
"""The policy every entry point (timeline, explorer, report, repair) uses unless told: what the
runtime does on resume today."""

_MARK_LISTS = {"branch": EventMarks.branches, "synthetic": None, "recorded": None,
               "recovery_code": EventMarks.recovery_codes}
"""The list attributes made from ``marks`` (None: its 0/1 column as bools)."""


@dataclass(slots=True, init=False)
class Analysis:
    """One session under one policy.

    ``events`` are the recorded events followed by the events the policy
    appends (with the results it puts into closed steps between them): a sequence that
    reads the caller's events in place (``recovery.runs.EventRuns``), not a copy; every
    list in the annotation block is parallel to ``events``.

    The per-event annotations and the calls are held two ways, each made from the other
    on first use: as lists (``branch``, ``synthetic``, ``recorded``, ``recovery_code``) and
    ``CallFacts`` (``calls``), and as compact columns (``marks``, ``call_columns``; what the
    engine makes and the frames read). Give either when constructing one.
    """

    policy: Policy
    generation: str
    events: Sequence[dict[str, Any]]
    seqs: list[int | None]
    branch: list[Branch]
    synthetic: list[bool]
    recorded: list[bool]
    recovery_code: list[str | None]
    calls: list[CallFacts]
    closers: list[dict[str, Any]] = field(default_factory=list)
    fork_points: list[int] = field(default_factory=list)
    abandoned_seqs: list[int] = field(default_factory=list)
    unanswered_in_closed_steps: list[str] = field(default_factory=list)
    surface: list[int] = field(default_factory=list)
    """Indices into ``events`` of the projected next model context, in surface order."""
    marks: EventMarks = field(repr=False)
    """``branch``, ``synthetic``, ``recorded`` and ``recovery_code`` as one-byte columns."""
    call_columns: CallColumns = field(repr=False)
    """``calls`` as one column per ``CallFacts`` field."""
    _calls_from: CallSource | None = field(init=False, repr=False, compare=False)
    """What makes ``calls`` and ``call_columns`` directly, until both are made (else each
    is made from the other)."""

    def __init__(
        self,
        policy: Policy,
        generation: str,
        events: Sequence[dict[str, Any]],
        seqs: list[int | None],
        branch: list[Branch] | None = None,
        synthetic: list[bool] | None = None,
        recorded: list[bool] | None = None,
        recovery_code: list[str | None] | None = None,
        calls: list[CallFacts] | None = None,
        closers: list[dict[str, Any]] | None = None,
        fork_points: list[int] | None = None,
        abandoned_seqs: list[int] | None = None,
        unanswered_in_closed_steps: list[str] | None = None,
        surface: list[int] | None = None,
        *,
        marks: EventMarks | None = None,
        call_columns: CallColumns | None = None,
        calls_from: CallSource | None = None,
    ) -> None:
        self.policy, self.generation, self.events, self.seqs = policy, generation, events, seqs
        lists = {"branch": branch, "synthetic": synthetic, "recorded": recorded,
                 "recovery_code": recovery_code}
        if marks is not None:
            self.marks = marks
        elif None in lists.values():
            raise TypeError("Analysis needs `marks` or all four annotation lists")
        for name, values in lists.items():
            if values is not None:
                setattr(self, name, values)
        self._calls_from = calls_from
        if call_columns is not None:
            self.call_columns = call_columns
        elif calls is None and calls_from is None:
            raise TypeError("Analysis needs `calls`, `call_columns` or `calls_from`")
        if calls is not None:
            self.calls = calls
        self.closers = [] if closers is None else closers
        self.fork_points = [] if fork_points is None else fork_points
        self.abandoned_seqs = [] if abandoned_seqs is None else abandoned_seqs
        self.unanswered_in_closed_steps = (
            [] if unanswered_in_closed_steps is None else unanswered_in_closed_steps)
        self.surface = [] if surface is None else surface

    def __getattr__(self, name: str) -> Any:
        """Make a form of the annotations or calls not given from the other (once)."""
        if name in _MARK_LISTS:
            made = _MARK_LISTS[name]
            marks = self.marks
            value: Any = made(marks) if made else list(map(bool, getattr(marks, name)))
        elif name == "marks":
            value = EventMarks.of_lists(self.branch, self.synthetic, self.recorded,
                                        self.recovery_code)
        elif name in ("calls", "call_columns"):
            return self._made_calls(name)
        else:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        setattr(self, name, value)
        return value

    def call_count(self) -> int:
        """Return how many calls the analysis holds (from whichever form is held: none is
        made)."""
        if self._calls_from is not None:
            return len(self._calls_from)
        return len(self.calls if _is_set(self, "calls") else self.call_columns)

    def call_source(self) -> CallSource | None:
        """Return what makes ``call_columns`` (those it made, if made already), so that a
        caller may make many analyses' at once; None when they are made from ``calls``."""
        return self._calls_from

    def _made_calls(self, name: str) -> Any:
        """Make the calls in the form ``name`` (``calls`` or ``call_columns``), from what
        made them if it is still held, else from the other form; what made them is let go
        once both are made."""
        source = self._calls_from
        if name == "calls":
            value: Any = self.call_columns.facts() if source is None else source.facts()
        else:
            value = CallColumns.of_facts(self.calls) if source is None else source.columns()
        setattr(self, name, value)
        if source is not None and _is_set(self, "call_columns" if name == "calls" else "calls"):
            self._calls_from = None
        return value

    def __repr__(self) -> str:
        """Return a one-line summary (the events themselves are in ``events``)."""
        statuses = self.call_columns.status_counts()
        calls = ", ".join(f"{n} {s}" for s, n in statuses.items()) or "none"
        forks = ", ".join([str(seq) for seq in self.fork_points[:5]]
                          + ["…"] * (len(self.fork_points) > 5))
        return (f"<Analysis policy={self.policy}: events {len(self.events)}, "
                f"appended {len(self.closers)}, abandoned {len(self.abandoned_seqs)}, "
                f"fork point seqs [{forks}]; calls: {calls}>")


def _is_set(analysis: Analysis, name: str) -> bool:
    """Return whether ``analysis`` holds attribute ``name`` (without making it)."""
    try:
        object.__getattribute__(analysis, name)
    except AttributeError:
        return False
    return True
