"""``SurfaceFold``: replace-op endpoints found by seq, as the surface changes under them.

The surface is built by hand, node by node (a node is an event's index, ``seqs`` maps it
to its seq); every expected slot is counted on the slot list written beside it (a node
never moves: a range replacement leaves its other slots gone, written ``-``).
"""

from __future__ import annotations

from typing import Any

from ledgerviz.recovery.surface import SurfaceFold


def fold(seqs: list[int | None], nodes: list[int]) -> SurfaceFold:
    surface = SurfaceFold(seqs)
    surface.slots.extend(nodes)  # as the scan appends them
    return surface


def positions(surface: SurfaceFold, *seqs: Any) -> list[int | None]:
    return [surface.slot_of_seq(seq) for seq in seqs]


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
    surface.replace(replace(11, 13), 6)  # nodes [0, 6, 4], slots [0, 6, -, -, 4]
    assert surface.nodes == [0, 6, 4]
    assert positions(surface, 11, 15, 13, 16, 14) == [None, None, None, 1, 4]
    seqs.append(17)
    surface.slots.append(7)  # appended after the last lookup: slots [0, 6, -, -, 4, 7]
    assert positions(surface, 17, 10) == [5, 0]


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
    copied = surface.snapshot().copy(list(seqs))
    seqs.append(8)
    surface.replace(replace(6, 7), 3)  # the original: slots [0, 3, -]
    assert positions(surface, 7, 8) == [None, 1]
    assert positions(copied, 7, 8) == [2, None]


def test_a_snapshot_keeps_its_nodes_through_appends_and_replacements() -> None:
    seqs: list[int | None] = [5, 6, 7, 8, 9, 10]
    surface = fold(seqs, [0, 1])
    first = surface.snapshot()  # nodes [0, 1]
    surface.slots.extend([2, 3])
    second = surface.snapshot()  # nodes [0, 1, 2, 3]
    surface.slots.append(4)  # slots [0, 1, 2, 3, 4]
    assert first.copy(seqs).nodes == [0, 1]
    assert second.copy(seqs).nodes == [0, 1, 2, 3]
    surface.replace(replace(5, 7), 5)  # slots [5, -, -, 3, 4]: seqs 5-7 give way to 10
    assert surface.nodes == [5, 3, 4]
    assert first.copy(seqs).nodes == [0, 1]
    assert second.copy(seqs).nodes == [0, 1, 2, 3]
    third = surface.snapshot()
    seqs.append(11)
    surface.replace(replace(10, 8), 6)  # slots [6, -, -, -, 4]
    assert surface.nodes == [6, 4]
    assert third.copy(seqs).nodes == [5, 3, 4]
    resumed = second.copy(seqs)  # a fold resumed from the snapshot goes its own way
    resumed.replace(replace(6, 6), 5)
    assert resumed.nodes == [0, 5, 2, 3]
    assert second.copy(seqs).nodes == [0, 1, 2, 3]


def test_a_rewind_hides_from_its_first_listed_node_on() -> None:
    # nodes [0..5] hold seqs 10, 11, 12, None (a result never logged), 14, 15; event 6,
    # seq 16, is off the surface
    surface = fold([10, 11, 12, None, 14, 15, 16], [0, 1, 2, 3, 4, 5])
    # 16 is on no node and 99 on no event: the first listed node on the surface is seq 12's
    # (position 2); the unlogged node after it goes with it; 14 is not listed
    assert surface.rewind_seqs("r1", [99, 15, 16, 12]) == [2, 3, 5]
    assert surface.visible() == [0, 1, 4]
    assert surface.rewind_seqs("r2", [16, 99]) == []  # nothing on the surface
    surface.restore("r1")
    assert surface.visible() == [0, 1, 2, 3, 4, 5]


def test_a_rewind_after_replacements_and_of_a_seq_held_twice() -> None:
    seqs: list[int | None] = [10, 11, 12, 11, 14]  # seq 11 twice (a broken log)
    surface = fold(seqs, [0, 1, 2, 3, 4])
    seqs.append(15)
    surface.replace(replace(10, 10), 5)  # nodes [5, 1, 2, 3, 4]
    assert surface.rewind_seqs("r", [11, 14]) == [1, 3, 4]  # both nodes holding 11
    assert surface.visible() == [5, 2]


def test_visible_from_a_node_or_the_first_node_after_it() -> None:
    seqs: list[int | None] = [10, 11, 12, 13]
    surface = fold(seqs, [0, 1, 2, 3])
    surface.hide("r", [2])
    assert surface.visible_from(1) == [1, 3]
    seqs.append(14)
    surface.replace(replace(11, 11), 4)  # nodes [0, 4, 2, 3]: node 1 spliced out
    assert surface.visible_from(1) == [4, 3]  # from the first node after 1 in surface order
    assert surface.visible_from(0) == [0, 4, 3]


def test_replacements_at_the_head_pass_over_gone_slots() -> None:
    seqs: list[int | None] = [10, 11, 12, 13, 14, 15]
    surface = fold(seqs, [0, 1, 2, 3, 4, 5])
    seqs.append(16)
    surface.replace(replace(10, 11), 6)  # slots [6, -, 2, 3, 4, 5]
    seqs.append(17)
    surface.replace(replace(16, 12), 7)  # slots [7, -, -, 3, 4, 5]
    seqs.append(18)
    surface.replace(replace(17, 14), 8)  # slots [8, -, -, -, -, 5]: 13 and 14 go
    assert surface.nodes == [8, 5]
    assert positions(surface, 18, 15, 13, 14) == [0, 5, None, None]
    seqs.append(19)
    surface.replace(replace(14, 15), 9)  # 14 is gone: nothing changes
    surface.replace(replace(15, 18), 9)  # start after end: nothing changes
    assert surface.nodes == [8, 5]
    assert surface.rewind_seqs("r", [15]) == [5]
    assert surface.visible() == [8]
    copied = surface.snapshot().copy(list(seqs))
    surface.replace(replace(18, 15), 9)  # slots [9, -, -, -, -, -]
    assert (surface.nodes, copied.nodes) == ([9], [8, 5])
