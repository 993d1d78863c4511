"""The ``lineage`` frame: how the loaded sessions descend from one another."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from ledgerviz.frames.columns import (
    bool_column,
    category_column,
    int_column,
    string_column,
    transpose,
)
from ledgerviz.frames.view import SessionsView
from ledgerviz.ledger.lineage import (
    LINEAGE_EVENTS,
    RELATIONS,
    SEED_MARKER,
    inherited_count,
    lineage_of,
)

CATALOG = "subagent/catalog"
"""The event by which a session names the subagent sessions it started (their parent)."""

LINEAGE_SCHEMA = {
    "parent_session": string_column,
    "relation": lambda values: category_column(values, RELATIONS),
    "seeded": bool_column,
    "inherited_events": int_column,
    "boundary_seq": int_column,
    "origin": category_column,
    "delegation_depth": int_column,
    "agent_preset": category_column,
}


def lineage_columns(view: SessionsView) -> dict[str, list[Any]]:
    """Return the ``lineage`` columns: one row per session (header plus lineage events)."""
    found: dict[int, list[int]] = defaultdict(list)  # session -> its lineage event positions
    for position in view.indices_of(LINEAGE_EVENTS):
        found[view.sessions[position]].append(position)
    parents = catalog_parents(view, found)
    rows = [
        lineage_row(view, session, found.get(session, []), parents)
        for session in range(len(view.keys))
    ]
    return {"session": list(range(len(view.keys))), **transpose(rows, tuple(LINEAGE_SCHEMA))}


def catalog_parents(view: SessionsView, found: dict[int, list[int]]) -> dict[str, str]:
    """Return child session id -> parent id from the loaded ``subagent/catalog`` events.

    ``found`` gives each session's lineage event positions. Only ids that name exactly
    one loaded session (placeholder ids such as ``{{sessionId}}`` repeat across
    snapshots) and not the cataloguing session count; an id that is not a string never does.
    """
    ids = Counter(key for log in view.logs if isinstance(key := log.header.get("id"), str))
    parents = {}
    for session, positions in found.items():
        own = view.logs[session].header.get("id")
        for i in positions:
            child = view.datas[i].get("childId")
            if (view.types[i] == CATALOG and isinstance(child, str)
                    and ids[child] == 1 and child != own):
                parents[child] = own
    return parents


def lineage_row(
    view: SessionsView, session: int, positions: list[int], parents: dict[str, str]
) -> tuple[Any, ...]:
    """Return the ``lineage`` row of one session from its header and lineage events."""
    log = view.logs[session]
    header = log.header
    key = header.get("id")
    lineage = lineage_of(
        header,
        inherited_count(
            header,
            log.version,
            ((view.seqs[i], view.datas[i]) for i in positions if view.types[i] == SEED_MARKER),
        ),
        catalog_parent=parents.get(key) if isinstance(key, str) else None,
        has_descriptor=any(view.types[i] == "subagent/descriptor" for i in positions),
    )
    return (
        lineage.parent,
        lineage.relation,
        lineage.seeded,
        lineage.inherited,
        lineage.boundary,
        header.get("origin"),
        header.get("delegationDepth"),
        header.get("agentPreset"),
    )
