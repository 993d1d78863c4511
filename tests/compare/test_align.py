"""The aligner on plain sequences whose common subsequences are known by construction."""

from __future__ import annotations

import itertools
import random

from ledgerviz.compare.align import align, align_sessions


def _common(a: list[object], b: list[object]) -> int:
    """Return the length of a longest common subsequence (textbook dynamic programming)."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _valid(pairs: list[tuple[int, int]], a: list[object], b: list[object]) -> bool:
    increasing = all(p[0] < q[0] and p[1] < q[1] for p, q in itertools.pairwise(pairs))
    return increasing and all(a[i] == b[j] for i, j in pairs)


def test_equal_and_empty_sequences() -> None:
    assert align([], []) == []
    assert align([1, 2], []) == []
    assert align("abc", "abc") == [(0, 0), (1, 1), (2, 2)]


def test_small_stretches_get_a_longest_common_subsequence() -> None:
    rng = random.Random(3)
    for _ in range(200):
        a = [rng.choice("abc") for _ in range(rng.randrange(12))]
        b = [rng.choice("abc") for _ in range(rng.randrange(12))]
        pairs = align(a, b)
        assert _valid(pairs, a, b)
        assert len(pairs) == _common(a, b)


def test_long_sequences_with_a_few_edits_keep_every_unedited_item() -> None:
    a = list(range(5_000))
    deleted = {17, 18, 19, 2_500, 4_999}
    b = [x for x in a if x not in deleted]
    b[1_000:1_000] = ["new", "items"]
    b.insert(0, "first")
    pairs = align(a, b)
    assert _valid(pairs, a, b)
    assert [a[i] for i, _ in pairs] == [x for x in a if x not in deleted]


def test_repeated_items_without_anchors_still_align() -> None:
    a = ["s", "m", "e"] * 300
    b = [*a[:450], "x", *a[450:]]
    assert len(align(a, b)) == len(a)


def test_a_removed_turn_leaves_the_other_turns_paired() -> None:
    # turns of (start, text, end); the middle turn's text occurs in no other turn
    a = ["T", "one", "E", "T", "two", "E", "T", "three", "E"]
    b = ["T", "one", "E", "T", "three", "E"]
    types = ["start" if x == "T" else "end" if x == "E" else "msg" for x in a]
    b_types = ["start" if x == "T" else "end" if x == "E" else "msg" for x in b]
    rows = align_sessions(a, b, types, b_types, [0, 3, 6], [0, 3])
    assert rows == [(0, 0), (1, 1), (2, 2), (3, None), (4, None), (5, None),
                    (6, 3), (7, 4), (8, 5)]


def test_a_lone_run_begins_at_the_preferred_key() -> None:
    # b repeats a's step (S, m, E) once; the inserted copy could begin at index 0, 1 or 2
    a = ["S", "m", "E"]
    b = ["S", "m", "E", "S", "m", "E"]
    kinds = ["S", "m", "E"]
    rows = align_sessions(a, b, kinds, kinds * 2, [], [], starts=("S",))
    assert [j for i, j in rows if i is None] in ([0, 1, 2], [3, 4, 5])
    rows = align_sessions(a, b, kinds, kinds * 2, [], [], starts=("E",))
    assert [j for i, j in rows if i is None] == [2, 3, 4]
