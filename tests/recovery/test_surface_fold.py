"""``SurfaceFold``: replace-op endpoints found by seq, as the surface changes under them.

The surface is built by hand, node by node (a node is an event's index, ``seqs`` maps it
to its seq); every expected position is counted on the node list written beside it.
"""

from __future__ import annotations

from typing import Any

from ledgerviz.recovery.surface import SurfaceFold


def fold(seqs: list[int | None], nodes: list[int]) -> SurfaceFold:
    surface = SurfaceFold(seqs)
    surface.nodes.extend(nodes)  # as the scan appends them
    return surface


def positions(surface: SurfaceFold, *seqs: Any) -> list[int | None]:
    return [surface.position_of_seq(seq) for seq in seqs]


def replace(start: Any, end: Any) -> dict[str, Any]:
    return {"op": "replace", "startSeq": start, "endSeq": end}


def test_a_seq_is_found_where_its_node_stands() -> None:
    surface = fold([10, 11, 12, 13, None, 15], [0, 1, 2, 3, 4, 5])
    assert positions(surface, 10, 12, 15) == [0, 2, 5]
    assert positions(surface, 14, "12", [12]) == [None, None, None]  # no node holds them
    assert positions(surface, None, 12.0, True) == [4, 2, None]  # as == compares them


def test_positions_follow_one_for_one_and_range_replacements() -> None:
    seqs: list[int | None] = [10, 11, 12, 13, 14]
    surface = fold(seqs, [0, 1, 2, 3, 4])
    assert positions(surface, 12, 14) == [2, 4]
    seqs.append(15)
    surface.replace(replace(12, 12), 5)  # nodes [0, 1, 5, 3, 4]
    assert positions(surface, 12, 15, 13) == [None, 2, 3]
    seqs.append(16)
    surface.replace(replace(11, 13), 6)  # nodes [0, 6, 4]
    assert surface.nodes == [0, 6, 4]
    assert positions(surface, 11, 15, 13, 16, 14) == [None, None, None, 1, 2]
    seqs.append(17)
    surface.nodes.append(7)  # appended after the last lookup: nodes [0, 6, 4, 7]
    assert positions(surface, 17, 10) == [3, 0]


def test_a_seq_held_twice_is_found_at_its_first_position() -> None:
    seqs: list[int | None] = [0, 1, 2, 1]  # a broken log: seq 1 twice
    surface = fold(seqs, [0, 3, 2])  # event 1 is off the surface; event 3 holds seq 1 too
    assert positions(surface, 1, 2) == [1, 2]
    seqs.append(4)
    surface.replace(replace(1, 1), 4)  # event 3 is replaced: nodes [0, 4, 2]
    assert surface.nodes == [0, 4, 2]
    assert positions(surface, 1, 4) == [None, 1]


def test_a_copy_finds_seqs_on_its_own_nodes() -> None:
    seqs: list[int | None] = [5, 6, 7]
    surface = fold(seqs, [0, 1, 2])
    assert positions(surface, 7) == [2]
    copied = surface.copy(list(seqs))
    seqs.append(8)
    surface.replace(replace(6, 7), 3)  # the original: nodes [0, 3]
    assert positions(surface, 7, 8) == [None, 1]
    assert positions(copied, 7, 8) == [2, None]
