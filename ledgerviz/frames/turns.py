"""The ``turns`` and ``steps`` frames: one row per turn / per (turn, step)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import repeat
from operator import eq
from typing import Any

import numpy as np

from ledgerviz.frames.columns import (
    Column,
    bool_column,
    category_column,
    counts_column,
    duration_column,
    int_column,
    time_column,
)
from ledgerviz.frames.keys import int64_of, keyed_counts, latest_in_rows, nullable, opened_rows
from ledgerviz.frames.view import SessionsView
from ledgerviz.frames.view_table import ViewTable, integer_array
from ledgerviz.ledger.shapes import MAX_INTEGER
from ledgerviz.ledger.table import MISSING
from ledgerviz.recovery.result_columns import STATUS_CODE

TURN_SCHEMA = {
    "turn": int_column,
    "start_seq": int_column,
    "end_seq": int_column,
    "start_time": time_column,
    "end_time": time_column,
    "duration": duration_column,
    "end_reason": category_column,
    "steps": int_column,
    "calls": int_column,
    "outcome_unknown": int_column,
    "not_started": int_column,
    "forked": bool_column,
}

STEP_SCHEMA = {
    "turn": int_column,
    "step": int_column,
    "start_seq": int_column,
    "end_seq": int_column,
    "start_time": time_column,
    "end_time": time_column,
    "provider": category_column,
    "model": category_column,
    "input_tokens": int_column,
    "output_tokens": int_column,
    "cache_read_tokens": int_column,
    "reasoning_tokens": int_column,
    "calls": int_column,
}

USAGE_COLUMNS = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_read_tokens": "cacheReadTokens",
    "reasoning_tokens": "reasoningTokens",
}
"""The token columns of ``STEP_SCHEMA`` and the ``usage`` key each one sums."""

TURN_EVENTS = frozenset({"turn/start", "turn/end", "step/start"})
ROUTE_EVENTS = frozenset({"request/header", "request/context"})
STEP_EVENTS = frozenset({"step/start", "step/end", "assistant/message"}) | ROUTE_EVENTS

# The rows of a frame are one list per slot. The first slot is the session index; the start
# and end slots hold the position of the event in the view (-1: none); the last two, the
# positions of the first and the latest event that changed the row (``EXTENT``: a prefix of
# the view changes only the rows it reaches). ``STEP_ROW`` also lays out a step row under
# construction as one plain list (``add_assistant``, the streamed OTLP export).
EXTENT = ("first", "last")
STEP_ROW = ("session", "turn", "step", "start", "end", "provider", "model", *USAGE_COLUMNS,
             *EXTENT)
STEP_FACTS = ("provider", "model", *USAGE_COLUMNS)
"""The ``steps`` columns read from the step's own events (besides its seqs, times, calls)."""
_S_PROVIDER, _S_MODEL = 5, 6
_S_USAGE = tuple(enumerate(USAGE_COLUMNS.values(), start=7))
NO_ROUTE: tuple[Any, Any] = (None, None)


def turn_rows(view: SessionsView) -> dict[str, list[Any]]:
    """Return the turn rows of the view's events (from ``view.start`` on), one list per slot
    (``session``, ``turn``, ``start``, ``end``, ``end_reason``, ``steps`` and ``EXTENT``).

    A turn/start opens a row, as does the first event of a (session, turn) key; every
    turn/start, turn/end and step/start counts in the latest row of its key.
    """
    return listed(turn_arrays(view))


def turn_arrays(view: SessionsView) -> dict[str, np.ndarray]:
    """Return :func:`turn_rows` as one numpy array per slot (``turn``: int64, ``MISSING``
    where absent; ``end_reason``: objects)."""
    positions = view.positions_of(TURN_EVENTS)
    kinds = view.type_array[positions]  # a categorical: compared by code
    is_start, is_end = kinds == "turn/start", kinds == "turn/end"
    sessions, turns = view.sessions[positions], view.table.take("turn", positions)
    row, openers = opened_rows([sessions, turns], is_start)
    count = len(openers)
    end = latest_in_rows(count, row[is_end], positions[is_end])
    reasons = view.table.take("end_reason", end)
    reasons[end < 0] = None
    return {
        "session": sessions[openers],
        "turn": turns[openers],
        "start": np.where(is_start[openers], positions[openers], -1),
        "end": end,
        "end_reason": reasons,
        "steps": np.bincount(row[kinds == "step/start"], minlength=count),
        "first": positions[openers],
        "last": latest_in_rows(count, row, positions),
    }


_NULLABLE = frozenset({"turn", "step", *USAGE_COLUMNS})
"""The int slots of turn and step rows that may be absent (``MISSING`` in an array, None
in a list)."""
_OBJECTS = frozenset({"end_reason", "provider", "model"})
"""The slots of turn and step rows that hold ledger values as they are."""


