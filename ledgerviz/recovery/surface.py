"""The model-visible surface (format §6, §6.1) folded one event at a time.

Nodes are indices into an event list; ``seqs`` maps each index to its seq (None
for events that were never logged). Replacements splice the surface, each in the time
of the nodes it removes; rewinds
(explicit ``surface/rewind`` or a computed fork) hide nodes without removing them,
so a ``surface/restore`` can bring them back in place.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

_GONE = -1
"""What a slot holds once a replacement has spliced its node out (nodes are >= 0)."""


class SurfaceFold:
    """Current surface nodes, plus which of them an active rewind hides.

    The nodes stand in ``slots`` in surface order. A node never moves: a replacement
    puts its node in the slot of the range's first node and marks the others ``_GONE``,
    so a replacement costs the nodes it removes, wherever on the surface it is (moving
    every later node made a run of replacements at the head quadratic). ``_skip`` leads
    each gone slot towards the next live one, so gone slots are passed over once.
    """

    __slots__ = ("_hidden", "_index", "_rewinds", "_seqs", "_shots", "_skip", "_sorted", "slots")

    def __init__(self, seqs: list[int | None]) -> None:
        self.slots: list[int] = []
        """The nodes in surface order, with ``_GONE`` where a node was spliced out; the
        scan appends to it."""
        self._seqs = seqs
        self._hidden: dict[int, int] = {}
        self._rewinds: dict[Any, list[int]] = {}
        self._skip: dict[int, int] = {}
        self._index = _SurfaceIndex()
        self._sorted = True
        """Whether no replacement has spliced the surface yet: its nodes then rise."""
        self._shots: list[SurfaceSnapshot] = []
        """The snapshots that still read their nodes from ``slots`` (see :meth:`snapshot`)."""

    @property
    def nodes(self) -> list[int]:
        """Return the surface nodes in order."""
        return [node for node in self.slots if node != _GONE]

    def snapshot(self) -> SurfaceSnapshot:
        """Return this fold's state now, to copy folds from later. Its nodes are not copied:
        only appended to, ``slots`` begins with them until a replacement is about to change
        one in place, which copies them first (once for every snapshot taken since the
        last one did)."""
        shot = SurfaceSnapshot(self.slots, len(self.slots), dict(self._skip),
                               dict(self._hidden), dict(self._rewinds), self._sorted)
        self._shots.append(shot)
        return shot

    def _keep_snapshots(self) -> None:
        """Give the snapshots that read ``slots`` a copy of their nodes (the last one
        holds the most) before a replacement changes them."""
        kept = self.slots[: self._shots[-1].length]
        for shot in self._shots:
            shot.slots = kept
        self._shots.clear()

    def slot_of_seq(self, seq: Any) -> int | None:
        """Return the slot of the first node whose seq is ``seq``, or None.

        A seq that one event holds is found through the index; a seq that several hold
        (a broken log), None or an unhashable value is looked for node by node.
        """
        index = self._index
        node = index.node_of_seq(seq, self._seqs)
        if node is not _SEARCH:
            return None if node is None else index.slot_of(node, self.slots)
        seqs = self._seqs
        for slot, node in enumerate(self.slots):
            if node != _GONE and seqs[node] == seq:
                return slot
        return None

    def replace(self, op: dict[str, Any], node: int) -> None:
        """Splice ``node`` over the surface range of a replace op.

        Accepts both spellings (``start``/``end`` up to v2, ``startSeq``/``endSeq`` v3+);
        the endpoints are found by position on the current surface. A malformed op
        (an endpoint not on the surface, or start after end) changes nothing.
        """
        start = self.slot_of_seq(op.get("startSeq", op.get("start")))
        end = self.slot_of_seq(op.get("endSeq", op.get("end")))
        if start is None or end is None or start > end:
            return
        if self._shots:
            self._keep_snapshots()
        slots, skip = self.slots, self._skip
        self._sorted = False
        slots[start] = node
        self._index.placed(node, start)
        slot = self._live_after(start)
        while slot <= end:
            slots[slot] = _GONE
            skip[slot] = slot + 1
            slot = self._live_after(slot)

    def _live_after(self, slot: int) -> int:
        """Return the first slot after ``slot`` that is not gone (``len(slots)`` if none),
        shortening the ``_skip`` path walked to it."""
        skip = self._skip
        walked = []
        after = slot + 1
        while after in skip:
            walked.append(after)
            after = skip[after]
        for gone in walked:
            skip[gone] = after
        return after

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
        found = [p for p in map(self.slot_of_seq, wanted) if p is not None]
        nodes: list[int] = []
        if found:  # from the first node with a wanted seq on, found through the index
            held = self._seqs
            nodes = [node for node in self.slots[min(found):]
                     if node != _GONE and (held[node] is None or held[node] in wanted)]
        self.hide(key, nodes)
        return nodes

    def visible_from(self, first: int) -> list[int]:
        """Return the visible nodes from ``first`` (or the first later node) to the end."""
        slots = self.slots
        if self._sorted:  # the node's slot, else the first later node's: no index needed
            slot: int | None = bisect_left(slots, first)
        else:
            slot = self._index.slot_of(first, slots)
        if slot is None:  # spliced out by a replacement: the first node after it
            slot = next((p for p, node in enumerate(slots) if node > first), len(slots))
        hidden = self._hidden
        return [node for node in slots[slot:] if node != _GONE and node not in hidden]

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
            return self.nodes if self._skip else list(self.slots)
        return [node for node in self.slots if node != _GONE and node not in hidden]

    def hidden_nodes(self) -> list[int]:
        """Return the surface nodes hidden by an active rewind, in order."""
        hidden = self._hidden
        return [node for node in self.slots if node in hidden] if hidden else []


class SurfaceSnapshot:
    """A fold's state at one moment (:meth:`SurfaceFold.snapshot`): its first ``length``
    slots, read from ``slots``, and copies of its other fields."""

    __slots__ = ("_hidden", "_rewinds", "_skip", "_sorted", "length", "slots")

    def __init__(self, slots: list[int], length: int, skip: dict[int, int],
                 hidden: dict[int, int], rewinds: dict[Any, list[int]], ordered: bool) -> None:
        self.slots, self.length = slots, length
        self._skip, self._hidden, self._rewinds, self._sorted = skip, hidden, rewinds, ordered

    def copy(self, seqs: list[int | None]) -> SurfaceFold:
        """Return a new fold in this state whose nodes map to seqs through ``seqs``."""
        fold = SurfaceFold(seqs)
        fold.slots = self.slots[: self.length]
        fold._skip = dict(self._skip)
        fold._hidden = dict(self._hidden)
        fold._rewinds = dict(self._rewinds)  # its lists are replaced, never changed in place
        fold._sorted = self._sorted
        return fold


_SEARCH = object()
"""``_SurfaceIndex.node_of_seq``'s answer when the index cannot tell: search node by node."""


class _SurfaceIndex:
    """Finds a node by its seq and its slot on the surface without walking the surface.

    A replace op names its endpoints by seq, and the tool-result pruner replaces one old
    node at a time: looking each up node by node made a long session quadratic. Both maps
    are filled as they are read (nodes and seqs are appended by the scan, not here); a
    node keeps its slot until it is spliced out, so ``slots_of`` is never rebuilt.
    """

    __slots__ = ("indexed", "nodes_of", "repeated", "seqs_read", "slots_of")

    def __init__(self) -> None:
        self.slots_of: dict[int, int] = {}
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

    def slot_of(self, node: int, slots: list[int]) -> int | None:
        """Return the slot of ``node`` on the surface ``slots``, or None (a node is on it
        at most once)."""
        slots_of = self.slots_of
        for slot in range(self.indexed, len(slots)):
            slots_of[slots[slot]] = slot
        self.indexed = len(slots)
        slot = slots_of.get(node)  # a node spliced out keeps a stale entry
        if slot is None or slots[slot] != node:
            return None
        return slot

    def placed(self, node: int, slot: int) -> None:
        """Take ``node`` in at ``slot`` (a replacement's node, in its range's first slot)."""
        self.slots_of[node] = slot
