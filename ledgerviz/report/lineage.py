"""The report's session order: each child session right after its parent (and its subtree)."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd


def grouped_trees(lineage: pd.DataFrame) -> list[list[int]]:
    """Return the session indices of ``lineage`` (one row per loaded session, in ledger order)
    as trees: each root with its descendants, every child right after its parent, depth
    first. Roots, and sessions whose parent is not loaded, keep their ledger order (a cycle
    is broken where it is first met, and starts a tree there)."""
    position = {key: i for i, key in enumerate(lineage["session"].astype(str))}
    children: defaultdict[int, list[int]] = defaultdict(list)
    roots = []
    for i, parent in enumerate(lineage["parent_session"]):
        found = position.get(parent) if isinstance(parent, str) else None
        (children[found] if found is not None and found != i else roots).append(i)
    trees: list[list[int]] = []
    seen: set[int] = set()
    for start in [*roots, *range(len(position))]:
        if start in seen:
            continue
        tree: list[int] = []
        stack = [start]
        while stack:
            i = stack.pop()
            if i not in seen:
                seen.add(i)
                tree.append(i)
                stack.extend(reversed(children[i]))
        trees.append(tree)
    return trees


def fork_children(lineage: pd.DataFrame) -> dict[int, list[int]]:
    """Return, for each session index with fork children loaded, their indices in load order."""
    position = {key: i for i, key in enumerate(lineage["session"].astype(str))}
    found: dict[int, list[int]] = {}
    for i, row in enumerate(lineage.itertuples(index=False)):
        parent = position.get(row.parent_session) if isinstance(row.parent_session, str) else None
        if row.relation == "fork" and not pd.isna(row.boundary_seq) and parent not in (None, i):
            found.setdefault(parent, []).append(i)
    return found
