"""An exact set of call ids held compactly, for readers that keep every id of a large file.

The reader's checks keep every call id an assistant message requested (a repeated
request and an orphan result are told against all of them). A Python ``set`` of ``str``
costs about 110 bytes per id; ``CallIds`` holds each id's UTF-8 bytes once in one
``bytearray`` and finds them through an open-addressing table of ``array`` slots (about
40 bytes per id for ids of 13 characters). It is exact: an id is held only when its
bytes equal a held id's; the hashes only decide where to look.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable

_FIRST_SLOTS = 1 << 10
"""Slots of a new table (a power of two); the table doubles before half its slots are taken."""

_LOW = (1 << 32) - 1


class CallIds:
    """A set of ``str`` call ids: ``in``, ``isdisjoint``, ``update`` and ``len``."""

    __slots__ = ("_bytes", "_ends", "_hashes", "_mask", "_slots")

    def __init__(self, ids: Collection[str] = ()) -> None:
        self._bytes = bytearray()
        """Every id's UTF-8 bytes (lone surrogates kept), one after the other."""
        self._ends = array("q")
        """Where each id's bytes end in ``_bytes`` (id ``n`` starts at ``_ends[n - 1]``)."""
        self._hashes = array("I")
        """The low 32 bits of each id's ``hash``: its first slot, compared before its bytes."""
        self._slots = array("I", bytes(4 * _FIRST_SLOTS))
        """The table: 0 for a free slot, else the id's number plus one."""
        self._mask = _FIRST_SLOTS - 1
        self.update(ids)

    def __len__(self) -> int:
        return len(self._ends)

    def __contains__(self, call_id: object) -> bool:
        return call_id.__class__ is str and self._probe(
            call_id, hash(call_id) & _LOW) < 0  # type: ignore[arg-type]

    def isdisjoint(self, ids: Iterable[str]) -> bool:
        """Return whether no id of ``ids`` (``str``s) is held."""
        slots, mask, probe = self._slots, self._mask, self._probe
        # an id whose first slot is free is not held: only past a taken one is the path walked
        return all(not slots[hash(call_id) & mask] or probe(call_id, hash(call_id) & _LOW) >= 0
                   for call_id in ids)

    def update(self, ids: Collection[str]) -> None:
        """Add every id of ``ids`` (``str``s; one held already is left as it is)."""
        if 2 * (len(self._ends) + len(ids)) > self._mask:
            self._grow(len(self._ends) + len(ids))
        slots, ends, hashes, held, mask, probe = (self._slots, self._ends, self._hashes,
                                                  self._bytes, self._mask, self._probe)
        for call_id in ids:
            hashed = hash(call_id) & _LOW
            slot = hashed & mask
            if slots[slot]:
                slot = probe(call_id, hashed)
                if slot < 0:
                    continue
            held += call_id.encode("utf-8", "surrogatepass")
            ends.append(len(held))
            hashes.append(hashed)
            slots[slot] = len(ends)

    def _probe(self, call_id: str, hashed: int) -> int:
        """Return the first free slot on the probe path of ``call_id`` (``hashed``: the low 32
        bits of its hash), or -1 when it is held."""
        slots, hashes, mask = self._slots, self._hashes, self._mask
        slot = hashed & mask
        while entry := slots[slot]:
            if hashes[entry - 1] == hashed and self._bytes_of(entry - 1) == call_id.encode(
                    "utf-8", "surrogatepass"):
                return -1
            slot = (slot + 1) & mask
        return slot

    def _bytes_of(self, number: int) -> bytes:
        start = self._ends[number - 1] if number else 0
        return bytes(self._bytes[start:self._ends[number]])

    def _grow(self, count: int) -> None:
        """Make the table at least four times ``count`` slots and place every id again."""
        size = self._mask + 1
        while size < 4 * count:
            size *= 2
        slots, mask = array("I", bytes(4 * size)), size - 1
        for number, hashed in enumerate(self._hashes, 1):
            slot = hashed & mask
            while slots[slot]:
                slot = (slot + 1) & mask
            slots[slot] = number
        self._slots, self._mask = slots, mask
