"""The frames of a prefix of one session (a cut of it, or a fork child's inherited events and
its own few), sliced from the frames of the whole session under the same policy.

The analysis of a prefix begins with the whole session's first events (the scan is online,
see ``recovery.prefixes``). Rows those events alone make are taken from the whole session's
frames; rows the events after them reach (the open turn and step, the closers) are built as
usual; every column that depends on the analysis (branch, synthetic, statuses, settled,
counts by status, forked) is rebuilt from the prefix's own analysis. The result equals a
build from scratch; a frame whose rows a ledger does not keep contiguous (a turn reopened
later in the file, a seq two tool events share) is built from scratch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property
from itertools import compress, repeat
from operator import attrgetter, gt
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.frames import Frames
from ledgerviz.frames.calls import CALL_SCHEMA, StatusReasons, aborted_turns, call_columns
from ledgerviz.frames.columns import (
    assemble,
    category_column,
    int_column,
    joined,
    joined_inferred,
    transpose,
    typed,
)
from ledgerviz.frames.events import (
    EVENT_SCHEMA,
    TOOL_EVENTS,
    _inherited,
    call_ids,
    mark_columns,
    surface_ops,
)
from ledgerviz.frames.rows import Rows
from ledgerviz.frames.session_frames import SessionFrames, ToolPositions
from ledgerviz.frames.story import StoryFrames
from ledgerviz.frames.turns import (
    STEP_FACTS,
    STEP_SCHEMA,
    TURN_CALL_COUNTS,
    TURN_SCHEMA,
    _spans,
    arrays_of,
    forked,
    route_before,
    step_calls,
    step_columns,
    step_rows,
    turn_call_counts,
    turn_columns,
    turn_rows,
)
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger import SessionLog
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.recovery.analysis import Analysis, CallFacts
from ledgerviz.recovery.result_columns import CallColumns
from ledgerviz.recovery.sequences import first_difference

_UNSLICEABLE = frozenset({"assistant/message", "request/header", "request/context"})
"""Event types after the shared events that make a prefix's frames be built from scratch:
they would add calls, or change a step's route."""

WHOLE_ROWS_PART = 8
"""When more than this part of the whole session's calls come after the first a cut's
differ in (a cut far from the session's end), the row of every call is looked up once per
key and kept for every cut; else only the rows of those calls are (a cut or a fork near the
end makes no pass over every call)."""


