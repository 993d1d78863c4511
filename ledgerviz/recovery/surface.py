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

    __slots__ = ("_hidden", "_index", "_rewinds", "_seqs", "nodes")

    def __init__(self, seqs: list[int | None]) -> None:
        self.nodes: list[int] = []
        self._seqs = seqs
        self._hidden: dict[int, int] = {}
        self._rewinds: dict[Any, list[int]] = {}
        self._index = _SurfaceIndex()

    def copy(self, seqs: list[int | None]) -> SurfaceFold:
        """Return an independent copy of this fold whose nodes map to seqs through ``seqs``."""
        fold = SurfaceFold(seqs)
        fold.nodes = list(self.nodes)
        fold._hidden = dict(self._hidden)
        fold._rewinds = dict(self._rewinds)  # its lists are replaced, never changed in place
        return fold

    def position_of_seq(self, seq: Any) -> int | None:
        """Return the position of the first node whose seq is ``seq``, or None.

        A seq that one event holds is found through the index; a seq that several hold
        (a broken log), None or an unhashable value is looked for node by node.
        """
        index = self._index
        node = index.node_of_seq(seq, self._seqs)
        if node is not _SEARCH:
            return None if node is None else index.position_of(node, self.nodes)
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
            self._index.spliced(start, end, node)

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
        found = [p for p in map(self.position_of_seq, wanted) if p is not None]
        nodes: list[int] = []
        if found:  # from the first node with a wanted seq on, found through the index
            held = self._seqs
            nodes = [node for node in self.nodes[min(found):]
                     if held[node] is None or held[node] in wanted]
        self.hide(key, nodes)
        return nodes

    def visible_from(self, first: int) -> list[int]:
        """Return the visible nodes from ``first`` (or the first later node) to the end."""
        nodes = self.nodes
        position = self._index.position_of(first, nodes)
        if position is None:  # spliced out by a replacement: the first node after it
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


_SEARCH = object()
"""``_SurfaceIndex.node_of_seq``'s answer when the index cannot tell: search node by node."""


class _SurfaceIndex:
    """Finds a node by its seq and its position on the surface without walking the surface.

    A replace op names its endpoints by seq, and the tool-result pruner replaces one old
    node at a time: looking each up node by node made a long session quadratic. Both maps
    are filled as they are read (nodes and seqs are appended by the scan, not here):
    ``positions`` is right for the first ``indexed`` nodes, and a splice that moves the
    nodes after it sends ``indexed`` back to where it began.
    """

    __slots__ = ("indexed", "nodes_of", "positions", "repeated", "seqs_read")

    def __init__(self) -> None:
        self.positions: dict[int, int] = {}
        self.indexed = 0
        self.nodes_of: dict[Any, int] = {}  # seq -> the one node holding it
        self.repeated: set[Any] = set()  # seqs held by several nodes
        self.seqs_read = 0

    def node_of_seq(self, seq: Any, seqs: list[int | None]) -> Any:
        """Return the node holding ``seq``, None if none does, or ``_SEARCH``."""
        nodes_of, repeated = self.nodes_of, self.repeated
        for node in range(self.seqs_read, len(seqs)):
            held = seqs[node]
            if held is not None:
                if held in nodes_of:
                    repeated.add(held)
                else:
                    nodes_of[held] = node
        self.seqs_read = len(seqs)
        if seq is None:
            return _SEARCH
        try:
            return _SEARCH if seq in repeated else nodes_of.get(seq)
        except TypeError:  # an unhashable value: no seq equals it, as the search finds
            return _SEARCH

    def position_of(self, node: int, nodes: list[int]) -> int | None:
        """Return the position of ``node`` on the surface ``nodes``, or None (a node is on
        it at most once)."""
        positions = self.positions
        for position in range(self.indexed, len(nodes)):
            positions[nodes[position]] = position
        self.indexed = len(nodes)
        position = positions.get(node)  # a node spliced out keeps a stale entry
        if position is None or position >= len(nodes) or nodes[position] != node:
            return None
        return position

    def spliced(self, start: int, end: int, node: int) -> None:
        """Take ``node`` in at ``start`` in place of the nodes from ``start`` to ``end``."""
        if start == end and start < self.indexed:  # one for one: nothing after it moves
            self.positions[node] = start
        else:
            self.indexed = min(self.indexed, start)
