"""The ``parentUuid`` graph of a Claude Code session: replays, rewinds and the order events
are written in (stdlib).

Only a real rewind branches: a node (or the file's start) with several typed-prompt
children at different times. The branch holding the newest record stays active; the
others are abandoned. Every other node with several children (parallel tool calls and
their results, progress and attachment chains, a compaction's ``logicalParentUuid``) is
read in file order, which Claude Code appends in. A record whose ``uuid`` was seen before
is a replayed copy, as are typed-prompt siblings sharing one timestamp (a compaction
replay) and everything below them: copies are skipped, counted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ledgerviz.ledger.diagnostics import DiagnosticSink
from ledgerviz.ledger.formats.claude_code_entries import Entry


class Branches(NamedTuple):
    """How a session's records are written as events."""

    order: list[int]
    """Indices of the records to write, in writing order (copies left out)."""
    rewinds: dict[int, list[int]]
    """For the first record of each rewind's active branch: the records the rewind
    abandons (written before it)."""
    copies: int
    """Records skipped as replayed copies."""


def plan_branches(
    records: Sequence[Entry],
    in_graph: Sequence[bool],
    log: DiagnosticSink,
) -> Branches:
    """Return the writing plan of ``records`` (``in_graph``: which take part in the
    ``parentUuid`` graph; the others keep their file position)."""
    node_of: dict[str, int] = {}
    skipped: set[int] = set()
    for index, record in enumerate(records):
        if in_graph[index] and record.uuid is not None:
            if record.uuid in node_of:
                skipped.add(index)
            else:
                node_of[record.uuid] = index
    parents = _acyclic_parents(records, node_of, log)
    prompted: dict[str | None, list[int]] = {}  # a node's typed-prompt children
    for index in node_of.values():
        if records[index].prompt:
            prompted.setdefault(parents[index], []).append(index)
    moved: dict[int, float] = {}  # a record's place in writing order, where not its own
    rewinds: dict[int, list[int]] = {}
    # most sessions have no node with two prompts below it: no rewind, no subtree to walk
    forked = any(len(prompts) > 1 for prompts in prompted.values())
    children = _children(node_of, parents) if forked else {}
    below = _Subtrees(records, children)
    for key in children:  # in the order the file first names each node's children
        prompts = prompted.get(key, [])
        if len(prompts) < 2:
            continue
        distinct = _without_replays(records, prompts, below, skipped)
        if len(distinct) < 2:
            continue
        newest = {i: max((records[j].time or 0, j) for j in below.of(i)) for i in distinct}
        active = max(distinct, key=newest.__getitem__)
        abandoned = sorted(j for i in distinct if i != active for j in below.of(i))
        rewinds[active] = abandoned
        late = [j for j in abandoned if j > active]
        for rank, j in enumerate(late, 1):  # written just before the active branch
            moved[j] = active - 1 + rank / (len(late) + 1)
    order = [i for i in range(len(records)) if i not in skipped] if skipped \
        else list(range(len(records)))
    if moved:
        order.sort(key=lambda i: moved.get(i, i))
    return Branches(order, rewinds, len(skipped))


def _children(node_of: dict[str, int], parents: dict[int, str | None]
              ) -> dict[str | None, list[int]]:
    """Return the children of each node (by its key; None: the roots), in file order."""
    children: dict[str | None, list[int]] = {}
    for index in node_of.values():
        children.setdefault(parents[index], []).append(index)
    return children


def _acyclic_parents(
    records: Sequence[Entry], node_of: dict[str, int], log: DiagnosticSink
) -> dict[int, str | None]:
    """Return each node's parent key (its ``parentUuid``), a cycle broken where a walk up
    the parents comes back to a node (that node's parent reads as none)."""
    parents = {index: records[index].parent for index in node_of.values()}
    if all(node_of.get(parent, -1) < index for index, parent in parents.items()):
        return parents  # every parent earlier in the file (as Claude Code appends): no cycle
    state: dict[int, int] = {}  # 1: on the current walk, 2: done
    for start in node_of.values():
        path = []
        node: int | None = start
        while node is not None and node not in state:
            state[node] = 1
            path.append(node)
            parent = parents[node]
            node = node_of.get(parent) if parent is not None else None
        if node is not None and state[node] == 1:
            parents[node] = None
            log.add(records[node].line, "parent_cycle", "parentUuid leads back to this record "
                    "(a cycle): read as a root", "warning")
        for visited in path:
            state[visited] = 2
    return parents


def _without_replays(
    records: Sequence[Entry], prompts: list[int], below: _Subtrees, skipped: set[int]
) -> list[int]:
    """Return the prompts of distinct times; later ones sharing a time are compaction
    replays, skipped with everything below them."""
    seen: set[int | None] = set()
    distinct = []
    for index in prompts:
        if records[index].time in seen:
            skipped.update(below.of(index))
        else:
            seen.add(records[index].time)
            distinct.append(index)
    return distinct


class _Subtrees:
    """The records at and below a node, found on demand (iteratively: a chain may be long)."""

    def __init__(self, records: Sequence[Entry], children: dict[str | None, list[int]]) -> None:
        self._records = records
        self._children = children

    def of(self, index: int) -> list[int]:
        """Return ``index`` and every record below it."""
        found, stack = [], [index]
        while stack:
            node = stack.pop()
            found.append(node)
            uuid = self._records[node].uuid
            stack.extend(self._children.get(uuid, ()))
        return found