class PrefixFrames(Frames):
    """The frames of one session whose analysis begins with the first ``shared`` events of
    ``base``'s, sliced from ``base``'s frames (see the module docstring)."""

    def __init__(self, base: SessionFrames, key: str, log: SessionLog, analysis: Analysis,
                 shared: int) -> None:
        super().__init__([(key, log, analysis)])
        self._base = base
        self._shared = shared
        self._key = key
        self._analysis = analysis

    @cached_property
    def _continued(self) -> SessionsView | None:
        with paused_gc():
            return self._base.frames.view.continued(self._key, self._sessions[0][1],
                                                    self._analysis, self._shared)

    @cached_property
    def _view(self) -> SessionsView:
        return self._continued or super()._view

    def _frame(self, columns: dict[str, Any], schema: dict[str, Any]) -> pd.DataFrame:
        return assemble([self._key], columns, schema)

    @cached_property
    def events(self) -> pd.DataFrame:
        """Return one row per event (see :attr:`Frames.events`)."""
        view, shared = self._continued, self._shared
        if view is None:
            return super().events
        with paused_gc():
            head = self._base.frames.events
            tail = _tail_fields(view, shared)
            ops = _inferred_then(head["surface_op"].array[:shared], tail["surface_op"])
            if ops is None:
                ops = surface_ops(view)
            return self._frame({
                "session": np.zeros(len(view.events), dtype=np.int64),
                "seq": view.seq_array,
                "time": view.time_array,
                "type": view.type_array,
                **{name: _then(head[name].array[:shared], tail[name])
                   for name in ("turn", "step", "call_id")},
                "surface_op": ops,
                **mark_columns(view),
                "inherited": _inherited(view),
            }, EVENT_SCHEMA)

    @cached_property
    def turns(self) -> pd.DataFrame:
        """Return one row per turn (see :attr:`Frames.turns`)."""
        built = self._rows(self._base.turn_rows, _turn_rows_from)
        if built is None:
            return super().turns
        view, rows, count, new = built
        with paused_gc():
            head = self._base.frames.turns.iloc[:count]
            spans = _joined_spans(view, head, new)
            reasons = joined_inferred(head["end_reason"].array,
                                      category_column(new["end_reason"]))
            if reasons is None:
                reasons = category_column(rows.rows["end_reason"][:count] + new["end_reason"])
            sessions = np.zeros(count + len(new["turn"]), dtype=np.int64)
            return self._frame({
                "session": sessions,
                "turn": joined(head["turn"].array, int_column(new["turn"])),
                **spans,
                "duration": spans["end_time"] - spans["start_time"],
                "end_reason": reasons,
                "steps": joined(head["steps"].array, int_column(new["steps"])),
                **self._recounted(head, rows, count, new["turn"], TURN_CALL_COUNTS, _CALL_TURN,
                                  _turn_call_counts),
                "forked": forked(view, sessions, np.asarray(reasons == "forked"), spans),
            }, TURN_SCHEMA)

    @cached_property
    def steps(self) -> pd.DataFrame:
        """Return one row per (turn, step) (see :attr:`Frames.steps`)."""
        built = self._rows(self._base.step_rows, _step_rows_from)
        if built is None:
            return super().steps
        view, rows, count, new = built
        with paused_gc():
            head = self._base.frames.steps.iloc[:count]
            facts = {}
            for name in STEP_FACTS:
                convert = STEP_SCHEMA[name]
                if convert is category_column:
                    fact = joined_inferred(head[name].array, category_column(new[name]))
                    facts[name] = fact if fact is not None else category_column(
                        rows.rows[name][:count] + new[name])
                else:
                    facts[name] = joined(head[name].array, convert(new[name]))
            return self._frame({
                "session": np.zeros(count + len(new["step"]), dtype=np.int64),
                "turn": joined(head["turn"].array, int_column(new["turn"])),
                "step": joined(head["step"].array, int_column(new["step"])),
                **_joined_spans(view, head, new),
                **facts,
                **self._recounted(head, rows, count,
                                  list(zip(new["turn"], new["step"], strict=True)), ("calls",),
                                  _CALL_STEP_KEY, _step_call_counts),
            }, STEP_SCHEMA)

    @cached_property
    def _same_calls(self) -> int:
        """Return how many first calls have the same facts in the whole session."""
        return first_difference(self._base.analysis.calls, self._analysis.calls)

    def _recounted(self, head: pd.DataFrame, rows: Rows, count: int, new_keys: list[Any],
                   columns: Sequence[str], key_of: _CallKey,
                   counts: Callable[[SessionsView, list[Any]], dict[str, list[int]]]
                   ) -> dict[str, pd.arrays.IntegerArray]:
        """Return the ``columns`` counting each row's calls: the first ``count`` of the whole
        session's ``rows`` (their counts in ``head``), then rows keyed ``new_keys``. A kept
        row's count is the whole session's unless a call with its key differs; the others are
        ``counts`` of the view narrowed to the calls of the keys it is given."""
        own_keys = list(map(key_of, self._analysis.calls[self._same_calls:]))
        kept = self._changed_rows(rows, count, key_of, own_keys)
        keys = [rows.call_keys[i] for i in kept] + new_keys
        fresh = counts(self._counting_only(key_of, set(keys), own_keys), keys)
        total = count + len(new_keys)
        redo = [*kept, *range(count, total)]
        out = {}
        for name in columns:
            values = np.empty(total, dtype=np.int64)
            values[:count] = head[name].to_numpy(dtype=np.int64)  # counts are never missing
            values[redo] = fresh[name]
            out[name] = pd.arrays.IntegerArray(values, np.zeros(total, dtype=bool))
        return out

    def _changed_rows(self, rows: Rows, count: int, key_of: _CallKey,
                      own_keys: list[Any]) -> list[int]:
        """Return, in order, those of the first ``count`` whole-session ``rows`` whose count
        may differ: a call after :attr:`_same_calls` (the whole session's, or the
        analysis', keyed ``own_keys``) is keyed to them."""
        same, calls = self._same_calls, self._base.analysis.call_columns
        if len(calls) - same > len(calls) // WHOLE_ROWS_PART:
            whole = self._base.call_rows(key_of, rows, key_of.fields,
                                         lambda: key_of.keys(calls, 0))
            whole = None if whole is None else whole[same:]
        else:
            whole = rows.rows_of(key_of.keys(calls, same))
        own = rows.rows_of(own_keys)
        if whole is None or own is None:  # rows share a key: look for the keys row by row
            changed = {*key_of.keys(calls, same), *own_keys}
            return list(compress(range(count), map(changed.__contains__, rows.call_keys)))
        found = np.concatenate([whole, own])
        return np.unique(found[(found >= 0) & (found < count)]).tolist()

    def _counting_only(self, key_of: _CallKey, wanted: set[Any],
                       own_keys: list[Any] | None = None) -> SessionsView:
        """Return the view holding only the calls whose ``key_of`` key is in ``wanted``
        (``own_keys``: the keys of the calls after :attr:`_same_calls`, when known)."""
        own = self._analysis.calls[self._same_calls:]
        keys = map(key_of, own) if own_keys is None else own_keys
        calls = [*self._first_calls_keyed(key_of, wanted),
                 *compress(own, map(wanted.__contains__, keys))]
        return replace(self._continued, calls=CallColumns.of_facts(calls),
                       call_sessions=np.zeros(len(calls), dtype=np.int64))

    def _first_calls_keyed(self, key_of: _CallKey,
                           wanted: set[Any]) -> list[CallFacts]:
        """Return, in order, those of the calls the analysis shares with the whole session
        (:attr:`_same_calls`) whose ``key_of`` key is in ``wanted``."""
        calls = self._analysis.calls
        return [calls[i] for i in key_of.positions(self._base.frames.view, self._same_calls,
                                                   wanted)]

    def _rows(self, rows: Rows, build: Callable[[SessionsView, int], dict[str, list[Any]]]
              ) -> tuple[SessionsView, Rows, int, dict[str, list[Any]]] | None:
        """Return the view, the whole session's rows, how many of them the prefix keeps and
        the rows ``build`` makes of the events from the position the others begin at; None
        when the rows cannot be sliced so."""
        view = self._continued
        if view is None or not self._tail_sliceable(view):
            return None
        count: int | None = rows.kept(self._shared)
        while count is not None:
            start = rows.start(count, self._shared)
            if start is None:
                return None
            new = build(view, start)
            reopened = rows.reopened(new, count)
            if reopened is None:
                return view, rows, count, new
            count = reopened  # the events after the shared ones reach back to that row
        return None

    def _tail_sliceable(self, view: SessionsView) -> bool:
        """Whether the events after the shared ones leave the calls and routes alone."""
        return not _UNSLICEABLE.intersection(view.kinds_at(np.arange(self._shared,
                                                                     len(view.events))))

    def own_rows(self, boundary: int) -> StoryFrames | None:
        """Return the rows a fork story takes from this prefix, a fork child seeded at seq
        ``boundary`` (see ``plot.story``): the events it does not inherit, the turns and
        steps that end after ``boundary`` or never, the calls requested after it. They equal
        those rows of the child's whole frames, which are never built: only the rows the
        child's own events reach are. None when the rows cannot be sliced so."""
        view = self._continued
        if view is None or not self._tail_sliceable(view):
            return None
        inherited = _inherited(view)
        own = int(np.count_nonzero(inherited))
        if inherited[own:].any():  # the inherited events are not all first
            return None
        with paused_gc():
            parts = {}
            for name, rows, build, columns, schema in (
                    ("turns", self._base.turn_rows, _turn_rows_from, turn_columns, TURN_SCHEMA),
                    ("steps", self._base.step_rows, _step_rows_from, step_columns, STEP_SCHEMA)):
                built = self._rows(rows, build)
                if built is None:
                    return None
                _view, _rows, count, new = built
                head = getattr(self._base.frames, name)["end_seq"].iloc[:count]
                if head.isna().any() or (head > boundary).any():
                    return None  # a kept row the story takes: build the whole frame
                counting = self._counting_only(_CALL_TURN, set(new["turn"]))
                frame = self._frame(columns(counting, arrays_of(new)), schema)
                parts[name] = frame[frame["end_seq"].isna() | (frame["end_seq"] > boundary)]
            asked = self._analysis.calls
            calls = list(compress(asked, map(gt, self._call_facts("requested_seq", asked),
                                             repeat(boundary))))
            own_calls = replace(view.from_position(own), calls=CallColumns.of_facts(calls),
                                call_sessions=np.zeros(len(calls), dtype=np.int64))
            # (their tool events are own)
            return StoryFrames(
                self._frame(_own_event_columns(view, own), EVENT_SCHEMA),
                parts["turns"].reset_index(drop=True), parts["steps"].reset_index(drop=True),
                self._frame(call_columns(own_calls), CALL_SCHEMA))

    @cached_property
    def calls(self) -> pd.DataFrame:
        """Return one row per requested tool call (see :attr:`Frames.calls`)."""
        view = self._continued
        positions = self._base.tool_positions
        calls, whole = self._analysis.calls, self._base.analysis.calls
        if (view is None or not self._tail_sliceable(view) or positions is None
                or len(calls) > len(whole)):
            return super().calls
        tail_tools = {view.seqs[i]: i
                      for i in view.from_position(self._shared).indices_of(TOOL_EVENTS)}
        with paused_gc():
            head = self._base.frames.calls.iloc[:len(calls)]
            same = self._same_calls  # the calls before it have the same facts
            facts = transpose(calls[same:], CallFacts._fields)
            times = {name: _call_times(view, head, seqs, same, facts[seqs], positions,
                                       tail_tools, self._shared)
                     for name, seqs in (("dispatch_time", "dispatched_seq"),
                                        ("result_time", "result_seq"))}

            def patched(name: str, fact: str) -> Any:
                return _patched(head[name], same, facts[fact], CALL_SCHEMA[name],
                                lambda: list(map(attrgetter(fact), calls)))

            tool = joined_inferred(head["tool"].array, category_column([]))
            return self._frame({
                "session": np.zeros(len(calls), dtype=np.int64),
                "call_id": head["call_id"].array,
                "tool": category_column(facts["name"]) if tool is None else tool,
                "turn": head["turn"].array,
                "step": head["step"].array,
                "requested_seq": head["requested_seq"].array,
                "dispatched_seq": patched("dispatched_seq", "dispatched_seq"),
                "result_seq": patched("result_seq", "result_seq"),
                **times,
                "status": patched("status", "status"),
                "status_reason": self._status_reasons(view, calls),
                "error_code": patched("error_code", "error_code"),
                "is_error": patched("is_error", "is_error"),
                "duration": times["result_time"] - times["dispatch_time"],
                "arguments": head["arguments"].array,
                "branch": patched("branch", "branch"),
                "settled": patched("settled", "settled"),
            }, CALL_SCHEMA)


    def _status_reasons(self, view: SessionsView, calls: list[CallFacts]) -> Any:
        """Return the ``status_reason`` of the prefix's calls (``view``: its own): the whole
        session's where it cannot differ (a call before :attr:`_same_calls`, whose result is
        recorded and no closer of either analysis, given the same reasons by the reader),
        the others worked out."""
        given = self._sessions[0][1].call_reasons
        reasons = StatusReasons(given, self._analysis, lambda: aborted_turns(view).get(0, set()))
        names = ("call_id", "turn", "result_seq", "error_code")
        whole = self._base.frames.calls
        if given != self._base.frames._sessions[0][1].call_reasons:
            return reasons.all_of(*(self._call_facts(name, calls) for name in names))
        same = self._same_calls
        results = whole["result_seq"].array[:same]
        closers = [seq for analysis in (self._base.analysis, self._analysis)
                   for seq in (event.get("seq") for event in analysis.closers)
                   if type(seq) is int]
        redo = np.flatnonzero(results.isna() | np.isin(
            results.to_numpy(dtype=np.int64, na_value=-1), closers)).tolist()
        facts = self._base.analysis.call_columns
        found = reasons.all_of(*(
            [getattr(facts, name)[i] for i in redo]
            + list(map(attrgetter(name), calls[same:])) for name in names))
        kept = whole["status_reason"].array[:same]
        codes = np.empty(len(calls), dtype=kept.codes.dtype)
        codes[:same] = kept.codes
        codes[[*redo, *range(same, len(calls))]] = category_column(
            found, kept.categories).codes
        return pd.Categorical.from_codes(codes, dtype=kept.dtype)

    def _call_facts(self, name: str, calls: list[CallFacts]) -> list[Any]:
        """Return the fact ``name`` of each of ``calls`` (the analysis'): the whole session's
        column for the calls before :attr:`_same_calls` (the same facts), then theirs."""
        same = self._same_calls
        head = getattr(self._base.analysis.call_columns, name)[:same]
        return head + list(map(attrgetter(name), calls[same:]))


