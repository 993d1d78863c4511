"""How one session descends from another: parent, kind of link, inherited prefix (stdlib)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Literal, NamedTuple, get_args

from ledgerviz.ledger.diagnostics import Diagnostic
from ledgerviz.ledger.session import SessionLog
from ledgerviz.wording import counted, one_or_many

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


class SeedCheck:
    """Follows a session's events, block by block, to tell whether the inherited prefix its
    lineage claims (see :func:`inherited_count`) fits the events the file holds."""

    def __init__(self) -> None:
        self.events = 0
        self._marker: tuple[int, int, Any, Any] | None = None
        """The last ``session/end-seed`` seen: its line, position, seq and data."""

    def observe(self, types: list[Any], seqs: list[Any], datas: list[Any],
                lines: Sequence[int]) -> None:
        """Take the next events, as their type, seq and data columns and their file lines."""
        if SEED_MARKER in types:
            for i, kind in enumerate(types):
                if kind == SEED_MARKER and inherited_count({}, 4, [(seqs[i], datas[i])]):
                    self._marker = (lines[i], self.events + i, seqs[i], datas[i])
        self.events += len(types)

    def problem(self, header: dict[str, Any], version: int | None) -> tuple[int, str] | None:
        """Return the line and text of a warning when the inherited prefix runs past the
        events before the seed's end (v0/v1: past the file's events), else None."""
        if version in (None, 0, 1):
            inherited = inherited_count(header, version, ())
            if inherited <= self.events:
                return None
            return 1, (f"header seedLength {inherited} counts more events than the file holds "
                       f"({self.events}): all of them are read as inherited from the parent")
        if self._marker is None:
            return None
        line, before, seq, data = self._marker
        inherited = inherited_count(header, version, [(seq, data)])
        if inherited <= before:
            return None
        read = min(inherited, self.events)
        return line, (f"session/end-seed says {counted(inherited, 'event')} "
                      f"{one_or_many(inherited, 'was', 'were')} inherited, but {before} "
                      f"{one_or_many(before, 'comes', 'come')} before it: the first "
                      f"{counted(read, 'event')} {one_or_many(read, 'is', 'are')} read as "
                      "inherited from the parent")


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


def with_parent_warnings(logs: list[SessionLog]) -> list[SessionLog]:
    """Return the logs (keys unique), each one whose ``parentSession`` is the id of
    several others given a warning: its parent cannot be told apart, and the lineage
    names the first (the one that kept the id as its key). Normalised snapshots, whose
    ids are all ``{{sessionId}}``, get it too: their lineage is a guess."""
    holders: dict[str, list[str]] = {}
    for log in logs:
        session_id = log.header.get("id")
        if isinstance(session_id, str):
            holders.setdefault(session_id, []).append(log.key)
    warned = []
    for log in logs:
        parent = log.header.get("parentSession")
        held = holders.get(parent, []) if isinstance(parent, str) else []
        keys = [key for key in held if key != log.key]  # never its own parent
        if len(keys) < 2:
            warned.append(log)
            continue
        message = (f"parentSession {parent!r} is the id of {len(keys)} loaded sessions "
                   f"({', '.join(map(repr, keys))}): the lineage names the first")
        warning = Diagnostic(log.path, 1, "ambiguous_parent", "warning", message)
        warned.append(replace(log, diagnostics=[*log.diagnostics, warning]))
    return warned