def listed(rows: dict[str, np.ndarray]) -> dict[str, list[Any]]:
    """Return rows given as arrays (:func:`turn_arrays`, :func:`step_arrays`) as lists."""
    return {name: nullable(values) if name in _NULLABLE else values.tolist()
            for name, values in rows.items()}


def arrays_of(rows: dict[str, list[Any]]) -> dict[str, np.ndarray]:
    """Return rows given as lists (:func:`listed`) as arrays."""
    return {name: np.fromiter(values, dtype=object, count=len(values)) if name in _OBJECTS
            else int64_of(values) for name, values in rows.items()}


def _spans(view: SessionsView, starts: list[int] | np.ndarray, ends: list[int] | np.ndarray
           ) -> dict[str, Column]:
    """Return the seq and time columns of rows spanning event positions ``starts``..``ends``."""
    return {
        "start_seq": view.seq_at(starts),
        "end_seq": view.seq_at(ends),
        "start_time": view.time_at(starts),
        "end_time": view.time_at(ends),
    }


def turn_columns(view: SessionsView, arrays: dict[str, np.ndarray] | None = None
                 ) -> dict[str, Column]:
    """Return the ``turns`` columns of every session (``arrays``: its :func:`turn_arrays`,
    when made already)."""
    arrays = turn_arrays(view) if arrays is None else arrays
    spans = _spans(view, arrays["start"], arrays["end"])
    return {
        "session": arrays["session"],
        "turn": integer_array(arrays["turn"]),
        **spans,
        "duration": spans["end_time"] - spans["start_time"],
        "end_reason": arrays["end_reason"].tolist(),
        "steps": counts_column(arrays["steps"]),
        **turn_outcomes(view, arrays["session"], arrays["turn"], arrays["end_reason"], spans),
    }


def turn_outcomes(view: SessionsView, sessions: np.ndarray, turns: np.ndarray,
                  reasons: np.ndarray, spans: dict[str, Column]) -> dict[str, Column]:
    """Return the columns of turn rows that depend on the policy's analysis (their calls by
    status, and whether they forked), given the rows' sessions, turns (int64), reasons and
    spans."""
    counts = _turn_call_counts(view, sessions, turns)
    return {**{name: counts_column(found) for name, found in counts.items()},
            "forked": forked(view, sessions, np.fromiter(map(eq, reasons, repeat("forked")),
                                                         dtype=bool, count=len(reasons)), spans)}


TURN_CALL_COUNTS = ("calls", "outcome_unknown", "not_started")
"""The ``turns`` columns that count the turn's calls (all, and by status)."""


def turn_call_counts(view: SessionsView, sessions: list[int], turns: list[Any]
                     ) -> dict[str, list[int]]:
    """Return the :data:`TURN_CALL_COUNTS` columns of turn rows (their sessions and turns)."""
    counts = _turn_call_counts(view, int64_of(sessions), int64_of(turns))
    return {name: found.tolist() for name, found in counts.items()}


def _turn_call_counts(view: SessionsView, sessions: np.ndarray, turns: np.ndarray
                      ) -> dict[str, np.ndarray]:
    """Return :func:`turn_call_counts` of int64 keys, as arrays."""
    rows = [sessions, turns]
    calls = [view.call_sessions, view.call_int64("turn")]
    statuses = np.frombuffer(view.calls.status, np.int8)
    return {
        "calls": keyed_counts(rows, calls),
        **{status: keyed_counts(rows, [key[statuses == STATUS_CODE[status]] for key in calls])
           for status in TURN_CALL_COUNTS[1:]},
    }


def forked(view: SessionsView, sessions: list[int] | np.ndarray, ended_forked: np.ndarray,
           spans: dict[str, Column]) -> np.ndarray:
    """Return per turn whether it ended ``forked`` (``ended_forked``) or spans a fork point
    of its session (open ends: no limit)."""
    starts = spans["start_seq"].to_numpy(dtype=float, na_value=-np.inf)
    ends = spans["end_seq"].to_numpy(dtype=float, na_value=np.inf)
    out = ended_forked.copy()
    row_sessions = np.asarray(sessions, dtype=np.int64)
    for session, analysis in enumerate(view.analyses):
        for point in analysis.fork_points:
            out |= (row_sessions == session) & (starts <= point) & (point <= ends)
    return out


def step_rows(view: SessionsView, route: tuple[Any, Any] = NO_ROUTE) -> dict[str, list[Any]]:
    """Return the step rows of the view's events (from ``view.start`` on, where ``route``,
    the provider and model, holds in the first session), one list per slot of ``STEP_ROW``
    (see :func:`step_arrays`)."""
    return listed(step_arrays(view, route))