class _CallKey:
    """The facts of a call that key the row of a frame counting it: its turn, or its turn
    and step (as ``Rows.call_keys`` gives a row's key)."""

    def __init__(self, *fields: str) -> None:
        self.fields = fields
        self._key = attrgetter(*fields)

    def __call__(self, call: CallFacts) -> Any:
        """Return the key of one call."""
        return self._key(call)

    def keys(self, columns: CallColumns, start: int) -> list[Any]:
        """Return the key of each call of ``columns`` from position ``start`` on."""
        parts = [getattr(columns, name)[start:] for name in self.fields]
        return parts[0] if len(parts) == 1 else list(zip(*parts, strict=True))

    def positions(self, view: SessionsView, stop: int, wanted: set[Any]) -> list[int]:
        """Return, in order, the positions before ``stop`` of the calls of ``view`` keyed in
        ``wanted``: those whose first field is one of the wanted ints are found by numpy
        (over the view's int column of it), then each found or not an int is checked."""
        first, *others = (getattr(view.calls, name) for name in self.fields)
        values, missing = view.call_ints(self.fields[0])
        ints = [key[0] if others else key for key in wanted]
        ints = [key for key in ints if isinstance(key, int) and _INT64_MIN <= key <= _INT64_MAX]
        maybe = np.flatnonzero(np.isin(values[:stop], ints) | missing[:stop]).tolist()
        if not others:
            return [i for i in maybe if first[i] in wanted]
        return [i for i in maybe if (first[i], *(other[i] for other in others)) in wanted]


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_CALL_TURN = _CallKey("turn")
_CALL_STEP_KEY = _CallKey("turn", "step")


