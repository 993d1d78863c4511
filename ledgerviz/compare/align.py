"""Sequence alignment of two sessions' event signatures (standard library only).

:func:`align` is a patience diff: the common prefix and suffix are matched first, then
the items found exactly once on each side are anchors (their longest increasing run),
and each stretch between anchors is aligned the same way; a stretch without such an
anchor gets Myers' O(ND) algorithm. On two similar sequences this costs about one pass
over each plus the work on the few stretches that differ.

:func:`align_sessions` aligns two sessions turn by turn (a turn's key is the sequence of
its events' keys), then the events of the turns that did not match, then pairs the events
still unmatched by their coarse key (the event type), so that a changed tool result is
one changed pair rather than one event on each side.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import NamedTuple

from ledgerviz.recovery.sequences import first_difference

Pair = tuple[int, int]
"""Indices ``(i, j)`` with ``a[i]`` aligned to ``b[j]``."""

Row = tuple[int | None, int | None]
"""One row of a session alignment: event indices on each side, None where it has none."""

MYERS_LIMIT = 500
"""The most edits Myers' algorithm looks for in one stretch without an anchor (its cost
grows with their square); past it the stretch is matched greedily (:func:`_greedy`)."""

GREEDY_WINDOW = 8
"""How far :func:`_greedy` looks ahead on each side for the next equal pair."""

_DIRECT_BELOW = 64
"""Stretches shorter than this on either side skip the anchor search and go to Myers."""


def align(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Pair]:
    """Return the pairs ``(i, j)`` with ``a[i] == b[j]`` of a common subsequence of ``a``
    and ``b``, increasing on both sides (a longest one wherever Myers decides)."""
    pairs: list[Pair] = []
    work: list[tuple[int, ...]] = [(0, len(a), 0, len(b))]
    while work:
        item = work.pop()
        if len(item) == 2:
            pairs.append((item[0], item[1]))
        else:
            work.extend(reversed(_split(a, b, *item, pairs)))
    return pairs


def _split(a: Sequence[Hashable], b: Sequence[Hashable], a_lo: int, a_hi: int, b_lo: int,
           b_hi: int, pairs: list[Pair]) -> list[tuple[int, ...]]:
    """Match the common prefix of one stretch into ``pairs`` now and return the rest of its
    work in order: stretches ``(a_lo, a_hi, b_lo, b_hi)`` and anchor pairs ``(i, j)``."""
    left, right = a[a_lo:a_hi], b[b_lo:b_hi]
    head = first_difference(left, right)
    pairs.extend((a_lo + k, b_lo + k) for k in range(head))
    a_lo, b_lo = a_lo + head, b_lo + head
    tail = first_difference(left[head:][::-1], right[head:][::-1])
    a_hi, b_hi = a_hi - tail, b_hi - tail
    suffix = [(a_hi + k, b_hi + k) for k in range(tail)]
    if a_lo == a_hi or b_lo == b_hi:
        return suffix
    if min(a_hi - a_lo, b_hi - b_lo) >= _DIRECT_BELOW:
        anchors = _anchors(a, b, a_lo, a_hi, b_lo, b_hi)
        if anchors:
            work: list[tuple[int, ...]] = []
            i, j = a_lo, b_lo
            for anchor in anchors:
                work += [(i, anchor[0], j, anchor[1]), anchor]
                i, j = anchor[0] + 1, anchor[1] + 1
            return [*work, (i, a_hi, j, b_hi), *suffix]
    left, right = a[a_lo:a_hi], b[b_lo:b_hi]
    middle = _myers(left, right, MYERS_LIMIT)
    if middle is None:
        middle = _greedy(left, right, GREEDY_WINDOW)
    return [(a_lo + i, b_lo + j) for i, j in middle] + suffix


def _anchors(a: Sequence[Hashable], b: Sequence[Hashable], a_lo: int, a_hi: int, b_lo: int,
             b_hi: int) -> list[Pair]:
    """Return the longest increasing run of the pairs of items found once on each side."""
    a_counts, b_counts = Counter(a[a_lo:a_hi]), Counter(b[b_lo:b_hi])
    in_b = {b[j]: j for j in range(b_lo, b_hi) if b_counts[b[j]] == 1}
    unique = [(i, in_b[a[i]]) for i in range(a_lo, a_hi)
              if a_counts[a[i]] == 1 and a[i] in in_b]
    return _longest_increasing(unique)


def _longest_increasing(pairs: list[Pair]) -> list[Pair]:
    """Return the longest run of ``pairs`` (sorted by ``i``) whose ``j`` increases too
    (patience sorting)."""
    tops: list[int] = []
    top_index: list[int] = []
    before: list[int] = []
    for index, (_, j) in enumerate(pairs):
        pile = bisect_left(tops, j)
        before.append(top_index[pile - 1] if pile else -1)
        if pile == len(tops):
            tops.append(j)
            top_index.append(index)
        else:
            tops[pile] = j
            top_index[pile] = index
    run: list[Pair] = []
    index = top_index[-1] if top_index else -1
    while index >= 0:
        run.append(pairs[index])
        index = before[index]
    return run[::-1]


def _myers(a: Sequence[Hashable], b: Sequence[Hashable], limit: int) -> list[Pair] | None:
    """Return the matched pairs of a shortest edit script from ``a`` to ``b`` (Myers 1986),
    or None when it needs more than ``limit`` insertions and deletions."""
    n, m = len(a), len(b)
    furthest = {1: 0}
    trace: list[dict[int, int]] = []
    for edits in range(min(n + m, limit) + 1):
        trace.append(dict(furthest))
        for k in range(-edits, edits + 1, 2):
            if k == -edits or (k != edits and furthest[k - 1] < furthest[k + 1]):
                x = furthest[k + 1]
            else:
                x = furthest[k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            furthest[k] = x
            if x >= n and y >= m:
                return _backtrack(trace, n, m)
    return None


def _greedy(a: Sequence[Hashable], b: Sequence[Hashable], window: int) -> list[Pair]:
    """Return equal pairs found walking both sides at once: where the items differ, skip to
    the nearest equal pair within ``window`` items ahead on either side (else step both).
    Linear; for long stretches too unlike for Myers within its limit."""
    pairs: list[Pair] = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
            continue
        ahead = next(((i + di, j + dj) for step in range(1, window + 1)
                      for di, dj in ((0, step), (step, 0), (step, step))
                      if i + di < len(a) and j + dj < len(b) and a[i + di] == b[j + dj]),
                     (i + 1, j + 1))
        i, j = ahead
    return pairs


def _backtrack(trace: list[dict[int, int]], n: int, m: int) -> list[Pair]:
    """Return the diagonal moves of the path Myers' search found, in order."""
    pairs: list[Pair] = []
    x, y = n, m
    for edits in range(len(trace) - 1, -1, -1):
        furthest = trace[edits]
        k = x - y
        if k == -edits or (k != edits and furthest[k - 1] < furthest[k + 1]):
            previous_k = k + 1
        else:
            previous_k = k - 1
        previous_x = furthest[previous_k]
        previous_y = previous_x - previous_k
        while x > previous_x and y > previous_y:
            x, y = x - 1, y - 1
            pairs.append((x, y))
        x, y = previous_x, previous_y
    return pairs[::-1]


