"""A diff's differing rows and call status changes as display tables (HTML and text from one
table: the command prints them, the page and the notebook show them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ledgerviz.compare.session_diff import KIND_WORDS
from ledgerviz.display.fragments import Table, cell, empty_note, rich_block
from ledgerviz.html import escape

if TYPE_CHECKING:
    from ledgerviz.compare.session_diff import SessionDiff

REPR_ROWS = 20
"""Differing rows a notebook display lists."""


def differing_rows(diff: SessionDiff, limit: int) -> Table:
    """Return the first ``limit`` rows that are not ``same``: kind, both seqs and types,
    what differs; the rest are counted in the footer."""
    rows = [n for n, kind in enumerate(diff.kinds) if kind != "same"]

    def side(values: list[Any], index: int | None) -> str:
        return "" if index is None else str(values[index])

    cells = []
    for row in rows[:limit]:
        i, j = diff.rows[row]
        cells.append([cell(KIND_WORDS[diff.kinds[row]]), cell(side(diff.a.seqs, i)),
                      cell(side(diff.a.keys.types, i)), cell(side(diff.b.seqs, j)),
                      cell(side(diff.b.keys.types, j)), cell(", ".join(diff.differs(row)))])
    return Table(("kind", "a seq", "a type", "b seq", "b type", "differs"), cells,
                 hidden=max(len(rows) - limit, 0), noun="differing row")


def status_changes(diff: SessionDiff, limit: int) -> Table:
    """Return the first ``limit`` calls whose status differs; the rest are counted."""
    changes = diff.status_changes
    cells = [[cell(str(a.name)), cell(a.call_id), cell(a.status), cell(b.call_id),
              cell(b.status)] for a, b in changes[:limit]]
    return Table(("tool", "a call", "a status", "b call", "b status"), cells,
                 hidden=max(len(changes) - limit, 0), noun="call")


def diff_html(diff: SessionDiff) -> str:
    """Return the notebook display of a diff: where the sessions part, the counts and the
    first :data:`REPR_ROWS` differing rows, with a text fallback."""
    title = f"SessionDiff {diff.a.key} vs {diff.b.key}"
    lines = [diff.divergence_text(), diff.counts_text()]
    if diff.same:
        return rich_block(escape(title), empty_note(lines[0]), f"{title}\n{lines[0]}")
    table = differing_rows(diff, REPR_ROWS)
    summary = "".join(f"<p>{escape(line)}</p>" for line in lines)
    return rich_block(escape(title), summary + table.html(),
                      "\n".join([title, *lines, table.text()]))