def _turn_call_counts(view: SessionsView, turns: list[Any]) -> dict[str, list[int]]:
    """Return the call count columns of one session's turn rows (their turns)."""
    return turn_call_counts(view, [0] * len(turns), turns)


def _step_call_counts(view: SessionsView, keys: list[tuple[Any, Any]]) -> dict[str, list[int]]:
    """Return the ``calls`` column of one session's step rows (their turns and steps)."""
    turns, steps = [turn for turn, _ in keys], [step for _, step in keys]
    return {"calls": step_calls(view, [0] * len(keys), turns, steps)}


def _turn_rows_from(view: SessionsView, start: int) -> dict[str, list[Any]]:
    """Return the turn rows the events from position ``start`` on make."""
    return turn_rows(view.from_position(start))


def _step_rows_from(view: SessionsView, start: int) -> dict[str, list[Any]]:
    """Return the step rows the events from position ``start`` on make (the route the
    events before set holds at first)."""
    return step_rows(view.from_position(start), route_before(view, start))


def _tail_fields(view: SessionsView, start: int) -> dict[str, Any]:
    """Return the ``events`` columns read from the events' own fields (turn, step, call id,
    surface op), typed, for the events from position ``start`` on."""
    tail = view.from_position(start)
    return {
        "turn": view.table.ints("turn", start),
        "step": view.table.ints("step", start),
        "call_id": call_ids(tail),
        "surface_op": surface_ops(tail),
    }