class _Sessions(NamedTuple):
    """The two sessions as :func:`align_sessions` reads them."""

    a_keys: Sequence[Hashable]
    b_keys: Sequence[Hashable]
    a_coarse: Sequence[Hashable]
    b_coarse: Sequence[Hashable]
    a_bounds: list[tuple[int, int]]
    b_bounds: list[tuple[int, int]]


def align_sessions(a_keys: Sequence[Hashable], b_keys: Sequence[Hashable],
                   a_coarse: Sequence[Hashable], b_coarse: Sequence[Hashable],
                   a_turns: Sequence[int], b_turns: Sequence[int],
                   starts: Sequence[Hashable] = ()) -> list[Row]:
    """Return the alignment rows of two sessions, in order on both sides.

    ``*_keys`` are the events' signatures, ``*_coarse`` what a changed pair must share
    (the event type), ``*_turns`` the index of each turn's first event (events before the
    first form a turn of their own). A row ``(i, j)`` whose keys differ is a changed pair.
    Equal turns are matched first; between them, turns of the same shape (coarse keys) are
    paired, then the turns left between those in order, and each pair's events aligned;
    the turns left over on one side are on that side only.
    A run of events on one side only that could equally sit a few rows earlier or later
    is put where it begins with the first coarse key in ``starts`` it can begin with.
    """
    two = _Sessions(a_keys, b_keys, a_coarse, b_coarse, _bounds(a_turns, len(a_keys)),
                    _bounds(b_turns, len(b_keys)))
    interned: dict[tuple[Hashable, ...], int] = {}
    turn_keys = [[interned.setdefault(tuple(keys[lo:hi]), len(interned)) for lo, hi in bounds]
                 for keys, bounds in ((a_keys, two.a_bounds), (b_keys, two.b_bounds))]
    shapes = [[interned.setdefault(tuple(coarse[lo:hi]), len(interned)) for lo, hi in bounds]
              for coarse, bounds in ((a_coarse, two.a_bounds), (b_coarse, two.b_bounds))]
    del interned
    rows: list[Row] = []
    for (ti, ti_hi, tj, tj_hi), pair in _gaps(align(*turn_keys), len(two.a_bounds),
                                              len(two.b_bounds)):
        for (si, si_hi, sj, sj_hi), shaped in _gaps(
                align(shapes[0][ti:ti_hi], shapes[1][tj:tj_hi]), ti_hi - ti, tj_hi - tj):
            paired = min(si_hi - si, sj_hi - sj)  # the turns between shape pairs, in order
            for k in range(paired):
                _align_stretch(two, *_events(two, ti + si + k, ti + si + k + 1,
                                             tj + sj + k, tj + sj + k + 1), rows)
            _align_stretch(two, *_events(two, ti + si + paired, ti + si_hi,
                                         tj + sj + paired, tj + sj_hi), rows)
            if shaped is not None:
                _align_stretch(two, *_events(two, ti + shaped[0], ti + shaped[0] + 1,
                                             tj + shaped[1], tj + shaped[1] + 1), rows)
        if pair is not None:
            (lo, hi), (other, _) = two.a_bounds[pair[0]], two.b_bounds[pair[1]]
            rows.extend((i, other + i - lo) for i in range(lo, hi))
    if starts:
        rank = {key: n for n, key in enumerate(starts)}
        for side, keys, coarse in ((0, a_keys, a_coarse), (1, b_keys, b_coarse)):
            _slide_runs(rows, side, keys, [rank.get(key, len(rank)) for key in coarse])
    return rows