def step_arrays(view: SessionsView, route: tuple[Any, Any] = NO_ROUTE
                ) -> dict[str, np.ndarray]:
    """Return the step rows of the view's events (from ``view.start`` on, where ``route``,
    the provider and model, holds in the first session), one numpy array per slot of
    ``STEP_ROW``: ``turn``, ``step`` and the token sums int64 (``MISSING``: absent),
    ``provider`` and ``model`` objects.

    A step/start opens a row, as does the first step/end or assistant/message of a
    (session, turn, step) key; the others count in the latest row of their key. A row's
    route is the latest of: the route when it opened, the route a request event sets while
    it is the open step (opened by a step/start, no step/end since), the source model of one
    of its assistant messages. Its token counts sum its assistant messages' usage.
    """
    positions = view.positions_of(STEP_EVENTS)
    kinds = view.type_array[positions]  # a categorical: compared by code
    table, sessions = view.table, view.sessions[positions]
    requests = (kinds == "request/header") | (kinds == "request/context")
    routes = _routes(positions, sessions, np.flatnonzero(requests & _named(table, positions)))
    steps = np.flatnonzero(~requests)  # the indices (into positions) of the step events
    is_start = kinds[steps] == "step/start"
    step_row, step_openers = opened_rows(
        [sessions[steps], table.take("turn", positions[steps]),
         table.take("step", positions[steps])], is_start)
    openers = steps[step_openers]
    count = len(openers)
    row = np.full(len(positions), -1, dtype=np.int64)
    row[steps] = step_row
    open_row = _open_rows(sessions, row, kinds == "step/start", kinds == "step/end")
    held = requests & (open_row >= 0)
    assistants = steps[kinds[steps] == "assistant/message"]
    modelled = assistants[_named(table, positions[assistants])]
    # (row, event, where its route comes from) of everything that sets a row's route
    setters = [(np.arange(count), openers, routes[openers]),
               (open_row[held], np.flatnonzero(held), routes[held]),
               (row[modelled], modelled, positions[modelled])]
    setter_rows, events, sources = (np.concatenate(parts) for parts in zip(*setters, strict=True))
    order = np.lexsort((events, setter_rows))
    last = np.ones(len(order), dtype=bool)
    last[:-1] = setter_rows[order][1:] != setter_rows[order][:-1]
    source = sources[order][last]  # per row: a position, -1 ``route``, -2 no route
    out: dict[str, np.ndarray] = {
        "session": sessions[openers],
        "turn": table.take("turn", positions[openers]),
        "step": table.take("step", positions[openers]),
        "start": np.where(kinds[openers] == "step/start", positions[openers], -1),
        "end": latest_in_rows(count, row[kinds == "step/end"],
                              positions[kinds == "step/end"]),
        **{name: _route_values(table, name, source, value)
           for name, value in zip(("provider", "model"), route, strict=True)},
    }
    for name in USAGE_COLUMNS:
        counts = table.take(name, positions[assistants])
        counted = counts != MISSING  # the table holds a usable count or none
        out[name] = _sums(count, row[assistants][counted], counts[counted], name,
                          partial(_step_named, view, out))
    reach = np.concatenate([row, open_row[held]])
    at = np.concatenate([positions, positions[held]])
    out["first"] = positions[openers]
    out["last"] = latest_in_rows(count, reach[reach >= 0], at[reach >= 0])
    return out


def _step_named(view: SessionsView, rows: dict[str, np.ndarray], row: int) -> str:
    """Return the step row ``row`` of ``rows`` as an error names it: session, turn, step."""
    turn, step = (nullable(rows[name][row : row + 1])[0] for name in ("turn", "step"))
    return f"session {view.keys[rows['session'][row]]!r}, turn {turn}, step {step}"


def _named(table: Any, positions: np.ndarray) -> np.ndarray:
    """Return whether the events at ``positions`` name a model (see ``EventTable.model``)."""
    return np.not_equal(table.take("model", positions), None)


def _routes(positions: np.ndarray, sessions: np.ndarray, setters: np.ndarray) -> np.ndarray:
    """Return where the route at each event (at ``positions``, of ``sessions``) comes from:
    the position of the latest request event naming a model (``setters``: their indices)
    in its session up to it; else -1 in the first session (the route given), -2 in the
    others (no route)."""
    count = len(sessions)
    latest = np.full(count, -1, dtype=np.int64)
    latest[setters] = setters
    latest = np.maximum.accumulate(latest) if count else latest
    own = (latest >= 0) & (sessions[np.maximum(latest, 0)] == sessions)
    fallback = np.where(sessions == sessions[0], -1, -2) if count else latest
    return np.where(own, positions[np.maximum(latest, 0)], fallback)