def _own_event_columns(view: SessionsView, start: int) -> dict[str, Any]:
    """Return the ``events`` columns of a one-session view's events from position ``start``
    on, none of them inherited."""
    count = len(view.events) - start
    return {
        "session": np.zeros(count, dtype=np.int64),
        "seq": view.seq_array[start:],
        "time": view.time_array[start:],
        "type": view.type_array[start:],
        **_tail_fields(view, start),
        **mark_columns(view, start),
        "inherited": np.zeros(count, dtype=bool),
    }


def _then(head: Any, tail: Any) -> Any:
    """Return :func:`joined` of ``head`` and ``tail``: ``head`` itself (no copy) when
    ``tail`` is empty (a prefix that ends where the whole session's shared events do)."""
    return head if not len(tail) else joined(head, tail)


def _inferred_then(head: pd.Categorical, tail: pd.Categorical) -> pd.Categorical | None:
    """Return :func:`joined_inferred` of ``head`` and ``tail``: ``head`` itself (no copy)
    when ``tail`` is empty and ``head`` holds each of its categories (the categories
    ``joined_inferred`` keeps: those some value holds)."""
    names = head.categories
    if (not len(tail) and len(names) and names.is_monotonic_increasing
            and all(type(name) is str for name in names.tolist())
            and np.bincount(head.codes.astype(np.intp) + 1,  # (-1: missing, in the first)
                            minlength=len(names) + 1)[1:].all()):
        return head
    return joined_inferred(head, tail)


