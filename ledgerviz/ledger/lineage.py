"""How one session descends from another: parent, kind of link, inherited prefix (stdlib)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NamedTuple, get_args

Relation = Literal["root", "fork", "subagent", "forked-subagent"]
RELATIONS: tuple[Relation, ...] = get_args(Relation)

SEED_MARKER = "session/end-seed"
LINEAGE_EVENTS = frozenset({SEED_MARKER, "subagent/catalog", "subagent/descriptor"})


class Lineage(NamedTuple):
    """One session's link to its parent.

    ``inherited`` counts the leading events copied from the parent (the seq of the last
    ``session/end-seed {inherited: true}``; v0/v1: the header's ``seedLength``), and
    ``boundary`` is the parent's seq the child was cut after (``inherited - 1``; None
    when nothing was inherited).
    """

    parent: str | None
    relation: Relation
    seeded: bool
    inherited: int
    boundary: int | None


def inherited_count(
    header: dict[str, Any], version: int | None, markers: Iterable[tuple[Any, Any]]
) -> int:
    """Return how many leading events of a session were inherited from its parent.

    ``markers`` are the ``(seq, data)`` of its ``session/end-seed`` events in log order;
    the last ``{inherited: true}`` one counts (v0/v1: the header's ``seedLength``).
    """
    if version in (None, 0, 1):
        length = header.get("seedLength")
        return length if type(length) is int and length > 0 else 0
    count = 0
    for seq, data in markers:
        if isinstance(data, dict) and data.get("inherited") is True and type(seq) is int:
            count = seq
    return count


def lineage_of(
    header: dict[str, Any],
    inherited: int,
    *,
    catalog_parent: str | None = None,
    has_descriptor: bool = False,
) -> Lineage:
    """Return a session's :class:`Lineage` from its header and inherited count.

    ``catalog_parent`` is the session whose ``subagent/catalog`` names this one;
    ``has_descriptor`` whether it holds a ``subagent/descriptor``.
    """
    seeded = header.get("isSeeded") is True or inherited > 0
    parent = header.get("parentSession") or catalog_parent
    depth = header.get("delegationDepth")
    subagent = header.get("origin") == "subagent" or has_descriptor
    subagent = subagent or (type(depth) is int and depth > 0)
    relation: Relation
    if subagent:
        relation = "forked-subagent" if seeded else "subagent"
    else:
        relation = "fork" if seeded or parent else "root"
    return Lineage(parent, relation, seeded, inherited, inherited - 1 if inherited else None)
