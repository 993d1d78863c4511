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
    "anchor_call_id": string_column,
    "anchor_seq": int_column,
    "origin": category_column,
    "delegation_depth": int_column,
    "agent_preset": category_column,
}


def lineage_columns(view: SessionsView) -> dict[str, list[Any]]:
    """Return the ``lineage`` columns: one row per session (header plus lineage events)."""
    found: dict[int, list[int]] = defaultdict(list)  # session -> its lineage event positions
    for position in view.indices_of(LINEAGE_EVENTS):
        found[view.sessions[position]].append(position)
    catalogs = catalog_positions(view, found)
    parents = {child: view.logs[view.sessions[i]].header["id"] for child, i in catalogs.items()}
    anchors = anchors_of(view, catalogs)
    rows = [
        lineage_row(view, session, found.get(session, []), parents, anchors)
        for session in range(len(view.keys))
    ]
    return {"session": list(range(len(view.keys))), **transpose(rows, tuple(LINEAGE_SCHEMA))}


def catalog_positions(view: SessionsView, found: dict[int, list[int]]) -> dict[str, int]:
    """Return child session id -> the position of the loaded ``subagent/catalog`` event
    naming it (its parent's).

    ``found`` gives each session's lineage event positions. Only ids that name exactly
    one loaded session (placeholder ids such as ``{{sessionId}}`` repeat across
    snapshots) and not the cataloguing session count; an id that is not a string never
    does; a catalog a session inherited (before its ``session/end-seed``) is its parent's,
    not its own.
    """
    ids = Counter(key for log in view.logs if isinstance(key := log.header.get("id"), str))
    catalogs: dict[str, int] = {}
    for session, positions in found.items():
        own = view.logs[session].header.get("id")
        seed = next((i for i in positions if view.type_at(i) == SEED_MARKER), -1)
        for i in positions:
            child = view.data_at(i).get("childId")
            if (view.type_at(i) == CATALOG and i > seed and isinstance(child, str)
                    and ids[child] == 1 and child != own):
                catalogs[child] = i
    return catalogs


def anchors_of(view: SessionsView, catalogs: dict[str, int]) -> dict[str, tuple[str, Any]]:
    """Return child session id -> ``(call id, seq)`` where it hangs from its parent, for
    the children whose catalog names the call that started them (``callId``): that call
    and the seq of its ``tool/call`` in the parent (the catalog's own seq when the call
    was never dispatched)."""
    named = {(view.sessions[i], call): child for child, i in catalogs.items()
             if isinstance(call := view.data_at(i).get("callId"), str)}
    anchors: dict[str, tuple[str, Any]] = {}
    if not named:
        return anchors
    for i in view.indices_of(("tool/call",)):
        call = view.data_at(i).get("callId")
        child = named.get((view.sessions[i], call))
        if child is not None and child not in anchors:
            anchors[child] = (call, view.seqs[i])
    for (_, call), child in named.items():
        anchors.setdefault(child, (call, view.seqs[catalogs[child]]))
    return anchors


def lineage_row(
    view: SessionsView, session: int, positions: list[int], parents: dict[str, str],
    anchors: dict[str, tuple[str, Any]],
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
            ((view.seqs[i], view.data_at(i)) for i in positions if view.type_at(i) == SEED_MARKER),
        ),
        catalog_parent=parents.get(key) if isinstance(key, str) else None,
        has_descriptor=any(view.type_at(i) == "subagent/descriptor" for i in positions),
    )
    return (
        lineage.parent,
        lineage.relation,
        lineage.seeded,
        lineage.inherited,
        lineage.boundary,
        *(anchors.get(key, (None, None)) if isinstance(key, str) else (None, None)),
        header.get("origin"),
        header.get("delegationDepth"),
        header.get("agentPreset"),
    )