def _patched(column: pd.Series, same: int, rest: list[Any], convert: Any,
             values: Callable[[], list[Any]]) -> Any:
    """Return ``convert(values())``, knowing that its first ``same`` rows are those of the
    whole session's typed ``column`` and the others are ``rest``."""
    kept, tail = typed(column)[:same], convert(rest)
    if convert is not category_column:
        return joined(kept, tail)
    joined_values = joined_inferred(kept, tail)
    return convert(values()) if joined_values is None else joined_values


def _joined_spans(view: SessionsView, head: pd.DataFrame,
                  new: dict[str, list[Any]]) -> dict[str, Any]:
    """Return the seq and time span columns of the kept rows ``head`` then the ``new`` rows."""
    spans = _spans(view, new["start"], new["end"])
    return {name: joined(head[name].array, column) for name, column in spans.items()}


def _call_times(view: SessionsView, head: pd.DataFrame, column: str, same: int,
                rest: list[Any], positions: ToolPositions, tail_tools: dict[Any, int],
                shared: int) -> pd.api.extensions.ExtensionArray:
    """Return the time of the tool event with each call's ``column`` seq (the whole
    session's ``head`` rows' for the first ``same`` calls, ``rest`` after them; the last
    such event, as ``calls`` reads it): the whole session's time where the seq is the whole
    session's and no event after the shared ones has it, else looked up (the prefix's own
    ``tail_tools`` first, then the whole session's tool event ``positions`` before
    ``shared``)."""
    times = head["dispatch_time" if column == "dispatched_seq" else "result_time"].array
    whole = head[column].to_numpy(dtype=np.int64, na_value=-1)  # no event has seq -1
    seqs = whole.copy()
    seqs[same:] = [-1 if seq is None else seq for seq in rest]
    differ = seqs != whole
    if tail_tools:
        differ |= np.isin(seqs, [seq for seq in tail_tools if type(seq) is int])
    changed = np.flatnonzero(differ).tolist()
    if not changed:
        return times
    found = []
    for seq in seqs[changed].tolist():
        position = -1 if seq < 0 else tail_tools.get(seq, -1)
        if position < 0 <= seq:
            at = positions.get(seq, shared)
            position = at if at < shared else position
        found.append(position)
    patched = times.copy()
    patched[changed] = view.time_at(found)
    return patched


def prefix_frames(base: SessionFrames, key: str, log: SessionLog, analysis: Analysis,
                  recorded: int) -> Frames:
    """Return the frames of one session whose analysis begins with the analysis of the first
    ``recorded`` recorded events of ``base``'s session: ``base``'s own when it is ``base``'s
    analysis, sliced from ``base`` where the analyses share those events, else built from
    scratch."""
    if analysis is base.analysis:
        return base.frames
    shared = base.shared_with(analysis, recorded)
    if shared is None:
        return Frames([(key, log, analysis)])
    return PrefixFrames(base, key, log, analysis, shared)