def _gaps(pairs: list[Pair], a_count: int, b_count: int
          ) -> list[tuple[tuple[int, int, int, int], Pair | None]]:
    """Return, for each of ``pairs`` in order, the unmatched stretch ``(a_lo, a_hi, b_lo,
    b_hi)`` before it and the pair itself, then the stretch after the last (with None)."""
    out: list[tuple[tuple[int, int, int, int], Pair | None]] = []
    i = j = 0
    for pair in pairs:
        out.append(((i, pair[0], j, pair[1]), pair))
        i, j = pair[0] + 1, pair[1] + 1
    out.append(((i, a_count, j, b_count), None))
    return out


def _events(two: _Sessions, ti: int, ti_hi: int, tj: int, tj_hi: int
            ) -> tuple[int, int, int, int]:
    """Return the event indices ``(a_lo, a_hi, b_lo, b_hi)`` of turns ``ti:ti_hi`` of A and
    ``tj:tj_hi`` of B."""
    return (*_span(two.a_bounds, ti, ti_hi, len(two.a_keys)),
            *_span(two.b_bounds, tj, tj_hi, len(two.b_keys)))


def _slide_runs(rows: list[Row], side: int, keys: Sequence[Hashable],
                rank: Sequence[int]) -> None:
    """Move each run of rows holding only ``side``'s events within the equal rows around
    it (which it can do where the keys repeat) to begin at the event of the lowest rank,
    the nearest such place when several are."""
    other = 1 - side
    r = 0
    while r < len(rows):
        if rows[r][other] is not None or rows[r][side] is None:
            r += 1
            continue
        end = r
        while end < len(rows) and rows[end][other] is None and rows[end][side] is not None:
            end += 1
        first, stop = rows[r][side], rows[end - 1][side] + 1
        up = _slack(rows, side, keys, r - 1, first - 1, stop - 1, -1)
        down = _slack(rows, side, keys, end, stop, first, 1)
        if up or down:
            best = min(range(-up, down + 1), key=lambda o: (rank[first + o], abs(o)))
            _move(rows, side, r - up, end + down, first - up, stop + down, first + best,
                  stop + best)
        r = end