def _open_rows(sessions: np.ndarray, rows: np.ndarray, starts: np.ndarray,
               ends: np.ndarray) -> np.ndarray:
    """Return the open step row at each event: the row of the latest step/start of its
    session with no step/end after it, up to the event (-1: none)."""
    count = len(sessions)
    latest = np.full(count, -1, dtype=np.int64)
    marks = np.flatnonzero(starts | ends)
    latest[marks] = marks
    latest = np.maximum.accumulate(latest) if count else latest
    at = np.maximum(latest, 0)
    is_open = (latest >= 0) & starts[at] & (sessions[at] == sessions)
    return np.where(is_open, rows[at], -1)


def _route_values(table: ViewTable, name: str, sources: np.ndarray, given: Any) -> np.ndarray:
    """Return a route slot per row from where each row's route comes from (``_routes``,
    or an assistant's own position): column ``name``'s value there, ``given``, or None."""
    values = table.take(name, np.maximum(sources, 0))
    values[sources == -1] = given
    values[sources == -2] = None
    return values


def _sums(count: int, rows: np.ndarray, counts: np.ndarray, name: str,
          where: Callable[[int], str]) -> np.ndarray:
    """Return the sum of ``counts`` in each of ``count`` rows as int64, ``MISSING`` in a row
    without one.

    The sums are exact: int64 when no row can pass its largest value (each count is at
    most 2**53 - 1, so a row needs over 1,024 of them), else summed as Python ints; a sum beyond
    int64 (what the ``Int64`` column holds) raises ``OverflowError`` naming the row
    (``where``) and the column ``name``.
    """
    held = np.bincount(rows, minlength=count)
    if int(counts.max(initial=0)) * int(held.max(initial=0)) <= _INT64_MAX:
        sums = np.zeros(count, dtype=np.int64)
        np.add.at(sums, rows, counts)
    else:
        objects = np.zeros(count, dtype=object)
        np.add.at(objects, rows, counts.astype(object))
        beyond = np.flatnonzero(objects > _INT64_MAX)
        if len(beyond):
            row = int(beyond[0])
            raise OverflowError(f"{where(row)}: its {name} sum to {objects[row]}, beyond the "
                                f"largest the steps frame holds ({_INT64_MAX})")
        sums = objects.astype(np.int64)
    sums[held == 0] = MISSING
    return sums


_INT64_MAX = (1 << 63) - 1


def route_before(view: SessionsView, position: int) -> tuple[Any, Any]:
    """Return the (provider, model) route the request events before ``position`` set."""
    requests = view.from_position(0).positions_of(ROUTE_EVENTS, stop=position)
    named = requests[_named(view.table, requests)]
    if not len(named):
        return NO_ROUTE
    last = named[-1]
    return view.table.take("provider", [last])[0], view.table.take("model", [last])[0]


def step_columns(view: SessionsView, arrays: dict[str, np.ndarray] | None = None
                 ) -> dict[str, Column]:
    """Return the ``steps`` columns of every session (``arrays``: its :func:`step_arrays`,
    when made already)."""
    arrays = step_arrays(view) if arrays is None else arrays
    return {
        "session": arrays["session"],
        **{name: integer_array(arrays[name]) for name in ("turn", "step", *USAGE_COLUMNS)},
        **_spans(view, arrays["start"], arrays["end"]),
        "provider": arrays["provider"].tolist(),
        "model": arrays["model"].tolist(),
        "calls": counts_column(_step_calls(view, arrays["session"], arrays["turn"],
                                           arrays["step"])),
    }


def step_calls(view: SessionsView, sessions: list[int], turns: list[Any],
               steps: list[Any]) -> list[int]:
    """Return how many of the analysis' calls each (session, turn, step) row holds."""
    return _step_calls(view, int64_of(sessions), int64_of(turns), int64_of(steps)).tolist()


def _step_calls(view: SessionsView, sessions: np.ndarray, turns: np.ndarray,
                steps: np.ndarray) -> np.ndarray:
    """Return :func:`step_calls` of int64 keys, as an array."""
    return keyed_counts([sessions, turns, steps], [
        view.call_sessions, view.call_int64("turn"), view.call_int64("step")])


def add_assistant(row: list[Any], data: dict[str, Any]) -> None:
    """Fold one assistant/message into its step row: model route and token usage."""
    message = data.get("message")
    source = message.get("source") if isinstance(message, dict) else None
    if isinstance(source, dict) and source.get("model") is not None:
        row[_S_PROVIDER], row[_S_MODEL] = source.get("provider"), source["model"]
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return
    for slot, key in _S_USAGE:
        count = usage.get(key)
        if type(count) is int and 0 <= count <= MAX_INTEGER:
            row[slot] = (row[slot] or 0) + count
