"""The model-visible surface (format §6, §6.1) folded one event at a time.

Nodes are indices into an event list; ``seqs`` maps each index to its seq (None
for events that were never logged). Replacements splice the node list; rewinds
(explicit ``surface/rewind`` or a computed fork) hide nodes without removing them,
so a ``surface/restore`` can bring them back in place.
"""

from __future__ import annotations

from typing import Any


class SurfaceFold:
    """Current surface nodes, plus which of them an active rewind hides."""

    __slots__ = ("_hidden", "_rewinds", "_seqs", "nodes")

    def __init__(self, seqs: list[int | None]) -> None:
        self.nodes: list[int] = []
        self._seqs = seqs
        self._hidden: dict[int, int] = {}
        self._rewinds: dict[Any, list[int]] = {}

    def copy(self, seqs: list[int | None]) -> SurfaceFold:
        """Return an independent copy of this fold whose nodes map to seqs through ``seqs``."""
        fold = SurfaceFold(seqs)
        fold.nodes = list(self.nodes)
        fold._hidden = dict(self._hidden)
        fold._rewinds = dict(self._rewinds)  # its lists are replaced, never changed in place
        return fold

    def position_of_seq(self, seq: Any) -> int | None:
        """Return the position of the node whose seq is ``seq``, or None."""
        seqs = self._seqs
        for position, node in enumerate(self.nodes):
            if seqs[node] == seq:
                return position
        return None

    def replace(self, op: dict[str, Any], node: int) -> None:
        """Splice ``node`` over the surface range of a replace op.

        Accepts both spellings (``start``/``end`` up to v2, ``startSeq``/``endSeq`` v3+);
        the endpoints are found by position on the current surface. A malformed op
        (an endpoint not on the surface, or start after end) changes nothing.
        """
        start = self.position_of_seq(op.get("startSeq", op.get("start")))
        end = self.position_of_seq(op.get("endSeq", op.get("end")))
        if start is not None and end is not None and start <= end:
            self.nodes[start : end + 1] = [node]

    def is_hidden(self, node: int) -> bool:
        """Return whether an active rewind hides ``node``."""
        return node in self._hidden

    def hide(self, key: Any, nodes: list[int]) -> None:
        """Hide ``nodes`` under rewind ``key`` until it is restored."""
        hidden = self._hidden
        for node in nodes:
            hidden[node] = hidden.get(node, 0) + 1
        self._rewinds[key] = self._rewinds.get(key, []) + list(nodes)

    def rewind_seqs(self, key: Any, seqs: list[int]) -> list[int]:
        """Hide the surface nodes with the given seqs (``surface/rewind``); return them.

        A rewind hides a suffix of the surface, so never-logged nodes (seq None, which
        no writer could list) after its first hidden node go with it.
        """
        wanted = set(seqs)
        nodes: list[int] = []
        for node in self.nodes:
            seq = self._seqs[node]
            if seq in wanted or (seq is None and nodes):
                nodes.append(node)
        self.hide(key, nodes)
        return nodes

    def visible_from(self, first: int) -> list[int]:
        """Return the visible nodes from ``first`` (or the first later node) to the end."""
        nodes = self.nodes
        if first in nodes:
            position = nodes.index(first)
        else:
            position = next((p for p, node in enumerate(nodes) if node > first), len(nodes))
        hidden = self._hidden
        return [node for node in nodes[position:] if node not in hidden]

    def restore(self, key: Any) -> None:
        """Undo the rewind ``key`` (``surface/restore``); unknown keys are ignored."""
        hidden = self._hidden
        for node in self._rewinds.pop(key, ()):
            count = hidden[node] - 1
            if count:
                hidden[node] = count
            else:
                del hidden[node]

    def visible(self) -> list[int]:
        """Return the nodes on the surface that no active rewind hides, in order."""
        hidden = self._hidden
        if not hidden:  # the usual case: nothing to test node by node
            return list(self.nodes)
        return [node for node in self.nodes if node not in hidden]

    def hidden_nodes(self) -> list[int]:
        """Return the surface nodes hidden by an active rewind, in order."""
        hidden = self._hidden
        return [node for node in self.nodes if node in hidden] if hidden else []