def _slack(rows: list[Row], side: int, keys: Sequence[Hashable], r: int, index: int,
           partner: int, step: int) -> int:
    """Return how many rows of equal pairs from row ``r`` on (walking by ``step``) the run
    can slide over: each pairs ``index`` (then the next by ``step``) and its key equals
    that of ``partner``, the event at the run's other end."""
    count = 0
    while 0 <= r < len(rows) and None not in rows[r] and rows[r][side] == index \
            and keys[index] == keys[partner]:
        count, r, index, partner = count + 1, r + step, index + step, partner + step
    return count


def _move(rows: list[Row], side: int, r_lo: int, r_hi: int, lo: int, hi: int, first: int,
          stop: int) -> None:
    """Rewrite rows ``r_lo:r_hi`` (``side``'s events ``lo:hi``, one run and equal pairs) so
    that the run holds ``first:stop``."""
    partners = [row[1 - side] for row in rows[r_lo:r_hi] if None not in row]
    paired = [*range(lo, first), *range(stop, hi)]
    pairs = [(k, p) if side == 0 else (p, k) for k, p in zip(paired, partners, strict=True)]
    alone: list[Row] = [(k, None) if side == 0 else (None, k) for k in range(first, stop)]
    before = first - lo
    rows[r_lo:r_hi] = [*pairs[:before], *alone, *pairs[before:]]


def _bounds(starts: Sequence[int], count: int) -> list[tuple[int, int]]:
    """Return ``(first, stop)`` event indices of each turn (and of the events before the
    first turn, when there are any)."""
    edges = [0, *starts] if not starts or starts[0] else list(starts)
    return [(lo, hi) for lo, hi in zip(edges, [*edges[1:], count], strict=True) if hi > lo]


def _span(bounds: list[tuple[int, int]], first: int, stop: int, count: int) -> tuple[int, int]:
    """Return the event indices covered by turns ``first`` up to ``stop``."""
    lo = bounds[first][0] if first < len(bounds) else count
    hi = bounds[stop][0] if stop < len(bounds) else count
    return lo, hi


def _align_stretch(two: _Sessions, a_lo: int, a_hi: int, b_lo: int, b_hi: int,
                   rows: list[Row]) -> None:
    """Append the rows of one stretch of unmatched turns: exact matches, then the events
    left between them paired by coarse key, the rest on one side only."""
    if a_lo == a_hi and b_lo == b_hi:
        return
    i, j = a_lo, b_lo
    exact = align(two.a_keys[a_lo:a_hi], two.b_keys[b_lo:b_hi])
    for pi, pj in [*exact, (a_hi - a_lo, b_hi - b_lo)]:
        _pair_coarse(two.a_coarse, two.b_coarse, i, a_lo + pi, j, b_lo + pj, rows)
        if a_lo + pi < a_hi:
            rows.append((a_lo + pi, b_lo + pj))
        i, j = a_lo + pi + 1, b_lo + pj + 1


def _pair_coarse(a_coarse: Sequence[Hashable], b_coarse: Sequence[Hashable], a_lo: int,
                 a_hi: int, b_lo: int, b_hi: int, rows: list[Row]) -> None:
    """Append the rows of a gap between exact matches: pairs of the same coarse key, each
    preceded by the events of A, then of B, that have no partner."""
    i, j = a_lo, b_lo
    both = a_hi > a_lo and b_hi > b_lo
    pairs = align(a_coarse[a_lo:a_hi], b_coarse[b_lo:b_hi]) if both else []
    for pi, pj in [*pairs, (a_hi - a_lo, b_hi - b_lo)]:
        rows.extend((k, None) for k in range(i, a_lo + pi))
        rows.extend((None, k) for k in range(j, b_lo + pj))
        if a_lo + pi < a_hi:
            rows.append((a_lo + pi, b_lo + pj))
        i, j = a_lo + pi + 1, b_lo + pj + 1
