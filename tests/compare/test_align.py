"""The aligner on plain sequences whose common subsequences are known by construction."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

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


@st.composite
def _sessions(draw: st.DrawFn) -> tuple[list[str], list[str], list[int]]:
    """Return a session's keys (``T`` opens a turn), its coarse keys and its turn starts."""
    keys = draw(st.lists(st.sampled_from(["T", "S", "E", "a1", "a2", "r1", "r2", "u"]),
                         max_size=60))
    return keys, [key[0] for key in keys], [n for n, key in enumerate(keys) if key == "T"]


@settings(max_examples=300, deadline=None)
@given(_sessions(), _sessions(), st.booleans())
def test_rows_cover_both_sessions_once_in_order(a: tuple[list[str], list[str], list[int]],
                                                b: tuple[list[str], list[str], list[int]],
                                                slide: bool) -> None:
    rows = align_sessions(a[0], b[0], a[1], b[1], a[2], b[2], ("T", "S") if slide else ())
    assert [i for i, _ in rows if i is not None] == list(range(len(a[0])))
    assert [j for _, j in rows if j is not None] == list(range(len(b[0])))
    assert all(a[1][i] == b[1][j] for i, j in rows if i is not None and j is not None)
    if a[0] == b[0]:
        assert rows == [(n, n) for n in range(len(a[0]))]
