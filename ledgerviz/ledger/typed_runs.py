"""The typed check of a run of whole files at once: many small sessions, one pass per column.

``typed.typed_block`` checks one block of one file; a folder of small sessions pays its
fixed cost (a few dozen list and dict passes) once per file. ``typed_run`` checks the events
of several whole files (each decoded on its own by ``typed_schema.decoded``: a line is
judged alone, as the reader judges it) as one block, with what ties the check to one
session made per file: the seqs count from 0 in each, a turn or step is open at no file's
start, call ids are told apart by file (one file's ``call-1`` is not another's), and each
file's start cuts the turns the ids are unique in. It accepts the run exactly when
``typed_block`` would accept every file on its own as its only block, from a fresh
``CheckState`` (tests/ledger/test_typed_runs.py), and returns one ``TypedBlock`` over all
of them, which ``typed_table.table_of`` tables at once (``EventTable.split`` gives each
file's rows back).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, chain, pairwise, repeat
from typing import Any

from ledgerviz.ledger.boundaries import OpenBoundaries
from ledgerviz.ledger.typed import (
    TypedBlock,
    _answers,
    _boundaries_after,
    _messages,
    _once_per_turn,
    _replaced,
    _requests,
    _without_rows,
    by_type,
)
from ledgerviz.ledger.typed_schema import Schema
from ledgerviz.ledger.vocabulary import surface_types


def typed_run(parts: Sequence[list[Any]], first_line: int, version: int | None,
              schema: Schema) -> TypedBlock | None:
    """Return the events of several files (``parts``: each file's decoded events, from
    file line ``first_line`` on, none empty; format ``version``, whose schema is ``schema``)
    as one ``TypedBlock`` (its rows the files' one after another), or None when
    ``typed.typed_block`` would refuse one of them as its file's only block."""
    counts = list(map(len, parts))
    firsts = list(accumulate(counts, initial=0))
    events = list(chain.from_iterable(parts))
    seqs = [event.seq for event in events]
    if seqs != list(chain.from_iterable(map(range, counts))):
        return None  # a file whose seqs do not count from 0
    replaced = _replaced(events)
    codes, rows, datas = by_type(events, schema)
    letters = codes.translate(schema.letters)
    if any(_boundaries_after(OpenBoundaries(), letters[start:stop], datas[start:stop],
                             first_line) is None
           for start, stop in pairwise(firsts)):
        return None
    surface = surface_types(version)
    messages = _messages(rows, datas, surface)
    if messages is None:
        return None
    requests = _requests(rows.get("assistant/message", ()), messages.get("assistant/message"))
    results = rows.get("tool/result", ())
    answers = _answers([datas[row] for row in results],
                       messages["tool/result"].messages if "tool/result" in messages else [])
    owner = list(chain.from_iterable(map(repeat, range(len(counts)), counts)))
    fresh = ([(owner[row], block.id) for row, block in requests]
             if "assistant/message" in surface else [])
    if len(set(fresh)) != len(fresh):
        return None  # requested twice in one file
    if "tool/result" in surface:
        asked = dict(zip(fresh, [row for row, _ in requests], strict=True))
        if not all(asked.get((owner[row], call_id), row) < row
                   for row, call_id in zip(results, answers.checked, strict=True)):
            return None  # names no call its file's assistant asked for before it
    turn_cuts = sorted([*rows.get("turn/start", ()), *rows.get("turn/end", ()), *firsts[1:-1]])
    calls = rows.get("tool/call", ())
    answering = results, answers.checked
    if replaced:
        answering = _without_rows(*answering, frozenset(replaced))
    if (_once_per_turn(calls, [datas[row].callId for row in calls], turn_cuts, set()) is None
            or _once_per_turn(*answering, turn_cuts, set()) is None):
        return None  # dispatched or answered twice in one turn
    lines = list(chain.from_iterable(range(first_line, first_line + count) for count in counts))
    return TypedBlock(list(map(schema.names.__getitem__, codes)), seqs, datas, lines, events, rows,
                      messages, requests, answers, codes, schema, replaced)
