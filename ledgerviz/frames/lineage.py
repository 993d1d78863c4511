"""The ``lineage`` frame: how the loaded sessions descend from one another."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ledgerviz.frames.columns import bool_column, category_column, int_column, string_column
from ledgerviz.frames.view import SessionView

RELATIONS = ("root", "fork", "subagent", "forked-subagent")

LINEAGE_SCHEMA = {
    "parent_session": string_column,
    "relation": lambda values: category_column(values, RELATIONS),
    "seeded": bool_column,
    "inherited_events": int_column,
    "origin": category_column,
    "delegation_depth": int_column,
    "agent_preset": category_column,
}

_LINEAGE_EVENTS = frozenset({"session/end-seed", "subagent/catalog", "subagent/descriptor"})


def catalog_parents(views: Sequence[SessionView]) -> dict[str, str]:
    """Return child session id -> parent id from the loaded ``subagent/catalog`` events.

    Only ids that name exactly one loaded session (placeholder ids such as
    ``{{sessionId}}`` repeat across snapshots) and not the cataloguing session count.
    """
    ids = Counter(view.log.header.get("id") for view in views)
    parents = {}
    for view in views:
        own = view.log.header.get("id")
        for i in view.indices_of(_LINEAGE_EVENTS):
            child = view.datas[i].get("childId")
            if view.types[i] == "subagent/catalog" and ids[child] == 1 and child != own:
                parents[child] = own
    return parents


def lineage_row(view: SessionView, parents: dict[str, str]) -> dict[str, list[Any]]:
    """Return the one-row ``lineage`` columns of a session (header plus lineage events)."""
    header = view.log.header
    inherited = header.get("seedLength") if view.log.version in (None, 0, 1) else None
    descriptor = None
    for i in view.indices_of(_LINEAGE_EVENTS):
        kind, data = view.types[i], view.datas[i]
        if kind == "session/end-seed" and data.get("inherited") is True:
            inherited = view.analysis.seqs[i]
        elif kind == "subagent/descriptor":
            descriptor = data
    seeded = header.get("isSeeded") is True or type(inherited) is int
    parent = header.get("parentSession") or parents.get(header.get("id"))
    depth = header.get("delegationDepth")
    subagent = header.get("origin") == "subagent" or descriptor is not None
    subagent = subagent or (type(depth) is int and depth > 0)
    if subagent:
        relation = "forked-subagent" if seeded else "subagent"
    else:
        relation = "fork" if seeded or parent else "root"
    return {
        "parent_session": [parent],
        "relation": [relation],
        "seeded": [seeded],
        "inherited_events": [inherited if type(inherited) is int else 0],
        "origin": [header.get("origin")],
        "delegation_depth": [depth],
        "agent_preset": [header.get("agentPreset")],
    }
